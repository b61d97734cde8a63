"""The tool server over real HTTP, in front of a gate on a real PostgreSQL, driven by ToolClient.

The server runs on an event loop of its own thread, as it would beside an agent in another
process: the tests are plain synchronous code talking to it through the client.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import itertools
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from dbabench.model.task import AgentTask
from dbabench.model.tool import ToolName
from dbabench.env.postgres import PostgresInstance
from dbabench.env.processes import free_port
from dbabench.model.trace import TraceEvent
from dbabench.tools.client import ToolClient, ToolServerError
from dbabench.tools.context import ToolContext
from dbabench.model.artifacts import RunArtifact
from dbabench.records.run import RunFiles
from dbabench.tools.gate import Budget, ToolGate
from dbabench.tools.server import MAX_BODY_BYTES, TOOL_SPECS, serve

from shared_instance import tool_context

pytestmark = pytest.mark.integration

TOKEN = "test-token-3f9c1a"
VALID_REPORT = {
    "root_cause_type": "stale_statistics",
    "affected_objects": [{"kind": "table", "name": "orders"}],
    "causal_factors": ["autovacuum disabled on table"],
    "evidence": [{"tool": "execute_sql", "observation": "n_mod_since_analyze 1.2M"}],
    "actions": [{"description": "ANALYZE orders", "tool": "execute_sql",
                 "statement": "ANALYZE orders"}],
    "verification": "plan is an index scan again",
}


@dataclass
class Served:
    url: str
    trace: Path

    def client(self, token: str = TOKEN) -> ToolClient:
        return ToolClient(self.url, token, timeout=30)

    def events(self) -> list[TraceEvent]:
        # The gate writes each event before the response goes out, so the file is current.
        if not self.trace.exists():
            return []
        return [TraceEvent.model_validate_json(line)
                for line in self.trace.read_text().splitlines()]


@contextmanager
def served_gate(ctx: ToolContext, trace: Path, budget: Budget, task: AgentTask,
                own_agent: bool = False) -> Iterator[str]:
    """Serve a fresh gate from a thread's event loop; stop it and close the gate on exit."""
    ready: concurrent.futures.Future[tuple[str, Callable[[], None]]] = concurrent.futures.Future()

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        trace.parent.mkdir(parents=True, exist_ok=True)
        gate = ToolGate(ctx, RunFiles(trace.parent), budget)
        try:
            async with serve(gate, task, TOKEN, own_agent=own_agent) as url:
                ready.set_result((url, lambda: loop.call_soon_threadsafe(stop.set)))
                await stop.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e)
            raise
        finally:
            await gate.close()

    thread = threading.Thread(target=asyncio.run, args=(run(),), daemon=True)
    thread.start()
    url, stop = ready.result(timeout=10)
    try:
        yield url
    finally:
        stop()
        thread.join(timeout=10)
        assert not thread.is_alive(), "the tool server did not stop"


ServeGate = Callable[..., Served]


@pytest.fixture
def serve_gate(postgres: PostgresInstance, tmp_path: Path) -> Iterator[ServeGate]:
    ctx = tool_context(postgres, tmp_path)
    numbers = itertools.count()
    with ExitStack() as stack:
        def start(max_steps: int = 100, own_agent: bool = False, **ctx_changes: Any) -> Served:
            trace = tmp_path / f"gate-{next(numbers)}" / RunArtifact.TRACE
            task = AgentTask(incident="INC-TOOLSRV", symptom="checkouts time out",
                             tools=list(ToolName), max_steps=max_steps, timeout_seconds=300)
            url = stack.enter_context(served_gate(
                dataclasses.replace(ctx, **ctx_changes), trace,
                Budget(max_steps=max_steps, timeout_seconds=300), task, own_agent))
            return Served(url, trace)

        yield start


@pytest.fixture
def served(serve_gate: ServeGate) -> Served:
    return serve_gate()


