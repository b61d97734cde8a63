"""The tools of a live run as an MCP server (the official SDK), over stdio or streamable HTTP.

A bridge, not a second gate: every call goes to the run's tool server (``tools.server``) and
through its gate, so budget, bounds, policy and trace are the same for an MCP client (Claude
Code, Codex CLI, any other) as for every agent. The task's words are the server's
instructions; ``submit_report`` sits beside the five tools, with the same schema as everywhere;
the task and what is left of the budget are resources (``dbabench://task``, ``dbabench://budget``).

    dbabench tools serve --run RUN_DIR                       # stdio
    dbabench tools serve --run RUN_DIR --transport http --port 8765
        -> http://127.0.0.1:8765/mcp, with the run's bearer token
"""

from __future__ import annotations

import hmac
import json
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp, Receive, Scope, Send

from dbabench.model.task import AgentTask
from dbabench.tools.client import AsyncToolClient, ToolServerError
from dbabench.tools.server import Connection
from dbabench.tools.specs import SUBMIT_REPORT

MCP_PATH = "/mcp"


async def build(connection: Connection) -> tuple[Server[Any], AsyncToolClient]:
    """An MCP server for the run behind ``connection``; the caller closes the client."""
    client = AsyncToolClient(connection.url, connection.token)
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
            if params.name == SUBMIT_REPORT.name:
                result = await client.report(args)
            else:
                result = await client.call(params.name, args)
        except ToolServerError as e:
            # refusals (unknown tool, spent budget, invalid report) are the agent's to read
            return _result({"ok": False, "error": e.message}, error=True)
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
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=params.uri, mime_type="application/json", text=json.dumps(await read()))])

    server: Server[Any] = Server("dbabench", version="1", instructions=task.as_text(),
                                 on_list_tools=list_tools, on_call_tool=call_tool,
                                 on_list_resources=list_resources,
                                 on_read_resource=read_resource)
    return server, client


def _result(result: dict[str, Any], *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(result, default=str))],
        structured_content=result, is_error=error)


async def serve_stdio(connection: Connection) -> None:
    server, client = await build(connection)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await client.aclose()


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


async def serve_http(connection: Connection, host: str, port: int) -> None:
    server, client = await build(connection)
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    config = uvicorn.Config(_Bearer(app, connection.token), host=host, port=port,
                            log_level="warning", lifespan="on")
    try:
        await uvicorn.Server(config).serve()
    finally:
        await client.aclose()
