"""Agent input can never stop a run being scored (issue 38, item 7): every number an agent (or
the gateway it is metered through) hands in is bounded where it arrives, the cost arithmetic
stays finite at the bounds, and a grading stage that still fails on the agent's records marks
the run instead of leaving it without a verdict.

The tool server here is the real aiohttp one on loopback; its gate never reaches a database,
since model events and reports do not touch one.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web
from pydantic import SecretStr, ValidationError

from dbabench.evaluate import diagnosis, evaluator
from dbabench.evaluate.efficiency import evaluate_efficiency, load_prices
from dbabench.model import taxonomy
from dbabench.model.evaluation import OutcomeResult
from dbabench.model.report import MAX_ENTRIES, MAX_TEXT_CHARS, Report
from dbabench.model.safety import NOT_GRADED
from dbabench.model.scenario import Scenario
from dbabench.model.task import AgentTask
from dbabench.model.tool import ToolName
from dbabench.model.trace import MAX_TOKENS_PER_CALL, TraceEvent, Usage
from dbabench.pricing import MAX_PRICE_PER_MILLION, Price, cost_usd
from dbabench.scenario.loader import load_file, scenarios_root
from dbabench.tools.context import ServerAccess, ToolContext
from dbabench.tools.gate import Budget, ToolGate
from dbabench.tools.meter import Endpoint, Gateway, Meter
from dbabench.tools.server import make_app, serve
from dbabench.records.run import RunFiles

TOKEN = "bounds-token-7d2e"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)
REPORT = {"root_cause_type": "stale_statistics",
          "affected_objects": [{"kind": "table", "name": "orders"}]}


class _NoInstance:
    """Instance control no test here reaches: model events and reports touch no server."""

    def status(self) -> dict[str, object]:
        raise AssertionError("not reached")

    start = stop = restart = reload = status


def _gate(tmp_path: Path) -> ToolGate:
    ctx = ToolContext(primary=ServerAccess(dsn="", observer_dsn="", pg_log_dir=tmp_path,
                                           control=_NoInstance()),  # type: ignore[arg-type]
                      business_log=tmp_path / "business.jsonl",
                      prometheus_url="http://127.0.0.1:9")
    return ToolGate(ctx, RunFiles(tmp_path),
                    Budget(max_steps=10, timeout_seconds=60))


def _task() -> AgentTask:
    return AgentTask(incident="INC-BOUNDS", symptom="checkouts time out",
                     tools=list(ToolName), max_steps=10, timeout_seconds=60)


@cache
def _scenario() -> Scenario:
    return load_file(scenarios_root() / "composite" / "stale-stats-lock-chain.yaml")


# -- the bounds, where the numbers arrive -------------------------------------------------

@pytest.mark.parametrize("field", ["input_tokens", "cached_input_tokens", "output_tokens"])
def test_usage_is_bounded_per_call(field: str) -> None:
    assert Usage(**{"input_tokens": MAX_TOKENS_PER_CALL, field: MAX_TOKENS_PER_CALL})
    with pytest.raises(ValidationError, match=rf"{field}\n.*less than or equal to 1000000000"):
        Usage(**{"input_tokens": MAX_TOKENS_PER_CALL, field: 10**400})


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1.5, "many"])
def test_usage_refuses_what_is_no_count(value: Any) -> None:
    with pytest.raises(ValidationError):
        Usage.model_validate({"output_tokens": value})


def test_report_lists_strings_and_seqs_are_bounded() -> None:
    assert Report.model_validate({**REPORT, "narrative": "x" * MAX_TEXT_CHARS})
    for field, value in [("narrative", "x" * (MAX_TEXT_CHARS + 1)),
                         ("evidence", [{"tool": "execute_sql", "observation": "."}]
                          * (MAX_ENTRIES + 1)),
                         ("actions", [{"description": "."}] * (MAX_ENTRIES + 1)),
                         ("evidence", [{"tool": "t", "observation": ".", "trace_seq": 10**400}]),
                         ("evidence", [{"tool": "t", "observation": ".", "trace_seq": -1}])]:
        with pytest.raises(ValidationError, match=field):
            Report.model_validate({**REPORT, field: value})


@asynccontextmanager
async def _served(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, ToolGate]]:
    gate = _gate(tmp_path)
    try:
        async with serve(gate, _task(), TOKEN) as url:
            async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=10) as client:
                yield client, gate
    finally:
        await gate.close()


@pytest.mark.parametrize(("usage", "named"), [
    ('{"input_tokens": 1' + "0" * 400 + "}", "usage.input_tokens"),
    ('{"input_tokens": 10, "output_tokens": 1000000001}', "usage.output_tokens"),
    ('{"input_tokens": 1e400}', "usage.input_tokens"),  # JSON's 1e400 reads as infinity
    ('{"input_tokens": NaN}', "usage.input_tokens"),
    ('{"input_tokens": -Infinity}', "usage.input_tokens"),
])
async def test_the_server_refuses_usage_past_the_bounds_naming_the_field(
        tmp_path: Path, usage: str, named: str) -> None:
    async with _served(tmp_path) as (client, gate):
        response = await client.post("/v1/events/model", content=(
            '{"model": "gpt-4o", "usage": ' + usage + "}").encode(),
            headers={"Content-Type": "application/json"})
        assert response.status_code == 422, response.text
        assert response.json()["error"].startswith(named + ":")
        assert not gate.trace.events
        ok = await client.post("/v1/events/model", json={
            "model": "gpt-4o", "usage": {"input_tokens": MAX_TOKENS_PER_CALL}})
        assert ok.status_code == 200 and gate.trace.events[-1].usage is not None


async def test_the_server_refuses_an_unbounded_report_naming_the_field(tmp_path: Path) -> None:
    async with _served(tmp_path) as (client, gate):
        response = await client.post("/v1/report", json={
            **REPORT, "evidence": [{"tool": "t", "observation": ".", "trace_seq": 10**400}]})
        assert response.status_code == 422
        assert "evidence.0.trace_seq" in response.json()["error"]
        assert gate.report is None
        assert (await client.post("/v1/report", json=REPORT)).status_code == 200


# -- a gateway's usage is input too --------------------------------------------------------

@pytest.mark.parametrize("usage", [
    {"prompt_tokens": 10**400, "completion_tokens": 1},
    {"prompt_tokens": -5},
    {"prompt_tokens": "lots"},
    {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 11}},
    ["not", "an", "object"],
])
def test_a_gateways_usage_that_is_no_count_is_unmeasured(usage: Any) -> None:
    assert Usage.reported(usage) is None


def test_a_gateways_usage_within_bounds_is_read() -> None:
    assert Usage.reported({"prompt_tokens": 10, "completion_tokens": 2,
                           "prompt_tokens_details": {"cached_tokens": 4}}) == Usage(
        input_tokens=10, cached_input_tokens=4, output_tokens=2)
    # details of another shape say nothing of caching, not nothing of the call
    assert Usage.reported({"prompt_tokens": 10, "prompt_tokens_details": ["?"]}) == Usage(
        input_tokens=10)


@asynccontextmanager
async def _running(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def test_the_meter_counts_a_hostile_gateways_usage_as_unmeasured(tmp_path: Path) -> None:
    replies = iter([
        {"choices": [{"message": {"content": "hi", "tool_calls": 7}}],
         "usage": {"prompt_tokens": 10**400, "completion_tokens": 3}},
        {"choices": [{"message": {"content": "ok"}}],
         "usage": {"prompt_tokens": 100, "completion_tokens": 3}},
    ])

    def upstream(request: httpx.Request) -> httpx.Response:
        # json.dumps writes the 401-digit count as the gateway would
        return httpx.Response(200, content=json.dumps(next(replies)).encode(),
                              headers={"content-type": "application/json"})

    gate = _gate(tmp_path)
    app = make_app(gate, _task(), TOKEN)
    meter = Meter(gate, Gateway(provider="openai", endpoint=Endpoint(
        base_url="http://gateway.invalid/v1", api_key=SecretStr("k"))), None)
    await meter.http.aclose()
    meter.http = httpx.AsyncClient(base_url="http://gateway.invalid/v1",
                                   transport=httpx.MockTransport(upstream))
    meter.install(app)
    try:
        async with _running(app) as url, httpx.AsyncClient(base_url=url, headers=AUTH) as c:
            for _ in range(2):
                response = await c.post("/openai/v1/chat/completions", json={
                    "model": "gpt-4o", "messages": [{"role": "user", "content": "?"}]})
                assert response.status_code == 200
    finally:
        await gate.close()
    first, second = gate.trace.events
    assert first.metered and first.usage is None
    assert second.usage == Usage(input_tokens=100, output_tokens=3)
    efficiency = evaluate_efficiency(gate.trace.events, load_prices(), wall_seconds=1)
    assert efficiency.unmeasured_calls == 1 and math.isfinite(efficiency.cost_usd)
    assert meter.spent_usd == pytest.approx(efficiency.cost_usd)


# -- the arithmetic ------------------------------------------------------------------------

def test_a_million_calls_at_the_bound_at_the_dearest_price_cost_a_finite_sum() -> None:
    usage = Usage(input_tokens=MAX_TOKENS_PER_CALL, cached_input_tokens=MAX_TOKENS_PER_CALL // 2,
                  output_tokens=MAX_TOKENS_PER_CALL)
    dearest = Price(input=MAX_PRICE_PER_MILLION, cached_input=MAX_PRICE_PER_MILLION,
                    output=MAX_PRICE_PER_MILLION)
    assert math.isfinite(cost_usd(dearest, usage))
    # one event object a million times: the loop's arithmetic is what is measured
    call = TraceEvent(seq=1, ts=NOW, kind="model", model="claude-opus-4", usage=usage)
    result = evaluate_efficiency([call] * 10**6, load_prices(), wall_seconds=1.0)
    assert math.isfinite(result.cost_usd) and result.cost_usd > 0
    assert result.input_tokens == 10**15 and result.output_tokens == 10**15
    # a NaN or an infinity would be written as null and not read back
    assert type(result).model_validate_json(result.model_dump_json()) == result


def test_prices_past_the_bound_or_infinite_are_refused() -> None:
    for value in (math.inf, math.nan, MAX_PRICE_PER_MILLION * 2):
        with pytest.raises(ValidationError):
            Price(input=value, cached_input=0, output=0)


def test_usage_built_around_its_bounds_raises_a_plain_value_error() -> None:
    # no validated record can hold it; one that was not (model_construct) must not overflow
    forged = Usage.model_construct(input_tokens=10**400, cached_input_tokens=0, output_tokens=0)
    call = TraceEvent(seq=3, ts=NOW, kind="model", model="selfhosted:free", usage=Usage())
    call.usage = forged
    with pytest.raises(ValueError, match="seq 3: token counts outside"):
        evaluate_efficiency([call], load_prices(), wall_seconds=0)


# -- grading: agent data marks the run, never unscores it ---------------------------------

def _score(events: list[TraceEvent], report: Report | None) -> Any:
    return evaluator.score(_scenario(), "external", outcome=OutcomeResult(f=1.0, passed=True),
                           events=events, report=report, report_error=None, wall_seconds=2.0,
                           prices=load_prices())


def test_an_honest_run_is_not_marked() -> None:
    events = [TraceEvent(seq=1, ts=NOW, kind="model", model="gpt-4o",
                         usage=Usage(input_tokens=1000))]
    result = _score(events, Report.model_validate(REPORT))
    assert not result.integrity.violated and result.outcome_pass
    assert result.efficiency.cost_usd == pytest.approx(0.0025)


def test_adversarial_usage_in_the_trace_is_scored_and_marked() -> None:
    forged = TraceEvent(seq=2, ts=NOW, kind="model", model="gpt-4o", usage=Usage())
    forged.usage = Usage.model_construct(input_tokens=10**400, cached_input_tokens=0,
                                         output_tokens=10**400)
    events = [TraceEvent(seq=1, ts=NOW, kind="tool", tool="execute_sql",
                         args={"sql": "SELECT 1", "max_rows": 10**400}), forged]
    result = _score(events, Report.model_validate(REPORT))
    assert result.status == "scored" and result.integrity.violated
    assert not (result.outcome_pass or result.diagnosis_pass or result.safe_pass)
    [finding] = [f for f in result.integrity.findings if f.kind == "grading"]
    assert finding.detail.startswith("efficiency could not be graded: ValueError: model call"
                                     " at seq 2")
    assert result.efficiency.cost_usd == 0 and result.diagnosis and result.safety
    # the verdict is a record like any other: it is written and read back
    assert type(result).model_validate_json(result.model_dump_json()) == result


def test_a_grading_stage_that_raises_on_the_report_marks_the_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def breaks(report: Report) -> Any:
        raise RecursionError(f"maximum recursion depth exceeded reading {report.narrative}")

    monkeypatch.setattr(diagnosis, "_submitted", breaks)
    result = _score([], Report.model_validate({**REPORT, "narrative": "the bait"}))
    assert result.status == "scored" and result.integrity.violated
    [finding] = result.integrity.findings
    assert finding.kind == "grading"
    assert "diagnosis could not be graded: RecursionError: maximum recursion depth exceeded" \
           " reading the bait" in finding.detail and "test_agent_input_bounds.py" in finding.detail
    assert result.diagnosis and not result.diagnosis.passed and result.diagnosis.f1 == 0
    assert result.diagnosis.missing_critical and result.diagnosis.reason == finding.detail
    # the other stages were judged as ever
    assert result.safety is not None
    assert NOT_GRADED not in {v.rule for v in result.safety.violations}
    assert not (result.outcome_pass or result.diagnosis_pass or result.safe_pass)


def test_a_safety_stage_that_raises_on_the_trace_marks_the_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = evaluator.safety.judge_safety

    def breaks(events: list[TraceEvent], spec: Any) -> Any:
        if events:  # the scenario alone is judged as ever: only the trace breaks it
            raise KeyError("action")
        return real(events, spec)

    monkeypatch.setattr(evaluator.safety, "judge_safety", breaks)
    result = _score([TraceEvent(seq=1, ts=NOW, kind="tool", tool="manage_instance")], None)
    assert result.integrity.violated and result.safety is not None
    assert [v.rule for v in result.safety.violations] == [NOT_GRADED]
    assert not result.safe_pass


def test_a_fault_in_the_harnesss_own_data_is_not_taken_for_the_agents(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the vocabulary is ours: a run must not be marked for it, the harness bug must show
    report = Report.model_validate(REPORT)

    def broken() -> Any:
        raise OSError("taxonomy.yaml: no such file")

    monkeypatch.setattr(taxonomy, "taxonomy", broken)
    with pytest.raises(OSError, match="taxonomy.yaml"):
        _score([], report)
