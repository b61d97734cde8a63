"""manage_instance: process control and configuration of the database server."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql as pgsql
from pydantic import Field, model_validator

from dbabench.env.postgres import AGENT_APPLICATION, StartFailed
from dbabench.model.base import Model
from dbabench.model.tool import InstanceAction, ShutdownMode
from dbabench.model.workload import Server
from dbabench.tools.context import ToolContext
from dbabench.tools.errors import ToolError

A = InstanceAction
_GUC = re.compile(r"^[a-z_][a-z0-9_.]*$")


class ManageInstanceArgs(Model):
    action: InstanceAction
    name: str | None = Field(default=None, description="setting name (config_get, config_set)")
    value: str | None = Field(default=None, description="new value (config_set)")
    mode: ShutdownMode = Field(default=ShutdownMode.fast, description="stop and restart")
    server: Server = Field(default="primary",
                           description="primary, or replica where the system has a hot standby")

    @model_validator(mode="after")
    def _needs(self) -> "ManageInstanceArgs":
        if self.action in (A.config_get, A.config_set):
            if not self.name or not _GUC.match(self.name.lower()):
                raise ValueError(f"{self.action} needs name: a setting name like work_mem")
        if self.action == A.config_set and self.value is None:
            raise ValueError("config_set needs value")
        return self


async def manage_instance(ctx: ToolContext, args: ManageInstanceArgs) -> dict[str, Any]:
    control = ctx.server(args.server).control
    if args.action == A.status:
        return await asyncio.to_thread(control.status)
    if args.action == A.start:
        await _starting(control.start)
        return {"started": True, **await asyncio.to_thread(control.status)}
    if args.action == A.stop:
        await asyncio.to_thread(control.stop, args.mode)
        return {"stopped": True, "mode": args.mode}
    if args.action == A.restart:
        await _starting(control.restart, args.mode)
        return {"restarted": True, "mode": args.mode, **await asyncio.to_thread(control.status)}
    return await _with_connection(ctx, args)


async def _starting(action: Callable[..., None], *args: str) -> None:
    """A start (or restart) of the agent's: a server that does not come up, after a setting
    of the agent's own (shared_buffers past the machine's memory, a library that is not
    there), is the agent's observation with what PostgreSQL said, not a harness failure. It
    stays down until the agent starts it again."""
    try:
        await asyncio.to_thread(action, *args)
    except StartFailed as e:
        said = f"; PostgreSQL said:\n{e.said}" if e.said else ""
        raise ToolError(f"the server did not start: {e.reason}{said}") from e


async def _with_connection(ctx: ToolContext, args: ManageInstanceArgs) -> dict[str, Any]:
    try:
        conn = await psycopg.AsyncConnection.connect(
            ctx.server(args.server).dsn, autocommit=True, application_name=AGENT_APPLICATION)
    except psycopg.OperationalError as e:
        raise ToolError(f"the server does not accept connections: {str(e).strip()}") from e
    try:
        if args.action == A.reload:
            await conn.execute("SELECT pg_reload_conf()")
            await asyncio.sleep(0.2)  # the postmaster re-reads the files asynchronously
            return {"reloaded": True, "pending_restart": await _pending(conn)}
        assert args.name is not None
        if args.action == A.config_set:
            await conn.execute(pgsql.SQL("ALTER SYSTEM SET {} = {}").format(
                pgsql.Identifier(args.name.lower()), pgsql.Literal(args.value)))
            await conn.execute("SELECT pg_reload_conf()")
            await asyncio.sleep(0.2)
        return await _setting(conn, args.name.lower())
    except psycopg.Error as e:
        raise ToolError(f"{e.sqlstate}: {str(e).strip()}") from e
    finally:
        await conn.close()


async def _setting(conn: psycopg.AsyncConnection, name: str) -> dict[str, Any]:
    cur = await conn.execute(
        "SELECT name, setting, unit, context, source, boot_val, reset_val, pending_restart"
        " FROM pg_settings WHERE name = %s", (name,))
    row = await cur.fetchone()
    if row is None:
        raise ToolError(f"no setting named {name!r}")
    keys = ["name", "setting", "unit", "context", "source", "boot_val", "reset_val",
            "pending_restart"]
    return dict(zip(keys, row))


async def _pending(conn: psycopg.AsyncConnection) -> list[str]:
    cur = await conn.execute("SELECT name FROM pg_settings WHERE pending_restart ORDER BY name")
    return [r[0] for r in await cur.fetchall()]
