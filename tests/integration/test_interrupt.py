"""Ctrl+C (SIGINT) and SIGTERM stop a run in every phase within seconds: exit 130, no process,
mount or clone left, no verdict written.

Each test runs ``dbabench run`` on a variant of the demo scenario in which its phase lasts ten
minutes, waits until the run says that phase has begun (and, for the agent, until the agent's
process is up), signals it, and judges what is left. Every process a run starts inherits the
run's environment, so a marker there finds every one of them, whatever it is.
"""

from __future__ import annotations

import fcntl
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from dbabench.env.sandbox import SANDBOX_MOUNTPOINT
from dbabench.env.snapshot import SnapshotStore, choose_strategy
from dbabench.model.run import RunRecord
from dbabench.paths import cache_dir
from dbabench.scenario.loader import resolve

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCENARIO = "stale-stats-lock-chain"
LONG = 600  # seconds a phase lasts in its variant: far beyond any stop
STOP_WITHIN = 15.0  # seconds from the signal to the exit: "within a few seconds", with margin
MARK = "DBABENCH_INTERRUPT_TEST"
AGENT_SLEEP = "6001"  # the external agent and its child: `sleep 6001.<n>`


def _sql_step(sql: str) -> dict[str, Any]:
    return {"action": "sql", "sql": sql}


def _admitted_at_once(doc: dict[str, Any]) -> None:
    doc["spec"]["manifestation"] = {"withinSeconds": 30, "predicates": [
        {"name": "server-up", "check": "sql", "sql": "SELECT true"}]}


def _golden_build_lasts(doc: dict[str, Any]) -> None:
    # its own name: a new golden of the demo's name would supersede (delete) the demo's own
    doc["metadata"]["name"] = "interrupt-golden-build"
    doc["spec"]["fault"]["persistent"].append(_sql_step(f"SELECT pg_sleep({LONG})"))


def _runtime_fault_lasts(doc: dict[str, Any]) -> None:
    doc["spec"]["fault"]["runtime"].insert(0, _sql_step(f"SELECT pg_sleep({LONG})"))


def _admission_lasts(doc: dict[str, Any]) -> None:
    doc["spec"]["manifestation"] = {"withinSeconds": LONG, "predicates": [
        {"name": "never", "check": "sql", "sql": "SELECT false"}]}


def _settle_lasts(doc: dict[str, Any]) -> None:
    _admitted_at_once(doc)
    doc["spec"]["outcome"]["settleSeconds"] = LONG


def _window_lasts(doc: dict[str, Any]) -> None:
    _admitted_at_once(doc)
    doc["spec"]["outcome"]["settleSeconds"] = 0
    doc["spec"]["outcome"]["windowSeconds"] = LONG


def _verdict_soon(doc: dict[str, Any]) -> None:
    _admitted_at_once(doc)
    doc["spec"]["outcome"]["settleSeconds"] = 0
    doc["spec"]["outcome"]["windowSeconds"] = 1


@dataclass(frozen=True)
class Phase:
    name: str
    marker: str  # what the run prints as the phase begins
    variant: Callable[[dict[str, Any]], None] = _admitted_at_once
    agent: tuple[str, ...] = ("--agent", "null")
    signal: int = signal.SIGINT
    sigint_ignored: bool = False
    """Start the run with SIGINT ignored, as a script's background job is: a SIGINT sent to
    it on purpose must still stop it."""


AGENT_COMMAND = ("--agent", "external", "--", "/bin/sh", "-c",
                 "sleep {token} & exec sleep {token}")

PHASES = [
    Phase("provisioning", "provisioning ("),
    Phase("golden-build", "building the golden snapshot", _golden_build_lasts),
    Phase("restore", "restoring a thin clone"),
    Phase("runtime-fault", "applying the runtime fault", _runtime_fault_lasts),
    Phase("admission", "checking manifestation", _admission_lasts, sigint_ignored=True),
    Phase("agent", "agent external at work", agent=AGENT_COMMAND),
    Phase("settle", "settling", _settle_lasts, signal=signal.SIGTERM),
    Phase("verification", "verifying over", _window_lasts),
    Phase("teardown", "tearing down", _verdict_soon, signal=signal.SIGTERM),
]


