"""The metering proxy over real HTTP: the tool server in front of a gate on a real PostgreSQL,
forwarding to the scripted OpenAI-compatible server, as an external agent's OpenAI client would
meet it; and a sandboxed external agent that is handed only the proxy."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from dbabench.agents.external import ExternalAgent
from dbabench.env import sandbox
from dbabench.env.contract import METER_PATH
from dbabench.env.postgres import PostgresInstance
from dbabench.env.processes import free_port
from dbabench.evaluate.efficiency import evaluate_efficiency
from dbabench.model.task import AgentTask
from dbabench.model.tool import ToolName
from dbabench.model.trace import TraceEvent, Usage
from dbabench.pricing import cost_usd, load_prices
from dbabench.records.run import RunFiles
from dbabench.tools.gate import Budget, ToolGate
from dbabench.tools.meter import Endpoint, Gateway
from dbabench.tools.server import serve

from model_server import ScriptedModel, call, scripted_model
from shared_instance import tool_context

pytestmark = pytest.mark.integration

TOKEN = "run-token-5e1d"
GATEWAY_KEY = "gateway-secret-81c2"
# call(): 1000 input tokens of which 400 cached, 50 output; gpt-4o's list price
ONE_CALL_USD = cost_usd(load_prices().price("openai:gpt-4o"),
                        Usage(input_tokens=1000, cached_input_tokens=400, output_tokens=50))
ASK = {"model": "gpt-4o", "messages": [{"role": "user", "content": "why are checkouts slow?"}]}


def _task(max_cost_usd: float | None = None) -> AgentTask:
    return AgentTask(incident="INC-METER", symptom="checkouts time out", tools=list(ToolName),
                     max_steps=20, timeout_seconds=300, max_cost_usd=max_cost_usd)


def _gateway(url: str, max_cost_usd: float | None = None) -> Gateway:
    return Gateway(provider="openai", max_cost_usd=max_cost_usd,
                   endpoint=Endpoint(base_url=url, api_key=SecretStr(GATEWAY_KEY)))


@pytest.fixture
def model(tmp_path: Path) -> Iterator[ScriptedModel]:
    script = [call("execute_sql", sql="SELECT 1"), {"reply": {"content": "no usage here",
                                                             "usage": None}}]
    with scripted_model(script, tmp_path / "model") as server:
        yield server


@asynccontextmanager
async def metered(postgres: PostgresInstance, tmp_path: Path, gateway: Gateway,
                  task: AgentTask | None = None
                  ) -> AsyncIterator[tuple[httpx.AsyncClient, ToolGate]]:
    gate = ToolGate(tool_context(postgres, tmp_path), RunFiles(tmp_path),
                    Budget(max_steps=20, timeout_seconds=300))
    try:
        async with serve(gate, task or _task(), TOKEN, gateway=gateway) as url:
            async with httpx.AsyncClient(base_url=url + METER_PATH, timeout=30, headers={
                    "Authorization": f"Bearer {TOKEN}"}) as client:
                yield client, gate
    finally:
        await gate.close()


def _models(gate: ToolGate) -> list[TraceEvent]:
    return [e for e in gate.trace.events if e.kind == "model"]


async def test_a_call_is_forwarded_with_the_gateways_key_and_its_usage_metered(
        postgres: PostgresInstance, model: ScriptedModel, tmp_path: Path) -> None:
    async with metered(postgres, tmp_path, _gateway(model.url)) as (client, gate):
        reply = await client.post("/chat/completions", json=ASK)
        assert reply.status_code == 200
        body = reply.json()
        assert body["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "execute_sql"
        assert body["usage"]["prompt_tokens"] == 1000  # relayed as the gateway sent it
        # the agent's token opens the proxy; what reaches the gateway is the gateway's key
        [forwarded] = model.requests()
        assert forwarded["auth"] == f"Bearer {GATEWAY_KEY}" and forwarded["body"] == ASK
        unauthorized = await client.post("/chat/completions", json=ASK,
                                         headers={"Authorization": f"Bearer {GATEWAY_KEY}"})
        assert unauthorized.status_code == 401 and len(model.requests()) == 1
        listed = await client.get("/models")
        assert listed.status_code == 200 and listed.json()["data"][0]["id"] == "scripted"

        # a reply without usage is recorded as a call whose tokens are unknown
        assert (await client.post("/chat/completions", json=ASK)).status_code == 200
    first, unmeasured = _models(gate)
    assert first.metered and first.model == "openai:gpt-4o" and first.usage is not None
    assert (first.usage.input_tokens, first.usage.cached_input_tokens,
            first.usage.output_tokens) == (1000, 400, 50)
    assert first.text == "calling execute_sql[calls execute_sql]"
    assert unmeasured.metered and unmeasured.usage is None
    efficiency = evaluate_efficiency(gate.trace.events, gate.prices, wall_seconds=1)
    assert efficiency.cost_basis == "metered" and efficiency.unmeasured_calls == 1
    assert efficiency.cost_usd == pytest.approx(ONE_CALL_USD, abs=1e-6)


def _sse(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


async def test_a_streamed_call_is_metered_and_relayed_as_the_agent_asked(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    with scripted_model([call("execute_sql", sql="SELECT 1")], tmp_path / "model") as model:
        async with metered(postgres, tmp_path, _gateway(model.url)) as (client, gate):
            plain = await client.post("/chat/completions", json={**ASK, "stream": True})
            asked = await client.post("/chat/completions", json={
                **ASK, "stream": True, "stream_options": {"include_usage": True}})
        forwarded = model.requests()
    assert plain.status_code == asked.status_code == 200
    assert plain.headers["content-type"].startswith("text/event-stream")
    # the meter asked the gateway for usage both times; only the agent that asked sees it
    assert all(r["body"]["stream_options"] == {"include_usage": True} for r in forwarded)
    plain_chunks, asked_chunks = _sse(plain.text), _sse(asked.text)
    assert all(chunk["choices"] for chunk in plain_chunks)
    assert plain.text.rstrip().endswith("data: [DONE]")
    assert asked_chunks[-1]["choices"] == [] and asked_chunks[-1]["usage"]["prompt_tokens"] == 1000
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in plain_chunks
                   ) == "calling execute_sql"  # relayed chunk by chunk
    calls = _models(gate)
    assert len(calls) == 2 and all(e.metered for e in calls)
    assert all(e.usage is not None and e.usage.cached_input_tokens == 400 for e in calls)
    assert calls[0].text == "calling execute_sql[calls execute_sql]"


async def test_refused_before_anything_is_forwarded(
        postgres: PostgresInstance, model: ScriptedModel, tmp_path: Path) -> None:
    # the cap sits below one call: the first goes through, the second would pass it
    async with metered(postgres, tmp_path, _gateway(model.url, max_cost_usd=ONE_CALL_USD / 2)
                       ) as (client, gate):
        unpriced = await client.post("/chat/completions", json={**ASK, "model": "gpt-unknown"})
        assert unpriced.status_code == 400
        error = unpriced.json()["error"]
        assert error["code"] == "unpriced_model" and "'openai:gpt-unknown'" in error["message"]
        assert "gpt-4o" in error["message"]  # the known ones are named
        for bad in (b"not json", b"[1, 2]", b'{"messages": []}'):
            response = await client.post("/chat/completions", content=bad)
            assert response.status_code == 400 and "model" in response.json()["error"]["message"]
        assert not model.requests()

        assert (await client.post("/chat/completions", json=ASK)).status_code == 200
        over = await client.post("/chat/completions", json=ASK)
        assert over.status_code == 402 and over.json()["error"]["code"] == "budget_exhausted"
        assert "cost budget" in over.json()["error"]["message"]
        assert len(model.requests()) == 1

        gate.exhausted = "step budget of 20 tool calls is spent"
        spent = await client.post("/chat/completions", json={**ASK, "stream": True})
        assert spent.status_code == 402 and "step budget" in spent.json()["error"]["message"]
    assert len(_models(gate)) == 1


async def test_no_request_shape_escapes_the_meter(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    reply = {"content": "one two three four five six", "usage": {"prompt_tokens": 9}}
    with scripted_model([{"reply": reply, "chunk_delay": 0.2}], tmp_path / "model") as model:
        async with metered(postgres, tmp_path, _gateway(model.url)) as (client, gate):
            # a stream the meter would not read as one ("true", 1), a fallback list that could
            # be answered by a model priced otherwise: refused, not forwarded
            for shape in ({"stream": "true"}, {"stream": 1}, {"models": ["claude-opus-4"]}):
                refused = await client.post("/chat/completions", json={**ASK, **shape})
                assert refused.status_code == 400, shape
            assert not model.requests()
            # hanging up after the first chunk does not leave the tokens unmeasured
            async with client.stream("POST", "/chat/completions",
                                     json={**ASK, "stream": True}) as streamed:
                async for _ in streamed.aiter_bytes():
                    break
            for _ in range(50):
                if _models(gate):
                    break
                await asyncio.sleep(0.1)
    [hung_up] = _models(gate)
    assert hung_up.usage is not None and hung_up.usage.input_tokens == 9
    assert hung_up.text == "one two three four five six"


async def test_the_tasks_cost_budget_holds_without_a_cap_of_the_users(
        postgres: PostgresInstance, model: ScriptedModel, tmp_path: Path) -> None:
    async with metered(postgres, tmp_path, _gateway(model.url),
                       _task(max_cost_usd=ONE_CALL_USD / 2)) as (client, _):
        assert (await client.post("/chat/completions", json=ASK)).status_code == 200
        assert (await client.post("/chat/completions", json=ASK)).status_code == 402


async def test_the_gateways_failures_reach_the_agent_and_cost_nothing(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    script = [{"status": 429, "headers": {"retry-after": "7"},
               "body": {"error": {"message": "slow down"}}}]
    with scripted_model(script, tmp_path / "model") as server:
        async with metered(postgres, tmp_path, _gateway(server.url)) as (client, gate):
            limited = await client.post("/chat/completions", json=ASK)
            streamed = await client.post("/chat/completions", json={**ASK, "stream": True})
    for response in (limited, streamed):
        assert response.status_code == 429 and response.headers["retry-after"] == "7"
        assert response.json()["error"]["message"] == "slow down"
    async with metered(postgres, tmp_path / "down",
                       _gateway(f"http://127.0.0.1:{free_port()}/v1")) as (client, gate_down):
        down = await client.post("/chat/completions", json=ASK)
    assert down.status_code == 502 and "did not answer" in down.json()["error"]["message"]
    assert not _models(gate) and not _models(gate_down)


# The agent asks its model once through OPENAI_BASE_URL, as any OpenAI client does, then files
# a report; it prints the names of its environment and whether the gateway's key is in it.
METERED_AGENT = r'''
import json, os, httpx
from dbabench.tools.client import ToolClient
reply = httpx.post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", timeout=30,
                   headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
                   json={"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
print(json.dumps({"status": reply.status_code, "env": sorted(os.environ),
                  "gateway_key_seen": any("%s" in v for v in os.environ.values())}))
ToolClient(os.environ["DBABENCH_TOOLS_URL"], os.environ["DBABENCH_TOOLS_TOKEN"]).report(
    {"root_cause_type": "stale_statistics",
     "affected_objects": [{"kind": "table", "name": "orders"}]})
''' % GATEWAY_KEY


async def test_a_sandboxed_agent_handed_the_meter_is_measured(
        postgres: PostgresInstance, model: ScriptedModel, tmp_path: Path) -> None:
    if sandbox.available(sandbox.AGENT_USER) is not None:
        pytest.skip(f"no agent sandbox here: {sandbox.available(sandbox.AGENT_USER)}")
    gate = ToolGate(tool_context(postgres, tmp_path), RunFiles(tmp_path),
                    Budget(max_steps=20, timeout_seconds=300))
    agent = ExternalAgent([sys.executable, "-c", METERED_AGENT], gateway=_gateway(model.url))
    try:
        await agent.run(_task(), gate)
    finally:
        await gate.close()
    seen = json.loads((tmp_path / "agent.log").read_text().splitlines()[0])
    assert seen["status"] == 200 and not seen["gateway_key_seen"]
    assert {"OPENAI_BASE_URL", "OPENAI_API_KEY"} <= set(seen["env"])
    assert gate.report is not None and model.requests()[0]["auth"] == f"Bearer {GATEWAY_KEY}"
    [metered_call] = _models(gate)
    assert metered_call.metered and metered_call.usage is not None
    assert evaluate_efficiency(gate.trace.events, gate.prices, 1).cost_basis == "metered"


def test_the_meters_variables_are_not_the_users_to_pass() -> None:
    with pytest.raises(ValueError, match="metering proxy's"):
        ExternalAgent(["/bin/true"], env_names=["PATH", "OPENAI_API_KEY"],
                      gateway=_gateway("http://127.0.0.1:1/v1"))
