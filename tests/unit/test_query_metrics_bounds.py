"""query_metrics refuses what would take the run's Prometheus down, before sending it: the
fourth outside attack's ``max_over_time(rate(up[1s])[1y:1ms])`` made it allocate 252 GB and
die, and every later call found it unreachable; a 100,000-character literal got a 500."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dbabench.tools.errors import ToolError
from dbabench.tools.metrics import MAX_SUBQUERY_POINTS, QueryMetricsArgs, _check_subqueries


@pytest.mark.parametrize("query", [
    "max_over_time(rate(up[1s])[1y:1ms])",
    "max_over_time(up[1d:1s])",
    "avg_over_time(rate(x[5m])[2w:])",
])
def test_a_subquery_of_too_many_steps_is_a_tool_error(query: str) -> None:
    with pytest.raises(ToolError, match=f"at most {MAX_SUBQUERY_POINTS:,}"):
        _check_subqueries(query)


@pytest.mark.parametrize("query", [
    "rate(checkout_requests_total[30s])", "max_over_time(up[1h:1s])",
    "max_over_time(rate(x[1m])[30m:])", "deriv(pg_stat_user_tables_n_dead_tup[10m])",
    "sum by (application_name) (pg_stat_activity_service_count)",
])
def test_what_a_dba_asks_goes_through(query: str) -> None:
    _check_subqueries(query)


def test_a_query_is_bounded_in_length() -> None:
    QueryMetricsArgs(query='"' + "x" * 9_000 + '"')
    with pytest.raises(ValidationError):
        QueryMetricsArgs(query='"' + "x" * 100_000 + '"')
