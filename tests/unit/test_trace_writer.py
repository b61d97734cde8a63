"""The trace file: each event is on file when ``record`` returns, the file stays one per run
across closes, and no process the harness starts inherits it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dbabench.tools.gate import TraceWriter


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_event_is_on_file_when_recorded_and_after_a_close(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    trace = TraceWriter(path)
    trace.record(kind="thought", text="first")
    assert [e["text"] for e in _lines(path)] == ["first"]
    trace.close()
    trace.close()
    trace.record(kind="thought", text="second")
    assert [(e["seq"], e["text"]) for e in _lines(path)] == [(1, "first"), (2, "second")]


def test_a_child_process_does_not_inherit_the_trace(tmp_path: Path) -> None:
    trace = TraceWriter(tmp_path / "trace.jsonl")
    trace.record(kind="thought", text="x")
    assert trace._fd is not None
    probe = f"import os; os.fstat({trace._fd})"
    child = subprocess.run([sys.executable, "-c", probe], close_fds=False, capture_output=True)
    assert child.returncode != 0 and b"Bad file descriptor" in child.stderr
