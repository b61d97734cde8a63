"""execute_sql: run SQL as a DBA's psql session would, one statement at a time.

The session persists across calls (a ``SET`` stays set) and reconnects if it was lost. Each
statement is bounded by a timeout the agent cannot lift: the server cancels at the session's
``statement_timeout``; if the agent raised that, the tool cancels the query itself.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import json
from typing import Any

import psycopg
from psycopg.types.json import set_json_loads
from pglast.parser import get_postgresql_version
from pydantic import Field

from dbabench.env.postgres import AGENT_APPLICATION
from dbabench.errors import PermanentInfraError
from dbabench.model.base import Model
from dbabench.model.trace import StatementInfo
from dbabench.model.workload import Server
from dbabench.policy.reach import LEXER_SETTINGS, startup_options
from dbabench.tools.bounds import Bounds, clip_cell, clip_text
from dbabench.tools.context import ToolContext
from dbabench.tools.errors import ToolError


class ExecuteSqlArgs(Model):
    sql: str = Field(min_length=1, description="one or more SQL statements, run in order")
    max_rows: int | None = Field(default=None, ge=1, description="rows to return per statement")
    server: Server = Field(default="primary",
                           description="primary, or replica where the system has a hot standby")


class SqlError(Model):
    sqlstate: str | None
    message: str
    detail: str | None = None
    hint: str | None = None


class StatementResult(Model):
    statement: str
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    rowcount: int = -1
    status: str | None = None
    truncated: bool = False
    error: SqlError | None = None


class ExecuteSqlResult(Model):
    results: list[StatementResult]
    notices: list[str] = Field(default_factory=list)


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (bytes, memoryview)):
        return "\\x" + bytes(value).hex()
    return str(value)


def _cell(value: Any, limit: int) -> tuple[Any, bool]:
    """A value as the agent gets it: JSON, cut at ``limit``. Strings and numbers, most of
    every result, go straight through (a call's rows are a few hundred cells)."""
    kind = value.__class__
    if kind is str:
        return clip_text(value, limit)
    if value is None or kind is int or kind is float or kind is bool:
        return value, False
    return clip_cell(_jsonable(value), limit)


MAX_JSON_DEPTH = 100
"""How deeply nested a json or jsonb value the agent gets as a structure; a deeper one comes as
its text. Every step after the load (cells, bounds, the trace) reads the structure
recursively, and a value the server nests thousands deep (it allows that) was a RecursionError
that ended the call, and the run, as the harness's failure."""


def _json_loads(data: str | bytes) -> Any:
    text = data.decode() if isinstance(data, (bytes, bytearray, memoryview)) else data
    try:
        value = json.loads(text)
    except RecursionError:
        return text
    return value if _json_depth(value) <= MAX_JSON_DEPTH else text


def _json_depth(value: Any) -> int:
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                break
            todo.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict)
                                                 else item))
    return deepest


def _sql_error(e: psycopg.Error) -> SqlError:
    diag = e.diag
    return SqlError(sqlstate=e.sqlstate, message=diag.message_primary or str(e).strip(),
                    detail=diag.message_detail, hint=diag.message_hint)


GRAMMAR_MAJOR = get_postgresql_version()[0]
"""The PostgreSQL major whose grammar the gate classifies with (pglast's libpg_query)."""


class GrammarMismatch(PermanentInfraError, RuntimeError):
    """The server would read SQL otherwise than the gate does: a harness misconfiguration."""


