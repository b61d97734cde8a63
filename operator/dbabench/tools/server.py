"""HTTP access to one run's tool gate, for agents that do not run inside the harness's process.

External agents reach it over loopback; on Kubernetes the agent pod's sidecar will. The server
adds no behaviour of its own: every call goes through ``ToolGate`` exactly as an in-process
agent's would, so validation, bounds, budget and trace are the same however an agent runs.

    GET  /healthz                 liveness, the only endpoint without the bearer token
    GET  /v1/task                 what the agent is told
    GET  /v1/tools                name, description and JSON schema of each offered tool
    POST /v1/tools/{name}         JSON arguments -> the gate's result (ok False is an observation)
    POST /v1/report               the structured report -> 200, or 422 with what is wrong
    POST /v1/events/thought       {"text"}: the agent's reasoning, for the trace
    POST /v1/events/model         {"model", "usage", "text"}: one model call, for token accounting

Errors are ``{"ok": false, "error": "..."}`` with the status: 400 body not a JSON object, 401
missing or wrong token, 404 unknown tool, 413 body too large, 422 invalid report or event, 429
budget spent (for every call from then on).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, Field, ValidationError

from dbabench.model.base import Model
from dbabench.model.trace import Usage
from dbabench.tools.errors import BudgetExhausted
from dbabench.tools.gate import QueryKnowledgeArgs, ToolGate
from dbabench.tools.instance import ManageInstanceArgs
from dbabench.tools.logs import ReadLogArgs
from dbabench.tools.metrics import QueryMetricsArgs
from dbabench.tools.sql import ExecuteSqlArgs

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
# In-flight calls get this long to finish when the server stops; the run is over by then.
SHUTDOWN_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class ToolSpec:
    """What a model is told about one tool: the same text for this server and for native
    function-calling definitions (OpenAI's ``name``/``description``/``parameters``)."""

    name: str
    description: str
    args: type[BaseModel]

    def parameters(self) -> dict[str, Any]:
        # snake_case, as the gate's observations and the trace spell fields
        return self.args.model_json_schema(by_alias=False)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "parameters": self.parameters()}


TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "query_metrics",
        "Query this system's Prometheus with PromQL. It scrapes the PostgreSQL server"
        " (postgres_exporter, pg_* metrics), the host (node_exporter, node_* metrics) and the"
        " application's own metrics every second. Without range_seconds it is an instant query"
        " (the latest value of each series); with range_seconds it returns each series over the"
        " last N seconds at step_seconds resolution. Large results are cut to a bounded number"
        " of series and points, and the observation says when it was truncated.",
        QueryMetricsArgs),
    ToolSpec(
        "execute_sql",
        "Run SQL on the application database in a persistent superuser session, as a DBA's"
        " psql would: statements run in order, each in autocommit unless you open a transaction"
        " yourself, and execution stops at the first error. Session state (SET, temporary"
        " tables) persists between calls. Each statement returns its columns, rows, rowcount"
        " and command status, or an error with its SQLSTATE; server notices are included. Each"
        " statement has a timeout you cannot raise; rows and long values are capped (max_rows"
        " lowers the cap) and the observation says when anything was cut.",
        ExecuteSqlArgs),
    ToolSpec(
        "manage_instance",
        "Control the PostgreSQL server process and its configuration. status: whether it runs."
        " start, stop, restart: act on the process (mode smart, fast or immediate; default"
        " fast); stopping or restarting ends every session, including execute_sql's. reload:"
        " re-read the configuration files, and list settings still waiting for a restart."
        " config_get name: a setting's value, unit, context, source and pending_restart."
        " config_set name value: persist the value with ALTER SYSTEM, reload, and show the"
        " setting; one whose context is postmaster only takes effect after a restart.",
        ManageInstanceArgs),
    ToolSpec(
        "read_log",
        "Read recent lines of a log. source postgresql: the database server's log (errors and"
        " whatever the server is configured to log). source business: the application's own"
        " log of its requests and their outcomes. Returns the last tail lines that pass the"
        " filters, oldest first, and how many matched: since_seconds keeps only records of the"
        " last N seconds, min_level (postgresql only) a severity such as WARNING or ERROR and"
        " above, pattern lines matching a case-insensitive regular expression.",
        ReadLogArgs),
    ToolSpec(
        "query_knowledge_base",
        "Full-text search over the PostgreSQL 15 documentation and a set of generic operational"
        " runbooks: use it to check what a setting, view, function or command does before"
        " relying on it. Query with words or exact names (pg_stat_activity,"
        " autovacuum_vacuum_scale_factor); returns up to limit sections with their title,"
        " place in the manual and a snippet. It knows PostgreSQL in general and nothing about"
        " this particular system or incident.",
        QueryKnowledgeArgs),
)


class ThoughtEvent(Model):
    text: str


class ModelEvent(Model):
    model: str = Field(min_length=1)
    usage: Usage
    text: str | None = None


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
M = TypeVar("M", bound=BaseModel)


def _failure(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"ok": False, "error": message}, status=status, headers=headers)


