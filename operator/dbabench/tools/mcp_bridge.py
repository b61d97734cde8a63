"""The tools of a live run as an MCP server (the official SDK), over stdio or streamable HTTP.

A bridge, not a second gate: every call goes to the run's tool server (``tools.server``) and
through its gate, so budget, bounds, policy and trace are the same for an MCP client (Claude
Code, Codex CLI, any other) as for every agent. The task's words are the server's
instructions; ``submit_report`` sits beside the five tools, with the same schema as everywhere;
the task and what is left of the budget are resources (``dbabench://task``, ``dbabench://budget``).

A bridge outlives nothing: once its run is over (the run's tool server stops with the agent's
part of the run), a call is answered with an error that says so and where the verdict is, and
the HTTP transport stops, exit 0. The stdio transport keeps answering so until its client
closes it: a client whose server vanished shows its own "disconnected", not why.

    dbabench tools serve --run RUN_DIR                       # stdio
    dbabench tools serve --run RUN_DIR --transport http --port 8765
        -> http://127.0.0.1:8765/mcp, with the run's bearer token
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp, Receive, Scope, Send

from dbabench.errors import BadInput
from dbabench.model.artifacts import RunArtifact
from dbabench.model.task import AgentTask
from dbabench.tools.client import AsyncToolClient, ToolServerError
from dbabench.tools.server import Connection
from dbabench.tools.specs import SUBMIT_REPORT

MCP_PATH = "/mcp"
END_POLL_SECONDS = 1.0
# an MCP client holds a stream open for as long as it likes: past this, it is closed
SHUTDOWN_SECONDS = 5


class RunEnd:
    """Whether the run behind a bridge is over: its verdict is written (with its directory),
    or nothing listens where its tool server did, which stops only when the agent's part of
    the run is over."""

    def __init__(self, client: AsyncToolClient, connection: Connection,
                 run_dir: Path | None) -> None:
        self.client = client
        self.url = connection.url
        self.verdict = None if run_dir is None else run_dir / RunArtifact.EVALUATION
        self.over = False

    async def check(self) -> bool:
        if not self.over:
            self.over = ((self.verdict is not None and self.verdict.exists())
                         or not await self.client.reachable())
        return self.over

    async def wait(self) -> None:
        while not await self.check():
            await asyncio.sleep(END_POLL_SECONDS)

    def message(self) -> str:
        where = (f"its verdict is written to {self.verdict}" if self.verdict is not None
                 else f"its verdict is in its run directory's {RunArtifact.EVALUATION}")
        return (f"the run has ended (its tool server at {self.url} has stopped): no tool can"
                f" be called and no report filed any more; {where}")


async def build(client: AsyncToolClient, end: RunEnd) -> Server[Any]:
    """An MCP server for the run behind ``client``."""
    task = AgentTask.model_validate(await client.task())
    # the report as the run's own server describes it, as the tools are
    offered = [*await client.tools(), await client.report_schema()]
    tools = [types.Tool(name=t["name"], description=t["description"],
                        input_schema=t["parameters"]) for t in offered]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None,
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        try:
            if end.over:
                return _result({"ok": False, "error": end.message()}, error=True)
            if params.name == SUBMIT_REPORT.name:
                result = await client.report(args)
            else:
                result = await client.call(params.name, args)
        except ToolServerError as e:
            # refusals (unknown tool, spent budget, invalid report) are the agent's to read
            return _result({"ok": False, "error": await _why(e, end)}, error=True)
        return _result(result, error=not result.get("ok", False))

    resources = {"dbabench://task": ("the task: alert, budget, instructions", client.task),
                 "dbabench://budget": ("tool calls and seconds left", client.budget)}

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None,
                             ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=uri.removeprefix("dbabench://"), description=about,
                           mime_type="application/json")
            for uri, (about, _) in resources.items()])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams,
                            ) -> types.ReadResourceResult:
        _, read = resources[str(params.uri)]
        try:
            text = json.dumps(await read())
        except ToolServerError as e:
            raise MCPError(types.INVALID_REQUEST, await _why(e, end)) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=params.uri, mime_type="application/json", text=text)])

    server: Server[Any] = Server("dbabench", version="1", instructions=task.as_text(),
                                 on_list_tools=list_tools, on_call_tool=call_tool,
                                 on_list_resources=list_resources,
                                 on_read_resource=read_resource)
    return server


async def _why(error: ToolServerError, end: RunEnd) -> str:
    return end.message() if await end.check() else error.message


@asynccontextmanager
async def bridge(connection: Connection, run_dir: Path | None,
                 ) -> AsyncIterator[tuple[Server[Any], RunEnd]]:
    """The MCP server of a live run, and what says when the run is over. A run that cannot
    be reached, over or never there, is bad input: there is nothing to serve."""
    client = AsyncToolClient(connection.url, connection.token)
    end = RunEnd(client, connection, run_dir)
    try:
        try:
            server = await build(client, end)
        except ToolServerError as e:
            raise BadInput(end.message() if await end.check() else
                           f"the run's tool server at {connection.url}: {e.message}") from None
        yield server, end
    finally:
        await client.aclose()


def _result(result: dict[str, Any], *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(result, default=str))],
        structured_content=result, is_error=error)


async def serve_stdio(connection: Connection, run_dir: Path | None) -> None:
    async with bridge(connection, run_dir) as (server, _):
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


class _Bearer:
    """Admit requests carrying the run's token, as the HTTP tool server does."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = json.dumps({"ok": False, "error": "missing or wrong bearer token"})
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="dbabench"')]})
                await send({"type": "http.response.body", "body": body.encode()})
                return
        await self.app(scope, receive, send)


async def serve_http(connection: Connection, run_dir: Path | None, host: str,
                     port: int) -> str | None:
    """Serve until the run is over (then: what to tell the user) or until interrupted."""
    async with bridge(connection, run_dir) as (server, end):
        app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
        config = uvicorn.Config(_Bearer(app, connection.token), host=host, port=port,
                                log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=SHUTDOWN_SECONDS)
        http = uvicorn.Server(config)
        watch = asyncio.create_task(_stop_at_end(end, http))
        try:
            await http.serve()
        finally:
            watch.cancel()
        return end.message() if end.over else None


async def _stop_at_end(end: RunEnd, http: uvicorn.Server) -> None:
    await end.wait()
    http.should_exit = True
