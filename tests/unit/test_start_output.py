"""What a server said while it failed to start: only that start's words, as text, bounded. The
agent reads them when its own setting keeps the server down (manage_instance start, restart)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from dbabench.env.postgres import SAID_CHARS, Credentials, PostgresInstance, StartFailed
from dbabench.env.remote import START_FAILED_STATUS, RemoteInstanceControl
from dbabench.errors import disposition


def _record(severity: str, message: str, **more: str) -> str:
    return json.dumps({"timestamp": "2026-12-06 10:00:00.000 UTC", "pid": 1,
                       "error_severity": severity, "message": message, **more}) + "\n"


def test_only_what_this_start_wrote_is_read_and_the_log_as_text(tmp_path: Path) -> None:
    instance = PostgresInstance(tmp_path, Credentials.generate(), port=1)
    instance.log_dir.mkdir()
    out = tmp_path / "postmaster.out"
    out.write_text("LOG:  redirecting log output to logging collector process\n")
    old_log = instance.log_dir / "postgresql-20261206-095900.json"
    old_log.write_text(_record("LOG", "database system is ready to accept connections"))
    marks = instance.output_marks()
    with out.open("a") as f:
        f.write("FATAL:  could not map anonymous shared memory: Cannot allocate memory\n")
    with old_log.open("a") as f:
        f.write(_record("LOG", "received fast shutdown request"))
    (instance.log_dir / "postgresql-20261206-100000.json").write_text(
        _record("FATAL", 'could not access file "nosuchlib": No such file or directory',
                hint="check shared_preload_libraries") + '{"timestamp": "2026-12-06 10:0')
    said = instance.startup_output(marks)
    assert said.splitlines() == [
        "FATAL:  could not map anonymous shared memory: Cannot allocate memory",
        "LOG:  received fast shutdown request",
        'FATAL:  could not access file "nosuchlib": No such file or directory',
        "HINT:  check shared_preload_libraries",
    ]
    assert "redirecting" not in said and "ready to accept" not in said


def test_what_was_said_is_cut_to_its_end(tmp_path: Path) -> None:
    instance = PostgresInstance(tmp_path, Credentials.generate(), port=1)
    marks = instance.output_marks()  # nothing written yet
    (tmp_path / "postmaster.out").write_text("x" * 10_000 + "\nFATAL:  the last words\n")
    said = instance.startup_output(marks)
    assert said.startswith("...") and said.endswith("FATAL:  the last words")
    assert len(said) == SAID_CHARS + 3


def test_a_failed_start_is_still_an_infrastructure_error_where_the_harness_starts() -> None:
    failed = StartFailed("postgres exited with 1 during start-up", "FATAL:  out of memory")
    assert str(failed) == "postgres exited with 1 during start-up: FATAL:  out of memory"
    assert disposition(failed).kind == "infra" and disposition(failed).retryable


def test_the_database_pods_answer_to_a_failed_start_is_raised_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On Kubernetes the start runs in the database pod, whose control endpoint answers a start
    that failed with START_FAILED_STATUS; the tool server's control raises it again as the
    same StartFailed a local start raises. Any other failure of the endpoint is the harness's."""
    answers = [httpx.Response(START_FAILED_STATUS, json={
        "error": "postgres exited with 1 during start-up: FATAL:  could not map",
        "reason": "postgres exited with 1 during start-up", "said": "FATAL:  could not map"}),
        httpx.Response(500, text="Internal Server Error")]

    def request(method: str, url: str, **kwargs: object) -> httpx.Response:
        answer = answers.pop(0)
        answer.request = httpx.Request(method, url)
        return answer

    monkeypatch.setattr(httpx, "request", request)
    control = RemoteInstanceControl("http://db:8081/", "token")
    with pytest.raises(StartFailed) as failed:
        control.restart("fast")
    assert (failed.value.reason, failed.value.said) == (
        "postgres exited with 1 during start-up", "FATAL:  could not map")
    with pytest.raises(httpx.HTTPStatusError):
        control.start()
