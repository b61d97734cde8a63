"""Golden snapshots and thin clones: what survives a restore, and that nothing outlives a run.

Shutdown mode matters: a golden stopped *fast* keeps the cumulative statistics a fault can rest
on (dead tuples, n_mod_since_analyze); one stopped *immediate* comes back through crash
recovery with every counter at zero.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from dbabench.env.local import GoldenRecipe, LocalEnvironment
from dbabench.env.postgres import PostgresInstance
from dbabench.env.processes import (PIDS_FILE, ProcessTable, ProcessTableClosed, alive,
                                     reap_orphans, start_ticks)
from dbabench.env.snapshot import SnapshotStore, can_mount_xfs, choose_strategy

pytestmark = pytest.mark.integration

STATS = ("SELECT n_live_tup, n_dead_tup, n_mod_since_analyze FROM pg_stat_user_tables"
         " WHERE relname = 't'")


def populate(instance: PostgresInstance) -> None:
    with psycopg.connect(instance.dsn(database="postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE app")
    with psycopg.connect(instance.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE t(id int) WITH (autovacuum_enabled = false)")
        conn.execute("INSERT INTO t SELECT generate_series(1, 10000)")
        conn.execute("DELETE FROM t WHERE id <= 4000")
        time.sleep(1)  # let the backend flush its pending statistics to shared memory


def stats_after_restore(env: LocalEnvironment, key: str) -> tuple[int, int, int]:
    golden = env.ensure_golden(GoldenRecipe(key, "app", {}, populate))
    instance = env.restore(golden)
    with psycopg.connect(instance.dsn()) as conn:
        row = conn.execute(STATS).fetchone()
    assert row is not None
    return row


@pytest.fixture
def store(scratch_root: Path) -> SnapshotStore:
    cache = scratch_root / "cache"
    cache.mkdir(exist_ok=True)
    return SnapshotStore(cache, choose_strategy(cache))


def test_fast_stopped_golden_keeps_cumulative_statistics(store: SnapshotStore,
                                                         scratch_root: Path) -> None:
    run_dir = scratch_root / "run-stats"
    run_dir.mkdir()
    with LocalEnvironment(run_dir, "stats", store) as env:
        assert stats_after_restore(env, "stats-fast") == (6000, 4000, 14000)


def test_crash_recovery_zeroes_statistics(scratch_root: Path, postgres: PostgresInstance) -> None:
    """Why goldens are stopped fast: the same data after an immediate stop has no counters."""
    procs = ProcessTable(scratch_root)
    instance = PostgresInstance(scratch_root / "crash", postgres.credentials)
    instance.initdb({}, procs)
    instance.start(procs)
    try:
        populate(instance)
        instance.stop(procs, "immediate")
        instance.start(procs)
        with psycopg.connect(instance.dsn()) as conn:
            row = conn.execute(STATS).fetchone()
        assert row == (0, 0, 0)
    finally:
        procs.stop_all()


@pytest.mark.skipif(not can_mount_xfs(), reason="needs root and xfsprogs")
def test_xfs_store_is_mounted_only_while_used(scratch_root: Path) -> None:
    cache = scratch_root / "xfs-cache"
    cache.mkdir()
    a = SnapshotStore(cache, "xfs-loop")
    a.acquire()
    try:
        golden = a.golden("g")
        golden.mkdir()
        (golden / "data").write_bytes(os.urandom(1 << 20))
        clone = a.clone(golden, "c1")
        assert (clone / "data").read_bytes() == (golden / "data").read_bytes()
        # a second user in this process: the mount stays until the last release
        a.acquire()
        a.release()
        assert a.root.is_mount()
    finally:
        a.release()
    assert not a.root.is_mount()


def test_copy_strategy_clones_and_discards(scratch_root: Path) -> None:
    cache = scratch_root / "copy-cache"
    cache.mkdir()
    store = SnapshotStore(cache, "copy")
    store.acquire()
    golden = store.golden("g")
    golden.mkdir()
    (golden / "f").write_text("x")
    clone = store.clone(golden, "c")
    assert (clone / "f").read_text() == "x"
    store.discard(clone)
    assert not clone.exists()
    store.release()


def _sleeper(procs: ProcessTable) -> subprocess.Popen[bytes]:
    """A recorded child, once it runs its program. Popen returns when the exec has begun, but
    the kernel sets the new program's command line a little later (under load, 1960 of 2000
    spawns read it empty right after Popen), and until then a reaper rightly cannot tell that
    the pid is the one recorded: the reaping tests failed so in CI."""
    child = procs.spawn("sleeper", ["/bin/sleep", "300"], log=procs.run_dir / "sleep.log")
    cmdline = Path(f"/proc/{child.pid}/cmdline")
    deadline = time.monotonic() + 10
    while not cmdline.read_bytes().startswith(b"/bin/sleep\0"):
        assert time.monotonic() < deadline, "the sleeper did not start its program in 10 s"
        time.sleep(0.01)
    return child


def test_reap_orphans_stops_leftovers_of_a_dead_run(scratch_root: Path) -> None:
    runs = scratch_root / "runs"
    run_dir = runs / "dead-run"
    run_dir.mkdir(parents=True)
    procs = ProcessTable(run_dir)
    child = _sleeper(procs)
    pids = (run_dir / "pids.json").read_text()
    # pretend the owner died: rewrite the record with a pid that no longer exists
    dead_owner = subprocess.run(["/bin/true"]).returncode or 999_999
    (run_dir / "pids.json").write_text(pids.replace(f'"owner": {os.getpid()}',
                                                    f'"owner": {dead_owner}'))
    notes = reap_orphans(runs)
    child.wait(timeout=10)
    assert not alive(child.pid)
    assert notes and "sleeper" in notes[0]
    assert not (run_dir / "pids.json").exists()


def test_runs_of_a_live_process_are_not_orphans_even_to_itself(scratch_root: Path) -> None:
    """The operator and the battery run several at once in one process: a run that starts
    must not stop its siblings'. A file whose owner pid was reused by another process (here:
    ours, with another start time) is an orphan's."""
    runs = scratch_root / "live-runs"
    sibling = runs / "sibling"
    sibling.mkdir(parents=True)
    procs = ProcessTable(sibling)
    child = _sleeper(procs)
    try:
        assert reap_orphans(runs) == [] and alive(child.pid)
        record = json.loads((sibling / "pids.json").read_text())
        assert record["owner_started"] == start_ticks(os.getpid())
        record["owner_started"] -= 1
        (sibling / "pids.json").write_text(json.dumps(record))
        notes = reap_orphans(runs)
        assert notes and "sleeper" in notes[0]
        child.wait(timeout=10)
    finally:
        procs.stop_all()


