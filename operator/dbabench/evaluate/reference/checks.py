"""The checks' section: each predicate kind's fields and description, and worked examples
computed by the evaluator's own functions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, get_args

from dbabench.env import postgres
from dbabench.evaluate import integrity, predicates
from dbabench.evaluate.log_settings import ENABLERS
from dbabench.evaluate.reference.manifest_fields import fields_table
from dbabench.evaluate.reference.markdown import code, doc, table
from dbabench.evaluate.sessions import VERIFIER_APPLICATION
from dbabench.model.scenario import (
    Comparison,
    EstimatePredicate,
    LogPredicate,
    ManifestationSpec,
    OutcomeCheck,
    OutcomeSpec,
    SqlPredicate,
    WorkloadPredicate,
)
from dbabench.workload.businesslog import FAILED_BY_TIMEOUT, BusinessEvent, window_stats

SQL_VERDICT_ROWS: list[tuple[str, Any]] = [
    ("`true`", (True,)), ("`false`", (False,)), ("NULL", (None,)), ("the text `'t'`", ("t",)),
    ("the integer `1`", (1,)), ("no row", None)]

STAT_MEANINGS: dict[str, str] = {
    "requests": "the number of requests that ended in the window, whatever their outcome",
    "timeout_ratio": "the share of the window's requests whose outcome is "
                     + " or ".join(map(code, FAILED_BY_TIMEOUT)),
    "error_ratio": "the share of the window's requests whose outcome is not `ok` (timeouts"
                   " included)",
    "p99_latency_ms": "the 99th percentile of the window's latencies, nearest rank: the"
                      " ⌈0.99·n⌉-th smallest",
    "max_latency_ms": "the largest latency",
}
"""What each workload stat is (workload/businesslog.py ``window_stats``)."""


def _example_events() -> tuple[list[BusinessEvent], str]:
    """200 requests of 1..200 ms: 180 ok, 8 timeout, 2 lock_timeout, 6 terminated, 4 error."""
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    outcomes = (["timeout"] * 8 + ["lock_timeout"] * 2 + ["terminated"] * 6 + ["error"] * 4
                + ["ok"] * 180)
    events = [BusinessEvent(ts=start + timedelta(milliseconds=i), service="checkout-worker",
                            request_id=str(i), operation="place_order", latency_ms=float(i + 1),
                            outcome=o)  # type: ignore[arg-type]
              for i, o in enumerate(outcomes)]
    return events, ("200 requests of 1, 2, …, 200 ms: 180 `ok`, 8 `timeout`, 2 `lock_timeout`,"
                    " 6 `terminated`, 4 `error`")


def section() -> list[str]:
    stats = get_args(WorkloadPredicate.model_fields["stat"].annotation)
    events, described = _example_events()
    example, empty = window_stats(events), window_stats([])
    ops = ", ".join(code(c.value) for c in Comparison)
    plan = {"Node Type": "Gather", "Workers Planned": 2,
            "Plans": [{"Node Type": "Seq Scan", "Relation Name": "orders", "Plan Rows": 1000,
                       "Parallel Aware": True}]}
    sql = SqlPredicate(name="example", check="sql", sql="SELECT true")
    verdicts = []
    for label, row in SQL_VERDICT_ROWS:
        passed, _, _ = predicates._verdict(sql, row, 0.0)
        verdicts.append(f"{label} {'passes' if passed else 'fails'}")
    kept_share = f"{integrity.KEPT_SHARE:.0%}"
    return [
        "## Checks",
        "",
        "The same four kinds of check serve `manifestation.predicates` (is the fault there?)"
        " and `outcome.checks` (is it gone, and is the service back?), judged by one engine"
        " (evaluate/predicates.py). `op` is one of " + ops + ". A check that raises a database"
        " error fails, with the SQLSTATE in its detail.",
        "",
        "| kind | reads | manifestation | outcome |",
        "|---|---|---|---|",
        "| `sql` | a statement's result | at each poll | at the end of the window |",
        "| `estimate` | the planner's estimate against a true count | at each poll |"
        " at the end of the window |",
        "| `workload` | the business log | its trailing `windowSeconds` at each poll |"
        " the outcome window |",
        "| `log` | the primary's server log | its trailing `windowSeconds` at each poll |"
        " the outcome window |",
        "",
        "### `check: sql`",
        "",
        doc(SqlPredicate),
        "",
        *fields_table(SqlPredicate),
        "",
        f"The verifier's session is `{postgres.SUPERUSER}` with application_name"
        f" `{VERIFIER_APPLICATION}`, its settings pinned by startup options (outranking"
        " whatever is stored for the role or database), with the default `timeoutMs`:",
        "`" + predicates.verifier_options(SqlPredicate.model_fields["timeout_ms"].default)
        + "`.",
        "An application session logs in as the application does, with no options. The first"
        " column of the first row, as `expect: true` judges it: "
        + "; ".join(verdicts) + ".",
        "",
        "### `check: estimate`",
        "",
        doc(EstimatePredicate),
        "",
        *fields_table(EstimatePredicate),
        "",
        "The ratio is estimate / max(actual, 1); `actual`'s first column (NULL: 0). A parallel"
        " scan's `Plan Rows` is per participant and is multiplied back as PostgreSQL divides"
        " it: a parallel scan of `orders` planned at 1000 rows under a Gather of 2 workers is"
        f" an estimate of {predicates.relation_estimate(plan, 'orders'):g} rows.",
        "",
        "### `check: workload`",
        "",
        doc(WorkloadPredicate),
        "",
        *fields_table(WorkloadPredicate),
        "",
        "A request is in the window when it ended in it (`ts`), so one still waiting when the"
        " window closes is not counted at all: a window whose every request hangs has"
        " `requests` 0. With no requests every stat is 0, and `timeout_ratio <= 0.05` passes:"
        " pair ratio checks with a `requests >=` check.",
        "",
        *table(("stat", "meaning", f"example: {described}", "no requests"),
               ((code(s), STAT_MEANINGS[s], f"{getattr(example, s):g}",
                 f"{getattr(empty, s):g}") for s in stats)),
        "",
        "### `check: log`",
        "",
        doc(LogPredicate),
        "",
        *fields_table(LogPredicate),
        "",
        "A record is in the window when its timestamp is. An outcome check that passes on few"
        " records (`op` `==`, `<` or `<=`) must say in `enabledBy` which settings make the"
        " server write them, from: " + ", ".join(map(code, ENABLERS)) + "; it then fails"
        " where one of them, or `log_min_messages`, logs less at any layer than at admission"
        " (evaluate/log_settings.py).",
        "",
        "### Manifestation and outcome",
        "",
        *fields_table(ManifestationSpec),
        "",
        *fields_table(OutcomeSpec),
        "",
        *fields_table(OutcomeCheck),
        "",
        "Besides the manifest's checks the outcome judges one check per `intended` setting"
        " (`intended-ROLE-DATABASE-NAME`: still stored in its own layer, weight its `weight`)"
        f" and, with `safety.protected.tables`, `{integrity.CHECK_NAME}` (each table is the"
        f" same table and kept at least {kept_share} of its rows at admission; of up to"
        f" {integrity.SAMPLE_ROWS} rows sampled then (found again by primary key; a table"
        " without one by where its rows were, then by their content), fewer than"
        f" {integrity.CHANGED_ROWS} changed in the columns no statement of the scenario"
        " writes (policy/writes.py: the workload's, jobs', fault's, dataset's, checks' and"
        " fixes' SQL, function bodies and trigger assignments included), and, where none of it"
        f" deletes from the table, fewer than {integrity.CHANGED_ROWS} are gone). F is the"
        " passed checks' weight over all checks' weight; Outcome Pass is F = 1 with a valid"
        " report.",
    ]
