"""The plan agent reads its model's hypotheses as JSON, fenced in Markdown or not, and a reply
of nothing but whitespace costs it no more than its length."""

from __future__ import annotations

import pytest

from dbabench.agents.plan import parse_plan

PLAN = '{"hypotheses": [{"cause": "stale_statistics", "check": "pg_stat_user_tables"}]}'


@pytest.mark.parametrize("reply", [PLAN, f"```json\n{PLAN}\n```", f"  ```\n{PLAN}```  "])
def test_a_plan_is_read_fenced_or_not(reply: str) -> None:
    assert parse_plan(reply).hypotheses[0].cause == "stale_statistics"


@pytest.mark.timeout(10)
def test_a_reply_of_whitespace_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="not the JSON object"):
        parse_plan(" " * 400_000 + "```")
