"""How the workload files a failed request: a server error on a live session is the request's
error (the session goes on at once); a connection the server ended or refused is a connection
error, after which the client reconnects with a pause. A stop cuts what every session runs
short, and what it cuts is not logged."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from prometheus_client import CollectorRegistry

from dbabench.env.postgres import PostgresInstance
from dbabench.faults.steps import apply_steps
from dbabench.model.scenario import SqlStep
from dbabench.workload.businesslog import BusinessLogWriter, read_events
from dbabench.model.workload import JobStep, OltpCheckoutWorkload
from dbabench.workload.engine import Client, Metrics, WorkloadConfig, run_workload, stored

pytestmark = pytest.mark.integration


def raising(sqlstate: str):  # type: ignore[no-untyped-def]
    def body(conn: psycopg.Connection) -> None:
        conn.execute(f"DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '{sqlstate}';"
                           " END $$")
    return body


def ping(conn: psycopg.Connection) -> None:
    conn.execute("SELECT 1")


@pytest.mark.parametrize("sqlstate", ["40P01", "40001", "55000", "53200"])
def test_server_errors_on_a_live_session_are_the_requests_own(
        postgres: PostgresInstance, tmp_path: Path, sqlstate: str) -> None:
    log = tmp_path / "business.jsonl"
    writer = BusinessLogWriter(log)
    client = Client(dsn=postgres.dsn(), service="svc", log=writer,
                    metrics=Metrics(CollectorRegistry()))
    assert client.request("op", ping) == "ok"
    session = client.conn
    # deadlock, serialization failure, object state, resources: psycopg's OperationalError
    assert client.request("op", raising(sqlstate)) == "error"
    assert client.conn is session and client.request("op", ping) == "ok"
    client._drop()
    writer.close()
    failed = [e for e in read_events(log) if e.outcome != "ok"]
    assert [(e.outcome, e.sqlstate) for e in failed] == [("error", sqlstate)]


def test_a_write_that_stores_nothing_fails_the_request(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    """The fourth outside attack (round4/m2.py): a BEFORE INSERT trigger that returns NULL
    discarded every new order while each request said ok, and the run passed. The
    application checks what its writes changed, as one does with RETURNING or a row count."""
    table = "t_" + uuid.uuid4().hex[:8]
    apply_steps(postgres, [SqlStep(action="sql", sql=(
        f"CREATE TABLE {table}(id serial PRIMARY KEY, n int);"
        f" CREATE FUNCTION {table}_discard() RETURNS trigger LANGUAGE plpgsql AS"
        f" $$ BEGIN RETURN NULL; END $$;"
        f" CREATE TRIGGER discard BEFORE INSERT ON {table} FOR EACH ROW"
        f" EXECUTE FUNCTION {table}_discard()"))])
    log = tmp_path / "business.jsonl"
    writer = BusinessLogWriter(log)
    client = Client(dsn=postgres.dsn(), service="svc", log=writer,
                    metrics=Metrics(CollectorRegistry()))

    def insert(conn: psycopg.Connection) -> None:
        stored(conn.execute(f"INSERT INTO {table}(n) VALUES (1)"), f"INSERT INTO {table}")

    assert client.request("place", insert) == "error"
    assert client.request("op", ping) == "ok"  # the session goes on
    client._drop()
    writer.close()
    failed = [e for e in read_events(log) if e.outcome != "ok"]
    assert [(e.outcome, e.message) for e in failed] == [
        ("error", f"INSERT INTO {table} changed 0 rows, expected 1")]


def test_a_refused_or_ended_connection_is_a_connection_error(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    writer = BusinessLogWriter(tmp_path / "business.jsonl")
    wrong = psycopg.conninfo.make_conninfo(postgres.dsn(), password="wrong")
    refused = Client(dsn=wrong, service="svc", log=writer, metrics=Metrics(CollectorRegistry()))
    assert refused.request("op", ping) == "connection_error"
    client = Client(dsn=postgres.dsn(), service="svc", log=writer,
                    metrics=Metrics(CollectorRegistry()), validates=False)

    def short_idle_limit(conn: psycopg.Connection) -> None:
        conn.execute("SET idle_session_timeout = '100ms'")

    assert client.request("op", short_idle_limit) == "ok"
    time.sleep(0.5)  # the server ends the idle session (FATAL 57P05)
    assert client.request("op", ping) == "connection_error"
    assert client.conn is None  # dropped; the next request reconnects
    assert client.request("op", ping) == "ok"
    client._drop()
    writer.close()


def test_a_validating_pool_replaces_a_connection_ended_while_idle(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    # an on-call agent ended a keepalive's idle sessions to apply a role setting: the next
    # ping failed on the dead connection, where PgBouncer or HikariCP would have reconnected
    writer = BusinessLogWriter(tmp_path / "business.jsonl")
    client = Client(dsn=postgres.dsn(), service="svc", log=writer,
                    metrics=Metrics(CollectorRegistry()))
    assert client.request("op", ping) == "ok"
    session = client.conn
    assert session is not None
    with psycopg.connect(postgres.dsn(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (session.info.backend_pid,))
    time.sleep(0.3)
    assert client.request("op", ping) == "ok" and client.conn is not session
    # a session ended in the middle of a request still fails it
    ended = client.conn
    assert ended is not None

    def ended_meanwhile(conn: psycopg.Connection) -> None:
        with psycopg.connect(postgres.dsn(), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        conn.execute("SELECT 1")

    assert client.request("op", ended_meanwhile) in ("terminated", "connection_error")
    client._drop()
    writer.close()


def test_a_request_of_one_statement_can_run_without_begin_and_commit(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    """A read of one statement is its own transaction (two round trips fewer); a request with
    a transaction starts it before its first statement, and none is left open after either."""
    writer = BusinessLogWriter(tmp_path / "business.jsonl")
    client = Client(dsn=postgres.dsn(), service="svc", log=writer,
                    metrics=Metrics(CollectorRegistry()))
    began_with: list[bool] = []

    def alone(conn: psycopg.Connection) -> None:
        # now() is when the transaction began: the statement's own start only without BEGIN
        cur = conn.execute("SELECT now() = statement_timestamp()")
        row = cur.fetchone()
        assert row is not None
        began_with.append(bool(row[0]))

    assert client.request("op", alone, transaction=False) == "ok"
    assert client.request("op", alone) == "ok"
    assert began_with == [True, False]
    assert client.conn is not None
    assert client.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    client._drop()
    writer.close()


def test_a_session_left_in_an_aborted_transaction_is_reset(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    """A statement timeout that fires as a statement ends can reach the client with the
    COMMIT after it and leave the session's transaction aborted; every later request would
    fail in it (25P02) unless the client resets the session, as a pool does."""
    writer = BusinessLogWriter(tmp_path / "business.jsonl")
    client = Client(dsn=postgres.dsn(), service="svc", log=writer,
                    metrics=Metrics(CollectorRegistry()))

    def left_aborted(conn: psycopg.Connection) -> None:
        conn.execute("BEGIN")
        conn.execute("SELECT 1 / 0")

    assert client.request("op", left_aborted, transaction=False) == "error"
    assert client.conn is not None
    assert client.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert client.request("op", ping) == "ok"
    client._drop()
    writer.close()


def test_a_stop_ends_every_session_even_one_in_a_long_statement_or_an_open_transaction(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    """Each session is a thread blocked in the server: the stop cancels what they run and
    waits for them, so no session outlives the workload, and a request the stop cut short
    is not in the business log (the database did not fail it)."""
    jobs = [JobStep(action="job", name="long-report", application_name="long-report",
                    statements=["SELECT pg_sleep(60)"]),
            JobStep(action="job", name="leaky", application_name="leaky",
                    statements=["SELECT 1"], idle_in_transaction_seconds=60)]
    log = tmp_path / "business.jsonl"
    config = WorkloadConfig(dsn=postgres.dsn(application_name=""),
                            spec=OltpCheckoutWorkload(profile="oltp-checkout", clients=2),
                            jobs=jobs, business_log=log, metrics_port=0)

    def sessions() -> dict[str, str]:
        with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
            rows = conn.execute("SELECT application_name, state FROM pg_stat_activity WHERE"
                                " application_name IN ('long-report', 'leaky',"
                                " 'checkout-worker')").fetchall()
        return {name: state for name, state in rows}

    async def run() -> dict[str, str]:
        stop = asyncio.Event()
        workload = asyncio.create_task(run_workload(config, stop))
        seen: dict[str, str] = {}
        for _ in range(100):
            seen = await asyncio.to_thread(sessions)
            if seen.get("long-report") == "active" and seen.get("leaky") == "idle in transaction":
                break
            await asyncio.sleep(0.1)
        stop.set()
        await workload
        return seen

    seen = asyncio.run(run())
    assert seen.get("long-report") == "active" and seen.get("leaky") == "idle in transaction"
    left = sessions()
    for _ in range(50):  # a backend leaves pg_stat_activity just after its client hangs up
        if not left:
            break
        time.sleep(0.1)
        left = sessions()
    assert left == {}
    events = read_events(log)
    assert {e.service for e in events} == {"checkout-worker"}
    # this database has no checkout tables: the workers' requests fail, none by the stop
    assert "canceled" not in {e.outcome for e in events}


def test_a_job_that_connects_first_takes_the_slots_before_the_application(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    """A job marked connect_first is a service that was already running: on a role capped at
    two connections, its two sessions hold both and the application's first connection is the
    one refused, every time, not whichever thread happened to connect last."""
    role = f"capped_{uuid.uuid4().hex[:8]}"
    pool = JobStep(action="job", name="report-pool", application_name="report-pool", role=role,
                   statements=["SELECT 1"], interval_seconds=0.2, sessions=2, connect_first=True)
    # the job's role gets the application's password, so the workers log in as it too
    capped = SqlStep(action="sql", sql=f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 2")
    apply_steps(postgres, [capped, pool])
    log = tmp_path / "business.jsonl"
    config = WorkloadConfig(dsn=postgres.dsn(user=role, application_name=""),
                            spec=OltpCheckoutWorkload(profile="oltp-checkout", clients=3),
                            jobs=[pool], business_log=log, metrics_port=0)

    async def run() -> None:
        stop = asyncio.Event()
        workload = asyncio.create_task(run_workload(config, stop))
        for _ in range(100):
            if sum(e.service == "checkout-worker" for e in read_events(log)) >= 3:
                break
            await asyncio.sleep(0.05)
        stop.set()
        await workload

    asyncio.run(run())
    events = read_events(log)
    pool_outcomes = {e.outcome for e in events if e.service == "report-pool"}
    assert pool_outcomes == {"ok"}
    workers = [e.outcome for e in events if e.service == "checkout-worker"]
    assert workers and set(workers) == {"connection_error"}
    assert all("too many connections for role" in (e.message or "")
               for e in events if e.service == "checkout-worker")


def test_clients_at_a_fixed_interval_do_not_ask_faster_when_answered_at_once(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    """requestIntervalMs is a rate, not a pause after each answer: this database has no
    checkout tables, so every request fails within a millisecond, and clients that paused
    only after each answer would send hundreds in a second. Paced, each client starts a
    request at most every half interval (the shortest it draws)."""
    log = tmp_path / "business.jsonl"
    spec = OltpCheckoutWorkload(profile="oltp-checkout", clients=2, request_interval_ms=100)
    config = WorkloadConfig(dsn=postgres.dsn(application_name=""), spec=spec,
                            business_log=log, metrics_port=0)

    async def run() -> float:
        stop = asyncio.Event()
        workload = asyncio.create_task(run_workload(config, stop))
        started = time.monotonic()
        await asyncio.sleep(1.5)
        stop.set()
        await workload
        return time.monotonic() - started

    elapsed = asyncio.run(run())
    requests = len(read_events(log))
    assert 2 <= requests <= 2 * (elapsed / 0.05 + 1)
    with pytest.raises(ValueError, match="thinkTimeMs and requestIntervalMs both set"):
        OltpCheckoutWorkload.model_validate({"profile": "oltp-checkout", "thinkTimeMs": 20,
                                             "requestIntervalMs": 50})
