"""Processes a run starts, recorded by pid so that they are always stopped by pid.

Every child is written to ``<run>/pids.json`` together with its command line. A run that dies
without cleaning up (SIGKILL, power loss) leaves that file behind; ``reap_orphans`` finds the
file of any run whose owner is gone and stops what is still alive, so the next run starts on a
clean machine.
"""

from __future__ import annotations

import collections
import ctypes
import json
import os
import pwd
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from dbabench.model.artifacts import RunArtifact
from dbabench.model.base import Model

PIDS_FILE = RunArtifact.PIDS


class ProcessRecord(Model):
    pid: int
    name: str
    argv0: str
    started_at: float
    stop_signal: int = int(signal.SIGTERM)


class PidFile(Model):
    owner: int
    owner_started: int | None = Field(
        default=None, description="the owner's start in clock ticks after boot: with its pid,"
                                  " which process it is (absent in files of earlier versions)")
    processes: list[ProcessRecord] = []


_HANDED_OUT: collections.deque[int] = collections.deque(maxlen=4096)
_HANDED_OUT_LOCK = threading.Lock()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now, and that this process has not
    handed out lately. The kernel gives a port it just gave again within a few binds (seen 8
    apart), and a port is only bound when the server it is for has started: without the memory,
    runs side by side gave one port to two servers, and a run's Prometheus query reached
    another's workload."""
    with _HANDED_OUT_LOCK:
        while True:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            if port not in _HANDED_OUT:
                _HANDED_OUT.append(port)
                return port


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    state = _proc_state(pid)
    return state is not None and state != "Z"


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat from its third field on (state), past the command in parentheses."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def _proc_state(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks after boot (stat's 22nd field); None if it is gone."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields else None


def same_process(pid: int, started: int | None) -> bool:
    """``pid`` is alive and is the process that started at ``started`` (any, where unknown)."""
    return alive(pid) and (started is None or start_ticks(pid) == started)


