"""The metering proxy: an OpenAI-compatible endpoint on a run's tool server that forwards an
external agent's model calls to the gateway its user configured, and records the usage the
gateway reports as a model event. The agent's cost is then measured by the harness, not
reported by the agent.

    POST /openai/v1/chat/completions   forwarded, streaming or not; its usage becomes a model event
    GET  /openai/v1/models             forwarded

The agent is handed ``OPENAI_BASE_URL`` (this endpoint) and ``OPENAI_API_KEY`` (the run's tool
token). The gateway's own key stays with the harness, so an agent that is given no other key
cannot reach the gateway around the meter. Models are named ``PROVIDER:MODEL`` as the price
table prices them. Before anything is forwarded, a call is refused (OpenAI's error envelope, not
retried by its clients) when its model has no price, when the run's budget is spent or when the
metered cost has reached the cost budget. A streamed call is asked for its usage
(``stream_options.include_usage``); the usage chunk is passed on only to an agent that asked for
it, so what the agent reads is what the gateway sent it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from aiohttp import web
from pydantic import Field, SecretStr

from dbabench.env.contract import METER_PATH
from dbabench.model.base import Model
from dbabench.model.trace import Usage
from dbabench.pricing import Price, cost_usd
from dbabench.tools.gate import ToolGate

MAX_REQUEST_BYTES = 16 << 20
"""A long conversation is bigger than the tool server's 1 MiB cap for tool calls."""
# a gateway waits on the model; a generation of a few thousand tokens takes minutes
UPSTREAM_TIMEOUT = httpx.Timeout(300.0, connect=10.0)
RELAYED_HEADERS = ("content-type", "retry-after", "retry-after-ms", "x-request-id")


class Endpoint(Model):
    """An OpenAI-compatible server: its base URL (``…/v1``) and key."""

    base_url: str
    api_key: SecretStr | None = None


class Gateway(Model):
    """Where the meter forwards to: ``provider`` names its models in the trace and the price
    table (``openrouter`` + ``openai/gpt-4o`` is ``openrouter:openai/gpt-4o``)."""

    provider: str
    endpoint: Endpoint
    max_cost_usd: float | None = Field(default=None, gt=0, description="its user's cap on the"
                                       " metered cost; the task's cost budget holds as well")


def _refusal(status: int, message: str, code: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error",
                                        "code": code}}, status=status)


class Meter:
    """One run's proxy; it stops forwarding once the metered calls cost ``max_cost_usd``."""

    def __init__(self, gate: ToolGate, gateway: Gateway, max_cost_usd: float | None) -> None:
        self.gate = gate
        self.provider = gateway.provider
        self.max_cost_usd = min((c for c in (gateway.max_cost_usd, max_cost_usd)
                                 if c is not None), default=None)
        self.spent_usd = 0.0
        key = gateway.endpoint.api_key
        self.http = httpx.AsyncClient(
            base_url=gateway.endpoint.base_url.rstrip("/"), timeout=UPSTREAM_TIMEOUT,
            headers={} if key is None else {"Authorization": f"Bearer {key.get_secret_value()}"})

    def install(self, app: web.Application) -> None:
        app.router.add_post(f"{METER_PATH}/chat/completions", self.chat_completions)
        app.router.add_get(f"{METER_PATH}/models", self.models)
        app.on_cleanup.append(self._close)

    async def _close(self, app: web.Application) -> None:
        await self.http.aclose()

    async def models(self, request: web.Request) -> web.Response:
        try:
            upstream = await self.http.get("/models")
        except httpx.TransportError as e:
            return _refusal(502, f"the gateway did not answer: {type(e).__name__}", "gateway")
        return _relayed(upstream, upstream.content)

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        body = await _body(request)
        if isinstance(body, web.Response):
            return body
        model = f"{self.provider}:{body['model']}"
        try:
            price = self.gate.prices.price(model)
        except KeyError:
            return _refusal(400, f"model {model!r} has no price in the benchmark's table, so its"
                                 " cost could not be measured; known: "
                                 + ", ".join(sorted(self.gate.prices.models)), "unpriced_model")
        if "models" in body:
            # OpenRouter's fallback list: the reply could come from a model priced otherwise
            return _refusal(400, "a list of fallback models (\"models\") is not metered: name"
                                 " one model", "invalid_request")
        if body.get("stream") is not None and not isinstance(body["stream"], bool):
            # a gateway may read "true" or 1 as true: a stream the meter would not read
            return _refusal(400, "stream must be true or false", "invalid_request")
        if self.gate.exhausted is not None:
            return _refusal(402, f"budget exhausted: {self.gate.exhausted}", "budget_exhausted")
        if self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd:
            return _refusal(402, f"${self.spent_usd:.4f} spent of the ${self.max_cost_usd:g}"
                                 " cost budget", "budget_exhausted")
        if body.get("stream") is True:
            return await self._streamed(request, body, model, price)
        try:
            upstream = await self.http.post("/chat/completions", json=body)
        except httpx.TransportError as e:
            return _refusal(502, f"the gateway did not answer: {type(e).__name__}", "gateway")
        if upstream.status_code == 200:
            try:
                reply = upstream.json()
            except ValueError:
                reply = None
            reply = reply if isinstance(reply, dict) else {}
            said = "".join(_said(reply.get("choices"), "message"))
            self._record(model, price, reply.get("usage"), said)
        return _relayed(upstream, upstream.content)

    async def _streamed(self, request: web.Request, body: dict[str, Any], model: str,
                        price: Price) -> web.StreamResponse:
        options = body.get("stream_options")
        asked_usage = isinstance(options, dict) and options.get("include_usage") is True
        body = {**body, "stream_options": {**(options if isinstance(options, dict) else {}),
                                           "include_usage": True}}
        usage: Any = None
        text: list[str] = []
        try:
            async with self.http.stream("POST", "/chat/completions", json=body) as upstream:
                if upstream.status_code != 200:
                    return _relayed(upstream, await upstream.aread())
                response = web.StreamResponse(headers={
                    "Content-Type": upstream.headers.get("content-type", "text/event-stream"),
                    "Cache-Control": "no-cache"})
                await response.prepare(request)
                reading = True
                try:
                    async for event in _events(upstream):
                        chunk = _data(event)
                        if chunk is not None:
                            usage = chunk.get("usage") or usage
                            text += _said(chunk.get("choices"), "delta")
                            if not asked_usage and chunk.get("usage") and not chunk.get("choices"):
                                continue
                        if reading:
                            try:
                                await response.write(event)
                            except ConnectionResetError:
                                # an agent that hangs up is still billed: read on to the usage
                                reading = False
                except httpx.TransportError:
                    pass  # the gateway broke off mid-stream: the agent has what it sent
                finally:
                    self._record(model, price, usage, "".join(text))
                if reading:
                    await response.write_eof()
                return response
        except httpx.TransportError as e:
            return _refusal(502, f"the gateway did not answer: {type(e).__name__}", "gateway")

    def _record(self, model: str, price: Price, usage: Any, text: str) -> None:
        # the gateway's numbers are read as warily as an agent's: ones that are no counts
        # (past the bound, negative, not numbers) leave the call unmeasured, as no usage does
        measured = Usage.reported(usage)
        if measured is not None:
            self.spent_usd += cost_usd(price, measured)
        self.gate.model_call(model, measured, text or None, metered=True)


