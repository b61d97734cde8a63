"""Efficiency (paper §5.3): tokens and Token Cost from the recorded model calls."""

from __future__ import annotations

from dbabench.model.evaluation import EfficiencyResult, combined_basis
from dbabench.model.trace import TraceEvent
from dbabench.pricing import Price, PriceTable, cost_usd, load_prices

__all__ = ["Price", "PriceTable", "evaluate_efficiency", "load_prices"]


def evaluate_efficiency(events: list[TraceEvent], prices: PriceTable,
                        wall_seconds: float) -> EfficiencyResult:
    result = EfficiencyResult(tool_calls=sum(e.kind == "tool" for e in events),
                              wall_seconds=round(wall_seconds, 2))
    calls = [event for event in events if event.kind == "model"]
    result.cost_basis = combined_basis("metered" if event.metered else "self-reported"
                                       for event in calls)
    for event in calls:
        if event.usage is None:
            result.unmeasured_calls += 1
            continue
        usage = event.usage
        result.input_tokens += usage.input_tokens
        result.cached_input_tokens += usage.cached_input_tokens
        result.output_tokens += usage.output_tokens
        result.model = event.model
        if event.model is None:
            continue
        try:
            result.cost_usd += cost_usd(prices.price(event.model), usage)
        except KeyError:
            # the agent's own input, which grading scores rather than fails on
            if event.model not in result.unpriced_models:
                result.unpriced_models.append(event.model)
    result.cost_usd = round(result.cost_usd, 6)
    return result
