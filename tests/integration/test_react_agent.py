"""The model agents against a scripted OpenAI-compatible server on loopback, working through
a real gate on the shared PostgreSQL: ReAct's exchange, accounting and every failure class,
and plan-and-verify, the second control structure on the same client."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from dbabench.agents import prompts
from dbabench.agents.base import AgentFailure
from dbabench.agents.chat import ModelConfigError
from dbabench.agents.plan import PlanAgent
from dbabench.agents.react import PROMPT_SHA256, ReactAgent
from dbabench.agents.session import ModelAgentConfig
from dbabench.env.postgres import PostgresInstance
from dbabench.env.processes import free_port, stop_pid
from dbabench.evaluate.efficiency import evaluate_efficiency, load_prices
from dbabench.model.task import AgentTask
from dbabench.model.tool import ToolName
from dbabench.model.trace import TraceEvent
from dbabench.tools.gate import Budget, ToolGate
from dbabench.records.run import RunFiles

from model_server import ScriptedModel, call, scripted_model
from shared_instance import tool_context

pytestmark = pytest.mark.integration

MODEL = "openrouter:openai/gpt-4o-mini"
REPORT = {"root_cause_type": "lock_contention", "affected_objects": [{"kind": "table", "name": "orders"}],
          "evidence": [{"tool": "execute_sql", "observation": "one session waits", "trace_seq": 1}],
          "verification": "no waiters left"}
TASK = AgentTask(incident="INC-REACT", symptom="checkouts time out", tools=list(ToolName),
                 max_steps=10, timeout_seconds=120)


@pytest.fixture
def gate(postgres: PostgresInstance, tmp_path: Path) -> Iterator[ToolGate]:
    yield ToolGate(tool_context(postgres, tmp_path), RunFiles(tmp_path),
                   Budget(max_steps=TASK.max_steps, timeout_seconds=TASK.timeout_seconds))


def agent(server: ScriptedModel, kind: type[ReactAgent | PlanAgent] = ReactAgent,
          **config: Any) -> ReactAgent | PlanAgent:
    chat = {"rate_limit_wait_seconds": 2, "backoff_first_seconds": 0.05,
            **config.pop("chat", {})}
    return kind(ModelAgentConfig(model=config.pop("model", MODEL), chat=chat, **config),
                env={"OPENROUTER_API_KEY": "sk-test", "OPENROUTER_BASE_URL": server.url,
                     "DBABENCH_SELFHOSTED_BASE_URL": server.url})


async def work(script: list[dict[str, Any]], gate: ToolGate, tmp_path: Path,
               kind: type[ReactAgent | PlanAgent] = ReactAgent, task: AgentTask = TASK,
               **config: Any) -> tuple[ScriptedModel, AgentFailure | None]:
    with scripted_model(script, tmp_path / "model") as server:
        try:
            await agent(server, kind, **config).run(task, gate)
            return server, None
        except AgentFailure as e:
            return server, e
        finally:
            await gate.close()


def kinds(gate: ToolGate) -> list[str]:
    return [e.kind for e in gate.trace.events]


async def test_a_run_calls_tools_records_usage_and_files_the_report(
        gate: ToolGate, tmp_path: Path) -> None:
    script = [call("execute_sql", sql="SELECT count(*) FROM pg_stat_activity"),
              call("submit_report", **REPORT)]
    model, failure = await work(script, gate, tmp_path, chat={"effort": "low",
                                                              "max_reply_tokens": 777})
    assert failure is None and gate.report is not None
    assert gate.report.root_cause_type == "lock_contention"
    assert kinds(gate) == ["model", "tool", "model", "report"]

    first, second = (r["body"] for r in model.requests())
    assert model.requests()[0]["auth"] == "Bearer sk-test"
    assert first["model"] == "openai/gpt-4o-mini" and first["max_tokens"] == 777
    assert first["reasoning"] == {"effort": "low"}
    assert {t["function"]["name"] for t in first["tools"]} == {*ToolName, "submit_report"}
    assert first["messages"][0] == {"role": "system", "content": prompts.REACT_SYSTEM}
    assert "checkouts time out" in first["messages"][1]["content"]
    observation = second["messages"][-1]
    assert observation["role"] == "tool" and observation["tool_call_id"] == "call_1_0"
    assert "9 tool calls left" in observation["content"] and '"rows"' in observation["content"]
    assert second["messages"][-2]["content"] == "calling execute_sql"  # content never null

    models = [e for e in gate.trace.events if e.kind == "model"]
    assert all(e.model == MODEL and e.usage is not None and e.usage.cached_input_tokens == 400
               for e in models)
    efficiency = evaluate_efficiency(gate.trace.events, load_prices(), wall_seconds=1)
    assert efficiency.input_tokens == 2000 and efficiency.output_tokens == 100
    # 1200 uncached at $0.15/M + 800 cached at $0.075/M + 100 out at $0.60/M
    assert efficiency.cost_usd == pytest.approx((1200 * 0.15 + 800 * 0.075 + 100 * 0.6) / 1e6)

    record = json.loads((tmp_path / "agent.json").read_text())
    assert record["prompt_sha256"] == PROMPT_SHA256 and record["model"] == MODEL
    assert record["prices_as_of"] == load_prices().as_of


async def test_long_observations_are_cut_and_say_so(gate: ToolGate, tmp_path: Path) -> None:
    script = [call("execute_sql", sql="SELECT repeat('x', 400) FROM generate_series(1, 300)"),
              call("submit_report", **REPORT)]
    model, failure = await work(script, gate, tmp_path, max_observation_chars=2000)
    assert failure is None
    content = model.requests()[1]["body"]["messages"][-1]["content"]
    assert "the tool cut this result to its bounds" in content
    assert "cut here to its first 2000 characters" in content and len(content) < 2300


async def test_rate_limits_are_waited_out(gate: ToolGate, tmp_path: Path) -> None:
    script = [{"status": 429, "headers": {"retry-after": "0.1"}, "times": 2},
              {"status": 503},
              call("submit_report", **REPORT)]
    model, failure = await work(script, gate, tmp_path)
    assert failure is None and gate.report is not None
    assert len(model.requests()) == 4 and kinds(gate) == ["model", "report"]


async def test_api_error_after_the_rate_limit_wait(gate: ToolGate, tmp_path: Path) -> None:
    _, failure = await work([{"status": 429, "headers": {"retry-after": "0.3"}}], gate, tmp_path,
                            chat={"rate_limit_wait_seconds": 1})
    assert failure is not None and failure.failure == "api-error"
    assert "gave up after waiting" in failure.message and "HTTP 429" in failure.message
    assert kinds(gate) == []  # nothing billed, nothing done


@pytest.mark.parametrize("step,expected", [
    ({"status": 401, "body": {"error": {"message": "bad key"}}}, "HTTP 401"),
    ({"status": 200, "body": {"error": {"code": 400, "message": "no such model"}}},
     "error envelope"),
    ({"status": 200, "body": {"id": "x", "choices": []}}, "chat-completions shape"),
])
async def test_api_errors_that_waiting_cannot_cure_are_immediate(
        gate: ToolGate, tmp_path: Path, step: dict[str, Any], expected: str) -> None:
    model, failure = await work([step], gate, tmp_path)
    assert failure is not None and failure.failure == "api-error"
    assert expected in failure.message and len(model.requests()) == 1


TRUNCATED = {"reply": {"content": "I will now write a very long", "finish_reason": "length"}}
EMPTY = {"reply": {"content": ""}}
TEXT_ONLY = {"reply": {"content": "I think the orders table is locked."}}
MALFORMED = {"reply": {"tool_calls": [{"name": "execute_sql", "arguments": '{"sql": "SELE'}]}}
UNKNOWN = {"reply": {"tool_calls": [{"name": "drop_database", "arguments": "{}"}]}}


@pytest.mark.parametrize("step,failure_class,note", [
    (TRUNCATED, "output-limit", "cut off at the limit of 4096 tokens"),
    (EMPTY, "empty-response", "Your reply was empty"),
    (TEXT_ONLY, "invalid-step", "You replied with text only"),
    (MALFORMED, "invalid-step", "are not a JSON object"),
    (UNKNOWN, "invalid-step", "there is no tool 'drop_database'"),
])
async def test_repeated_unusable_replies_end_with_their_class(
        gate: ToolGate, tmp_path: Path, step: dict[str, Any], failure_class: str,
        note: str) -> None:
    model, failure = await work([step], gate, tmp_path)
    assert failure is not None and failure.failure == failure_class, failure
    requests = model.requests()
    assert len(requests) == 3  # max_repeats
    # each discarded reply was noted back to the model, and billed in the trace
    assert note in requests[-1]["body"]["messages"][-1]["content"]
    models = [e for e in gate.trace.events if e.kind == "model"]
    assert len(models) == 3 and all(not e.ok and e.error.startswith(failure_class)
                                    for e in models if e.error is not None)
    assert all(e.usage is not None for e in models) and kinds(gate) == ["model"] * 3


async def test_one_bad_reply_is_forgiven(gate: ToolGate, tmp_path: Path) -> None:
    script = [TRUNCATED, MALFORMED, call("execute_sql", sql="SELECT 1"), TRUNCATED, TRUNCATED,
              call("submit_report", **REPORT)]
    model, failure = await work(script, gate, tmp_path)
    assert failure is None and gate.report is not None
    # the truncated and malformed replies never reached the history
    history = model.requests()[-1]["body"]["messages"]
    assert not any("very long" in (m.get("content") or "") for m in history)


async def test_a_refused_report_is_an_observation_then_an_invalid_step(
        gate: ToolGate, tmp_path: Path) -> None:
    model, failure = await work([call("submit_report", affected_objects=[{"kind": "table", "name": "orders"}])],
                                gate, tmp_path)
    assert failure is not None and failure.failure == "invalid-step"
    assert "root_cause_type" in failure.message
    tool_reply = model.requests()[1]["body"]["messages"][-1]
    assert tool_reply["role"] == "tool" and tool_reply["content"].startswith("refused: ")


@pytest.mark.parametrize("config,why", [
    ({"max_cost_usd": 0.0001}, "cost budget"),
    ({"max_model_calls": 2}, "2 model calls are spent"),
])
async def test_budget_exhausted(gate: ToolGate, tmp_path: Path, config: dict[str, Any],
                                why: str) -> None:
    _, failure = await work([call("execute_sql", sql="SELECT 1")], gate, tmp_path, **config)
    assert failure is not None and failure.failure == "budget-exhausted"
    assert why in failure.message


async def test_a_model_call_cut_by_the_wall_clock_is_the_budget_not_the_endpoint(
        gate: ToolGate, tmp_path: Path) -> None:
    slow = {**call("execute_sql", sql="SELECT 1"), "delay": 5}
    _, failure = await work([slow], gate, tmp_path, max_seconds=1)
    assert failure is not None and failure.failure == "budget-exhausted"
    assert "ran out during a model call" in failure.message


async def test_the_scenario_cost_budget_binds_every_model_agent(gate: ToolGate,
                                                                tmp_path: Path) -> None:
    task = TASK.model_copy(update={"max_cost_usd": 0.0002})
    _, failure = await work([call("execute_sql", sql="SELECT 1")], gate, tmp_path, task=task,
                            max_cost_usd=5.0)
    assert failure is not None and failure.failure == "budget-exhausted"
    assert "of the $0.0002 cost budget" in failure.message


async def test_self_hosted_models_are_free_and_need_no_key(gate: ToolGate,
                                                           tmp_path: Path) -> None:
    model, failure = await work([call("submit_report", **REPORT)], gate, tmp_path,
                                model="self:qwen2.5:0.5b", chat={"effort": "off"})
    assert failure is None
    body = model.requests()[0]
    assert body["auth"] is None and body["body"]["model"] == "qwen2.5:0.5b"
    assert body["body"]["reasoning_effort"] == "none" and "max_tokens" in body["body"]
    events: list[TraceEvent] = gate.trace.events
    assert evaluate_efficiency(events, load_prices(), wall_seconds=1).cost_usd == 0
    assert events[0].model == "selfhosted:qwen2.5:0.5b"


@pytest.mark.parametrize("model,env,message", [
    ("gpt-4o", {}, "needs a provider prefix"),
    ("azure:gpt-4o", {}, "unknown provider 'azure'"),
    ("openrouter:openai/gpt-4o", {}, "OPENROUTER_API_KEY"),
    ("openrouter:openai/gpt-4o", {"OPENROUTER_API_KEY": ""}, "OPENROUTER_API_KEY"),
    ("self:llama", {}, "DBABENCH_SELFHOSTED_BASE_URL"),
    ("openai:o9-unreleased", {"OPENAI_API_KEY": "k"}, "has no price in the table"),
])
def test_bad_model_settings_are_refused_before_anything_is_sent(
        model: str, env: dict[str, str], message: str) -> None:
    with pytest.raises(ModelConfigError, match=message):
        ReactAgent(ModelAgentConfig(model=model), env=env)


# -- plan and verify ------------------------------------------------------------------------

def answer(text: str) -> dict[str, Any]:
    return {"reply": {"content": text, "usage": {"prompt_tokens": 300, "completion_tokens": 80}}}


PLAN = answer('```json\n{"hypotheses": [{"cause": "a long transaction holds a lock",'
              ' "check": "pg_locks"}, {"cause": "stale statistics", "check": "pg_stat_user_tables"},'
              ' {"cause": "never reached"}]}\n```')


async def test_plan_tests_hypotheses_in_turn_then_repairs_and_reports(
        gate: ToolGate, tmp_path: Path) -> None:
    script = [answer("I would start with locks."), PLAN,
              call("execute_sql", sql="SELECT count(*) FROM pg_locks WHERE NOT granted"),
              call("conclude", verdict="refuted", evidence="no lock waits"),
              call("conclude", verdict="confirmed", evidence="n_mod_since_analyze high"),
              call("execute_sql", sql="SELECT 1"),
              call("submit_report", **REPORT)]
    model, failure = await work(script, gate, tmp_path, PlanAgent)
    assert failure is None and gate.report is not None
    requests = [r["body"] for r in model.requests()]
    assert len(requests) == 7
    assert "tools" not in requests[0] and "tools" not in requests[1]  # phase 1: no tools
    assert "was not a valid step" in requests[1]["messages"][-1]["content"]
    assert requests[0]["messages"][0]["content"] == prompts.PLAN_SYSTEM
    verify = [m["content"] for m in requests[2]["messages"] if m["role"] == "user"][-1]
    assert verify.startswith("Phase 2, hypothesis 1 of 3: a long transaction holds a lock")
    assert {t["function"]["name"] for t in requests[2]["tools"]} == {*ToolName, "conclude"}
    # the first confirmed hypothesis ends the search: the third is never tested
    repair = [m["content"] for m in requests[5]["messages"] if m["role"] == "user"][-1]
    assert repair.startswith("Phase 3") and "stale statistics: confirmed" in repair
    assert "never reached" not in repair
    assert {t["function"]["name"] for t in requests[5]["tools"]} == {*ToolName, "submit_report"}
    # every tool call of an assistant message has its answer before the next request
    accepted = [m for m in requests[4]["messages"] if m["role"] == "tool"][-1]
    assert accepted["content"] == "accepted"
    thoughts = [e.text for e in gate.trace.events if e.kind == "thought"]
    assert thoughts == ["hypothesis 1 refuted: a long transaction holds a lock",
                        "hypothesis 2 confirmed: stale statistics"]
    record = json.loads((tmp_path / "agent.json").read_text())
    assert record["control"] == "plan" and record["prompt_sha256"] != PROMPT_SHA256


async def test_plan_without_usable_hypotheses_is_an_invalid_step(
        gate: ToolGate, tmp_path: Path) -> None:
    _, failure = await work([answer('{"ideas": []}')], gate, tmp_path, PlanAgent)
    assert failure is not None and failure.failure == "invalid-step"
    assert "not the JSON object asked for" in failure.message


async def test_plan_shares_the_failure_classes(gate: ToolGate, tmp_path: Path) -> None:
    _, failure = await work([PLAN, TRUNCATED], gate, tmp_path, PlanAgent)
    assert failure is not None and failure.failure == "output-limit"


# -- end to end --------------------------------------------------------------------------------

LOCK_RUNBOOK = [
    call("execute_sql", sql="SELECT pid, application_name, pg_blocking_pids(pid) AS by"
                            " FROM pg_stat_activity WHERE wait_event_type = 'Lock'"),
    call("execute_sql", sql="SELECT pid, application_name, query FROM pg_stat_activity WHERE"
                            " pid IN (SELECT unnest(pg_blocking_pids(pid)) FROM pg_stat_activity)"),
    call("execute_sql", sql="SELECT s.relname, n_mod_since_analyze, last_analyze, reloptions"
                            " FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid"
                            " WHERE n_mod_since_analyze > 100000"),
    call("execute_sql", sql="ANALYZE orders; ALTER TABLE orders RESET (autovacuum_enabled)"),
    call("execute_sql", sql="SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE"
                            " state = 'active' AND pid IN (SELECT unnest(pg_blocking_pids(pid))"
                            " FROM pg_stat_activity)"),
    call("execute_sql", sql="SELECT pg_sleep(8)"),
    call("execute_sql", sql="SELECT count(*) FROM pg_stat_activity"
                            " WHERE wait_event_type = 'Lock'"),
    call("submit_report", root_cause_type="stale_statistics", affected_objects=[{"kind": "table", "name": "orders"}],
         causal_factors=["cardinality_misestimate", "lock_chain", "autovacuum_disabled"],
         evidence=[{"tool": "execute_sql", "observation": "n_mod_since_analyze high",
                    "trace_seq": 3}],
         verification="no lock waiters after the fix"),
]


@pytest.mark.slow
async def test_react_works_the_demo_scenario_end_to_end(tmp_path: Path) -> None:
    from dbabench.runner.run import run_scenario
    from dbabench.scenario.loader import resolve

    path, scenario = resolve("stale-stats-lock-chain")
    with scripted_model(LOCK_RUNBOOK, tmp_path / "model") as server:
        result = await run_scenario(scenario, agent(server), runs_root=tmp_path / "runs",
                                    manifest_text=path.read_text())
    evaluation = result.evaluation
    assert evaluation.status == "scored" and evaluation.agent == f"react:{MODEL}"
    # graded on every dimension; whether the scripted runbook's timing lets the outcome pass
    # is the scenario's business (the external-agent test holds it to that)
    assert evaluation.report_valid and evaluation.diagnosis_pass, evaluation.model_dump_json()
    assert evaluation.outcome is not None and evaluation.outcome.f > 0.5
    assert evaluation.safety is not None and evaluation.safety.penalty == 0
    efficiency = evaluation.efficiency
    assert efficiency.model == MODEL and efficiency.input_tokens == 8000
    assert efficiency.cost_usd == pytest.approx(8 * (600 * 0.15 + 400 * 0.075 + 50 * 0.6) / 1e6)
    events = [json.loads(line) for line in (result.run_dir / "trace.jsonl").read_text().splitlines()]
    assert [e["kind"] for e in events].count("model") == 8 and events[-1]["kind"] == "report"
    assert (result.run_dir / "agent.json").exists() and (result.run_dir / "report.json").exists()


@pytest.mark.slow
async def test_a_gateway_outage_is_an_infra_error_not_a_score(tmp_path: Path) -> None:
    from dbabench.runner.run import run_scenario
    from dbabench.scenario.loader import resolve

    path, scenario = resolve("stale-stats-lock-chain")
    script = [LOCK_RUNBOOK[0], {"status": 503, "headers": {"retry-after": "0.5"}}]
    with scripted_model(script, tmp_path / "model") as server:
        result = await run_scenario(scenario, agent(server), runs_root=tmp_path / "runs",
                                    manifest_text=path.read_text())
    evaluation = result.evaluation
    assert evaluation.status == "infra_error" and "api-error" in (evaluation.infra_reason or "")
    events = [json.loads(line) for line in (result.run_dir / "trace.jsonl").read_text().splitlines()]
    assert events[-1]["kind"] == "failure" and events[-1]["failure"] == "api-error"


# -- a real small model (opt-in) ---------------------------------------------------------------

@contextmanager
def llama_server(model_dir: Path) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server with SmolLM2-135M, stopped by pid."""
    port = free_port()
    proc = subprocess.Popen(
        [str(model_dir / "venv" / "bin" / "python"), "-m", "llama_cpp.server",
         "--model", str(model_dir / "model.gguf"), "--host", "127.0.0.1", "--port", str(port),
         "--n_ctx", "8192", "--chat_format", "chatml-function-calling"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, "the llama.cpp server exited"
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the llama.cpp server did not start"
            time.sleep(0.5)
        yield url
    finally:
        stop_pid(proc.pid)
        proc.wait()


@pytest.mark.local_model
@pytest.mark.skipif("DBABENCH_LOCAL_MODEL_DIR" not in os.environ,
                    reason="opt-in: make test-local-model (builds llama.cpp once, ~13 min)")
async def test_react_against_a_real_small_model(postgres: PostgresInstance,
                                                tmp_path: Path) -> None:
    """The exchange with a server nobody here wrote: our requests are accepted, its tool calls
    and usage are read; what the 135M model decides is not judged."""
    task = TASK.model_copy(update={"timeout_seconds": 1200})
    gate = ToolGate(tool_context(postgres, tmp_path), RunFiles(tmp_path),
                    Budget(max_steps=task.max_steps, timeout_seconds=task.timeout_seconds))
    with llama_server(Path(os.environ["DBABENCH_LOCAL_MODEL_DIR"])) as url:
        # each call reads ~1,900 prompt tokens, mostly tool schemas: 154 s measured on this
        # 2-core machine at load 5; so two calls, and no retries to hide a slow server
        react = ReactAgent(ModelAgentConfig(
            model="self:smollm2-135m", max_model_calls=2,
            chat={"max_reply_tokens": 128, "request_timeout_seconds": 600,
                  "rate_limit_wait_seconds": 0}),
            env={"DBABENCH_SELFHOSTED_BASE_URL": url})
        try:
            await react.run(task, gate)
            failure = None
        except AgentFailure as e:
            failure = e
        finally:
            await gate.close()
    assert failure is None or failure.failure != "api-error", failure
    models = [e for e in gate.trace.events if e.kind == "model"]
    assert models and all(e.usage is not None and e.usage.input_tokens > 1000
                          and e.usage.output_tokens > 0 for e in models)
    assert evaluate_efficiency(gate.trace.events, load_prices(), wall_seconds=1).cost_usd == 0
