"""What every model-driven control structure shares: one model client, the budgets, token and
cost accounting, and one way of letting the model act through the gate.

A reply the harness cannot use is discarded, noted back to the model and counted by class;
the same class ``max_repeats`` times in a row ends the agent with that class:

    output-limit     finish_reason "length": the reply was cut at the reply-token limit
    empty-response   neither text nor a tool call
    invalid-step     text without a tool call, an unknown tool, arguments that are not a JSON
                     object, or a final submission the harness refused
    budget-exhausted model calls, cost or wall-clock spent (the gate's own step budget raises
                     ``BudgetExhausted`` and is handled by the runner)
    api-error        the endpoint failed after the client's waiting (not a score)
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, ClassVar, TypeVar

from pydantic import Field

from dbabench.model.artifacts import RunArtifact
from dbabench.agents import prompts
from dbabench.agents.base import AgentFailure
from dbabench.agents.chat import (ApiError, ChatClient, ChatSettings, ModelConfigError,
                                  ModelRef, Reply, parse_model, resolve_endpoint)
from dbabench.model.base import Model
from dbabench.model.task import AgentTask
from dbabench.model.trace import FailureClass
from dbabench.pricing import Price, PriceTable, cost_usd, load_prices
from dbabench.tools.bounds import clip_text
from dbabench.tools.gate import ToolGate
from dbabench.tools.meter import Endpoint
from dbabench.tools.specs import TOOL_SPECS, ToolSpec

T = TypeVar("T")
Finish = Callable[[dict[str, Any]], str | None]
"""Takes the final tool's arguments; returns why they are refused, or None to finish."""


class ModelAgentConfig(Model):
    """How a model-driven agent runs; recorded whole in the run's ``agent.json``."""

    model: str = Field(description="PROVIDER:MODEL, e.g. openrouter:openai/gpt-4o-mini")
    chat: ChatSettings = Field(default_factory=ChatSettings)
    max_model_calls: int | None = Field(
        default=None, gt=0, description="default: twice the task's tool-call budget")
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_seconds: float | None = Field(default=None, gt=0,
                                      description="default: the task's time budget")
    max_observation_chars: int = Field(default=8000, gt=0,
                                       description="a tool result is cut here for the model")
    max_repeats: int = Field(default=3, gt=0,
                             description="rejected replies of one class in a row before giving up")


class AgentRecord(Model):
    """What ``agent.json`` holds: enough to know two runs were the same experiment."""

    agent: str
    control: str
    model: str
    prompt_sha256: str
    prices_as_of: str
    config: ModelAgentConfig


class Prepared(Model):
    """A config checked against the environment and the price table before any run starts."""

    config: ModelAgentConfig
    ref: ModelRef
    endpoint: Endpoint
    price: Price
    prices_as_of: str


def prepare(config: ModelAgentConfig, env: Mapping[str, str] | None = None,
            prices: PriceTable | None = None) -> Prepared:
    """Fail on bad input now (``ModelConfigError``), not minutes into a run."""
    ref = parse_model(config.model)
    endpoint = resolve_endpoint(ref.provider, os.environ if env is None else env)
    table = prices or load_prices()
    try:
        price = table.price(ref.id)
    except KeyError as e:
        raise ModelConfigError(e.args[0]) from None
    return Prepared(config=config, ref=ref, endpoint=endpoint, price=price,
                    prices_as_of=table.as_of)


