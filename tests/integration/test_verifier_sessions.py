"""The verifier's sessions against a real server: kept from poll to poll while admission polls,
new again once it ends, and a kept session that a fault ended is no failed check."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import psycopg

from dbabench.env.postgres import PostgresInstance
from dbabench.evaluate.predicates import Probe, check
from dbabench.evaluate.sessions import VERIFIER_APPLICATION
from dbabench.model.scenario import SqlPredicate

# this check's own timeout, and the search path the verifier pins at login
BACKEND = SqlPredicate(name="backend", check="sql", timeout_ms=1500,
                       sql="SELECT current_setting('statement_timeout') = '1500ms'"
                           " AND current_setting('search_path') LIKE 'pg_catalog,%public'")
SLOW = SqlPredicate(name="slow", check="sql", timeout_ms=200, sql="SELECT pg_sleep(1) IS NULL")


def _verifier_pids(postgres: PostgresInstance) -> set[int]:
    with psycopg.connect(postgres.dsn()) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s",
                            (VERIFIER_APPLICATION,)).fetchall()
    return {r[0] for r in rows}


def _left_behind(postgres: PostgresInstance, before: set[int]) -> set[int]:
    """The verifier's sessions still there: a closed session's backend leaves
    pg_stat_activity a moment after its client hangs up, more on a busy machine."""
    deadline = time.monotonic() + 5
    while (left := _verifier_pids(postgres) - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _terminate(postgres: PostgresInstance, pids: set[int]) -> None:
    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        for pid in pids:
            conn.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))


def test_admission_keeps_its_sessions_and_closes_them_before_the_agent(
        postgres: PostgresInstance, scratch_root: Path) -> None:
    probe = Probe(dsn=postgres.dsn(), business_log=scratch_root / "none.jsonl",
                  pg_log_dir=scratch_root)
    before = _verifier_pids(postgres)

    async def polls() -> tuple[list[bool], set[int], set[int], set[int]]:
        passed = []
        async with probe.keeping_sessions():
            passed.append((await check(BACKEND, probe)).passed)
            first = _verifier_pids(postgres) - before
            # a timeout of its own on the same session, then this check's own again
            passed.append(not (await check(SLOW, probe)).passed)
            passed.append((await check(BACKEND, probe)).passed)
            second = _verifier_pids(postgres) - before
            _terminate(postgres, second)  # a fault's session reaper, between two polls
            passed.append((await check(BACKEND, probe)).passed)
            third = _verifier_pids(postgres) - before
        return passed, first, second, third

    passed, first, second, third = asyncio.run(polls())
    assert passed == [True, True, True, True]
    assert len(first) == 1 and second == first
    assert len(third) == 1 and third != first
    # closed as admission ends: the agent never sees a verifier session
    assert _left_behind(postgres, before) == set()


def test_outside_admission_every_check_logs_in_anew(
        postgres: PostgresInstance, scratch_root: Path) -> None:
    probe = Probe(dsn=postgres.dsn(), business_log=scratch_root / "none.jsonl",
                  pg_log_dir=scratch_root)
    # not a boolean: the check fails and reports the value, the backend that ran it
    pid = SqlPredicate(name="pid", check="sql", sql="SELECT pg_backend_pid()")

    async def twice() -> list[object]:
        return [(await check(pid, probe)).value for _ in range(2)]

    before = _verifier_pids(postgres)
    first, second = asyncio.run(twice())
    assert first != second and str(first).isdigit() and str(second).isdigit()
    assert _left_behind(postgres, before) == set()


async def test_the_statements_history_is_emptied_and_a_server_without_it_is_no_error(
        scratch_root: Path) -> None:
    from dbabench.env.postgres import Credentials
    from dbabench.env.processes import ProcessTable
    procs = ProcessTable(scratch_root)
    for preload in ("pg_stat_statements", ""):
        # a fault can take the library out of shared_preload_libraries (and restart)
        instance = PostgresInstance(scratch_root / f"forget-{preload or 'none'}",
                                    Credentials.generate(), database="postgres")
        instance.initdb({"shared_preload_libraries": preload}, procs)
        instance.start(procs)
        try:
            with psycopg.connect(instance.dsn(), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION pg_stat_statements")
                conn.execute("CREATE TABLE secret_fault_step (x int)")
            probe = Probe(dsn=instance.dsn(), business_log=scratch_root / "none.jsonl",
                          pg_log_dir=scratch_root)
            await probe.forget_statements()
            if preload:
                with psycopg.connect(instance.dsn(), autocommit=True) as conn:
                    history = conn.execute("SELECT string_agg(query, ' | ')"
                                           " FROM pg_stat_statements").fetchone()[0] or ""
                assert "secret_fault_step" not in history and "reset" not in history, history
        finally:
            instance.stop(procs, "immediate")
