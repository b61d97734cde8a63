"""Shared fixtures: real servers the tests start on loopback and stop by pid.

The session ends by checking that nothing the tests started is still running and that no
snapshot store is still mounted: a leak fails the run, not the next one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from dbabench.env.postgres import PG_BIN, Credentials, PostgresInstance
from dbabench.env.processes import ProcessTable, alive
from dbabench.runner.run import open_store
from dbabench.workload.forkserver import FORK_SERVER

SERVER_BINARIES = (str(PG_BIN / "postgres"), "/usr/bin/prometheus",
                   "/usr/bin/prometheus-postgres-exporter", "/usr/bin/prometheus-node-exporter")


def _ppid(pid: str) -> int:
    try:
        return int((Path("/proc") / pid / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


WORKER = os.environ.get("PYTEST_XDIST_WORKER")


def _this_worker(entry: Path) -> bool:
    """An orphan is ours if it was started under this pytest-xdist worker (its environment
    says which; a daemonised postmaster keeps it): `make test` runs two at once."""
    try:
        environ = (entry / "environ").read_bytes().split(b"\0")
    except OSError:
        return False
    worker = next((v.split(b"=", 1)[1].decode() for v in environ
                   if v.startswith(b"PYTEST_XDIST_WORKER=")), None)
    return worker == WORKER


def _our_servers() -> list[str]:
    """Servers that are ours: children of this process, or orphans (a child that exited
    without stopping what it started). Other sessions' servers on the machine are not."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        argv0 = argv[0].decode(errors="replace")
        parent = _ppid(entry.name)
        if parent not in (os.getpid(), 1) or (parent == 1 and not _this_worker(entry)):
            continue
        # a workload, or the fork server and what it forked (which keep its command line)
        if argv0 in SERVER_BINARIES or any(a.startswith(b"dbabench.workload") for a in argv):
            found.append(f"{entry.name}: {' '.join(a.decode(errors='replace') for a in argv[:4])}")
    return found


def _store_mounts() -> list[str]:
    """The snapshot store's mount, unless another live process (another worker) holds it."""
    holders = open_store().cache / "store-xfs.holders"
    others = [int(p) for p in (holders.read_text().split() if holders.exists() else [])
              if p.isdigit() and int(p) != os.getpid() and alive(int(p))]
    if others:
        return []
    return [ln.split()[1] for ln in Path("/proc/self/mounts").read_text().splitlines()
            if "store-xfs" in ln]


@pytest.fixture(scope="session", autouse=True)
def nothing_left_running() -> Iterator[None]:
    before, mounted_before = set(_our_servers()), set(_store_mounts())
    yield
    # the fork server lives as long as this process; once it is gone, a workload it forked
    # that is still running is an orphan of this worker's, and leaked
    FORK_SERVER.close()
    leaked = [p for p in _our_servers() if p not in before]
    mounts = [m for m in _store_mounts() if m not in mounted_before]
    assert not leaked, f"tests left servers running: {leaked}"
    assert not mounts, f"tests left the snapshot store mounted: {mounts}"


@pytest.fixture(scope="session")
def scratch_root() -> Iterator[Path]:
    """A directory the ``postgres`` OS user can traverse (pytest's tmp_path is 0700 root)."""
    root = Path(tempfile.mkdtemp(prefix="dbabench-test-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres(scratch_root: Path) -> Iterator[PostgresInstance]:
    """A running PostgreSQL 15 with the baseline configuration and an empty ``app`` database."""
    procs = ProcessTable(scratch_root)
    instance = PostgresInstance(scratch_root / "pg", Credentials.generate())
    instance.initdb({}, procs)
    instance.start(procs)
    with psycopg.connect(instance.dsn(database="postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE app")
    try:
        yield instance
    finally:
        procs.stop_all()


@pytest.fixture(scope="session")
def as_root() -> bool:
    return os.geteuid() == 0
