"""query_metrics: PromQL against the run's Prometheus, instant or over a range."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
from pydantic import Field

from dbabench.env.monitoring import PLAIN_HTTP
from dbabench.model.base import Model
from dbabench.tools.bounds import clip_list, thin_points
from dbabench.tools.context import ToolContext
from dbabench.tools.errors import ToolError


class QueryMetricsArgs(Model):
    query: str = Field(min_length=1, max_length=10_000, description="PromQL expression")
    range_seconds: float | None = Field(
        default=None, gt=0, le=86_400,
        description="if set, a range query over the last N seconds; else an instant query")
    step_seconds: float = Field(default=5.0, gt=0, le=3600)
    list_names: bool = Field(
        default=False,
        description="instead of evaluating query, list the metric names it matches as a"
                    " regular expression ('checkout', 'pg_stat_.*', '.' for all)")


class Series(Model):
    labels: dict[str, str]
    value: list[Any] | None = Field(default=None, description="[unix_ts, value] (instant)")
    values: list[list[Any]] | None = Field(default=None, description="[[unix_ts, value], ...]")


class QueryMetricsResult(Model):
    result_type: str
    series: list[Series] = Field(default_factory=list)
    names: list[str] | None = Field(default=None, description="list_names: the metric names")
    total_series: int
    truncated: bool = False


MAX_NAMES = 300
MAX_SUBQUERY_POINTS = 11_000
"""The most steps a subquery may take (Prometheus's own bound on a range query's points): a
year at 1 ms (``rate(up[1s])[1y:1ms]``) made Prometheus allocate 252 GB and die."""
_SUBQUERY = re.compile(r"\[\s*([0-9][0-9a-zA-Z.]*)\s*:\s*([0-9][0-9a-zA-Z.]*)?\s*\]")
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d|w|y)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800,
                 "y": 31_536_000}
DEFAULT_SUBQUERY_STEP = 5.0
"""A subquery without a step steps at the evaluation interval (monitoring.SCRAPE_INTERVAL)."""


def _seconds(duration: str) -> float | None:
    parts = _DURATION_PART.findall(duration)
    if not parts or "".join(n + u for n, u in parts) != duration:
        return None  # Prometheus says what is wrong with it
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)


def _check_subqueries(query: str) -> None:
    for match in _SUBQUERY.finditer(query):
        span, step = _seconds(match.group(1)), _seconds(match.group(2) or "")
        step = step if match.group(2) else DEFAULT_SUBQUERY_STEP
        if span is not None and step and span / step > MAX_SUBQUERY_POINTS:
            raise ToolError(f"subquery {match.group(0)} takes {span / step:,.0f} steps; at most"
                            f" {MAX_SUBQUERY_POINTS:,}: widen its step or shorten its range")


async def _get(ctx: ToolContext, path: str, params: dict[str, str]) -> Any:
    try:
        async with httpx.AsyncClient(base_url=ctx.prometheus_url, timeout=15.0,
                                     verify=PLAIN_HTTP) as client:
            response = await client.get(path, params=params)
    except httpx.HTTPError as e:
        raise ToolError(f"Prometheus is unreachable: {e}") from e
    # a query can make Prometheus answer bytes that are not UTF-8 (label_replace with
    # "\\xff"): they are the agent's to read as replacement characters, never our error
    text = response.content.decode("utf-8", "replace")
    body: Any = {}
    if response.headers.get("content-type", "").startswith("application/json"):
        try:
            body = json.loads(text)
        except ValueError:
            body = {}
    if not isinstance(body, dict):
        body = {}
    if response.status_code != 200 or body.get("status") != "success" or "data" not in body:
        raise ToolError(f"PromQL error ({response.status_code}): "
                        f"{body.get('errorType', '')} {body.get('error', text[:300])}")
    return body["data"]


async def _names(ctx: ToolContext, pattern: str) -> QueryMetricsResult:
    # Prometheus anchors the expression: a name containing the words is what a person means.
    # A JSON string is a valid PromQL string literal (the same escapes).
    selector = "{__name__=~" + json.dumps(f".*(?:{pattern}).*") + "}"
    names = await _get(ctx, "/api/v1/label/__name__/values", {"match[]": selector})
    kept, truncated = clip_list(sorted(names), MAX_NAMES)
    return QueryMetricsResult(result_type="names", names=kept, total_series=len(names),
                              truncated=truncated)


async def query_metrics(ctx: ToolContext, args: QueryMetricsArgs) -> QueryMetricsResult:
    if args.list_names:
        return await _names(ctx, args.query)
    _check_subqueries(args.query)
    if args.range_seconds is None:
        path, params = "/api/v1/query", {"query": args.query}
    else:
        now = time.time()
        path = "/api/v1/query_range"
        params = {"query": args.query, "start": f"{now - args.range_seconds:.3f}",
                  "end": f"{now:.3f}", "step": f"{args.step_seconds:g}"}
    data = await _get(ctx, path, params)
    # scalar and string results are a bare [ts, value], not a list of series
    raw = (data["result"] if data["resultType"] in ("vector", "matrix")
           else [{"metric": {}, "value": data["result"]}])
    bounds = ctx.bounds
    kept, truncated = clip_list(raw, bounds.max_series)
    series = []
    for item in kept:
        values = item.get("values")
        if values is not None:
            values, cut = thin_points(values, bounds.max_points)
            truncated |= cut
        series.append(Series(labels=item.get("metric", {}), value=item.get("value"),
                             values=values))
    return QueryMetricsResult(result_type=data["resultType"], series=series,
                              total_series=len(raw), truncated=truncated)
