"""Start the scripted chat-completions server (scripted_model.py) as a process; stop it by pid."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbabench.env.processes import stop_pid

SERVER = Path(__file__).with_name("scripted_model.py")


@dataclass
class ScriptedModel:
    url: str
    requests_log: Path

    def requests(self) -> list[dict[str, Any]]:
        if not self.requests_log.exists():
            return []
        return [json.loads(line) for line in self.requests_log.read_text().splitlines()]


@contextmanager
def scripted_model(script: list[dict[str, Any]], workdir: Path) -> Iterator[ScriptedModel]:
    workdir.mkdir(parents=True, exist_ok=True)
    script_file, port_file = workdir / "script.json", workdir / "port"
    script_file.write_text(json.dumps(script))
    port_file.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, str(SERVER), str(script_file), str(port_file),
                             str(workdir / "requests.jsonl")])
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists() or not port_file.read_text():
            assert proc.poll() is None, "the scripted model server exited"
            assert time.monotonic() < deadline, "the scripted model server did not start"
            time.sleep(0.05)
        yield ScriptedModel(f"http://127.0.0.1:{port_file.read_text()}/v1",
                            workdir / "requests.jsonl")
    finally:
        stop_pid(proc.pid)
        proc.wait()


def call(name: str, **args: Any) -> dict[str, Any]:
    """A script step: one tool call."""
    return {"reply": {"content": f"calling {name}",
                      "tool_calls": [{"name": name, "arguments": json.dumps(args)}],
                      "usage": {"prompt_tokens": 1000, "completion_tokens": 50,
                                "prompt_tokens_details": {"cached_tokens": 400}}}}
