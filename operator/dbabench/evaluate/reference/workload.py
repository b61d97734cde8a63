"""The workload's section: its sessions and what each operation runs (from the recorded
sessions), the business log and its outcomes (by ``classify_error``), and the workload's and a
job's fields."""

from __future__ import annotations

import json
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import psycopg

from dbabench.evaluate.reference.manifest_fields import fields_table
from dbabench.evaluate.reference.markdown import code, table, yaml
from dbabench.evaluate.reference.workload_sessions import (
    BARE_JOB,
    JOB_SENTINELS,
    SENTINELS,
    RecordedSession,
    record_workload,
    sample,
)
from dbabench.model.artifacts import RunArtifact
from dbabench.model.workload import WORKER_SERVICE, JobStep, OltpCheckoutWorkload
from dbabench.workload import engine
from dbabench.workload.businesslog import FAILED_BY_TIMEOUT, BusinessEvent, BusinessLogWriter


def _named(value: object, names: dict[str, object], prefix: str = "") -> str:
    """``value`` as the manifest field it came from: equal to a sentinel, or (for one of at
    least four characters) holding it; else the value itself."""
    text = yaml(value)
    shown = {name: yaml(v) for name, v in names.items() if not isinstance(v, list)}
    for name, sentinel in shown.items():
        if text == sentinel:
            return f"`{prefix}{name}`"
    for name, sentinel in sorted(shown.items(), key=lambda item: -len(item[1])):
        if len(sentinel) >= 4 and sentinel in text:
            return f"`{text.replace(sentinel, '')}` + `{prefix}{name}`"
    return code(text) if text else "none"


def _job_loop(session: RecordedSession, names: dict[str, object]) -> str:
    """What a job's session does between two runs, read off its recorded events."""
    inside, after, seen = [], [], "start"
    for kind, value in session.events:
        if kind == "request":
            if seen == "end":
                break
            seen = "request"
        elif kind == "end":
            seen = "end"
        elif kind == "wait":
            (inside if seen == "request" else after).append(_named(value, names))
    text = "runs its statements"
    if inside:
        text += f", stays idle in its transaction for {' then '.join(inside)}, commits"
    return text + f", then waits {' then '.join(after) or 'nothing'}; again, for ever"


def section() -> list[str]:
    spec, jobs = sample()
    sessions = record_workload(spec, jobs)
    workers = [s for s in sessions if s.service == WORKER_SERVICE]
    job, bare = ([s for s in sessions if s.service == j.name] for j in jobs)
    if len(workers) != spec.clients or len(job) != jobs[0].sessions or len(bare) != 1:
        raise AssertionError("the workload did not start the sessions its spec asks for")
    browse_share = OltpCheckoutWorkload.model_fields["browse_share"].default

    def session_row(label: str, group: list[RecordedSession],
                    names: dict[str, object], prefix: str = "") -> tuple[str, ...]:
        s = group[0]
        return (label, _named(len(group), names, prefix),
                _named(s.application_name, names, prefix),
                _named(s.service, names, prefix), _named(s.user, names, prefix),
                _named(s.options, names, prefix) if s.options else
                "none: the server's, database's and role's `statement_timeout` hold",
                _named(s.lifetime, SENTINELS, "workload.") if s.lifetime else "never")

    operations = []
    for operation, (transaction, statements) in sorted(workers[0].requests().items()):
        share = (f"`browseShare` (default {browse_share}) of requests"
                 if operation == "browse_orders" else "the other requests")
        operations.append((code(WORKER_SERVICE), code(operation), share,
                           "yes" if transaction else "no: one statement in autocommit",
                           "; ".join(code(s) for s in statements)))
    ((job_operation, (job_transaction, job_statements)),) = job[0].requests().items()
    if list(job_statements) != JOB_SENTINELS["statements"]:
        raise AssertionError("a job's request does not run its statements in order")
    operations.append(("a job's `name`", _named(job_operation, JOB_SENTINELS),
                       _job_loop(job[0], JOB_SENTINELS),
                       "yes" if job_transaction else "no", "its `statements`, in order"))
    return [
        "## The workload",
        "",
        "One process per run (workload/engine.py), started after the runtime fault and"
        " running until the outcome window ends: the `oltp-checkout` profile's clients and the"
        " fault's jobs, each session a thread with its own connection. Every session connects"
        " to the application database as the role below, in autocommit; a request that is a"
        " transaction opens one. What each kind of session does with a manifest's fields"
        " (found by running the engine with sample values):",
        "",
        *table(("sessions", "how many", "application_name", "business-log service",
                "login role", "set at login (libpq options)", "replaced after"),
               (session_row("checkout workers", workers, SENTINELS, "workload."),
                session_row("a job with `role` and `statementTimeoutMs`", job, JOB_SENTINELS),
                session_row("a job with neither", bare, {**BARE_JOB, "sessions": 1}))),
        "",
        "`replaced after`: the session is closed and a new one logged in before the next"
        " request once it is that old (`workload.connectionLifetimeSeconds`, for workers and"
        " jobs alike): role and database settings reach the workload only through new"
        " sessions. A job with `server: replica` logs in to the standby the same way.",
        "",
        "### What each operation runs",
        "",
        *table(("service", "operation", "when", "in a transaction", "SQL"), operations),
        "",
        "A checkout's `%s` are drawn per request: the merchant uniformly from"
        " 1..`merchants` (for `place_order`, `hotMerchant` instead with probability"
        " `hotShare`), the SKU from 1..`skus`, the quantity from 1..5. A worker waits"
        " `thinkTimeMs` after each answer, or with `requestIntervalMs` starts a request that"
        " often on average (half to one and a half of it). `place_order` checks that its"
        " INSERT and its UPDATE each changed one row, as an application reads its row counts:"
        " a write the server took without error that stored nothing (a trigger that returns"
        " NULL, a rule that does instead nothing) fails the request (`error`), and its"
        " transaction rolls back.",
        "",
        *_outcomes(),
        "",
        "### The workload's fields (`workload`, profile `oltp-checkout`)",
        "",
        *fields_table(OltpCheckoutWorkload),
        "",
        "### A job's fields (`fault.runtime`, `action: job`)",
        "",
        *fields_table(JobStep),
    ]


