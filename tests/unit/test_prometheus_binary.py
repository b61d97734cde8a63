"""A run's Prometheus is the pinned 3.x linked next to the interpreter, never another one."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbabench.env import monitoring
from dbabench.env.monitoring import MonitoringError, prometheus_binary


@pytest.fixture
def interpreter_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python3.11"))
    prometheus_binary.cache_clear()
    yield tmp_path
    prometheus_binary.cache_clear()


def fake_prometheus(directory: Path, version_line: str) -> Path:
    path = directory / "prometheus"
    path.write_text(f"#!/bin/sh\necho '{version_line}'\n")
    path.chmod(0o755)
    return path


def test_missing_prometheus_says_where_it_looked_and_what_to_run(interpreter_dir: Path) -> None:
    with pytest.raises(MonitoringError) as e:
        prometheus_binary()
    assert str(interpreter_dir / "prometheus") in str(e.value)
    assert "make deps" in str(e.value)


def test_a_distribution_prometheus_2_is_refused(interpreter_dir: Path) -> None:
    fake_prometheus(interpreter_dir, "prometheus, version 2.42.0+ds (branch: debian/sid)")
    with pytest.raises(MonitoringError, match=r"is Prometheus 2\.42\.0\+ds, not 3\.x"):
        prometheus_binary()


def test_the_pinned_major_is_taken_and_started_with_a_fast_first_scrape(
        interpreter_dir: Path) -> None:
    path = fake_prometheus(interpreter_dir, "prometheus, version 3.16.0 (branch: release)")
    assert prometheus_binary() == str(path)
    argv = monitoring.prometheus_argv(interpreter_dir, "run-1", {"node": "127.0.0.1:9"},
                                      "127.0.0.1:0")
    assert argv[0] == str(path)
    assert "--scrape.discovery-reload-interval=100ms" in argv
