"""Predicates over the live environment, shared by manifestation (before) and outcome (after).

One engine serves both so that "the fault is present" and "the fault is gone" are judged by
the same code reading the same signals.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from collections.abc import AsyncIterator, Awaitable, Callable

import psycopg
from psycopg.conninfo import make_conninfo

from dbabench.env.postgres import APP_ROLE, PostgresInstance
from dbabench.evaluate.sessions import VERIFIER_APPLICATION, KeptSessions, login
from dbabench.model.evaluation import CheckResult
from dbabench.policy.reach import startup_options
from dbabench.model.scenario import (EstimatePredicate, LogPredicate, Predicate, SqlPredicate,
                                     WorkloadPredicate)
from dbabench.tools.logs import PgLogReader, record_time
from dbabench.workload.businesslog import BusinessLogReader, window_stats


FORGET_TIMEOUT_MS = 10_000


@dataclass
class Probe:
    """Where predicates look: the harness's own connection and the run's logs."""

    dsn: str
    business_log: Path
    pg_log_dir: Path
    replica_dsn: str | None = None
    """The harness's connection to the hot standby, where there is one."""
    app_dsn: str | None = None
    """The application's login to its database on the primary (application-session checks)."""
    app_replica_dsn: str | None = None
    """The same on the hot standby."""
    refresh: Callable[[], Awaitable[None]] | None = None
    """Brings the logs up to date first, where they are copies (env.remote.LogMirror)."""
    business: BusinessLogReader = field(init=False, repr=False)
    pg_log: PgLogReader = field(init=False, repr=False)
    _kept: KeptSessions | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        # kept for the run: each poll and check reads only what the logs gained since the last
        self.business = BusinessLogReader(self.business_log)
        self.pg_log = PgLogReader(self.pg_log_dir)

    @classmethod
    def of(cls, instance: PostgresInstance, *, business_log: Path, pg_log_dir: Path,
           replica: PostgresInstance | None = None,
           refresh: Callable[[], Awaitable[None]] | None = None) -> "Probe":
        """The harness's and the application's logins to the run's servers."""
        name = VERIFIER_APPLICATION
        return cls(dsn=instance.dsn(application_name=name), business_log=business_log,
                   pg_log_dir=pg_log_dir, refresh=refresh,
                   replica_dsn=replica.dsn(application_name=name) if replica else None,
                   app_dsn=instance.dsn(user=APP_ROLE, application_name=name),
                   app_replica_dsn=(replica.dsn(user=APP_ROLE, application_name=name)
                                    if replica else None))

    @contextlib.asynccontextmanager
    async def keeping_sessions(self) -> AsyncIterator[None]:
        """While admission polls, and while the outcome is judged: the verifier's sessions
        are kept from one check to the next and closed on the way out (evaluate.sessions)."""
        self._kept = KeptSessions()
        try:
            yield
        finally:
            kept, self._kept = self._kept, None
            await kept.close()

    async def forget_statements(self) -> None:
        """Empty pg_stat_statements on every server, just before the agent comes in: what the
        harness ran to get here (the golden's build with its credentials, the fault's
        statements, admission's checks as the application) is no incident's history."""
        for dsn in (self.dsn, self.replica_dsn):
            if dsn is None:
                continue
            async with login(dsn, verifier_options(FORGET_TIMEOUT_MS)) as conn:
                try:
                    await conn.execute("SELECT pg_stat_statements_reset()")
                except (psycopg.errors.ObjectNotInPrerequisiteState,
                        psycopg.errors.UndefinedFunction):
                    # not loaded (a fault took it out of shared_preload_libraries), or not
                    # installed here: it holds nothing to forget
                    pass

    def verifier(self, dsn: str, timeout_ms: int, **settings: str | int
                 ) -> contextlib.AbstractAsyncContextManager[psycopg.AsyncConnection]:
        """A session of the verifier on ``dsn``, its settings pinned (``verifier_options``,
        with this statement timeout and ``settings``): a new login, or one kept from an
        earlier check (only the timeout is set again on those)."""
        options = verifier_options(timeout_ms, **settings)
        if self._kept is None or settings:
            return login(dsn, options)
        return self._kept.session(dsn, options, timeout_ms)


