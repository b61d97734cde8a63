"""Every settings check of the library reads what the application runs with.

A check of a setting that a role or database can carry, run in the verifier's pinned session,
reads the server's value and misses a value stored for the application (and a narrow fix made
there): such checks must run in an application session. The contexts are the server's own.
"""

from __future__ import annotations

import re

import psycopg

from dbabench.env.postgres import PostgresInstance
from dbabench.model.scenario import SqlPredicate
from dbabench.scenario.loader import discover

_SETTING_READS = (re.compile(r"current_setting\(\s*'([\w.]+)'", re.IGNORECASE),
                  re.compile(r"pg_settings\s+WHERE\s+name\s*=\s*'([\w.]+)'", re.IGNORECASE))


def _read_settings(sql: str) -> set[str]:
    return {name.lower() for pattern in _SETTING_READS for name in pattern.findall(sql)}


def test_reads_are_found() -> None:
    assert _read_settings("SELECT current_setting('work_mem') = '4MB' AND current_setting("
                          " 'FSYNC') = 'on' FROM x") == {"work_mem", "fsync"}
    assert _read_settings("SELECT setting FROM pg_settings WHERE name = 'commit_delay'") == {
        "commit_delay"}


def test_role_settable_settings_are_checked_in_an_application_session(
        postgres: PostgresInstance) -> None:
    with psycopg.connect(postgres.dsn(database="postgres")) as conn:
        settable = {name for name, in conn.execute(
            "SELECT name FROM pg_settings WHERE context IN ('user', 'superuser')")}
    checked, offenders = 0, []
    for name, (_, scenario) in sorted(discover().items()):
        spec = scenario.spec
        for pred in [*spec.manifestation.predicates, *(c.predicate for c in spec.outcome_checks)]:
            if not isinstance(pred, SqlPredicate):
                continue
            # an effectiveSetting check reads the value in force for every login role, from
            # the verifier's session: what an application session sees, and its neighbours'
            if pred.effective_setting is not None:
                checked += 1
                continue
            reads = _read_settings(pred.sql) & settable
            checked += bool(reads)
            if reads and pred.session != "application":
                offenders.append(f"{name}: {pred.name} reads {sorted(reads)}")
    assert not offenders, offenders
    assert checked >= 6