def _cmdline0(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return raw.split(b"\0", 1)[0].decode(errors="replace")


def stop_pid(pid: int, *, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
    """Signal ``pid``, wait up to ``timeout`` seconds, then SIGKILL it."""
    if not alive(pid):
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return
        time.sleep(0.02)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    while alive(pid):
        time.sleep(0.02)


def run_as_user() -> str | None:
    """The OS user PostgreSQL must run as: ``postgres`` when we are root, else ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError as e:
        raise RuntimeError("running as root needs the OS user 'postgres' (install postgresql-15,"
                           " e.g. `make deps`)") from e
    return "postgres"


PR_SET_PDEATHSIG = 1
# looked up before any fork: a child runs die_with_parent between fork and exec
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def die_with_parent() -> None:
    """For ``preexec_fn``: the child is SIGKILLed when the thread that started it ends, so
    what a run killed outright (SIGKILL, a CI time limit) started is not left behind."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def as_user_kwargs(user: str | None) -> dict[str, object]:
    """subprocess arguments that run a child as ``user`` with that user's own group and no
    other: ``user=`` alone keeps our group, which for root is group root."""
    if user is None:
        return {}
    pw = pwd.getpwnam(user)
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}


def chown_for_postgres(path: Path, *, tree: bool = False) -> None:
    """Give ``path`` (with ``tree``, all under it too) to the user servers run as."""
    user = run_as_user()
    if user is None:
        return
    pw = pwd.getpwnam(user)
    if tree:
        subprocess.run(["chown", "-R", f"{pw.pw_uid}:{pw.pw_gid}", str(path)], check=True,
                       capture_output=True)
    else:
        os.chown(path, pw.pw_uid, pw.pw_gid)


class ProcessTableClosed(RuntimeError):
    """The run is ending (torn down, or interrupted): a thread still starting something for it,
    or waiting for something, gives up."""


@dataclass
class ProcessTable:
    """The children of one run. ``spawn`` records before it returns; ``stop_all`` is idempotent
    and final: what a straggling thread (say, monitoring started beside admission) tries to
    start after it is refused, and every wait made through ``pause`` ends, so nothing outlives
    the run and no thread keeps an interrupted run waiting."""

    run_dir: Path
    records: list[ProcessRecord] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    """Set by ``stop_all``, before anything is stopped: the run is ending."""
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    """CPU (user + system) of the children stopped so far, by name, with what they reaped in
    turn: a postmaster's include its backends'."""
    _popen: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    _adopted: dict[int, Callable[[int], float]] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _owner: tuple[int, int | None] = field(
        default_factory=lambda: (os.getpid(), start_ticks(os.getpid())))
    """Who writes the pid file, read once: every spawn and stop rewrites it."""

    def check_open(self, doing: str) -> None:
        """Raise ProcessTableClosed if the run is ending."""
        if self.stopping.is_set():
            raise ProcessTableClosed(f"stopped {doing}: the run is being torn down")

    def pause(self, seconds: float, doing: str) -> None:
        """Sleep between two polls of something the run waits for; ends at once, raising
        ProcessTableClosed, when the run is ending."""
        if self.stopping.wait(seconds):
            self.check_open(doing)

    def spawn(self, name: str, argv: list[str], *, log: Path, env: dict[str, str] | None = None,
              environment: dict[str, str] | None = None, as_postgres: bool = False,
              cwd: Path | None = None, stop_signal: int = signal.SIGTERM,
              execs: str | None = None) -> subprocess.Popen[bytes]:
        """Start and record a child; ``stop_signal`` is how it is stopped when the run ends
        (or is reaped after a crash), e.g. SIGQUIT for a postmaster whose data is discarded.
        ``env`` adds to our environment, ``environment`` replaces it; ``execs`` is the program
        the pid ends up running when ``argv`` is a wrapper that execs in place."""
        with self._lock:
            self.check_open(f"before starting {name}")
            out = open(log, "ab")
            try:
                proc = subprocess.Popen(
                    argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    env=environment if environment is not None else {**os.environ, **(env or {})},
                    cwd=cwd, **as_user_kwargs(run_as_user() if as_postgres else None),
                    start_new_session=True,  # Ctrl+C in the terminal must reach us, not the child
                )
            finally:
                out.close()
            self.records.append(ProcessRecord(pid=proc.pid, name=name, argv0=execs or argv[0],
                                              started_at=time.time(),
                                              stop_signal=int(stop_signal)))
            self._save()
            self._popen[proc.pid] = proc
            return proc

    def follow_child(self, proc: subprocess.Popen[bytes], *, argv0: str,
                     timeout: float = 10.0) -> int | None:
        """Record, in place of ``proc`` (an ``unshare --fork`` that waits for its namespace's
        first process), that only child: signals go to it, and reaping ``proc`` counts its
        CPU. None if ``proc`` ended before it had one."""
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        deadline = time.monotonic() + timeout
        while True:
            try:
                found = children.read_text().split()
            except OSError:
                found = []
            if found:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                return None
            time.sleep(0.002)
        child = int(found[0])
        with self._lock:
            for record in self.records:
                if record.pid == proc.pid:
                    record.pid, record.argv0 = child, argv0
            self._popen[child] = self._popen.pop(proc.pid)
            self._save()
        return child

    def adopt(self, name: str, start: Callable[[], int], *, argv0: str,
              reap: Callable[[int], float]) -> int:
        """Record, like ``spawn``, a process that another of ours starts and reaps (a fork
        server): ``start`` starts it and returns its pid; ``reap`` waits for its end once it
        is stopped and returns its CPU seconds."""
        with self._lock:
            self.check_open(f"before starting {name}")
            pid = start()
            self.records.append(ProcessRecord(pid=pid, name=name, argv0=argv0,
                                              started_at=time.time()))
            self._save()
            self._adopted[pid] = reap
            return pid

    def run(self, name: str, argv: list[str], *, log: Path, environment: dict[str, str],
            as_postgres: bool = False) -> int:
        """Start a child, wait for it to exit and return its exit status. It is in the pid
        file while it runs, so an interrupted run stops it, and its CPU is counted with the
        others' (``cpu_seconds``)."""
        proc = self.spawn(name, argv, log=log, environment=environment, as_postgres=as_postgres)
        self._reap(proc)
        self.forget(proc.pid)
        returncode = proc.returncode
        assert returncode is not None
        return returncode

    def forget(self, pid: int) -> None:
        with self._lock:
            self.records = [r for r in self.records if r.pid != pid]
            self._popen.pop(pid, None)
            self._adopted.pop(pid, None)
            self._save()

    def stop(self, pid: int, *, sig: int | None = None, timeout: float = 10.0) -> None:
        if sig is None:
            sig = next((r.stop_signal for r in self.records if r.pid == pid), signal.SIGTERM)
        stop_pid(pid, sig=sig, timeout=timeout)
        proc = self._popen.get(pid)
        if proc is not None:
            self._reap(proc, pid)
        reap = self._adopted.get(pid)
        if reap is not None:
            self._count(pid, reap(pid))
        self.forget(pid)

    def _reap(self, proc: subprocess.Popen[bytes], pid: int | None = None) -> None:
        """``pid``: the recorded pid its CPU is counted under, where that is not ``proc``'s
        own (follow_child: the namespace's first process, reaped through its unshare)."""
        # wait4, not Popen.wait: the kernel hands over the child's CPU only to whoever reaps it
        if proc.returncode is None:
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            except ChildProcessError:
                proc.wait()  # another thread's poll reaped it first: its CPU is not ours to see
                return
            proc.returncode = os.waitstatus_to_exitcode(status)
            self._count(pid or proc.pid, usage.ru_utime + usage.ru_stime)

    def _count(self, pid: int, cpu_seconds: float) -> None:
        name = next((r.name for r in self.records if r.pid == pid), "unrecorded")
        self.cpu_seconds[name] = round(self.cpu_seconds.get(name, 0.0) + cpu_seconds, 3)

    def stop_all(self) -> None:
        # set first: a thread blocked on one of these processes learns why it went away
        self.stopping.set()
        with self._lock:
            for record in reversed(list(self.records)):
                self.stop(record.pid)
            (self.run_dir / PIDS_FILE).unlink(missing_ok=True)

    def _save(self) -> None:
        data = PidFile(owner=self._owner[0], owner_started=self._owner[1],
                       processes=self.records)
        tmp = self.run_dir / (PIDS_FILE + ".tmp")
        tmp.write_text(data.model_dump_json(indent=1))
        tmp.replace(self.run_dir / PIDS_FILE)


def orphans(runs_root: Path, *, nested: bool = False) -> list[tuple[Path, list[ProcessRecord]]]:
    """The pid files of runs under ``runs_root`` whose owning dbabench process is gone (its pid
    dead, or now another process's), each
    with its processes that still run (a pid the kernel has since given to another program,
    whose executable no longer matches the record, is not one of them). ``nested``: at any
    depth (a campaign's cells), not only in ``runs_root``'s own run directories."""
    found = []
    for pid_file in sorted(runs_root.glob(f"{'**' if nested else '*'}/{PIDS_FILE}")):
        try:
            data = PidFile.model_validate(json.loads(pid_file.read_text()))
        except (OSError, ValueError):
            continue
        # a live owner's runs are its own, ours too: the operator and the battery run
        # several at once in one process
        if same_process(data.owner, data.owner_started):
            continue
        found.append((pid_file, [r for r in reversed(data.processes)
                                 if alive(r.pid) and _cmdline0(r.pid) == r.argv0]))
    return found


def reap_orphans(runs_root: Path, *, nested: bool = False) -> list[str]:
    """Stop the processes ``orphans`` finds and forget their pid files; return what was done."""
    done: list[str] = []
    for pid_file, records in orphans(runs_root, nested=nested):
        for record in records:
            stop_pid(record.pid, sig=record.stop_signal)
            done.append(f"stopped leftover {record.name} pid {record.pid} of {pid_file.parent.name}")
        pid_file.unlink(missing_ok=True)
    return done