@dataclass
class Window:
    start: datetime
    end: datetime

    @classmethod
    def trailing(cls, seconds: float) -> "Window":
        end = datetime.now(timezone.utc)
        return cls(end - timedelta(seconds=seconds), end)


async def check(pred: Predicate, probe: Probe, *, window: Window | None = None,
                weight: float = 1.0) -> CheckResult:
    """Evaluate one predicate; ``window`` is the outcome window, or None for a trailing one."""
    if probe.refresh is not None and isinstance(pred, (WorkloadPredicate, LogPredicate)):
        await probe.refresh()
    try:
        if isinstance(pred, SqlPredicate):
            passed, value, detail = await _sql(pred, probe)
        elif isinstance(pred, EstimatePredicate):
            passed, value, detail = await _estimate(pred, probe)
        elif isinstance(pred, WorkloadPredicate):
            passed, value, detail = _workload(pred, probe,
                                              window or Window.trailing(pred.window_seconds))
        else:
            passed, value, detail = _log(pred, probe, window or Window.trailing(pred.window_seconds))
    except psycopg.Error as e:
        passed, value, detail = False, None, f"{e.sqlstate}: {str(e).strip()[:300]}"
    return CheckResult(name=pred.name, weight=weight, passed=passed, value=value, detail=detail)


def verifier_options(timeout_ms: int, **settings: str | int) -> str:
    """The verifier's startup options. They outrank the settings the agent can store for the
    superuser role the verifier shares with it: a search_path that puts a look-alike view
    before pg_catalog, a lexer setting. The path is the default's (pg_catalog, then public),
    so what a check reads of the application is what it read before the run. Its statements
    are not tracked in pg_stat_statements, where an agent would read what is checked."""
    return startup_options(statement_timeout=timeout_ms, search_path="pg_catalog,public",
                           **{"pg_stat_statements.track": "none", **QUIET, **settings})


QUIET: dict[str, str | int] = {"log_temp_files": -1, "max_parallel_workers_per_gather": 0}
"""The verifier's queries leave no lines in the server's log (a database's work_mem of 64 kB
made the catalog scan spill, and log_temp_files showed its text to the agent), and run in its
own process alone (a parallel worker logs under no application name)."""

SCAN_SETTINGS: dict[str, str | int] = {
    "work_mem": "4MB", "hash_mem_multiplier": 2, "temp_file_limit": -1, "jit": "off",
    "session_preload_libraries": "", "local_preload_libraries": "",
    "default_transaction_read_only": "off", "log_statement": "none",
    "log_min_duration_statement": -1, "log_lock_waits": "off",
    **{f"enable_{name}": "on" for name in (
        "bitmapscan", "hashagg", "hashjoin", "indexscan", "indexonlyscan", "material",
        "memoize", "mergejoin", "nestloop", "seqscan", "sort", "incremental_sort")},
    "random_page_cost": 4, "seq_page_cost": 1, "cpu_tuple_cost": 0.01,
    "cpu_index_tuple_cost": 0.005, "cpu_operator_cost": 0.0025,
}
"""What the harness's own scans (integrity, protected data) pin beyond that, at
their defaults: settings the agent may store for the database or the superuser role that
would make them fail or crawl rather than answer (a temp_file_limit of 150 kB with a work_mem
of 64 kB blinded the catalog scan; a preload library that does not exist refuses the login).
Scenario checks do not pin them: some read what the database sets."""


