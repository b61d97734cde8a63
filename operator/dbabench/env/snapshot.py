"""Golden snapshots and their per-run thin clones.

A clone must be cheap and independent of data size, and its first write must not copy a whole
1 GB segment. overlayfs copies the segment up on the first write: seconds on ext4; on XFS the
copy-up shares blocks and costs ~5 ms (benchmarks/README.md), but it needs a mount per run,
which a reflink clone does not. Three strategies, best first:

* ``reflink``: the cache directory's filesystem shares blocks (XFS, btrfs): ``cp --reflink``.
* ``xfs-loop``: no reflinks there, but we may mount: a sparse image formatted with
  ``mkfs.xfs -m reflink=1``, loop-mounted while any run uses it (reference-counted under a
  file lock, unmounted by the last user, so no mount outlives the runs).
* ``copy``: a plain ``cp -a``; always works, costs time proportional to the data.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dbabench.model.artifacts import StoreArtifact
from dbabench.errors import InfraError
from dbabench.env.processes import ProcessTable, alive, run_as_user, stop_pid
from dbabench.env.sandbox import SANDBOX_MOUNTPOINT

Strategy = Literal["reflink", "xfs-loop", "copy"]

IMAGE_SIZE = "64G"  # sparse: costs only what is written
UMOUNT_BUSY = 32  # umount's exit status for "target is busy" (and other mount failures)
UNMOUNT_WAIT_SECONDS = 5.0
OWNER_FILE = StoreArtifact.OWNER


class SnapshotError(InfraError, RuntimeError):
    pass


def supports_reflink(directory: Path) -> bool:
    probe = directory / f".reflink-probe-{uuid.uuid4().hex}"
    try:
        probe.write_bytes(b"x")
        result = subprocess.run(["cp", "--reflink=always", str(probe), str(probe) + ".c"],
                                capture_output=True)
        return result.returncode == 0
    finally:
        probe.unlink(missing_ok=True)
        Path(str(probe) + ".c").unlink(missing_ok=True)


def can_mount_xfs() -> bool:
    return os.geteuid() == 0 and all(shutil.which(t) for t in ("mkfs.xfs", "mount", "umount"))


def choose_strategy(cache: Path, requested: str | None = None) -> Strategy:
    """``DBABENCH_CLONE`` (or ``requested``) forces one; otherwise the best that works here."""
    wanted = requested or os.environ.get("DBABENCH_CLONE")
    if wanted:
        if wanted not in ("reflink", "xfs-loop", "copy"):
            raise SnapshotError(f"DBABENCH_CLONE={wanted!r}: use reflink, xfs-loop or copy")
        return wanted  # type: ignore[return-value]
    if supports_reflink(cache):
        return "reflink"
    if can_mount_xfs():
        return "xfs-loop"
    return "copy"


def _mounted(mountpoint: Path) -> bool:
    target = str(mountpoint.resolve())
    with open("/proc/self/mounts") as f:
        return any(line.split()[1] == target for line in f)


LOCK_POLL_SECONDS = 0.1


@contextlib.contextmanager
def _locked(lock_path: Path, procs: ProcessTable | None = None) -> Iterator[None]:
    """An exclusive flock; with ``procs``, the wait for it (another process may hold it for a
    whole golden build) ends when that run is stopping."""
    with open(lock_path, "a+") as f:
        if procs is None:
            fcntl.flock(f, fcntl.LOCK_EX)
        else:
            while True:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    procs.pause(LOCK_POLL_SECONDS, f"waiting for {lock_path.name}")
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@dataclass
class SnapshotStore:
    """Holds golden snapshots under ``root/golden`` and clones under ``root/clones``."""

    cache: Path
    strategy: Strategy

    @property
    def root(self) -> Path:
        return self.cache / "store-xfs" if self.strategy == "xfs-loop" else self.cache / "store"

    @property
    def image(self) -> Path:
        return self.cache / "store-xfs.img"

    def acquire(self, procs: ProcessTable | None = None) -> list[str]:
        """Make the store usable for this process (mounts the XFS image if it is the first)
        and reap the clones of dead runs, saying which; with ``procs``, waiting for another
        process's mount ends when that run is stopping."""
        if self.strategy != "xfs-loop":
            self._dirs()
            return self.reap_abandoned_clones()
        self.root.mkdir(parents=True, exist_ok=True)
        with _locked(self.cache / "store-xfs.lock", procs):
            holders = self._holders()
            if not _mounted(self.root):
                if not self.image.exists():
                    self._make_image()
                # the image holds every golden, credentials included: a reader of the file
                # reads them, whatever the modes inside say (an image made before was 0644)
                self.image.chmod(0o600)
                _run(["mount", "-o", "loop,noatime", str(self.image), str(self.root)])
            holders.append(os.getpid())
            self._write_holders(holders)
            self._dirs()
            return self.reap_abandoned_clones()

    def release(self) -> None:
        """Drop one hold of this process; the last one out unmounts."""
        if self.strategy != "xfs-loop":
            return
        with _locked(self.cache / "store-xfs.lock"):
            holders = self._holders()
            if os.getpid() in holders:
                holders.remove(os.getpid())
            self._write_holders(holders)
            if not holders and _mounted(self.root):
                self._unmount()

    def _unmount(self) -> None:
        # A postmaster stopped by SIGQUIT is gone before its backends are: for a few
        # milliseconds their working directory keeps the mount busy.
        deadline = time.monotonic() + UNMOUNT_WAIT_SECONDS
        while True:
            result = subprocess.run(["umount", str(self.root)], capture_output=True, text=True)
            if result.returncode == 0:
                return
            if result.returncode != UMOUNT_BUSY or time.monotonic() > deadline:
                inside = [f"{pid} ({_cmdline(pid)})" for pid in _processes_inside(self.root)]
                raise SnapshotError(
                    f"umount {self.root} failed ({result.returncode}): {result.stderr.strip()}"
                    + (f"; processes inside: {', '.join(inside)}" if inside else ""))
            time.sleep(0.1)

    def golden(self, key: str) -> Path:
        return self.root / "golden" / key

    def seal(self, golden: Path) -> None:
        """Make a golden ours alone: owned by the harness and closed to everyone else, so no
        server (they run as ``postgres`` when we are root) can change what every later run
        restores. Running as another user, servers run as that user too and nothing can be
        closed to them."""
        if run_as_user() is None:
            return
        _run(["chown", "-R", f"{os.geteuid()}:{os.getegid()}", str(golden)])
        _run(["chmod", "-R", "go-rwx", str(golden)])

    def sealed(self, golden: Path) -> bool:
        """Whether ``seal`` has been done (a golden built before there was one has not)."""
        if run_as_user() is None:
            return True
        status = golden.stat()
        return status.st_uid == os.geteuid() and not status.st_mode & 0o077

    def clone(self, golden: Path, name: str) -> Path:
        """A copy of ``golden`` at ``root/clones/name``, owned as the golden is (``seal``)."""
        target = self.root / "clones" / name
        if target.exists():
            raise SnapshotError(f"clone {target} already exists")
        # the owner first: a run killed while it copies leaves a clone the next run reaps
        target.mkdir()
        (target / OWNER_FILE).write_text(str(os.getpid()))
        self.copy(golden, target)
        return target

    def copy(self, golden: Path, target: Path) -> None:
        """``golden``'s files into the directory ``target`` (made if missing), shared by
        reflink where the store can."""
        target.mkdir(exist_ok=True)
        flag = "--reflink=always" if self.strategy in ("reflink", "xfs-loop") else "--reflink=never"
        _run(["cp", "-a", flag, f"{golden}/.", str(target)])

    def abandoned_clones(self) -> list[Path]:
        """Clones whose owning process died (SIGKILL, power loss); none where the store is
        not mounted (the next run to mount it reaps them)."""
        clones = self.root / "clones"
        if not clones.is_dir():
            return []
        return sorted(c for c in clones.iterdir() if (c / OWNER_FILE).exists()
                      and not alive(int((c / OWNER_FILE).read_text() or 0)))

    def reap_abandoned_clones(self) -> list[str]:
        """Stop the servers of abandoned clones and delete the clones; their servers would
        otherwise run on and keep the store busy."""
        done = []
        for clone in self.abandoned_clones():
            postmaster = _postmaster_pid(clone / "pgdata")
            if postmaster is not None:
                stop_pid(postmaster, sig=signal.SIGQUIT)
            # backends orphaned by a postmaster that was SIGKILLed still sit in the clone
            for pid in _processes_inside(clone):
                stop_pid(pid, sig=signal.SIGKILL)
            self.discard(clone)
            done.append(f"removed abandoned clone {clone.name}")
        return done

    def discard(self, path: Path) -> None:
        if path.exists():
            shutil.rmtree(path)

    @contextlib.contextmanager
    def build_lock(self, key: str, procs: ProcessTable | None = None) -> Iterator[None]:
        """Serialises builds of one golden snapshot across processes; with ``procs``, the wait
        for another's build ends when that run is stopping."""
        with _locked(self.root / "golden" / f".{key}.lock", procs):
            yield

    def _dirs(self) -> None:
        for sub in ("golden", "clones"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    def _make_image(self) -> None:
        _run(["truncate", "-s", IMAGE_SIZE, str(self.image)])
        _run(["mkfs.xfs", "-q", "-m", "reflink=1", str(self.image)])

    def _holders(self) -> list[int]:
        """One entry per hold (a process may hold the store for several runs at once);
        holds of processes that died without releasing are dropped."""
        path = self.cache / "store-xfs.holders"
        if not path.exists():
            return []
        return [int(p) for p in path.read_text().split() if p.isdigit() and alive(int(p))]

    def _write_holders(self, holders: list[int]) -> None:
        (self.cache / "store-xfs.holders").write_text("\n".join(map(str, sorted(holders))))


def _postmaster_pid(pgdata: Path) -> int | None:
    """The live postmaster serving ``pgdata``, if any (checked against /proc, since a stale
    postmaster.pid may name a pid the kernel has given to something else)."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None
    return pid if str(pgdata).encode() in argv and alive(pid) else None


def _processes_inside(directory: Path) -> list[int]:
    """Pids whose working directory is in ``directory`` (a PostgreSQL backend's is pgdata)."""
    inside = []
    prefix = str(directory.resolve()) + "/"
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            # a sandboxed server's directory reads through its sandbox's root
            cwd = cwd.removeprefix(str(SANDBOX_MOUNTPOINT))
            if (cwd + "/").startswith(prefix):
                inside.append(int(entry.name))
    return inside


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return "?"


def _run(argv: list[str]) -> None:
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise SnapshotError(f"{' '.join(argv)} failed ({result.returncode}): "
                            f"{result.stderr.strip()[:500]}")
