"""A client for any OpenAI-compatible chat-completions endpoint (httpx, async).

A model is named ``PROVIDER:MODEL``; the provider says where to send it and which environment
variables hold the address and the key:

    openai:gpt-4o                       OPENAI_API_KEY       (OPENAI_BASE_URL)
    openrouter:anthropic/claude-sonnet-4  OPENROUTER_API_KEY (OPENROUTER_BASE_URL)
    selfhosted:qwen2.5-7b  (self: too)  DBABENCH_SELFHOSTED_BASE_URL, optional
                                        DBABENCH_SELFHOSTED_API_KEY (vLLM, llama.cpp, Ollama)

Errors, one boundary each:

    ModelConfigError   bad input, found before anything is sent (a ValueError)
    ApiError           the endpoint failed: a refusal, or 429/5xx/network errors that outlasted
                       the rate-limit wait; an infrastructure outcome, never the model's score
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx
from pydantic import Field, SecretStr

from dbabench.model.agent import Effort
from dbabench.errors import BadInput, InfraError
from dbabench.model.base import Model
from dbabench.model.trace import Usage
from dbabench.tools.meter import Endpoint, Gateway

log = logging.getLogger(__name__)

# Worth waiting out: rate limits, timeouts, overload and gateway errors (openai-python retries
# the same set).
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
EXCERPT_CHARS = 500


class ModelConfigError(BadInput, ValueError):
    """A model name, provider or environment that cannot work; nothing was sent."""


class ApiError(InfraError):
    """The endpoint did not answer usefully, after whatever waiting the settings allow."""


@dataclass(frozen=True)
class Provider:
    name: str
    base_url_env: str
    default_base_url: str | None
    key_env: str
    key_required: bool
    reply_limit_field: str
    """OpenAI's own API rejects ``max_tokens`` for reasoning models; the rest read it."""

    def effort_fields(self, effort: Effort) -> dict[str, Any]:
        if self.name == "openrouter":
            # OpenRouter translates one field into whatever the upstream model takes.
            return {"reasoning": {"enabled": False} if effort == "off" else {"effort": effort}}
        return {"reasoning_effort": "none" if effort == "off" else effort}


PROVIDERS = {p.name: p for p in (
    Provider("openai", "OPENAI_BASE_URL", "https://api.openai.com/v1", "OPENAI_API_KEY", True,
             "max_completion_tokens"),
    Provider("openrouter", "OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1",
             "OPENROUTER_API_KEY", True, "max_tokens"),
    Provider("selfhosted", "DBABENCH_SELFHOSTED_BASE_URL", None, "DBABENCH_SELFHOSTED_API_KEY",
             False, "max_tokens"),
)}
ALIASES = {"self": "selfhosted"}


class ModelRef(Model):
    provider: str
    model: str

    @property
    def id(self) -> str:
        """How the trace and the price table name it."""
        return f"{self.provider}:{self.model}"


def parse_model(text: str) -> ModelRef:
    """``PROVIDER:MODEL``; the model part may hold colons of its own (``qwen3:8b``)."""
    provider, colon, model = text.partition(":")
    if not colon or not model:
        raise ModelConfigError(f"model {text!r} needs a provider prefix, PROVIDER:MODEL"
                               f" (providers: {', '.join([*PROVIDERS, *ALIASES])}), e.g."
                               " openrouter:openai/gpt-4o-mini")
    try:
        return ModelRef(provider=parse_provider(provider), model=model)
    except ModelConfigError as e:
        raise ModelConfigError(f"{e} (in {text!r})") from None


def parse_provider(text: str) -> str:
    """A provider's name, or an alias of one."""
    provider = ALIASES.get(text, text)
    if provider not in PROVIDERS:
        raise ModelConfigError(f"unknown provider {text!r}; the providers are:"
                               f" {', '.join([*PROVIDERS, *ALIASES])}")
    return provider


def resolve_endpoint(name: str, env: Mapping[str, str]) -> Endpoint:
    """A provider's address and key from the environment; a missing one is named."""
    provider = PROVIDERS[name]
    base_url = env.get(provider.base_url_env) or provider.default_base_url
    if not base_url:
        raise ModelConfigError(f"{name} needs the server's address in"
                               f" {provider.base_url_env}, e.g. http://127.0.0.1:8000/v1")
    key = env.get(provider.key_env) or None
    if provider.key_required and key is None:
        raise ModelConfigError(f"{name} needs an API key in {provider.key_env}"
                               " (it is not set, or empty)")
    return Endpoint(base_url=base_url.rstrip("/"),
                    api_key=None if key is None else SecretStr(key))


def metering_gateway(provider: str, env: Mapping[str, str],
                     max_cost_usd: float | None = None) -> Gateway:
    """Where the metering proxy sends an external agent's model calls: the provider's address
    and key, found in the environment as for a model agent."""
    name = parse_provider(provider)
    return Gateway(provider=name, endpoint=resolve_endpoint(name, env), max_cost_usd=max_cost_usd)