async def _sql(pred: SqlPredicate, probe: Probe) -> tuple[bool, Any, str]:
    """In the verifier's session (its settings pinned by startup options, the timeout the
    server's), or in the application's: a login of its role started as the application starts
    its own, so every stored setting of role and database applies; the timeout is then the
    client's, a statement_timeout being one of the settings read. A look-alike function,
    operator or view the role's search_path could reach is the integrity scan's."""
    application = pred.session == "application"
    primary = pred.server == "primary"
    dsn = ((probe.app_dsn if primary else probe.app_replica_dsn) if application
           else (probe.dsn if primary else probe.replica_dsn))
    if dsn is None:
        return False, None, ("addresses the replica, but this run has none" if not primary
                             else "no application login in this run")
    if pred.role is not None:
        dsn = make_conninfo(dsn, user=pred.role)
    started = time.perf_counter()
    async with login(dsn) if application else probe.verifier(dsn, pred.timeout_ms) as conn:
        try:
            async with asyncio.timeout(pred.timeout_ms / 1000 if application else None):
                cur = await conn.execute(pred.statement.encode())
                row = await cur.fetchone() if cur.description else None
        except TimeoutError:
            return False, None, f"did not finish within {pred.timeout_ms} ms"
        except psycopg.errors.QueryCanceled:
            if application:
                raise  # the role's own statement_timeout: an error the check reports
            return False, None, f"did not finish within {pred.timeout_ms} ms"
    return _verdict(pred, row, started)


def _verdict(pred: SqlPredicate, row: Any, started: float) -> tuple[bool, Any, str]:
    elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
    if pred.expect == "completes":
        return True, elapsed_ms, f"finished in {elapsed_ms} ms"
    value = row[0] if row else None
    return value is True, str(value), f"returned {value!r}"


def _parallel_divisor(workers: int) -> float:
    """PostgreSQL's own: a parallel node's row estimate is per participant, leader included."""
    leader = max(0.0, 1.0 - 0.3 * workers)
    return workers + leader


def relation_estimate(plan: dict[str, Any], relation: str, workers: int = 0) -> float | None:
    """Total estimated rows of the first scan of ``relation`` in an EXPLAIN JSON plan."""
    workers = int(plan.get("Workers Planned", workers))
    if plan.get("Relation Name") == relation:
        rows = float(plan["Plan Rows"])
        return rows * _parallel_divisor(workers) if plan.get("Parallel Aware") else rows
    for child in plan.get("Plans", []):
        found = relation_estimate(child, relation, workers)
        if found is not None:
            return found
    return None


async def _estimate(pred: EstimatePredicate, probe: Probe) -> tuple[bool, Any, str]:
    async with probe.verifier(probe.dsn, 60_000) as conn:
        cur = await conn.execute(b"EXPLAIN (FORMAT JSON) " + pred.explain.encode())
        row = await cur.fetchone()
        assert row is not None
        doc = row[0] if not isinstance(row[0], str) else json.loads(row[0])
        estimate = relation_estimate(doc[0]["Plan"], pred.relation)
        cur = await conn.execute(pred.actual.encode())
        actual_row = await cur.fetchone()
    if estimate is None:
        return False, None, f"no scan of {pred.relation} in the plan"
    actual = float(actual_row[0]) if actual_row and actual_row[0] is not None else 0.0
    ratio = estimate / max(actual, 1.0)
    passed = pred.op.holds(ratio, pred.value)
    return passed, round(ratio, 6), (f"estimate {estimate:.0f} rows, actual {actual:.0f}"
                                      f" (ratio {ratio:.4g} {pred.op.value} {pred.value}?)")


def _workload(pred: WorkloadPredicate, probe: Probe, window: Window) -> tuple[bool, Any, str]:
    events = probe.business.events(start=window.start, end=window.end, service=pred.service,
                                   operation=pred.operation)
    stats = window_stats(events)
    value = float(getattr(stats, pred.stat))
    return (pred.op.holds(value, pred.value), round(value, 6),
            f"{pred.stat}={value:.4g} over {stats.requests} requests in"
            f" {(window.end - window.start).total_seconds():.0f}s")


def _log(pred: LogPredicate, probe: Probe, window: Window) -> tuple[bool, Any, str]:
    regex = re.compile(pred.pattern, re.IGNORECASE)
    count = 0
    for record in probe.pg_log.records():
        message = str(record.get("message", ""))
        if window.start <= record_time(record) <= window.end and regex.search(message):
            count += 1
    return pred.op.holds(count, pred.value), count, f"{count} matching log records"


async def check_all(preds: list[Predicate], probe: Probe) -> list[CheckResult]:
    return list(await asyncio.gather(*(check(p, probe) for p in preds)))