class ModelAgent:
    """The part every model-driven agent shares: checked settings, a name carrying the model,
    and sessions recorded in the run's ``agent.json``."""

    control: ClassVar[str]
    prompt_sha256: ClassVar[str]

    def __init__(self, config: ModelAgentConfig, *, env: Mapping[str, str] | None = None,
                 prices: PriceTable | None = None) -> None:
        self.prepared = prepare(config, env, prices)
        self.name = f"{self.control}:{self.prepared.ref.id}"

    @asynccontextmanager
    async def session(self, gate: ToolGate, task: AgentTask) -> AsyncIterator[ModelSession]:
        prepared = self.prepared
        gate.keep(RunArtifact.AGENT, AgentRecord(
            agent=self.name, control=self.control, model=prepared.ref.id,
            prompt_sha256=self.prompt_sha256, prices_as_of=prepared.prices_as_of,
            config=prepared.config))
        async with ChatClient(prepared.ref, prepared.endpoint, prepared.config.chat) as chat:
            yield ModelSession(chat, gate, task, prepared)


class ModelSession:
    """One model at work on one task: every model call of the agent goes through here."""

    def __init__(self, chat: ChatClient, gate: ToolGate, task: AgentTask,
                 prepared: Prepared) -> None:
        self.chat = chat
        self.gate = gate
        self.config = prepared.config
        self.price = prepared.price
        self.model_id = prepared.ref.id
        self.max_calls = self.config.max_model_calls or 2 * task.max_steps
        self.deadline = time.monotonic() + (self.config.max_seconds or task.timeout_seconds)
        self.max_cost_usd = min((c for c in (self.config.max_cost_usd, task.max_cost_usd)
                                 if c is not None), default=None)
        self.calls = 0
        self.cost_usd = 0.0
        self.rejections: Counter[FailureClass] = Counter()

    async def ask(self, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]]) -> Reply:
        """One model call within the budgets; its usage is priced here and recorded by the
        caller, which knows whether the reply was used."""
        left = self.deadline - time.monotonic()
        if self.calls >= self.max_calls:
            raise AgentFailure("budget-exhausted", f"{self.max_calls} model calls are spent")
        if self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd:
            raise AgentFailure("budget-exhausted", f"${self.cost_usd:.4f} spent of the"
                               f" ${self.max_cost_usd:g} cost budget")
        if left <= 0:
            raise AgentFailure("budget-exhausted", "the agent's wall-clock budget is spent")
        try:
            reply = await self.chat.complete(
                messages, tools, timeout=min(left, self.config.chat.request_timeout_seconds))
        except ApiError as e:
            if time.monotonic() >= self.deadline:
                # the request was cut by our own clock, not failed by the endpoint
                raise AgentFailure("budget-exhausted", "the agent's wall-clock budget ran out"
                                   f" during a model call ({e})") from e
            raise AgentFailure("api-error", str(e)) from e
        self.calls += 1
        self.cost_usd += cost_usd(self.price, reply.usage)
        return reply

    def record(self, reply: Reply, rejected: str | None = None) -> None:
        self.gate.model_call(self.model_id, reply.usage, reply.content or None,
                             metered=True, rejected=rejected)

    def reject(self, reply: Reply, failure: FailureClass, note: str) -> str:
        """Count a discarded reply; the class's ``max_repeats``-th in a row ends the agent."""
        self.record(reply, rejected=f"{failure}: {note}")
        self.rejections[failure] += 1
        if self.rejections[failure] >= self.config.max_repeats:
            raise AgentFailure(failure, f"{self.rejections[failure]} replies in a row: {note}")
        return note

    async def act(self, messages: list[dict[str, Any]], finish: ToolSpec,
                  on_finish: Finish, tools: tuple[ToolSpec, ...] = TOOL_SPECS) -> dict[str, Any]:
        """Let the model call ``tools`` until ``on_finish`` accepts a call of ``finish``;
        return that call's arguments. ``messages`` grows with the exchange."""
        specs = {s.name: s for s in (*tools, finish)}
        definitions = [s.as_function() for s in specs.values()]
        while True:
            reply = await self.ask(messages, definitions)
            problem = self._problem(reply, specs, finish.name)
            if problem is not None:
                failure, note = problem
                if failure == "invalid-step" and not reply.tool_calls:
                    messages.append(reply.as_message())  # its reasoning is worth keeping
                messages.append({"role": "user",
                                 "content": self.reject(reply, failure, note)})
                continue
            # a refused final call is an invalid step too, though the reply itself was used
            refusals = self.rejections["invalid-step"]
            self.rejections.clear()
            self.record(reply)
            messages.append(reply.as_message())
            finished: dict[str, Any] | None = None
            for call in reply.tool_calls:
                args = json.loads(call.arguments)
                if finished is not None:
                    # every call needs its answer, or the next request is malformed
                    content = f"not run: {finish.name} ended this part of the work"
                elif call.name != finish.name:
                    content = self.observation(await self.gate.call(call.name, args))
                elif (refused := on_finish(args)) is None:
                    finished, content = args, "accepted"
                else:
                    content = f"refused: {refused}"
                    self.rejections["invalid-step"] = refusals = refusals + 1
                    if refusals >= self.config.max_repeats:
                        raise AgentFailure("invalid-step", f"{finish.name} refused"
                                           f" {refusals} times in a row: {refused}")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
            if finished is not None:
                return finished

    async def answer(self, messages: list[dict[str, Any]], parse: Callable[[str], T]) -> T:
        """Ask for a text answer without tools; ``parse`` raises ValueError on one it cannot
        use, which is noted back and counted as an invalid step."""
        while True:
            reply = await self.ask(messages, [])
            problem = self._problem(reply, {}, None)
            if problem is None or problem[0] == "invalid-step":  # text is what was asked for
                try:
                    value = parse(reply.content)
                except ValueError as e:
                    problem = "invalid-step", prompts.NUDGE_INVALID.format(problem=e)
                else:
                    self.rejections.clear()
                    self.record(reply)
                    messages.append(reply.as_message())
                    return value
            messages.append({"role": "user",
                             "content": self.reject(reply, problem[0], problem[1])})

    def _problem(self, reply: Reply, specs: dict[str, ToolSpec],
                 finish: str | None) -> tuple[FailureClass, str] | None:
        """Why a reply cannot be used, if it cannot; ``finish`` None: a text answer was asked."""
        if reply.finish_reason == "length":
            return "output-limit", prompts.NUDGE_LENGTH.format(
                limit=self.config.chat.max_reply_tokens)
        if not reply.tool_calls:
            if not reply.content.strip():
                return "empty-response", (prompts.NUDGE_EMPTY_ANSWER if finish is None else
                                          prompts.NUDGE_EMPTY.format(finish=finish))
            return "invalid-step", prompts.NUDGE_TEXT_ONLY.format(finish=finish)
        for call in reply.tool_calls:
            if call.name not in specs:
                return "invalid-step", prompts.NUDGE_INVALID.format(
                    problem=f"there is no tool {call.name!r}; the tools are:"
                            f" {', '.join(specs)}")
            try:
                args = json.loads(call.arguments or "{}")
            except ValueError:
                args = None
            if not isinstance(args, dict):
                excerpt = clip_text(call.arguments, 200)[0]
                return "invalid-step", prompts.NUDGE_INVALID.format(
                    problem=f"the arguments of {call.name} are not a JSON object: {excerpt}")
            call.arguments = json.dumps(args)
        return None

    def observation(self, result: dict[str, Any]) -> str:
        """A tool result as the model reads it: bounded, saying what was cut, and how many
        calls are left."""
        body = (json.dumps(result["observation"], default=str, ensure_ascii=False)
                if result["ok"] else f"error: {result['error']}")
        text, cut = clip_text(body, self.config.max_observation_chars)
        notes = [f"seq {result['seq']}"]
        if result.get("truncated"):
            notes.append("the tool cut this result to its bounds")
        if cut:
            notes.append(f"cut here to its first {self.config.max_observation_chars} characters")
        notes.append(f"{self.gate.budget.status().steps_left} tool calls left")
        return f"[{'; '.join(notes)}]\n{text}"
