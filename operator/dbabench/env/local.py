"""env.local: one run's environment as processes on this machine.

Golden dirty state is built once per scenario key and kept in the snapshot store; each run
restores a thin clone of it, starts it on a socket of its own, and at the end stops everything
it started by pid, keeps the logs, and discards the clone.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import psycopg
from psycopg import sql as pgsql

from dbabench.errors import InfraError
from dbabench.env.monitoring import (EXPORTER_APPLICATION, EXPORTER_JOBS, Monitoring,
                                     exporter_dsn, start_monitoring)
from dbabench.env.postgres import APP_ROLE, GOLDEN_META, SUPERUSER, Credentials, PostgresInstance
from dbabench.env.processes import ProcessTable, chown_for_postgres
from dbabench.env.snapshot import SnapshotStore
from dbabench.scenario.loader import KEY_DIGEST_CHARS
from dbabench.model.scenario import ReplicaSpec
from dbabench.model.tool import ShutdownMode
from dbabench.model.workload import Server

Populate = Callable[[PostgresInstance], None]


@dataclass(frozen=True)
class GoldenRecipe:
    """What a golden cluster is built from, wherever it is built (the local store, a volume)."""

    key: str
    database: str
    settings: dict[str, bool | int | float | str]
    populate: Populate
    """Fills a started cluster: an empty one, or a clone of ``base``'s golden."""
    base: GoldenRecipe | None = None
    """A snapshot of its own this golden is built on (a shared dataset's, built once)."""


class GoldenError(InfraError, RuntimeError):
    pass


@dataclass
class Golden:
    key: str
    path: Path
    credentials: Credentials
    database: str
    built_at: str
    build_seconds: float
    size_bytes: int


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _load_golden(key: str, path: Path) -> Golden:
    meta = json.loads((path / GOLDEN_META).read_text())
    return Golden(key=key, path=path, credentials=Credentials(**meta["credentials"]),
                  database=meta["database"], built_at=meta["built_at"],
                  build_seconds=meta["build_seconds"], size_bytes=meta["size_bytes"])


def build_cluster(home: Path, recipe: GoldenRecipe, credentials: Credentials, *,
                  procs: ProcessTable, base: Golden | None = None) -> None:
    """Fill ``home`` with a golden cluster: initdb (or a copy of ``base``, the golden of
    ``recipe.base``), populate, fast stop, ``golden.json``. Without ``base`` a recipe with one
    builds it in place first. The same steps whether ``home`` is the local store's or a
    Kubernetes volume."""
    started = time.monotonic()
    if base is not None:
        instance = PostgresInstance(home, base.credentials, database=recipe.database)
        instance.write_config(recipe.settings)
        instance.relocate(instance.port)  # its own log directory
    else:
        instance = PostgresInstance(home, credentials, database=recipe.database)
    try:
        if base is None:
            instance.initdb(recipe.settings, procs)
        instance.start(procs)
        if base is not None:
            _rotate(instance, credentials)
        elif recipe.base is not None:
            recipe.base.populate(instance)
        recipe.populate(instance)
        # fast, never immediate: crash recovery would zero the statistics the fault
        # rests on (see env.postgres).
        instance.stop(procs, ShutdownMode.fast)
        # a run stopped meanwhile may have killed the server in the middle of that shutdown
        procs.check_open("building the golden snapshot")
        state = instance.cluster_state()
        if state != "shut down":
            raise GoldenError(f"the golden cluster did not shut down cleanly ({state!r}):"
                              " a restore would come back through crash recovery")
    except BaseException:
        instance.stop(procs, ShutdownMode.immediate)
        raise
    finally:
        instance.discard_socket()
    shutil.rmtree(instance.log_dir, ignore_errors=True)
    (instance.home / "postmaster.out").unlink(missing_ok=True)
    # pg_stat_statements saved the build's statements at shutdown, the application's
    # password among them: no clone starts with them (each run empties it again, admit)
    (instance.pgdata / "pg_stat" / "pg_stat_statements.stat").unlink(missing_ok=True)
    meta = {
        "key": recipe.key, "database": recipe.database, "credentials": credentials.__dict__,
        "built_at": datetime.now(timezone.utc).isoformat(),
        "build_seconds": round(time.monotonic() - started, 2),
        "size_bytes": _du(home),
    }
    meta_path = home / GOLDEN_META
    meta_path.write_text(json.dumps(meta, indent=1))
    meta_path.chmod(0o600)


def _rotate(instance: PostgresInstance, credentials: Credentials) -> None:
    """A golden built on a shared base gets passwords of its own: one scenario's, read off
    its snapshot, opens no other's."""
    with psycopg.connect(instance.dsn(database="postgres", application_name="dbabench-build"),
                         autocommit=True) as conn:
        for role, password in ((SUPERUSER, credentials.superuser_password),
                               (APP_ROLE, credentials.app_password)):
            conn.execute(pgsql.SQL("ALTER ROLE {} PASSWORD {}").format(
                pgsql.Identifier(role), pgsql.Literal(password)))
    instance.credentials = credentials