def _marked_processes(mark: str, clone: Path | None = None) -> list[str]:
    """Every live process of the run: what inherits ``mark`` in its environment (the harness's
    children), what carries it on its command line (the agent's, whose sandbox starts it with
    an environment of its own) and what works inside the run's ``clone`` (its sandboxed
    servers)."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd").removeprefix(str(SANDBOX_MOUNTPOINT))
        except OSError:
            continue
        token = _agent_token(mark).encode()
        ours = (needle in environ.split(b"\0") or any(token in arg for arg in argv)
                or (clone is not None and cwd.startswith(str(clone))))
        if ours and state != "Z":
            found.append(f"{entry.name}: {b' '.join(argv[:3]).decode(errors='replace')}")
    return found


def _agent_token(mark: str) -> str:
    """The duration the test's agent sleeps for: unique to the test, so its processes are
    found by their command line."""
    return f"{AGENT_SLEEP}.{int(mark[:6], 16)}"


class Lines:
    """The run's output, line by line, with a deadline (a run that hangs must not hang us)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        assert proc.stdout is not None
        stdout = proc.stdout

        def pump() -> None:
            for line in stdout:
                self._queue.put(line)
            self._queue.put(None)

        self._thread = threading.Thread(target=pump, daemon=True)
        self._thread.start()

    def until(self, marker: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                pytest.fail(f"the run ended before {marker!r}:\n{self.text()}")
            self.seen.append(line)
            if marker in line:
                return
        pytest.fail(f"no {marker!r} within {timeout:.0f}s:\n{self.text()}")

    def rest(self) -> str:
        self._thread.join(timeout=30)
        while not self._queue.empty():
            line = self._queue.get()
            if line is not None:
                self.seen.append(line)
        return self.text()

    def text(self) -> str:
        return "".join(self.seen)


@contextmanager
def _store_lock_held(store: SnapshotStore) -> Iterator[None]:
    """Hold the xfs-loop store's mount lock, as another run mounting it would: the run's
    provisioning waits on it for as long as we hold it."""
    if store.strategy != "xfs-loop":
        yield
        return
    with open(store.cache / "store-xfs.lock", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _eventually(what: str, check: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    pytest.fail(f"{what} within {timeout:.0f}s")


@pytest.mark.parametrize("phase", PHASES, ids=[p.name for p in PHASES])
def test_a_signal_stops_the_run_in_every_phase(phase: Phase, tmp_path: Path) -> None:
    path, _ = resolve(SCENARIO)
    doc = yaml.safe_load(path.read_text())
    phase.variant(doc)
    manifest = tmp_path / "scenario.yaml"
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False))
    name = doc["metadata"]["name"]
    runs = tmp_path / "runs"
    mark = uuid.uuid4().hex
    cache = cache_dir()
    store = SnapshotStore(cache, choose_strategy(cache))

    lock = _store_lock_held(store) if phase.name == "provisioning" else _nothing()
    agent = [arg.format(token=_agent_token(mark)) for arg in phase.agent]
    with lock, subprocess.Popen(
            [sys.executable, "-m", "dbabench.cli.main", "run", str(manifest), *agent[:2],
             "--runs-dir", str(runs), *agent[2:]],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, MARK: mark},
            # else as a terminal's Ctrl+C finds it, whatever this test's own parent ignores
            preexec_fn=lambda: signal.signal(
                signal.SIGINT, signal.SIG_IGN if phase.sigint_ignored else signal.SIG_DFL),
    ) as proc:
        lines = Lines(proc)
        try:
            lines.until(phase.marker, timeout=240)
            if phase.name == "agent":
                _eventually("the agent's processes are up", lambda: sum(
                    p.split(": ", 1)[1].startswith("sleep") for p in _marked_processes(mark))
                    == 2, 30)
            signalled = time.monotonic()
            proc.send_signal(phase.signal)
            code = proc.wait(timeout=STOP_WITHIN + 30)
            stopped_after = time.monotonic() - signalled
        finally:
            if proc.poll() is None:
                proc.kill()
        output = lines.rest()

    assert code == 130, output
    assert stopped_after <= STOP_WITHIN, f"stopped {stopped_after:.1f}s after the signal\n{output}"
    assert "interrupted" in output and "Traceback" not in output, output
    run_dir = next(runs.iterdir())
    incident = RunRecord.model_validate_json((run_dir / "run.json").read_text()).incident
    assert not _marked_processes(mark, store.root / "clones" / incident), output
    assert not (run_dir / "evaluation.json").exists(), "an interrupted run wrote a verdict"
    assert not (run_dir / "pids.json").exists()
    if store.strategy == "xfs-loop":
        holders = cache / "store-xfs.holders"
        assert str(proc.pid) not in (holders.read_text().split() if holders.exists() else [])
    # mounted again if the run was its last holder; a clone the run left behind would be
    # reaped now, and said so
    reaped = store.acquire()
    try:
        left = [c.name for c in (store.root / "clones").iterdir()
                if c.name.startswith(incident)]
        goldens = [g.name for g in (store.root / "golden").glob(f"*{name}*") if g.is_dir()]
    finally:
        store.release()
    assert not left and not [n for n in reaped if incident in n], (left, reaped)
    if phase.name == "golden-build":
        assert not goldens, f"an interrupted build left {goldens}"
    if phase.name not in ("provisioning", "golden-build", "restore"):
        # the server ran: its log is kept, as after any run
        assert (run_dir / "logs" / "postgresql").exists()
    if phase.name in ("verification", "teardown"):
        # the run got as far as grading: only the verdict is missing
        assert (run_dir / "admission.json").exists()


@contextmanager
def _nothing() -> Iterator[None]:
    yield
