"""Pure parts of the evaluator: plan estimates, comparisons, workload windows, token cost."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from dbabench.evaluate.conduct import judge_integrity
from dbabench.evaluate.efficiency import Price, PriceTable, evaluate_efficiency, load_prices
from dbabench.evaluate.predicates import relation_estimate
from dbabench.model.scenario import Comparison
from dbabench.model.trace import TraceEvent, Usage
from dbabench.model.evaluation import EfficiencyResult
from dbabench.workload.businesslog import (BusinessEvent, BusinessLogWriter, read_events,
                                           window_stats)

NESTED = {"Node Type": "Aggregate", "Plan Rows": 1, "Plans": [
    {"Node Type": "Nested Loop", "Plan Rows": 2, "Plans": [
        {"Node Type": "Index Scan", "Relation Name": "orders", "Plan Rows": 1},
        {"Node Type": "Bitmap Heap Scan", "Relation Name": "price_history", "Plan Rows": 2},
    ]}]}

PARALLEL = {"Node Type": "Finalize Aggregate", "Plan Rows": 1, "Plans": [
    {"Node Type": "Gather", "Workers Planned": 2, "Plan Rows": 2, "Plans": [
        {"Node Type": "Parallel Hash Join", "Parallel Aware": True, "Plan Rows": 500000, "Plans": [
            {"Node Type": "Seq Scan", "Relation Name": "orders", "Parallel Aware": True,
             "Plan Rows": 500000}]}]}]}


def test_relation_estimate_serial_plan() -> None:
    assert relation_estimate(NESTED, "orders") == 1
    assert relation_estimate(NESTED, "price_history") == 2
    assert relation_estimate(NESTED, "merchants") is None


def test_relation_estimate_scales_parallel_nodes_by_participants() -> None:
    # two workers plus a leader that contributes 1 - 0.3 * 2 = 0.4 of a participant
    assert relation_estimate(PARALLEL, "orders") == pytest.approx(500000 * 2.4)


@pytest.mark.parametrize(("op", "left", "right", "expected"), [
    ("<", 1, 2, True), ("<=", 2, 2, True), (">", 2, 2, False), (">=", 3, 2, True),
    ("==", 0, 0, True), ("!=", 0, 0, False),
])
def test_comparison(op: str, left: float, right: float, expected: bool) -> None:
    assert Comparison(op).holds(left, right) is expected


def test_window_stats_and_filters(tmp_path: Path) -> None:
    log = tmp_path / "business.jsonl"
    writer = BusinessLogWriter(log)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for i in range(100):
        writer.write(BusinessEvent(
            ts=t0 + timedelta(seconds=i), service="checkout-worker", request_id=str(i),
            operation="place_order", latency_ms=float(i),
            outcome="timeout" if i % 10 == 0 else "ok"))
    writer.write(BusinessEvent(ts=t0, service="order-api", request_id="j",
                               operation="settle", latency_ms=5000, outcome="error"))
    writer.close()
    with log.open("a") as f:
        f.write('{"ts": "2026-01-01T00:00:00Z", "serv')  # a line still being written
    events = read_events(log, start=t0 + timedelta(seconds=50), service="checkout-worker")
    assert len(events) == 50
    stats = window_stats(events)
    assert stats.requests == 50
    assert stats.timeout_ratio == pytest.approx(5 / 50)
    assert stats.error_ratio == pytest.approx(5 / 50)
    assert stats.max_latency_ms == 99
    assert stats.p99_latency_ms == 99
    assert window_stats([]).requests == 0


def test_efficiency_cost_with_cached_tokens() -> None:
    prices = PriceTable(as_of="2026-01-01",
                        models={"m": Price(input=2.0, cached_input=0.5, output=8.0)})
    now = datetime.now(timezone.utc)
    events = [
        TraceEvent(seq=1, ts=now, kind="model", model="m",
                   usage=Usage(input_tokens=1_000_000, cached_input_tokens=400_000,
                               output_tokens=10_000)),
        TraceEvent(seq=2, ts=now, kind="tool", tool="execute_sql"),
    ]
    result = evaluate_efficiency(events, prices, wall_seconds=3.0)
    # 600k uncached * 2 + 400k cached * 0.5 + 10k out * 8, per million
    assert result.cost_usd == pytest.approx(1.2 + 0.2 + 0.08)
    assert result.tool_calls == 1 and result.input_tokens == 1_000_000


def test_unpriced_model_is_scored_not_crashed_on() -> None:
    # the agent's input: grading goes on, the model is named, and the run cannot pass
    now = datetime.now(timezone.utc)
    events = [TraceEvent(seq=1, ts=now, kind="model", model="mystery",
                         usage=Usage(input_tokens=1)),
              TraceEvent(seq=2, ts=now, kind="model", model="gpt-4o",
                         usage=Usage(input_tokens=1_000_000))]
    result = evaluate_efficiency(events, load_prices(), wall_seconds=0)
    assert result.unpriced_models == ["mystery"] and result.cost_usd == pytest.approx(2.5)
    integrity = judge_integrity(events, unpriced_models=result.unpriced_models)
    assert integrity.violated and "mystery" in integrity.findings[0].detail


def test_the_cost_says_whether_it_was_metered_or_reported() -> None:
    now = datetime.now(timezone.utc)

    def call(metered: bool, usage: Usage | None = Usage(input_tokens=1_000_000)) -> TraceEvent:
        return TraceEvent(seq=1, ts=now, kind="model", model="gpt-4o", usage=usage,
                          metered=metered)

    def efficiency(*events: TraceEvent) -> EfficiencyResult:
        return evaluate_efficiency(list(events), load_prices(), wall_seconds=0)

    assert efficiency().cost_basis == "none"
    assert efficiency(call(True), call(True)).cost_basis == "metered"
    assert efficiency(call(False)).cost_basis == "self-reported"
    mixed = efficiency(call(True), call(False), call(True, usage=None))
    assert mixed.cost_basis == "mixed" and mixed.cost_usd == pytest.approx(5.0)
    assert mixed.unmeasured_calls == 1 and mixed.input_tokens == 2_000_000
    # a record from before the field: a model call of unknown origin is not called metered
    old = TraceEvent.model_validate({"seq": 1, "ts": now.isoformat(), "kind": "model",
                                     "model": "gpt-4o", "usage": {"input_tokens": 1}})
    assert efficiency(old).cost_basis == "self-reported"


def test_cached_tokens_cannot_exceed_input() -> None:
    with pytest.raises(ValueError, match="cannot exceed input_tokens"):
        Usage(input_tokens=10, cached_input_tokens=5_000_000)


def test_scripted_runs_cost_nothing() -> None:
    assert evaluate_efficiency([], load_prices(), wall_seconds=1).cost_usd == 0