@pytest.fixture
def client(served: Served) -> Iterator[ToolClient]:
    with served.client() as c:
        yield c


def refused(call: Callable[[], Any]) -> ToolServerError:
    with pytest.raises(ToolServerError) as info:
        call()
    return info.value


# -- what the agent is told ------------------------------------------------------------------

def test_task_and_tools(served: Served, client: ToolClient) -> None:
    task = client.task()
    assert task["symptom"] == "checkouts time out"
    assert task["max_steps"] == 100 and task["tools"] == list(ToolName)

    tools = {t["name"]: t for t in client.tools()}
    assert set(tools) == set(ToolName) == {s.name for s in TOOL_SPECS}
    for tool in tools.values():
        assert len(tool["description"]) > 100
        assert tool["parameters"]["type"] == "object" and tool["parameters"]["properties"]
    assert tools["execute_sql"]["parameters"]["required"] == ["sql"]
    # snake_case, as the agent must send the arguments
    assert "max_rows" in tools["execute_sql"]["parameters"]["properties"]
    assert set(tools["manage_instance"]["parameters"]["properties"]["action"]["enum"]) >= {
        "status", "config_set", "restart"}
    # the report's schema is listed beside the tools, with the vocabulary it takes
    report = client.report_schema()
    assert report["endpoint"] == "POST /v1/report"
    parameters = report["parameters"]
    assert "stale_statistics" in parameters["$defs"]["CauseId"]["enum"]
    assert parameters["$defs"]["ObjectRef"]["properties"]["kind"]["enum"][0] == "table"
    assert served.events() == []


def test_openapi_document_covers_every_endpoint_and_resolves(
        served: Served, client: ToolClient) -> None:
    response = httpx.get(f"{served.url}/v1/openapi.json",
                         headers={"Authorization": f"Bearer {TOKEN}"})
    document = response.json()
    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) == {
        "/v1/task", "/v1/tools", "/v1/budget", "/v1/report", "/v1/events/thought", "/v1/events/model",
        *(f"/v1/tools/{name}" for name in ToolName)}
    schemas = document["components"]["schemas"]
    sql = document["paths"]["/v1/tools/execute_sql"]["post"]
    assert schemas["ExecuteSqlArgs"]["required"] == ["sql"]
    assert sql["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ExecuteSqlArgs"}
    assert "root_cause_type" in schemas["Report"]["properties"]
    refs = re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', response.text)
    assert refs and all(ref in schemas for ref in refs)
    assert httpx.get(f"{served.url}/v1/openapi.json").status_code == 401


def test_budget_says_what_is_left(serve_gate: ServeGate) -> None:
    with serve_gate(max_steps=2).client() as client:
        client.call("manage_instance", action="status")
        budget = client.budget()
        assert (budget["max_steps"], budget["steps_used"], budget["steps_left"]) == (2, 1, 1)
        assert 0 < budget["seconds_left"] <= 300 and budget["exhausted"] is None
        client.call("manage_instance", action="status")
        refused(lambda: client.call("manage_instance", action="status"))
        assert "step budget of 2" in client.budget()["exhausted"]


def test_healthz_needs_no_token(served: Served) -> None:
    response = httpx.get(f"{served.url}/healthz")
    assert response.status_code == 200 and response.json() == {"ok": True}


# -- tool calls ------------------------------------------------------------------------------

def test_execute_sql_round_trip(served: Served, client: ToolClient) -> None:
    out = client.call("execute_sql", sql="SELECT 1 AS one, 'x' AS two")
    assert out["ok"], out
    result = out["observation"]["results"][0]
    assert result["columns"] == ["one", "two"] and result["rows"] == [[1, "x"]]

    event = served.events()[-1]
    assert (event.kind, event.tool, event.seq) == ("tool", "execute_sql", out["seq"])
    assert event.args == {"sql": "SELECT 1 AS one, 'x' AS two"}


