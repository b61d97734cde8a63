"""The one price table: names as the trace records them, free providers, clear misses."""

from __future__ import annotations

import pytest

from dbabench.model.trace import Usage
from dbabench.pricing import cost_usd, load_prices


def test_provider_qualified_names_are_priced_by_the_model_the_provider_serves() -> None:
    table = load_prices()
    assert table.price("openrouter:openai/gpt-4o-mini") == table.price("openai/gpt-4o-mini")
    assert table.price("openai:gpt-4o") == table.price("gpt-4o")
    assert table.price("gpt-4o").output == 10.0


def test_a_self_hosted_model_costs_nothing_whatever_its_name() -> None:
    price = load_prices().price("selfhosted:qwen2.5:7b")
    assert cost_usd(price, Usage(input_tokens=10**6, output_tokens=10**6)) == 0


def test_an_unknown_model_names_the_table_date() -> None:
    with pytest.raises(KeyError, match=r"openrouter:mystery/model.*as of 2026-11-01"):
        load_prices().price("openrouter:mystery/model")
