"""Efficiency (paper §5.3): tokens and Token Cost from the recorded model calls."""

from __future__ import annotations

import math

from dbabench.model.evaluation import EfficiencyResult, combined_basis
from dbabench.model.trace import MAX_TOKENS_PER_CALL, TraceEvent, Usage
from dbabench.pricing import Price, PriceTable, cost_usd, load_prices

__all__ = ["Price", "PriceTable", "evaluate_efficiency", "load_prices"]


def _within_bounds(usage: Usage) -> bool:
    counts = (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens)
    return all(0 <= n <= MAX_TOKENS_PER_CALL for n in counts)


def evaluate_efficiency(events: list[TraceEvent], prices: PriceTable,
                        wall_seconds: float) -> EfficiencyResult:
    """Raises ValueError on usage no validated record can hold (past MAX_TOKENS_PER_CALL,
    negative) and on a cost that is not a finite number: the evaluator scores such a run
    as marked rather than write NaN or an overflow into its verdict."""
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
        # Usage's own bounds hold for every record that was validated; one built around them
        # (model_construct, a copy with an update) would otherwise overflow the float below
        if not _within_bounds(usage):
            raise ValueError(f"model call at seq {event.seq}: token counts outside"
                             f" 0..{MAX_TOKENS_PER_CALL} cannot be priced")
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
    if not math.isfinite(result.cost_usd):
        # bounded usage at bounded prices cannot get here: only a record built around
        # the bounds can, and then not as a NaN in the verdict
        raise ValueError(f"the run's cost is not a finite number ({result.cost_usd})")
    result.cost_usd = round(result.cost_usd, 6)
    return result