def test_failed_calls_are_observations(served: Served, client: ToolClient) -> None:
    bad_args = client.call("execute_sql", max_rows=3)
    assert not bad_args["ok"] and "sql" in bad_args["error"]

    metrics = client.call("query_metrics", query="up")
    assert not metrics["ok"] and "Prometheus is unreachable" in metrics["error"]

    status = client.call("manage_instance", action="status")
    assert status["ok"] and status["observation"]["running"] is True
    assert [e.ok for e in served.events()] == [False, False, True]


def test_unknown_tool_is_404_and_not_charged(served: Served, client: ToolClient) -> None:
    error = refused(lambda: client.call("drop_everything", sql="DROP DATABASE app"))
    assert error.status == 404 and "execute_sql" in error.message
    assert served.events() == []


def test_an_agent_that_knows_only_the_address_finds_the_map(served: Served) -> None:
    # seen in an on-call run: GET / and /openapi.json answered 404 and the agent guessed paths
    headers = {"Authorization": f"Bearer {TOKEN}"}
    index = httpx.get(f"{served.url}/", headers=headers).json()
    assert index["openapi"] == "GET /v1/openapi.json" and "execute_sql" in index["tools"]
    assert {"GET /v1/task", "GET /v1/tools", "POST /v1/report",
            "POST /v1/tools/{name}"} <= set(index["endpoints"])
    for endpoint in index["endpoints"]:
        method, path = endpoint.split(" ")
        if method == "GET":
            assert httpx.get(f"{served.url}{path}", headers=headers).status_code == 200, path
    lost = httpx.get(f"{served.url}/openapi.json", headers=headers)
    assert lost.status_code == 404 and "GET / lists" in lost.json()["error"]
    # the map is behind the token like the rest
    assert httpx.get(f"{served.url}/").status_code == 401
    assert served.events() == []


@pytest.mark.parametrize("body", [b"[1, 2]", b'"sql"', b"not json", b""])
def test_body_must_be_a_json_object(served: Served, body: bytes) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    for path in ("/v1/tools/execute_sql", "/v1/report", "/v1/events/thought"):
        response = httpx.post(f"{served.url}{path}", content=body, headers=headers)
        assert response.status_code == 400, (path, response.text)
        assert "JSON object" in response.json()["error"]
    assert served.events() == []


