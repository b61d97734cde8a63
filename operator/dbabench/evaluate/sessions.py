"""The verifier's logins: one per check, or kept from check to check while admission polls and
while an outcome is judged.

Admission checks its predicates every half second until they all hold, and each SQL predicate
logged in anew each time: a backend forked and SCRAM on both sides, ~5 ms of CPU a login (3 ms
the server's, 2 the harness's), ~8 a run in a full battery; the data, steering and logging
scans that close admission and the outcome's checks added ~15 more. Sessions kept at admission
are closed before the agent comes in, so it never sees them; the outcome's are opened after
its window, under whatever the agent left of the role's settings, with the verifier's startup
options over them, as a login of each check's own would be.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import psycopg
from psycopg.pq import TransactionStatus

VERIFIER_APPLICATION = "dbabench-verifier"


async def _connect(dsn: str, options: str | None) -> psycopg.AsyncConnection:
    pinned = {} if options is None else {"options": options}
    return await psycopg.AsyncConnection.connect(
        dsn, autocommit=True, application_name=VERIFIER_APPLICATION, **pinned)


@contextlib.asynccontextmanager
async def login(dsn: str, options: str | None = None) -> AsyncIterator[psycopg.AsyncConnection]:
    """A new session of the verifier, closed on the way out; ``options``: libpq startup options."""
    async with await _connect(dsn, options) as conn:
        yield conn


class KeptSessions:
    """Idle verifier sessions by connection string, handed out again with the statement timeout
    of the check that takes one."""

    def __init__(self) -> None:
        self._idle: dict[str, list[psycopg.AsyncConnection]] = {}

    @contextlib.asynccontextmanager
    async def session(self, dsn: str, options: str,
                      timeout_ms: int) -> AsyncIterator[psycopg.AsyncConnection]:
        conn = await self._take(dsn, timeout_ms) or await _connect(dsn, options)
        try:
            yield conn
        except BaseException:
            await conn.close()
            raise
        if conn.closed or conn.info.transaction_status != TransactionStatus.IDLE:
            await conn.close()
        else:
            self._idle.setdefault(dsn, []).append(conn)

    async def _take(self, dsn: str, timeout_ms: int) -> psycopg.AsyncConnection | None:
        idle = self._idle.get(dsn, [])
        while idle:
            conn = idle.pop()
            try:
                # the round trip also proves the session alive: a fault's reaper or a restart
                # may have ended it since the last poll, and a check must not fail for that
                await conn.execute(
                    "SELECT pg_catalog.set_config('statement_timeout', %s, false)",
                    (f"{timeout_ms}ms",))
                return conn
            except psycopg.Error:
                await conn.close()
        return None

    async def close(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                await conn.close()
        self._idle.clear()