@dataclass
class LocalEnvironment:
    run_dir: Path
    run_id: str
    store: SnapshotStore
    procs: ProcessTable = field(init=False)
    instance: PostgresInstance | None = None
    replica: PostgresInstance | None = None
    monitoring: Monitoring | None = None
    _clones: list[Path] = field(default_factory=list)
    _acquired: bool = False

    def __post_init__(self) -> None:
        self.procs = ProcessTable(self.run_dir)

    def __enter__(self) -> "LocalEnvironment":
        self.open()
        return self

    def open(self) -> list[str]:
        """Hold the snapshot store for this run (the first holder mounts it); return what was
        reaped of dead runs."""
        notes = self.store.acquire(self.procs)
        self._acquired = True
        return notes

    def __exit__(self, *exc: object) -> None:
        self.teardown()

    # -- golden state ----------------------------------------------------------------------

    def has_golden(self, key: str) -> bool:
        return (self.store.golden(key) / GOLDEN_META).exists()

    def ensure_golden(self, recipe: GoldenRecipe, supersedes: str | None = None) -> Golden:
        """Return the golden snapshot of ``recipe``, building it first if there is none.

        A new build removes the goldens whose names match the glob ``supersedes`` (the same
        scenario built from an older definition): nothing will ask for them again.
        """
        key = recipe.key
        path = self.store.golden(key)
        with self.store.build_lock(key, self.procs):
            if (path / GOLDEN_META).exists():
                if not self.store.sealed(path):
                    self.store.seal(path)
                return _load_golden(key, path)
            if supersedes:
                for old in path.parent.glob(supersedes):
                    if old.is_dir():
                        shutil.rmtree(old)
            base = None
            if recipe.base is not None:
                family = recipe.base.key.rsplit("-", 1)[0]
                base = self.ensure_golden(recipe.base,
                                          supersedes=f"{family}-{'?' * KEY_DIGEST_CHARS}")
            building = path.with_name(f".{key}.building-{uuid.uuid4().hex[:8]}")
            try:
                if base is not None:
                    self.store.copy(base.path, building)
                    chown_for_postgres(building, tree=True)
                build_cluster(building, recipe, Credentials.generate(), procs=self.procs,
                              base=base)
                self.store.seal(building)
                building.rename(path)
            except BaseException:
                shutil.rmtree(building, ignore_errors=True)
                raise
            return _load_golden(key, path)

    # -- one run ---------------------------------------------------------------------------

    def _clone(self, golden: Golden, name: str) -> PostgresInstance:
        path = self.store.clone(golden.path, name)
        self._clones.append(path)
        chown_for_postgres(path, tree=True)
        # the credentials are the harness's: the server has no use for them
        os.chown(path / GOLDEN_META, os.geteuid(), os.getegid())
        instance = PostgresInstance(path, golden.credentials, database=golden.database)
        instance.relocate(instance.port)
        return instance

    def restore(self, golden: Golden, replica: ReplicaSpec | None = None) -> PostgresInstance:
        """Start a clone of the golden; with ``replica``, a second clone as its hot standby."""
        instance = self._clone(golden, self.run_id)
        instance.start(self.procs)
        self.instance = instance
        if replica is not None:
            standby = self._clone(golden, f"{self.run_id}-replica")
            standby.follow(instance, slot=replica.slot, settings=replica.settings)
            standby.start(self.procs)
            self.replica = standby
        return instance

    def server(self, name: Server) -> PostgresInstance:
        """The restored primary, or its standby."""
        instance = self.instance if name == "primary" else self.replica
        assert instance is not None, f"no {name} restored"
        return instance

    def start_monitoring(self, extra_targets: dict[str, str]) -> Monitoring:
        assert self.instance is not None, "restore() first"
        servers = {EXPORTER_JOBS["primary"]: self.instance, EXPORTER_JOBS["replica"]: self.replica}
        dsns = {job: exporter_dsn(server.dsn(application_name=EXPORTER_APPLICATION))
                for job, server in servers.items() if server is not None}
        self.monitoring = start_monitoring(self.procs, self.run_dir, run_id=self.run_id,
                                           postgres_dsns=dsns, extra_targets=extra_targets)
        return self.monitoring

    def teardown(self) -> None:
        """Stop what this run started (newest first), keep the logs, drop the clone."""
        self.procs.stop_all()
        for server, name in ((self.instance, "postgresql"), (self.replica, "replica")):
            if server is not None:
                server.pid = None
                server.discard_socket()
                if server.log_dir.exists():
                    shutil.copytree(server.log_dir, self.run_dir / "logs" / name,
                                    dirs_exist_ok=True)
        while self._clones:
            self.store.discard(self._clones.pop())
        if self._acquired:
            self.store.release()
            self._acquired = False


@dataclass
class LocalInstanceControl:
    """manage_instance's process control over a local instance (start, stop, restart by pid)."""

    env: LocalEnvironment
    server: Server = "primary"
    started_at: float = field(default_factory=time.time)

    def _instance(self) -> PostgresInstance:
        return self.env.server(self.server)

    def status(self) -> dict[str, object]:
        instance = self._instance()
        return {"server": self.server, "running": instance.running(), "pid": instance.pid,
                "port": instance.port, "host": instance.host, "version": "15",
                "uptime_seconds": round(time.time() - self.started_at, 1)
                if instance.running() else None}

    def start(self) -> None:
        instance = self._instance()
        if not instance.running():
            instance.start(self.env.procs)
            self.started_at = time.time()

    def stop(self, mode: ShutdownMode) -> None:
        self._instance().stop(self.env.procs, mode)

    def restart(self, mode: ShutdownMode) -> None:
        self.stop(mode)
        self.start()
