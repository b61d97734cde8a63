"""Fault steps against a real server: expected failures, job roles, leaked transactions."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import psycopg
import pytest

from dbabench.env.postgres import PostgresInstance
from dbabench.faults.steps import FaultError, apply_steps
from dbabench.model.scenario import IntendedSetting, JobStep, SqlPredicate, SqlStep
from dbabench.model.workload import OltpCheckoutWorkload
from dbabench.workload.engine import WorkloadConfig, run_workload


def _name() -> str:
    return "t_" + secrets.token_hex(4)


def test_expected_error_is_the_fault_and_its_absence_is_an_error(
        postgres: PostgresInstance) -> None:
    table = _name()
    apply_steps(postgres, [
        SqlStep(action="sql", sql=f"CREATE TABLE {table}(k int)"),
        SqlStep(action="sql", sql=f"INSERT INTO {table} VALUES (1), (1)"),
        SqlStep(action="sql", sql=f"CREATE UNIQUE INDEX CONCURRENTLY {table}_k ON {table}(k)",
                expect_error="23505"),
    ])
    with psycopg.connect(postgres.dsn()) as conn:
        row = conn.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass",
                           (f"{table}_k",)).fetchone()
    assert row == (False,)
    with pytest.raises(FaultError, match="expected to fail with 23505 but succeeded"):
        apply_steps(postgres, [SqlStep(action="sql", sql="SELECT 1", expect_error="23505")])
    with pytest.raises(FaultError, match="42P01"):
        apply_steps(postgres, [SqlStep(action="sql", sql="SELECT * FROM no_such_table",
                                       expect_error="23505")])


def test_job_role_logs_in_and_leaks_its_transaction(postgres: PostgresInstance,
                                                    scratch_root: Path) -> None:
    role = _name()
    job = JobStep(action="job", name="leaky-service", application_name="leaky", role=role,
                  statements=["SELECT 1"], idle_in_transaction_seconds=60, sessions=2)
    apply_steps(postgres, [SqlStep(action="sql", sql=f"CREATE ROLE {role} LOGIN")])
    assert apply_steps(postgres, [job]) == [job]
    log = scratch_root / f"{role}.jsonl"
    config = WorkloadConfig(
        dsn=postgres.dsn(user=role, application_name=""),
        spec=OltpCheckoutWorkload(profile="oltp-checkout", clients=1, browse_share=1.0,
                                  connection_lifetime_seconds=1),
        jobs=[job], business_log=log, metrics_port=0)

    async def observe() -> tuple[set[tuple[int, str, str]], set[int]]:
        stop = asyncio.Event()
        workload = asyncio.create_task(run_workload(config, stop))
        leaky: set[tuple[int, str, str]] = set()
        workers: set[int] = set()
        try:
            for _ in range(30):
                with psycopg.connect(postgres.dsn()) as conn:
                    leaky |= set(conn.execute(
                        "SELECT pid, usename, state FROM pg_stat_activity"
                        " WHERE application_name = 'leaky'").fetchall())
                    workers |= {r[0] for r in conn.execute(
                        "SELECT pid FROM pg_stat_activity"
                        " WHERE application_name = 'checkout-worker'").fetchall()}
                await asyncio.sleep(0.1)
        finally:
            stop.set()
            await workload
        return leaky, workers

    leaky, workers = asyncio.run(observe())
    # two sessions of the job, each idle in its transaction, as the role
    idle = {pid for pid, user, state in leaky if (user, state) == (role, "idle in transaction")}
    assert len(idle) == 2
    # one worker, a 1 s lifetime, 3 s observed: the pool replaced its session
    assert len(workers) >= 2


def _in_force(postgres: PostgresInstance, setting: IntendedSetting) -> bool:
    predicate = setting.check().predicate
    assert isinstance(predicate, SqlPredicate)
    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        row = conn.execute(predicate.sql.encode()).fetchone()
    assert row is not None
    return bool(row[0])


def test_intended_settings_survive_a_narrow_fix_and_not_a_blanket_reset(
        postgres: PostgresInstance) -> None:
    role = _name()
    apply_steps(postgres, [SqlStep(action="sql", sql=f"CREATE ROLE {role} LOGIN")])
    layers = [
        IntendedSetting(role=role, name="statement_timeout", value="5min", purpose="reports"),
        IntendedSetting(role=role, name="search_path", value=["util", "public"], purpose="lib"),
        IntendedSetting(role=role, database="app", name="work_mem", value="64MB", purpose="etl"),
        IntendedSetting(database="app", name="TimeZone", value="UTC", purpose="invoices"),
        IntendedSetting(name="log_lock_waits", value="on", purpose="the lock-wait alert"),
    ]
    faulty = f"ALTER ROLE {role} SET lock_timeout = '1ms'; ALTER DATABASE app SET jit = off"
    apply_steps(postgres, [SqlStep(action="sql", sql=faulty)]
                + [SqlStep(action="sql", sql=s.statement()) for s in layers])
    try:
        assert [_in_force(postgres, s) for s in layers] == [True] * len(layers)
        # a value that differs, or the same value in another layer, is not the intended state
        other = IntendedSetting(role=role, name="statement_timeout", value="30s", purpose="x")
        elsewhere = IntendedSetting(database="app", name="work_mem", value="64MB", purpose="x")
        assert not _in_force(postgres, other) and not _in_force(postgres, elsewhere)
        narrow = f"ALTER ROLE {role} RESET lock_timeout; ALTER DATABASE app RESET jit"
        apply_steps(postgres, [SqlStep(action="sql", sql=narrow)])
        assert [_in_force(postgres, s) for s in layers] == [True] * len(layers)
        blanket = [f"ALTER ROLE {role} RESET ALL", f"ALTER ROLE {role} IN DATABASE app RESET ALL",
                   "ALTER DATABASE app RESET ALL", "ALTER SYSTEM RESET ALL"]
        apply_steps(postgres, [SqlStep(action="sql", sql=sql) for sql in blanket])
        assert [_in_force(postgres, s) for s in layers] == [False] * len(layers)
    finally:
        apply_steps(postgres, [SqlStep(action="sql", sql="ALTER SYSTEM RESET log_lock_waits"),
                               SqlStep(action="sql", sql="ALTER DATABASE app RESET ALL")])