@pytest.mark.parametrize(("body", "says"), [
    (b'{"sql": "SELECT \'\\ud800\'"}', "lone surrogate"),
    (b'{"text": "\\udfff"}', "lone surrogate"),
    (b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nests too deeply"),
    # the fourth outside attack: 300 to 989 levels passed the parser and broke what came after
    (b'{"sql": ' + b"[" * 300 + b"]" * 300 + b"}", "nests deeper than 64 levels"),
    (b'{"x": ' + b'{"y": ' * 500 + b"1" + b"}" * 500 + b"}", "nests deeper than 64 levels"),
    (b'{"sql": "\xff"}', "JSON object"),
])
def test_bodies_no_encoder_takes_are_400_not_500(served: Served, client: ToolClient,
                                                  body: bytes, says: str) -> None:
    # issue 38: an outside attacker got 500s from every endpoint with a lone surrogate
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    for path in ("/v1/tools/execute_sql", "/v1/report", "/v1/events/thought"):
        response = httpx.post(f"{served.url}{path}", content=body, headers=headers)
        assert response.status_code == 400, (path, response.text)
        assert says in response.json()["error"]
    assert served.events() == []
    assert client.call("execute_sql", sql="SELECT 1")["ok"], "the server must still serve"


def test_oversized_body_is_413(served: Served, client: ToolClient) -> None:
    error = refused(lambda: client.call("execute_sql", sql="-- " + "x" * MAX_BODY_BYTES))
    assert error.status == 413
    assert served.events() == []
    assert client.call("execute_sql", sql="SELECT 1")["ok"], "the server must still serve"


def test_budget_exhaustion_is_429_from_then_on(serve_gate: ServeGate) -> None:
    served = serve_gate(max_steps=2)
    with served.client() as client:
        for _ in range(2):
            assert client.call("execute_sql", sql="SELECT 1")["ok"]
        for _ in range(2):
            error = refused(lambda: client.call("execute_sql", sql="SELECT 1"))
            assert error.status == 429 and "budget" in error.message
        # the report is still wanted once the budget is spent
        assert client.report(VALID_REPORT) == {"ok": True}
    kinds = [e.kind for e in served.events()]
    assert kinds == ["tool", "tool", "budget", "budget", "report"]
    assert "step budget" in (served.events()[2].error or "")


def test_agent_records_are_bounded_per_step_of_the_budget(serve_gate: ServeGate) -> None:
    """Thoughts and self-reported model calls cost no step, but a run takes
    RECORDS_PER_STEP of them per step: a flood cannot grow the trace without end."""
    from dbabench.tools.gate import RECORDS_PER_STEP
    served = serve_gate(max_steps=2)
    bound = RECORDS_PER_STEP * 2
    with served.client() as client:
        for n in range(bound):
            client.think(f"thought {n}")
        error = refused(lambda: client.think("one too many"))
        assert error.status == 429 and "record budget" in error.message
        error = refused(lambda: client.model_call("openai:gpt-4o-mini", {"input_tokens": 1}))
        assert error.status == 429
        # tool calls and the report are budgeted apart
        assert client.call("execute_sql", sql="SELECT 1")["ok"]
        assert client.report(VALID_REPORT) == {"ok": True}
    kinds = [e.kind for e in served.events()]
    assert kinds.count("thought") == bound and "model" not in kinds


# -- report and agent-side events ------------------------------------------------------------

def test_report_accepted_and_traced(served: Served, client: ToolClient) -> None:
    assert client.report(VALID_REPORT) == {"ok": True}
    event = served.events()[-1]
    assert event.kind == "report" and event.ok
    assert event.observation["root_cause_type"] == "stale_statistics"


def test_after_the_report_no_tool_runs(served: Served, client: ToolClient) -> None:
    """What is graded is what stood when the agent said it was done (issue 41)."""
    assert client.report(VALID_REPORT) == {"ok": True}
    out = client.call("execute_sql", sql="CREATE TABLE after_the_report (id int)")
    assert out["ok"] is False and "the report is filed" in out["error"]
    refused_event = served.events()[-1]
    assert refused_event.kind == "tool" and not refused_event.ok
    assert refused_event.statements == [] and not refused_event.mutating


def test_a_cause_outside_the_vocabulary_is_refused_with_the_nearest_ids(
        served: Served, client: ToolClient) -> None:
    error = refused(lambda: client.report(
        {**VALID_REPORT, "root_cause_type": "database_level_work_mem_too_low"}))
    assert error.status == 422
    assert "nearest: database_work_mem_too_low" in error.message
    assert served.events()[-1].kind == "report" and not served.events()[-1].ok
    # the agent may submit again
    assert client.report({**VALID_REPORT, "root_cause_type": "database_work_mem_too_low"}) == {
        "ok": True}


def test_invalid_report_is_422_naming_the_field(served: Served, client: ToolClient) -> None:
    error = refused(lambda: client.report({**VALID_REPORT, "root_cause_type": "",
                                           "affected_objects": "orders"}))
    assert error.status == 422
    assert "root_cause_type" in error.message and "affected_objects" in error.message
    event = served.events()[-1]
    assert event.kind == "report" and not event.ok and "affected_objects" in (event.error or "")


def test_thought_and_model_events(served: Served, client: ToolClient) -> None:
    client.think("the waits started with the settlement job")
    client.model_call("gpt-4o", {"input_tokens": 1200, "cached_input_tokens": 1000,
                                 "output_tokens": 80}, text="call execute_sql")
    thought, model = served.events()
    assert thought.kind == "thought" and thought.text == "the waits started with the settlement job"
    assert model.kind == "model" and model.model == "gpt-4o" and model.text == "call execute_sql"
    assert not model.metered  # the agent's own account of its call
    assert model.usage is not None
    assert (model.usage.input_tokens, model.usage.cached_input_tokens,
            model.usage.output_tokens) == (1200, 1000, 80)

    error = refused(lambda: client.model_call("gpt-4o", {"input_tokens": "many"}))
    assert error.status == 422 and "input_tokens" in error.message
    # a forged cost: more cached tokens than input tokens would price below zero
    error = refused(lambda: client.model_call("gpt-4o", {"input_tokens": 10,
                                                         "cached_input_tokens": 5_000_000}))
    assert error.status == 422 and "cannot exceed input_tokens" in error.message
    # a model without a price would leave the run's cost unknown
    error = refused(lambda: client.model_call("gpt-test", {"input_tokens": 1}))
    assert error.status == 422 and "'gpt-test' has no price" in error.message
    assert len(served.events()) == 2


def test_only_the_harnesss_own_agent_says_why_it_stopped(serve_gate: ServeGate) -> None:
    # api-error takes a run out of the score: an external agent cannot claim it
    external = serve_gate()
    with external.client() as client:
        error = refused(lambda: client.fail("api-error", "the gateway is down"))
    assert error.status == 404 and external.events() == []
    own = serve_gate(own_agent=True)
    with own.client() as client:
        error = refused(lambda: client.fail("tired", "no"))
        assert error.status == 422 and "failure" in error.message
        client.fail("output-limit", "3 replies in a row cut at 4096 tokens")
    (event,) = own.events()
    assert (event.kind, event.failure, event.ok) == ("failure", "output-limit", False)
    assert event.error == "3 replies in a row cut at 4096 tokens"


# -- access ----------------------------------------------------------------------------------

def test_wrong_or_missing_token_is_401(served: Served) -> None:
    with served.client(token="not-the-token") as wrong:
        for call in (wrong.task, wrong.tools, lambda: wrong.call("execute_sql", sql="SELECT 1"),
                     lambda: wrong.report(VALID_REPORT), lambda: wrong.think("hello")):
            error = refused(call)
            assert error.status == 401 and "token" in error.message
    response = httpx.get(f"{served.url}/v1/task")
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert served.events() == []


def test_harness_failure_is_500_and_traced(serve_gate: ServeGate, postgres: PostgresInstance,
                                           tmp_path: Path) -> None:
    # The observer connection is the harness's own: a cancel needs it to see the sessions.
    served = serve_gate(primary=dataclasses.replace(
        tool_context(postgres, tmp_path).primary,
        observer_dsn=f"host=127.0.0.1 port={free_port()} dbname=app connect_timeout=2"))
    with served.client() as client:
        error = refused(lambda: client.call("execute_sql", sql="SELECT pg_cancel_backend(0)"))
    assert error.status == 500 and "harness" in error.message
    event = served.events()[-1]
    assert event.kind == "infra" and "OperationalError" in (event.error or "")


def test_binds_loopback_and_stops(postgres: PostgresInstance, tmp_path: Path) -> None:
    task = AgentTask(incident="INC-S", symptom="s", tools=["execute_sql"], max_steps=5,
                     timeout_seconds=60)
    with served_gate(tool_context(postgres, tmp_path), tmp_path / RunArtifact.TRACE,
                     Budget(max_steps=5, timeout_seconds=60), task) as url:
        assert url.startswith("http://127.0.0.1:")
        with ToolClient(url, TOKEN) as client:
            # only the task's tools are offered
            assert [t["name"] for t in client.tools()] == ["execute_sql"]
            assert refused(lambda: client.call("read_log", source="business")).status == 404
            assert client.call("execute_sql", sql="SELECT 1")["ok"]
    with ToolClient(url, TOKEN) as client:
        assert refused(client.task).status is None
