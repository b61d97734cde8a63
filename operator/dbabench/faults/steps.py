"""Execute the fault steps of a scenario against an instance.

SQL steps run as the superuser in autocommit, each statement on its own, so that VACUUM,
CREATE INDEX CONCURRENTLY and ALTER SYSTEM behave as they do when a person runs them.
Jobs are not executed here: they are long-lived clients and run in the workload process.
"""

from __future__ import annotations

import hashlib

import psycopg
from psycopg import sql as pgsql

from dbabench.errors import PermanentInfraError
from dbabench.env.postgres import APP_ROLE, PostgresInstance
from dbabench.model.scenario import FaultStep, IntendedSetting, ScenarioSpec, SqlStep
from dbabench.model.workload import JobStep
from dbabench.scenario.datasets import Dataset, dataset_of


class FaultError(PermanentInfraError, RuntimeError):
    """The scenario's fault program failed on this server: the same program fails again."""


def run_sql(instance: PostgresInstance, text: str, *, database: str | None = None,
            expect_error: str | None = None) -> None:
    with psycopg.connect(instance.dsn(database=database, application_name="dbabench-fault"),
                         autocommit=True) as conn:
        try:
            conn.execute(text.encode())  # bytes: no placeholder parsing of '%'
        except psycopg.Error as e:
            if expect_error is not None and e.sqlstate == expect_error:
                return
            raise FaultError(f"fault SQL failed: {e.sqlstate} {str(e).strip()}\n  in: "
                             f"{text.strip()[:300]}") from e
    if expect_error is not None:
        raise FaultError(f"fault SQL was expected to fail with {expect_error} but succeeded\n"
                         f"  in: {text.strip()[:300]}")


def _early(setting: IntendedSetting, spec: ScenarioSpec) -> bool:
    """Whether an intended setting is stored before the fault: about half of them, by a
    digest of the statement and the fault (stable from build to build, and unrelated to
    anything an agent can see)."""
    material = [setting.statement(), *(s.model_dump_json() for s in spec.fault.persistent)]
    return hashlib.sha256("\0".join(material).encode()).digest()[0] % 2 == 0


def _roles(instance: PostgresInstance) -> set[str]:
    with psycopg.connect(instance.dsn(database="postgres", application_name="dbabench-build"),
                         autocommit=True) as conn:
        return {name for (name,) in conn.execute("SELECT rolname FROM pg_roles")}


def create_database(instance: PostgresInstance, dataset: Dataset) -> None:
    """The application role and database, then the dataset, as the golden's starting point."""
    with psycopg.connect(instance.dsn(database="postgres", application_name="dbabench-build"),
                         autocommit=True) as conn:
        conn.execute(pgsql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
            pgsql.Identifier(APP_ROLE), pgsql.Literal(instance.credentials.app_password)))
        conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(instance.database)))
    run_sql(instance, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    starts = [*dataset.sessions, len(dataset.statements)]
    for start, end in zip(starts, starts[1:]):
        with psycopg.connect(instance.dsn(application_name="dbabench-build"),
                             autocommit=True) as conn:
            for statement in dataset.statements[start:end]:
                try:
                    conn.execute(statement.encode())  # bytes: no placeholder parsing of '%'
                except psycopg.Error as e:
                    raise FaultError(f"the {dataset.name} dataset's build failed: {e.sqlstate}"
                                     f" {str(e).strip()}\n  in: {statement.strip()[:300]}") from e
    for setting in dataset.intended:
        _store(instance, setting)


def _store(instance: PostgresInstance, setting: IntendedSetting, *, reset: bool = False) -> None:
    """Store (or remove) an intended setting in its layer: a table's in the application's
    database, the others' from ``postgres`` (they are the cluster's)."""
    run_sql(instance, setting.reset() if reset else setting.statement(),
            database=None if setting.table else "postgres")


def apply_steps(instance: PostgresInstance, steps: list[FaultStep], *,
                replica: PostgresInstance | None = None) -> list[JobStep]:
    """Run the SQL steps in order (on the primary ``instance`` or its ``replica``); return the
    jobs for the workload process to host."""
    jobs: list[JobStep] = []
    for step in steps:
        if isinstance(step, SqlStep):
            target = instance if step.server == "primary" else replica
            if target is None:
                raise FaultError(f"a fault step addresses the replica, but there is none:"
                                 f" {step.sql.strip()[:100]}")
            run_sql(target, step.sql, database=step.database, expect_error=step.expect_error)
        else:
            if step.role is not None:
                # goldens carry generated credentials; a job's role gets the app's at restore
                with psycopg.connect(instance.dsn(application_name="dbabench-fault"),
                                     autocommit=True) as conn:
                    conn.execute(pgsql.SQL("ALTER ROLE {} PASSWORD {}").format(
                        pgsql.Identifier(step.role),
                        pgsql.Literal(instance.credentials.app_password)))
            jobs.append(step)
    return jobs


def populate_golden(instance: PostgresInstance, spec: ScenarioSpec, *,
                    on_base: bool = False) -> None:
    """What a golden snapshot holds: the dataset, the intended state, the persistent fault,
    the standby's slot. ``on_base``: ``instance`` is a clone of the dataset's own snapshot
    (``populate_base``), which holds the dataset and its intended state already.

    PostgreSQL keeps a layer's settings (a ``pg_db_role_setting`` row, ``postgresql.auto.conf``,
    a table's reloptions) in the order they were first set, so where the fault sits among the
    intended settings must tell nothing: some are stored before it (``_early``), the rest after
    it (the base's are removed first), and each is set again after it (in place: the order
    stays). Only the server's (not reloaded until after the fault), tables' and those of roles
    that exist by then can go first; a database's never does, since it would govern the
    fault's own sessions."""
    dataset = dataset_of(spec.database)
    if not on_base:
        create_database(instance, dataset)
    in_base = {s.key for s in dataset.intended}  # create_database stores them
    roles = _roles(instance)
    for setting in spec.intended:
        early = _early(setting, spec) and (setting.table is not None or (
            setting.database is None and (setting.role is None or setting.role in roles)))
        if setting.key in in_base and not early:
            _store(instance, setting, reset=True)
        elif setting.key not in in_base and early:
            _store(instance, setting)
    apply_steps(instance, spec.fault.persistent)
    for setting in spec.intended:
        _store(instance, setting)
    if any(s.role is None and s.database is None and s.table is None for s in spec.intended):
        run_sql(instance, "SELECT pg_reload_conf()", database="postgres")
    replica = spec.database.replica
    if replica is not None and replica.slot:
        # reserved now: the standby, cloned from this golden, starts streaming at its end
        run_sql(instance, f"SELECT pg_create_physical_replication_slot('{replica.slot}', true)",
                database="postgres")


def populate_base(instance: PostgresInstance, dataset: Dataset) -> None:
    """A shared dataset's own snapshot: the dataset and its intended state, no scenario's."""
    create_database(instance, dataset)
