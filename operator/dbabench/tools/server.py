"""HTTP access to one run's tool gate, for agents that do not run inside the harness's process.

External agents reach it over their network namespace's loopback; on Kubernetes, the run's
tools pod across a NetworkPolicy that admits the agent's pod alone. The server
adds no behaviour of its own: every call goes through ``ToolGate`` exactly as an in-process
agent's would, so validation, bounds, budget and trace are the same however an agent runs.

    GET  /healthz                 liveness, the only endpoint without the bearer token
    GET  /v1/task                 what the agent is told
    GET  /v1/tools                name, description and JSON schema of each offered tool
    GET  /v1/budget               tool calls and seconds left, and why calls stopped, if they did
    POST /v1/tools/{name}         JSON arguments -> the gate's result (ok False is an observation)
    POST /v1/report               the structured report -> 200, or 422 with what is wrong
    POST /v1/events/thought       {"text"}: the agent's reasoning, for the trace
    POST /v1/events/model         {"model", "usage", "text"}: one model call the agent reports,
                                  for token accounting (marked self-reported)
    POST /v1/events/failure       {"failure", "message"}: why the agent stopped early; served
                                  only to the harness's own agents in another process (a model
                                  agent in its pod), since api-error takes a run out of the score
    GET  /v1/openapi.json         all of the above as an OpenAPI 3.1 document, with every schema
    POST /openai/v1/chat/completions, GET /openai/v1/models
                                  with a gateway configured: the metering proxy (tools.meter)

Errors are ``{"ok": false, "error": "..."}`` with the status: 400 body not a JSON object, 401
missing or wrong token, 404 unknown tool, 413 body too large, 422 invalid report or event, 429
budget spent (for every call from then on).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, Field, ValidationError

from dbabench.model.artifacts import RunArtifact
from dbabench.model.base import Model
from dbabench.model.task import AgentTask
from dbabench.model.trace import FailureClass, Usage
from dbabench.tools import openapi
from dbabench.tools.errors import BudgetExhausted
from dbabench.tools.gate import ToolGate
from dbabench.tools.meter import Gateway, Meter
from dbabench.tools.specs import SUBMIT_REPORT, TOOL_SPECS

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
# In-flight calls get this long to finish when the server stops; the run is over by then.
SHUTDOWN_TIMEOUT_SECONDS = 5.0


CONNECTION_FILE = RunArtifact.CONNECTION


class Connection(Model):
    """How to reach a live run's tool server; kept in its run directory, readable by its
    owner only (the token admits anyone who has it)."""

    url: str
    token: str

    def write(self, run_dir: Path) -> Path:
        path = run_dir / CONNECTION_FILE
        path.touch(mode=0o600)
        path.write_text(self.model_dump_json())
        return path

    @classmethod
    def read(cls, run_dir: Path) -> Connection:
        path = run_dir / CONNECTION_FILE
        try:
            return cls.model_validate_json(path.read_text())
        except FileNotFoundError:
            raise FileNotFoundError(f"{path} does not exist: {run_dir} is not a live run with"
                                    " a tool server (--agent external or listen)") from None


class ThoughtEvent(Model):
    text: str


class ModelEvent(Model):
    # a model the price table knows, which is all the gate records: the cap only spares the
    # refusal from echoing a megabyte
    model: str = Field(min_length=1, max_length=200)
    # bounded per call (MAX_TOKENS_PER_CALL): past it, a 422 naming the field
    usage: Usage
    text: str | None = None


class FailureEvent(Model):
    failure: FailureClass
    message: str


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
        text = e.text or e.reason
        if e.status == 404 and request.match_info.route.resource is None:
            # a path the server has not: say where the map is, not only that this is not it
            text = f"no such endpoint: {request.path}; GET / lists this server's endpoints"
        return _failure(e.status, text, kept)
    except Exception:
        # The gate has already traced a harness failure as an infra event; the agent can do
        # nothing about it, so it gets no details.
        log.exception("tool server: %s %s failed", request.method, request.path)
        return _failure(500, "internal error of the benchmark harness")


async def _json_object(request: web.Request) -> dict[str, Any]:
    """The request body, which must be one JSON object (aiohttp raises 413 past the cap) of
    UTF-8 text: JSON's escapes can spell a lone surrogate (``"\\ud800"``), which no UTF-8
    encoder (the trace's, the database driver's) takes, and nest past the parser's recursion;
    both are the request's fault, refused here, not a harness failure later."""
    try:
        body = json.loads(await request.read())
        json.dumps(body, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise web.HTTPBadRequest(text="a string of the body holds a lone surrogate escape"
                                      " (\\ud800-\\udfff): encode characters as UTF-8") from None
    except RecursionError:
        raise web.HTTPBadRequest(text="the body nests too deeply") from None
    except ValueError:
        raise web.HTTPBadRequest(text="the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text=f"the body must be a JSON object, not {type(body).__name__}")
    if _depth(body) > MAX_BODY_DEPTH:
        raise web.HTTPBadRequest(text=f"the body nests deeper than {MAX_BODY_DEPTH} levels")
    return body


MAX_BODY_DEPTH = 64
"""No tool's arguments nest past a few levels; the parser takes ~1,000, and the validators and
writers after it recursed out at ~300 (a 500, seen in the fourth outside attack)."""


def _depth(value: Any) -> int:
    """How deep ``value`` nests (a scalar is 0), without recursion."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        item, depth = todo.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_BODY_DEPTH:
            break
        children = item.values() if isinstance(item, dict) else item if isinstance(
            item, list) else ()
        todo.extend((child, depth + 1) for child in children)
    return deepest


def _parse(model: type[M], body: dict[str, Any]) -> M:
    try:
        return model.model_validate(body)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'body'}: {err['msg']}"
                             for err in e.errors())
        raise web.HTTPUnprocessableEntity(text=problems) from None


class _Endpoints:
    def __init__(self, gate: ToolGate, task: AgentTask, token: str) -> None:
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

    async def openapi_document(self, request: web.Request) -> web.Response:
        return web.json_response(openapi.document(self.tools.values(),
                                                  (ThoughtEvent, ModelEvent)))

    async def index(self, request: web.Request) -> web.Response:
        """Where an agent that knows only the address starts: every endpoint, read from the
        router itself so the list cannot drift from what is served."""
        routes = sorted({f"{r.method} {r.resource.canonical}" for r in request.app.router.routes()
                         if r.resource is not None and r.method != "HEAD"})
        return web.json_response({"endpoints": routes, "openapi": "GET /v1/openapi.json",
                                  "tools": list(self.tools), "report": "POST /v1/report"})

    async def healthz(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def get_task(self, request: web.Request) -> web.Response:
        return web.json_response(self.task)

    async def budget(self, request: web.Request) -> web.Response:
        return web.json_response(
            self.gate.budget.status(self.gate.exhausted).model_dump(mode="json"))

    async def list_tools(self, request: web.Request) -> web.Response:
        # the report's schema beside the tools: an agent should not need the OpenAPI
        # document to learn how it is judged
        return web.json_response({"tools": [s.as_json() for s in self.tools.values()],
                                  "report": {**SUBMIT_REPORT.as_json(),
                                             "endpoint": "POST /v1/report"}})

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
        try:
            self.gate.budget.record()
        except BudgetExhausted as e:
            raise web.HTTPTooManyRequests(text=f"budget exhausted: {e}") from None
        self.gate.think(event.text)
        return web.json_response({"ok": True})

    async def failure(self, request: web.Request) -> web.Response:
        event = _parse(FailureEvent, await _json_object(request))
        self.gate.fail(event.failure, event.message)
        return web.json_response({"ok": True})

    async def model_call(self, request: web.Request) -> web.Response:
        event = _parse(ModelEvent, await _json_object(request))
        try:
            self.gate.budget.record()
            self.gate.model_call(event.model, event.usage, event.text, metered=False)
        except ValueError as e:
            raise web.HTTPUnprocessableEntity(text=f"model: {e}") from None
        except BudgetExhausted as e:
            raise web.HTTPTooManyRequests(text=f"budget exhausted: {e}") from None
        return web.json_response({"ok": True})


def make_app(gate: ToolGate, task: AgentTask, token: str,
             gateway: Gateway | None = None, own_agent: bool = False) -> web.Application:
    """The tool server of one run; only the tools its ``task`` names are offered. With a
    ``gateway``, it also meters the agent's model calls to it. ``own_agent``: the agent is
    the harness's own code (a scripted or model agent in its pod), whose account of why it
    stopped is taken."""
    if not token:
        raise ValueError("the tool server needs a non-empty token: an empty one admits anyone")
    endpoints = _Endpoints(gate, task, token)
    app = web.Application(middlewares=[_json_errors, endpoints.authenticate],
                          client_max_size=MAX_BODY_BYTES)
    app.router.add_get("/", endpoints.index)
    app.router.add_get("/healthz", endpoints.healthz)
    app.router.add_get("/v1/task", endpoints.get_task)
    app.router.add_get("/v1/tools", endpoints.list_tools)
    app.router.add_get("/v1/budget", endpoints.budget)
    app.router.add_post("/v1/tools/{name}", endpoints.call_tool)
    app.router.add_post("/v1/report", endpoints.report)
    app.router.add_post("/v1/events/thought", endpoints.thought)
    app.router.add_post("/v1/events/model", endpoints.model_call)
    app.router.add_get("/v1/openapi.json", endpoints.openapi_document)
    if own_agent:
        app.router.add_post("/v1/events/failure", endpoints.failure)
    if gateway is not None:
        Meter(gate, gateway, task.max_cost_usd).install(app)
    return app


@asynccontextmanager
async def serve(gate: ToolGate, task: AgentTask, token: str, host: str = "127.0.0.1",
                port: int = 0, gateway: Gateway | None = None,
                own_agent: bool = False,
                sockets: Sequence[socket.socket] = ()) -> AsyncIterator[str]:
    """Serve the gate on ``host`` only (port 0: a free one) and on the listening ``sockets``
    (an agent's own network, env.netns), and yield the base URL on ``host``."""
    runner = web.AppRunner(make_app(gate, task, token, gateway, own_agent),
                           shutdown_timeout=SHUTDOWN_TIMEOUT_SECONDS)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        for sock in sockets:
            await web.SockSite(runner, sock).start()
        bound_port = runner.addresses[0][1]
        netloc = f"[{host}]" if ":" in host else host
        yield f"http://{netloc}:{bound_port}"
    finally:
        await runner.cleanup()
