"""Efficiency (paper §5.3): tokens and Token Cost from the recorded model calls."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml
from pydantic import Field

from dbabench.model.base import Model
from dbabench.model.evaluation import EfficiencyResult
from dbabench.model.trace import TraceEvent


class Price(Model):
    input: float = Field(ge=0)
    cached_input: float = Field(ge=0)
    output: float = Field(ge=0)


class PriceTable(Model):
    as_of: str
    models: dict[str, Price]

    def price(self, model: str) -> Price:
        if model not in self.models:
            raise KeyError(f"model {model!r} has no price in the table (as of {self.as_of});"
                           f" add it to the price table file")
        return self.models[model]


def load_prices(path: Path | None = None) -> PriceTable:
    text = (path.read_text() if path is not None else
            resources.files("dbabench.pricing").joinpath("prices.yaml").read_text())
    return PriceTable.model_validate(yaml.safe_load(text))


def cost_usd(price: Price, input_tokens: int, cached: int, output: int) -> float:
    return (price.input * (input_tokens - cached) + price.cached_input * cached
            + price.output * output) / 1e6


def evaluate_efficiency(events: list[TraceEvent], prices: PriceTable,
                        wall_seconds: float) -> EfficiencyResult:
    result = EfficiencyResult(tool_calls=sum(e.kind == "tool" for e in events),
                              wall_seconds=round(wall_seconds, 2))
    for event in events:
        if event.kind != "model" or event.usage is None:
            continue
        usage = event.usage
        result.input_tokens += usage.input_tokens
        result.cached_input_tokens += usage.cached_input_tokens
        result.output_tokens += usage.output_tokens
        result.model = event.model
        if event.model is not None:
            result.cost_usd += cost_usd(prices.price(event.model), usage.input_tokens,
                                        usage.cached_input_tokens, usage.output_tokens)
    result.cost_usd = round(result.cost_usd, 6)
    return result