OUTCOME_EXAMPLES: list[tuple[BaseException, bool, str]] = [
    (psycopg.errors.QueryCanceled("canceling statement due to statement timeout"), True,
     "its own `statement_timeout`"),
    (psycopg.errors.QueryCanceled("canceling statement due to user request"), True,
     "`pg_cancel_backend`, a cancel"),
    (psycopg.errors.LockNotAvailable("canceling statement due to lock timeout"), True,
     "`lock_timeout`, `NOWAIT`"),
    (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), False,
     "`pg_terminate_backend`, a fast shutdown"),
    (psycopg.errors.CrashShutdown("terminating connection because of crash of another server"
                                  " process"), False, "a backend's crash, an immediate shutdown"),
    (psycopg.OperationalError("connection to server failed: Connection refused"), False,
     "the server is down, refuses the login, or closed the connection"),
    (psycopg.errors.DeadlockDetected("deadlock detected"), True, "a deadlock"),
    (psycopg.errors.SerializationFailure("could not serialize access"), True,
     "a serialization failure"),
    (psycopg.errors.ReadOnlySqlTransaction("cannot execute INSERT in a read-only transaction"),
     True, "any other error of the statement"),
]


def business_log_keys() -> tuple[list[str], list[str]]:
    """The keys of a failed and of an ok request's line, as the workload writes them."""
    keys = []
    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for outcome, sqlstate, message in (("error", "40P01", "deadlock detected"),
                                       ("ok", None, None)):
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / RunArtifact.BUSINESS_LOG
            writer = BusinessLogWriter(path)
            writer.write(BusinessEvent(ts=at, service="s", request_id="r", operation="o",
                                       latency_ms=1.0, outcome=outcome,  # type: ignore[arg-type]
                                       sqlstate=sqlstate, message=message))
            writer.close()
            keys.append(list(json.loads(path.read_text()).keys()))
    return keys[0], keys[1]


def _outcomes() -> list[str]:
    rows = []
    for error, alive, cause in OUTCOME_EXAMPLES:
        outcome, sqlstate = engine.classify_error(error, session_alive=alive)
        rows.append((code(outcome), cause, code(sqlstate) if sqlstate else "none",
                     "yes" if outcome in FAILED_BY_TIMEOUT else "no",
                     "yes" if outcome != "ok" else "no"))
    failed, ok = business_log_keys()
    fields = ", ".join(code(k) for k in failed)
    only_failed = " and ".join(code(k) for k in failed if k not in ok)
    return [
        "### The business log",
        "",
        f"Every request is one line of `business.jsonl` ({fields}; {only_failed} only"
        " when it failed), written when it ends, `ts` being that moment; `latency_ms` runs"
        " from the start of the request, a reconnect included. `check:"
        " workload` and `read_log source: business` read it, and the workload's metrics count"
        f" the same requests. A request that fails is `ok` no more; its outcome, as"
        " `classify_error` files it:",
        "",
        *table(("outcome", "for example", "SQLSTATE", "in timeout_ratio", "in error_ratio"),
               rows),
        "",
        f"After a `connection_error` the session waits {engine.RECONNECT_DELAY:g} s"
        " (`RECONNECT_DELAY`) before it goes on; after `terminated` it is dropped and the next"
        " request logs in anew. A request cut short by the workload's own stop is not logged.",
    ]