async def _reads_as_the_gate(conn: psycopg.AsyncConnection) -> None:
    """Check, before the session runs anything, that the server parses as the gate does: the
    same major version's grammar, and the lexer settings the startup options pin."""
    cur = await conn.execute(
        "SELECT current_setting('server_version_num')::int / 10000, "
        + ", ".join(f"current_setting('{name}')" for name in LEXER_SETTINGS))
    row = await cur.fetchone()
    assert row is not None
    major, *lexer = row
    if major != GRAMMAR_MAJOR:
        raise GrammarMismatch(f"the server is PostgreSQL {major}; the gate classifies SQL with"
                              f" PostgreSQL {GRAMMAR_MAJOR}'s grammar (pglast), which could read"
                              f" a statement otherwise: run a PostgreSQL {GRAMMAR_MAJOR} server")
    differ = {name: value for (name, pinned), value in zip(LEXER_SETTINGS.items(), lexer)
              if value.lower().replace("-", "") != pinned.replace("-", "")}
    if differ:
        raise ToolError(f"the session does not read SQL as the gate does ({differ}); nothing"
                        " was run")


class SqlSession:
    """The agent's database session on one server."""

    def __init__(self, ctx: ToolContext, dsn: str) -> None:
        self.ctx = ctx
        self.dsn = dsn
        self.conn: psycopg.AsyncConnection | None = None
        self.notices: list[str] = []

    async def _connection(self) -> psycopg.AsyncConnection:
        if self.conn is None or self.conn.closed or self.conn.broken:
            timeout_ms = int(self.ctx.sql_timeout_seconds * 1000)
            try:
                self.conn = await psycopg.AsyncConnection.connect(
                    self.dsn, autocommit=True, application_name=AGENT_APPLICATION,
                    # the lexer settings the gate parses with, whatever the agent stored
                    options=startup_options(statement_timeout=timeout_ms))
            except psycopg.OperationalError as e:
                raise ToolError(f"cannot connect to the database: {str(e).strip()}") from e
            try:
                await _reads_as_the_gate(self.conn)
            except BaseException:
                await self.conn.close()
                raise
            set_json_loads(_json_loads, self.conn)
            self.conn.add_notice_handler(
                lambda d: self.notices.append(f"{d.severity}: {d.message_primary}"))
        return self.conn

    async def run(self, args: ExecuteSqlArgs, statements: list[StatementInfo]) -> ExecuteSqlResult:
        bounds = self.ctx.bounds
        max_rows = min(args.max_rows or bounds.max_rows, bounds.max_rows)
        conn = await self._connection()
        self.notices = []
        results: list[StatementResult] = []
        for info in statements:
            result = await self._one(conn, info.text, max_rows, bounds)
            results.append(result)
            if result.error is not None:
                break  # like psql ON_ERROR_STOP: later statements may depend on this one
        return ExecuteSqlResult(results=results, notices=self.notices[:50])

    async def _one(self, conn: psycopg.AsyncConnection, text: str, max_rows: int,
                   bounds: Bounds) -> StatementResult:
        result = StatementResult(statement=text)
        loop = asyncio.get_running_loop()
        cancels: list[asyncio.Task[None]] = []
        try:
            async with conn.cursor() as cur:
                # A timer, not a task per statement (which cost a call ~50 us): the server
                # answers the cancel with an error, which ends the execute. An interrupted
                # execute (the run ending) is cancelled on the server by psycopg itself.
                timer = loop.call_later(self.ctx.sql_timeout_seconds + 2, lambda: cancels.append(
                    loop.create_task(conn.cancel_safe())))
                try:
                    await cur.execute(text.encode())
                finally:
                    timer.cancel()
                    if cancels:  # done before the next statement, which a late cancel would end
                        await cancels[0]
                result.rowcount = cur.rowcount
                result.status = cur.statusmessage
                description = cur.description
                if description is not None:
                    result.columns = [c.name for c in description]
                    fetched = await cur.fetchmany(max_rows + 1)
                    result.truncated = len(fetched) > max_rows
                    for row in fetched[:max_rows]:
                        cells = []
                        for value in row:
                            cell, cut = _cell(value, bounds.max_cell_chars)
                            result.truncated |= cut
                            cells.append(cell)
                        result.rows.append(cells)
        except psycopg.Error as e:
            result.error = _sql_error(e)
        return result

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.close()
            self.conn = None
