"""The frozen price table (paper §5.3): list prices in USD per million tokens.

One table for everyone who prices a model call: the evaluator reconstructs a run's cost from
its trace, and a model-driven agent enforces its cost budget while it works. The table is
versioned with the benchmark (``prices.yaml``, with its ``asOf`` date) and never fetched.

A model is named as the trace records it: ``PROVIDER:MODEL`` for the built-in agents
(``openrouter:openai/gpt-4o-mini``), or a bare name an external agent reports (``gpt-4o``).
Every model of a free provider (a self-hosted server) costs nothing.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pydantic import Field

from dbabench.model.base import Model
from dbabench.model.trace import Usage
from dbabench.yamltext import load_yaml


MAX_PRICE_PER_MILLION = 10_000.0
"""Over a hundredfold the dearest list price. With usage bounded per call (Usage), a call costs
at most ~$10**7 at it, so a cost summed over any number of calls a run can make stays a finite
float: no verdict is NaN or infinite."""


class Price(Model):
    # a table's typo (.inf) fails loading (model.base), the harness's own error
    input: float = Field(ge=0, le=MAX_PRICE_PER_MILLION)
    cached_input: float = Field(ge=0, le=MAX_PRICE_PER_MILLION)
    output: float = Field(ge=0, le=MAX_PRICE_PER_MILLION)


FREE = Price(input=0, cached_input=0, output=0)


class PriceTable(Model):
    as_of: str
    models: dict[str, Price]
    free_providers: list[str] = Field(
        default_factory=list, description="providers whose every model is free (self-hosted)")

    def price(self, model: str) -> Price:
        """The exact name first, then ``PROVIDER:MODEL`` by its provider and its model."""
        if model in self.models:
            return self.models[model]
        provider, colon, name = model.partition(":")
        if colon and provider in self.free_providers:
            return FREE
        if colon and name in self.models:
            return self.models[name]
        raise KeyError(f"model {model!r} has no price in the table (as of {self.as_of});"
                       f" add it to the price table file")


def load_prices(path: Path | None = None) -> PriceTable:
    text = (path.read_text() if path is not None else
            resources.files(__name__).joinpath("prices.yaml").read_text())
    return PriceTable.model_validate(load_yaml(text))


def cost_usd(price: Price, usage: Usage) -> float:
    cached = usage.cached_input_tokens
    return (price.input * (usage.input_tokens - cached) + price.cached_input * cached
            + price.output * usage.output_tokens) / 1e6