@web.middleware
async def _json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every refusal in one shape, aiohttp's own included (no route, wrong method, body too
    large), so a client has one thing to parse."""
    try:
        return await handler(request)
    except web.HTTPException as e:
        kept = {k: v for k, v in e.headers.items() if k.lower() in ("www-authenticate", "allow")}
        return _failure(e.status, e.text or e.reason, kept)
    except Exception:
        # The gate has already traced a harness failure as an infra event; the agent can do
        # nothing about it, so it gets no details.
        log.exception("tool server: %s %s failed", request.method, request.path)
        return _failure(500, "internal error of the benchmark harness")


async def _json_object(request: web.Request) -> dict[str, Any]:
    """The request body, which must be one JSON object (aiohttp raises 413 past the cap)."""
    try:
        body = await request.json()
    except ValueError:
        raise web.HTTPBadRequest(text="the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text=f"the body must be a JSON object, not {type(body).__name__}")
    return body


def _parse(model: type[M], body: dict[str, Any]) -> M:
    try:
        return model.model_validate(body)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'body'}: {err['msg']}"
                             for err in e.errors())
        raise web.HTTPUnprocessableEntity(text=problems) from None


class _Endpoints:
    def __init__(self, gate: ToolGate, task: BaseModel, token: str) -> None:
        self.gate = gate
        self.task = task.model_dump(mode="json")
        self.tools = {s.name: s for s in TOOL_SPECS if s.name in self.task["tools"]}
        self.expected_auth = f"Bearer {token}".encode()
        # One call at a time, as an in-process agent awaits each: the gate's SQL session and
        # its before/after view of sessions around a termination assume no call overlaps.
        self.call_lock = asyncio.Lock()

    @web.middleware
    async def authenticate(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.headers.get("Authorization", "").encode("utf-8", "replace")
        if request.path != "/healthz" and not hmac.compare_digest(given, self.expected_auth):
            raise web.HTTPUnauthorized(text="missing or wrong bearer token",
                                       headers={"WWW-Authenticate": 'Bearer realm="dbabench"'})
        return await handler(request)

    async def healthz(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def get_task(self, request: web.Request) -> web.Response:
        return web.json_response(self.task)

    async def list_tools(self, request: web.Request) -> web.Response:
        return web.json_response({"tools": [s.as_json() for s in self.tools.values()]})

    async def call_tool(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in self.tools:
            raise web.HTTPNotFound(text=f"no tool {name!r}; this task's tools are:"
                                        f" {', '.join(self.tools)}")
        args = await _json_object(request)
        async with self.call_lock:
            try:
                result = await self.gate.call(name, args)
            except BudgetExhausted as e:
                raise web.HTTPTooManyRequests(
                    text=f"budget exhausted: {e}; no further tool calls are accepted,"
                         " submit your report") from None
        return web.json_response(result)

    async def report(self, request: web.Request) -> web.Response:
        result = self.gate.submit_report(await _json_object(request))
        return web.json_response(result, status=200 if result["ok"] else 422)

    async def thought(self, request: web.Request) -> web.Response:
        event = _parse(ThoughtEvent, await _json_object(request))
        self.gate.think(event.text)
        return web.json_response({"ok": True})

    async def model_call(self, request: web.Request) -> web.Response:
        event = _parse(ModelEvent, await _json_object(request))
        self.gate.model_call(event.model, event.usage, event.text)
        return web.json_response({"ok": True})


def make_app(gate: ToolGate, task: BaseModel, token: str) -> web.Application:
    """The tool server of one run.

    ``task`` is the run's ``AgentTask`` (typed loosely because agents is a layer above tools);
    only the tools it names are offered.
    """
    if not token:
        raise ValueError("the tool server needs a non-empty token: an empty one admits anyone")
    endpoints = _Endpoints(gate, task, token)
    app = web.Application(middlewares=[_json_errors, endpoints.authenticate],
                          client_max_size=MAX_BODY_BYTES)
    app.router.add_get("/healthz", endpoints.healthz)
    app.router.add_get("/v1/task", endpoints.get_task)
    app.router.add_get("/v1/tools", endpoints.list_tools)
    app.router.add_post("/v1/tools/{name}", endpoints.call_tool)
    app.router.add_post("/v1/report", endpoints.report)
    app.router.add_post("/v1/events/thought", endpoints.thought)
    app.router.add_post("/v1/events/model", endpoints.model_call)
    return app


@asynccontextmanager
async def serve(gate: ToolGate, task: BaseModel, token: str, host: str = "127.0.0.1",
                port: int = 0) -> AsyncIterator[str]:
    """Serve the gate on ``host`` only (port 0: a free one) and yield the base URL."""
    runner = web.AppRunner(make_app(gate, task, token),
                           shutdown_timeout=SHUTDOWN_TIMEOUT_SECONDS)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        bound_port = runner.addresses[0][1]
        netloc = f"[{host}]" if ":" in host else host
        yield f"http://{netloc}:{bound_port}"
    finally:
        await runner.cleanup()