class ChatSettings(Model):
    max_reply_tokens: int = Field(default=4096, gt=0,
                                  description="output allowance per call, reasoning included")
    effort: Effort | None = Field(default=None,
                                  description="reasoning effort; None asks for nothing")
    rate_limit_wait_seconds: float = Field(
        default=900, ge=0, description="how long one request may wait out 429s and 5xx before"
        " it is given up as api-error (dba-runner's measured default)")
    request_timeout_seconds: float = Field(default=300, gt=0)
    backoff_first_seconds: float = Field(default=1.0, ge=0)
    backoff_max_seconds: float = Field(default=60.0, ge=0)


class ToolCall(Model):
    id: str
    name: str
    arguments: str = Field(description="the JSON text the model wrote, not yet parsed")


class Reply(Model):
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)

    def as_message(self) -> dict[str, Any]:
        """The reply as a history message; content "" rather than null, which some servers
        (llama.cpp) reject."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls]
        return message


class ChatClient:
    """One model at one endpoint; ``complete`` is one chat-completions call with retries."""

    def __init__(self, ref: ModelRef, endpoint: Endpoint, settings: ChatSettings) -> None:
        self.ref = ref
        self.provider = PROVIDERS[ref.provider]
        self.settings = settings
        headers = {} if endpoint.api_key is None else {
            "Authorization": f"Bearer {endpoint.api_key.get_secret_value()}"}
        self._http = httpx.AsyncClient(base_url=endpoint.base_url, headers=headers,
                                       timeout=settings.request_timeout_seconds)

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._http.aclose()

    def _body(self, messages: list[dict[str, Any]],
             tools: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.ref.model, "messages": messages,
                                self.provider.reply_limit_field: self.settings.max_reply_tokens}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        if self.settings.effort is not None:
            body.update(self.provider.effort_fields(self.settings.effort))
        return body

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *,
                       timeout: float | None = None) -> Reply:
        body = self._body(messages, tools)
        waited, attempt = 0.0, 0
        while True:
            problem, retry_after = await self._attempt(body, timeout)
            if isinstance(problem, Reply):
                return problem
            delay = retry_after if retry_after is not None else min(
                self.settings.backoff_first_seconds * 2 ** attempt * (1 + random.random() / 4),
                self.settings.backoff_max_seconds)
            if waited + delay > self.settings.rate_limit_wait_seconds:
                raise ApiError(f"{problem}; gave up after waiting {waited:.0f}s of the"
                               f" {self.settings.rate_limit_wait_seconds:.0f}s rate-limit wait")
            log.warning("%s: %s; waiting %.1fs (%.0fs waited so far)", self.ref.id, problem,
                        delay, waited)
            await asyncio.sleep(delay)
            waited, attempt = waited + delay, attempt + 1

    async def _attempt(self, body: dict[str, Any],
                       timeout: float | None) -> tuple[Reply | str, float | None]:
        """A reply, or what went wrong and may pass (with the server's own wait, if it gave
        one); a failure that waiting cannot cure raises ``ApiError``."""
        try:
            response = await self._http.post(
                "/chat/completions", json=body,
                timeout=httpx.USE_CLIENT_DEFAULT if timeout is None else timeout)
        except httpx.TransportError as e:
            return f"{type(e).__name__}: {e}", None
        excerpt = response.text[:EXCERPT_CHARS]
        if response.status_code in RETRYABLE_STATUS:
            return f"HTTP {response.status_code}: {excerpt}", _retry_after(response.headers)
        if response.status_code != 200:
            raise ApiError(f"HTTP {response.status_code} from {self.ref.id}: {excerpt}")
        try:
            payload = response.json()
        except ValueError:
            return f"a reply that is not JSON: {excerpt}", None
        if isinstance(payload, dict) and payload.get("error"):
            # gateways (OpenRouter) wrap an upstream failure in a 200 with an error envelope
            error = payload["error"]
            code = error.get("code") if isinstance(error, dict) else None
            if code in RETRYABLE_STATUS:
                return f"error envelope {code}: {json.dumps(error)[:EXCERPT_CHARS]}", None
            raise ApiError(f"error envelope from {self.ref.id}: {json.dumps(error)[:EXCERPT_CHARS]}")
        try:
            return _reply(payload), None
        except (KeyError, IndexError, TypeError, ValueError) as e:
            raise ApiError(f"a reply without the chat-completions shape ({e!r}): {excerpt}") from e


def _retry_after(headers: httpx.Headers) -> float | None:
    """The server's own wait: ``retry-after-ms`` (OpenAI) or ``retry-after`` in seconds."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers[name]) / scale)
        except (KeyError, ValueError):
            continue
    return None


def _reply(payload: dict[str, Any]) -> Reply:
    choice = payload["choices"][0]
    message = choice["message"]
    calls = []
    for number, call in enumerate(message.get("tool_calls") or []):
        arguments = call["function"].get("arguments", "")
        calls.append(ToolCall(
            id=call.get("id") or f"call_{number}", name=call["function"]["name"],
            # some servers send an object instead of its JSON text
            arguments=arguments if isinstance(arguments, str) else json.dumps(arguments)))
    return Reply(content=message.get("content") or "", tool_calls=calls,
                 finish_reason=choice.get("finish_reason"),
                 usage=Usage.from_openai(payload.get("usage") or {}))