def test_a_torn_down_table_starts_nothing_more(tmp_path: Path) -> None:
    """A thread still starting monitoring while the run is torn down must not leave a
    server behind: after stop_all, spawn refuses."""
    procs = ProcessTable(tmp_path)
    sleeper = procs.spawn("sleeper", ["/bin/sleep", "300"], log=tmp_path / "s.log")
    procs.stop_all()
    assert sleeper.poll() is not None
    with pytest.raises(ProcessTableClosed, match="torn down"):
        procs.spawn("late", ["/bin/sleep", "300"], log=tmp_path / "late.log")
    assert not (tmp_path / "late.log").exists()


def test_a_stopped_child_hands_over_its_cpu_and_its_childrens(tmp_path: Path) -> None:
    """The battery's CPU per run: a child's own CPU and what it reaped (as a postmaster reaps
    its backends) are counted under its name when the run stops it."""
    procs = ProcessTable(tmp_path)
    burn = "import time; t = time.process_time(); exec('while time.process_time() - t < 0.3: pass')"
    # a shell that waits for a busy grandchild, then sleeps until it is stopped
    procs.spawn("parent", ["/bin/sh", "-c", f"{sys.executable} -c \"{burn}\"; exec sleep 300"],
                log=tmp_path / "parent.log")
    idle = procs.spawn("idle", ["/bin/sleep", "300"], log=tmp_path / "idle.log")
    deadline = time.monotonic() + 30
    while not Path(f"/proc/{procs.records[0].pid}/cmdline").read_text().startswith("sleep"):
        assert time.monotonic() < deadline, "the busy grandchild did not finish"
        time.sleep(0.05)
    procs.stop_all()
    assert 0.3 <= procs.cpu_seconds["parent"] < 5
    assert procs.cpu_seconds["idle"] < 0.1
    assert idle.returncode is not None  # reaped: Popen knows it ended


