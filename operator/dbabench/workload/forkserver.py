"""Workload processes forked from one that has already imported the engine.

A workload process spent ~0.35 s of CPU on an idle machine, and more in a battery, importing
psycopg, pydantic and prometheus_client before its first request: for light scenarios, most of
what it used in a run. The harness starts this server once (the first time a run needs a
workload) and asks it for each run's: the server forks, the child becomes the workload of that
run (its own session, its log as stdout and stderr, the caller's environment and directory),
and the caller's process table records it by pid like any child it spawns. Only the server
reaps its children, so it hands their CPU over when the table stops one (``wait``).

The server is single-threaded, so forking it is safe; it ends when the harness closes its
stdin (the harness exiting does too). Its own CPU is the harness's, not any run's.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import IO, Any

from dbabench.env.processes import ProcessTable
from dbabench.errors import InfraError
from dbabench.workload.engine import main as workload_main

MODULE = "dbabench.workload.forkserver"


class ForkServerError(InfraError, RuntimeError):
    pass


def _child(config: str, log: str, env: dict[str, str], cwd: str, started: int) -> None:
    """Become the workload of one run; never returns. Writes to ``started`` once it is set up
    (its own session, log, directory and environment)."""
    code = 1
    try:
        os.setsid()  # Ctrl+C in the terminal must reach the harness, not the child
        out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        os.close(null)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        os.write(started, b".")
        os.close(started)
        workload_main(Path(config))
        code = 0
    except SystemExit as e:  # as the interpreter exits with it
        if isinstance(e.code, int) or e.code is None:
            code = e.code or 0
        else:
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(requests: IO[bytes], replies: int) -> None:
    """Answer one JSON line per request: ``start`` forks a workload and gives its pid;
    ``wait`` reaps one (stopped already) and gives its CPU seconds."""
    for line in requests:
        request = json.loads(line)
        reply: dict[str, Any]
        if request["op"] == "start":
            # answered once the child is set up, as a spawned child is when Popen returns
            ready, started = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(ready)
                _child(request["config"], request["log"], request["env"], request["cwd"],
                       started)
            os.close(started)
            os.read(ready, 1)
            os.close(ready)
            reply = {"pid": pid}
        else:
            try:
                _, _, usage = os.wait4(request["pid"], 0)
                reply = {"cpu": usage.ru_utime + usage.ru_stime}
            except ChildProcessError:
                reply = {"cpu": 0.0}
        os.write(replies, (json.dumps(reply) + "\n").encode())


class ForkServer:
    """The harness's side: one server process, started at the first request, shared by the
    runs of this process (requests are serialized)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = subprocess.Popen(
                    [sys.executable, "-m", MODULE], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, start_new_session=True)
            assert self._proc.stdin is not None and self._proc.stdout is not None
            try:
                self._proc.stdin.write((json.dumps(request) + "\n").encode())
                self._proc.stdin.flush()
                answer = self._proc.stdout.readline()
            except OSError:
                answer = b""  # a broken pipe: it ended, as an empty answer says
            if not answer:
                raise ForkServerError(
                    f"the workload fork server (pid {self._proc.pid}) ended"
                    f" (exit status {self._proc.poll()}); its output went to this process's"
                    " stderr")
            reply: dict[str, Any] = json.loads(answer)
            return reply

    def spawn(self, procs: ProcessTable, name: str, config: Path, log: Path) -> int:
        """Start a workload with ``config`` for the run of ``procs``; return its pid."""

        def start() -> int:
            pid: int = self._ask({"op": "start", "config": str(config), "log": str(log),
                                  "env": dict(os.environ), "cwd": os.getcwd()})["pid"]
            return pid

        def reap(pid: int) -> float:
            try:
                return float(self._ask({"op": "wait", "pid": pid})["cpu"])
            except ForkServerError:
                return 0.0  # its server is gone, and what it knew of the child's CPU with it

        return procs.adopt(name, start, argv0=sys.executable, reap=reap)

    def close(self) -> None:
        """End the server (its children are the runs' to stop) and reap it."""
        with self._lock:
            if self._proc is not None:
                assert self._proc.stdin is not None and self._proc.stdout is not None
                self._proc.stdin.close()
                self._proc.wait()
                self._proc.stdout.close()
                self._proc = None


FORK_SERVER = ForkServer()
atexit.register(FORK_SERVER.close)


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.fileno())