async def _body(request: web.Request) -> dict[str, Any] | web.Response:
    """The request as a JSON object naming a model, or the refusal to send instead."""
    raw = bytearray()
    async for piece in request.content.iter_chunked(1 << 16):
        raw += piece
        if len(raw) > MAX_REQUEST_BYTES:
            return _refusal(413, f"the request is over {MAX_REQUEST_BYTES >> 20} MiB",
                            "request_too_large")
    try:
        body = json.loads(raw)
        # forwarded as JSON later, and its model name recorded: neither takes a lone surrogate
        json.dumps(body, ensure_ascii=False).encode()
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("model"), str) or not body["model"]:
        return _refusal(400, "the body must be a JSON object with a model name (\"model\")",
                        "invalid_request")
    return body


def _relayed(upstream: httpx.Response, content: bytes) -> web.Response:
    headers = {k: v for k, v in upstream.headers.items() if k.lower() in RELAYED_HEADERS}
    return web.Response(status=upstream.status_code, body=content, headers=headers)


async def _events(upstream: httpx.Response) -> AsyncIterator[bytes]:
    """The server-sent events of a stream, each with its blank line, as the gateway wrote them."""
    buffered = b""
    async for piece in upstream.aiter_bytes():
        buffered += piece.replace(b"\r\n", b"\n")
        while b"\n\n" in buffered:
            event, buffered = buffered.split(b"\n\n", 1)
            yield event + b"\n\n"
    if buffered.strip():
        yield buffered


def _data(event: bytes) -> dict[str, Any] | None:
    """The JSON object an event's data lines carry (None: a comment, ``[DONE]``, not JSON)."""
    data = b"\n".join(line[5:].strip() for line in event.split(b"\n") if line.startswith(b"data:"))
    try:
        chunk = json.loads(data)
    except ValueError:
        return None
    return chunk if isinstance(chunk, dict) else None


def _said(choices: Any, part: str) -> list[str]:
    """What the model said in a reply's or a chunk's choices (``part``: ``message`` or
    ``delta``), and which tools it called: the trace's view of it."""
    texts = []
    for choice in choices if isinstance(choices, list) else []:
        said = choice.get(part) if isinstance(choice, dict) else None
        if not isinstance(said, dict):
            continue
        if isinstance(said.get("content"), str):
            texts.append(said["content"])
        calls = said.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:  # a gateway's shape is not given
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and function.get("name"):
                texts.append(f"[calls {function['name']}]")
    return texts
