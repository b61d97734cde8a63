"""How the workload files a failed request: a server error on a live session is the request's
error (the session goes on at once); a connection the server ended or refused is a connection
error, after which the client reconnects with a pause."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest
from prometheus_client import CollectorRegistry

from dbabench.env.postgres import PostgresInstance
from dbabench.workload.businesslog import BusinessLogWriter, read_events
from dbabench.workload.engine import Client, Metrics

pytestmark = pytest.mark.integration


def raising(sqlstate: str):  # type: ignore[no-untyped-def]
    async def body(conn: psycopg.AsyncConnection) -> None:
        await conn.execute(f"DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '{sqlstate}';"
                           " END $$")
    return body


async def ping(conn: psycopg.AsyncConnection) -> None:
    await conn.execute("SELECT 1")


@pytest.mark.parametrize("sqlstate", ["40P01", "40001", "55000", "53200"])
async def test_server_errors_on_a_live_session_are_the_requests_own(
        postgres: PostgresInstance, tmp_path: Path, sqlstate: str) -> None:
    log = tmp_path / "business.jsonl"
    writer = BusinessLogWriter(log)
    client = Client(dsn=postgres.dsn(), service="svc", log=writer,
                    metrics=Metrics(CollectorRegistry()))
    assert await client.request("op", ping) == "ok"
    session = client.conn
    # deadlock, serialization failure, object state, resources: psycopg's OperationalError
    assert await client.request("op", raising(sqlstate)) == "error"
    assert client.conn is session and await client.request("op", ping) == "ok"
    await client._drop()
    writer.close()
    failed = [e for e in read_events(log) if e.outcome != "ok"]
    assert [(e.outcome, e.sqlstate) for e in failed] == [("error", sqlstate)]


async def test_a_refused_or_ended_connection_is_a_connection_error(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    writer = BusinessLogWriter(tmp_path / "business.jsonl")
    wrong = psycopg.conninfo.make_conninfo(postgres.dsn(), password="wrong")
    refused = Client(dsn=wrong, service="svc", log=writer, metrics=Metrics(CollectorRegistry()))
    assert await refused.request("op", ping) == "connection_error"
    client = Client(dsn=postgres.dsn(), service="svc", log=writer,
                    metrics=Metrics(CollectorRegistry()))

    async def short_idle_limit(conn: psycopg.AsyncConnection) -> None:
        await conn.execute("SET idle_session_timeout = '100ms'")

    assert await client.request("op", short_idle_limit) == "ok"
    await asyncio.sleep(0.5)  # the server ends the idle session (FATAL 57P05)
    assert await client.request("op", ping) == "connection_error"
    assert client.conn is None  # dropped; the next request reconnects
    assert await client.request("op", ping) == "ok"
    await client._drop()
    writer.close()


async def test_a_request_of_one_statement_can_run_without_begin_and_commit(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    """A read of one statement is its own transaction (two round trips fewer); a request with
    a transaction starts it before its first statement, and none is left open after either."""
    writer = BusinessLogWriter(tmp_path / "business.jsonl")
    client = Client(dsn=postgres.dsn(), service="svc", log=writer,
                    metrics=Metrics(CollectorRegistry()))
    began_with: list[bool] = []

    async def alone(conn: psycopg.AsyncConnection) -> None:
        # now() is when the transaction began: the statement's own start only without BEGIN
        cur = await conn.execute("SELECT now() = statement_timestamp()")
        row = await cur.fetchone()
        assert row is not None
        began_with.append(bool(row[0]))

    assert await client.request("op", alone, transaction=False) == "ok"
    assert await client.request("op", alone) == "ok"
    assert began_with == [True, False]
    assert client.conn is not None
    assert client.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    await client._drop()
    writer.close()


async def test_a_session_left_in_an_aborted_transaction_is_reset(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    """A statement timeout that fires as a statement ends can reach the client with the
    COMMIT after it and leave the session's transaction aborted; every later request would
    fail in it (25P02) unless the client resets the session, as a pool does."""
    writer = BusinessLogWriter(tmp_path / "business.jsonl")
    client = Client(dsn=postgres.dsn(), service="svc", log=writer,
                    metrics=Metrics(CollectorRegistry()))

    async def left_aborted(conn: psycopg.AsyncConnection) -> None:
        await conn.execute("BEGIN")
        await conn.execute("SELECT 1 / 0")

    assert await client.request("op", left_aborted, transaction=False) == "error"
    assert client.conn is not None
    assert client.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert await client.request("op", ping) == "ok"
    await client._drop()
    writer.close()