def test_a_child_run_to_its_end_hands_over_its_status_and_cpu(tmp_path: Path) -> None:
    """initdb and the like: the table waits for the child, returns its exit status, counts its
    CPU with the others' and drops it from the pid file, where it was while it ran."""
    procs = ProcessTable(tmp_path)
    burn = ("import json, sys, time; t = time.process_time();"
            " exec('while time.process_time() - t < 0.3: pass');"
            f" print(json.load(open({str(tmp_path / PIDS_FILE)!r}))['processes'][0]['name']);"
            " sys.exit(3)")
    log = tmp_path / "burn.log"
    assert procs.run("burn", [sys.executable, "-c", burn], log=log,
                     environment=dict(os.environ)) == 3
    assert log.read_text().strip() == "burn"
    assert 0.3 <= procs.cpu_seconds["burn"] < 5
    assert procs.records == []
    assert json.loads((tmp_path / PIDS_FILE).read_text())["processes"] == []


def test_clones_of_dead_owners_are_reaped_with_their_server(scratch_root: Path) -> None:
    cache = scratch_root / "reap-cache"
    cache.mkdir()
    store = SnapshotStore(cache, "copy")
    store.acquire()
    golden = store.golden("g")
    (golden / "pgdata").mkdir(parents=True)
    mine = store.clone(golden, "mine")
    dead = store.clone(golden, "dead")
    # a stand-in postmaster: its command line names the clone's data directory
    server = subprocess.Popen(["/bin/sh", "-c", "sleep 300", str(dead / "pgdata")])
    (dead / "pgdata" / "postmaster.pid").write_text(f"{server.pid}\n")
    (dead / ".owner").write_text(str(subprocess.run(["/bin/true"]).returncode or 999_999))
    # a backend whose postmaster was SIGKILLed: no pid file names it, its cwd is the clone
    orphan = subprocess.Popen(["/bin/sleep", "300"], cwd=dead / "pgdata")
    notes = store.reap_abandoned_clones()
    assert server.wait(timeout=10) != 0
    assert orphan.wait(timeout=10) != 0
    assert notes == ["removed abandoned clone dead"]
    assert mine.exists() and not dead.exists()
    store.release()


def test_a_golden_is_the_harness_alone_and_a_clone_the_servers(store: SnapshotStore,
                                                               scratch_root: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("servers run as another user only when dbabench runs as root")
    run_dir = scratch_root / "run-sealed"
    run_dir.mkdir()

    def as_postgres(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["setpriv", "--reuid=postgres", "--regid=postgres",
                               "--clear-groups", "/bin/sh", "-c", command],
                              capture_output=True, text=True)

    with LocalEnvironment(run_dir, "sealed", store) as env:
        golden = env.ensure_golden(GoldenRecipe("sealed", "app", {}, populate))
        # what a server's user (every run's, outside its sandbox too) can do to the golden
        for attempt in (f"touch {golden.path}/pgdata/poison",
                        f"cat {golden.path}/pgdata/PG_VERSION",
                        f"echo x >> {golden.path}/pgdata/postgresql.auto.conf"):
            done = as_postgres(attempt)
            assert done.returncode != 0 and "Permission denied" in done.stderr, attempt
        instance = env.restore(golden)
        assert instance.pgdata.owner() == "postgres"
        assert (instance.home / "golden.json").owner() == "root"
        assert as_postgres(f"cat {instance.home}/golden.json").returncode != 0

    # a golden built before goldens were sealed is sealed when it is next used
    (scratch_root / "run-resealed").mkdir()
    with LocalEnvironment(scratch_root / "run-resealed", "resealed", store) as env:
        subprocess.run(["chown", "-R", "postgres:postgres", str(golden.path)], check=True)
        (golden.path).chmod(0o755)
        assert not store.sealed(golden.path)
        env.ensure_golden(GoldenRecipe("sealed", "app", {}, populate))
        assert store.sealed(golden.path)
        assert as_postgres(f"touch {golden.path}/pgdata/poison").returncode != 0
