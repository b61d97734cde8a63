"""Scripted agents that prove a scenario honest: reference, decoy, null, sweep and reset."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, get_args

from psycopg import sql as pgsql

from dbabench.errors import BadInput
from dbabench.model.proof import ScriptedAgent
from dbabench.model.task import AgentTask
from dbabench.model.report import Action, Evidence, ObjectRef, Report
from dbabench.model.taxonomy import taxonomy
from dbabench.policy import parse_pg_bool, pg_magnitude
from dbabench.model.scenario import Remediation, Scenario, ToolCall
from dbabench.model.tool import ToolName
from dbabench.tools.gate import ToolGate


class ScriptedAgentError(BadInput, ValueError):
    """A scripted agent that cannot be built: an unknown name or remediation."""


async def _call(gate: ToolGate, call: ToolCall) -> dict[str, Any]:
    return await gate.call(call.tool, dict(call.args))


async def _apply(gate: ToolGate, remediation: Remediation) -> list[Action]:
    actions = []
    for step in remediation.steps:
        result = await _call(gate, step.call)
        statement = step.call.args.get("sql")
        actions.append(Action(description=step.why or remediation.name, tool=step.call.tool,
                              statement=statement if isinstance(statement, str) else None))
        if not result["ok"]:
            gate.think(f"remediation step failed: {result['error']}")
        if step.then_wait_seconds:
            await asyncio.sleep(step.then_wait_seconds)
    return actions


class ReferenceAgent:
    """Walks the reference path, applies the reference fix (or a named alternative), verifies,
    and reports the scenario's canonical diagnosis."""

    def __init__(self, scenario: Scenario, remediation: str | None = None) -> None:
        self.scenario = scenario
        spec = scenario.spec
        options = {r.name: r for r in [spec.reference, *spec.alternatives]}
        if remediation is not None and remediation not in options:
            raise ScriptedAgentError(f"scenario {scenario.name} has no remediation {remediation!r};"
                             f" it has: {', '.join(options)}")
        self.remediation = options[remediation or spec.reference.name]
        self.name = "reference" if remediation is None else f"reference:{remediation}"

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        spec = self.scenario.spec
        evidence = []
        for hop in spec.reference_path:
            result = await _call(gate, hop.call)
            seen = json.dumps(result.get("observation"), default=str)
            if hop.expect and not re.search(hop.expect, seen):
                gate.think(f"expected evidence for '{hop.state}' not found (/{hop.expect}/)")
            evidence.append(Evidence(tool=hop.call.tool, observation=hop.evidence,
                                     trace_seq=result["seq"]))
        actions = await _apply(gate, self.remediation)
        for call in spec.verification:
            await _call(gate, call)
        diagnosis = spec.diagnosis.canonical()
        gate.submit_report(diagnosis.model_copy(update=dict(
            evidence=evidence, actions=actions,
            verification="re-checked after the fix: " + ", ".join(c.tool for c in spec.verification),
            narrative=" -> ".join(h.state for h in spec.reference_path),
        )).model_dump(mode="json"))


class DecoyAgent:
    """Looks at the visible symptom, applies the symptom-only fix, reports the symptom."""

    name = "decoy"

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        spec = self.scenario.spec
        first = spec.reference_path[0]
        result = await _call(gate, first.call)
        actions = await _apply(gate, spec.decoy)
        await _call(gate, first.call)
        stub = spec.decoy_report
        gate.submit_report(Report(
            root_cause_type=stub.root_cause_type, affected_objects=stub.affected_objects,
            causal_factors=stub.causal_factors,
            evidence=[Evidence(tool=first.call.tool, observation=first.evidence,
                               trace_seq=result["seq"])],
            actions=actions, verification="re-checked the sessions after the action",
        ).model_dump(mode="json"))


class NullAgent:
    """Does nothing and files nothing: the floor every verifier must fail."""

    name = "null"

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        return None


def _ident(name: str) -> str:
    return pgsql.Identifier(name).as_string(None)


def _rows(result: dict[str, Any]) -> list[list[Any]]:
    """The rows of a call's first statement; none when the call or the statement failed."""
    if not result["ok"] or not result["observation"]["results"]:
        return []
    return result["observation"]["results"][0]["rows"]


SESSIONS = ("SELECT pid, state, pg_blocking_pids(pid) AS blocked_by, application_name, usename,"
            " now() - query_start AS running_for, left(query, 200) AS query"
            " FROM pg_stat_activity WHERE backend_type = 'client backend'"
            " AND pid <> pg_backend_pid()")


class SweepAgent:
    """The generic runbook that never reads the evidence: it applies every fix that often
    works, all at once. A scenario whose verifier this passes grades a runbook, not a
    diagnosis. It does not read the scenario; the battery runs it on every one.

    Its steps, each as plain statements (nothing hidden in DO blocks): make its own session
    writable; terminate every
    idle-in-transaction and every blocking session; reset every setting layer (each role,
    each database, each role in a database, ALTER SYSTEM) and reload; ANALYZE and VACUUM the
    database; cancel every query running longer than a few seconds. No restart: restarts are
    judged by the safety rules already."""

    name = "sweep"
    LONG_QUERY_SECONDS = 5

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        async def sql(text: str) -> dict[str, Any]:
            return await gate.call(ToolName.execute_sql, {"sql": text})

        async def each(statements: list[str]) -> None:
            if statements:
                await sql(";\n".join(statements))

        # a read-only default would refuse every write below
        await sql("SET default_transaction_read_only = off")
        await sql("SELECT name, setting, source FROM pg_settings"
                  " WHERE source NOT IN ('default', 'override')")
        sessions = _rows(await sql(SESSIONS))
        stuck = {pid for pid, state, *_ in sessions if str(state).startswith("idle in transaction")}
        blockers = {b for _, _, blocked_by, *_ in sessions for b in blocked_by or () if b}
        await each([f"SELECT pg_terminate_backend({pid})" for pid in sorted(stuck | blockers)])

        roles = _rows(await sql("SELECT rolname FROM pg_roles WHERE rolname !~ '^pg_'"))
        databases = _rows(await sql("SELECT datname FROM pg_database WHERE NOT datistemplate"))
        pairs = _rows(await sql(
            "SELECT r.rolname, d.datname FROM pg_db_role_setting s"
            " JOIN pg_roles r ON r.oid = s.setrole JOIN pg_database d ON d.oid = s.setdatabase"))
        await each([f"ALTER ROLE {_ident(r)} RESET ALL" for r, in roles]
                   + [f"ALTER DATABASE {_ident(d)} RESET ALL" for d, in databases]
                   + [f"ALTER ROLE {_ident(r)} IN DATABASE {_ident(d)} RESET ALL"
                      for r, d in pairs])
        await sql("ALTER SYSTEM RESET ALL")
        await sql("SELECT pg_reload_conf()")
        await sql("ANALYZE")
        await sql("VACUUM")

        long_running = _rows(await sql(
            SESSIONS + " AND state = 'active' AND now() - query_start >"
            f" interval '{self.LONG_QUERY_SECONDS} seconds'"))
        await each([f"SELECT pg_cancel_backend({pid})" for pid, *_ in long_running])
        after = await sql("SELECT name, setting, source FROM pg_settings"
                          " WHERE source NOT IN ('default', 'override')")
        gate.submit_report(Report(
            root_cause_type="configuration_change",
            evidence=[Evidence(tool=ToolName.execute_sql, observation="settings after the sweep",
                               trace_seq=after["seq"])],
            actions=[Action(description="reset every setting layer, ended stuck and blocking"
                                        " sessions, ANALYZE, VACUUM, cancelled long queries",
                            tool=ToolName.execute_sql)],
            verification="re-read pg_settings after the sweep",
        ).model_dump(mode="json"))


# Parameters an incident's "somebody changed a setting" usually turns out to be (issue 39).
SUSPECT_SETTINGS = (
    "work_mem", "maintenance_work_mem", "statement_timeout", "lock_timeout",
    "idle_in_transaction_session_timeout", "idle_session_timeout", "search_path",
    "default_transaction_read_only", "default_transaction_isolation", "jit",
    "random_page_cost", "commit_delay", "commit_siblings", "deadlock_timeout", "track_counts",
    "vacuum_defer_cleanup_age", "shared_preload_libraries", "session_preload_libraries",
    "local_preload_libraries", "max_wal_size", "archive_command", "synchronous_standby_names",
    "synchronous_commit", "primary_slot_name",
)
SUSPECT_PREFIXES = ("enable_", "autovacuum")

# Every setting stored at a layer: (role, database, name, value); "" for all roles or all
# databases, and the server's own (ALTER SYSTEM) as ("", "", ...) from its file.
_LAYERS = """
SELECT coalesce(r.rolname, ''), coalesce(d.datname, ''), split_part(c, '=', 1),
       substr(c, strpos(c, '=') + 1)
  FROM pg_db_role_setting s CROSS JOIN unnest(s.setconfig) c
  LEFT JOIN pg_roles r ON r.oid = s.setrole LEFT JOIN pg_database d ON d.oid = s.setdatabase
UNION ALL
SELECT 'ALTER SYSTEM', '', name, setting FROM pg_file_settings
 WHERE sourcefile LIKE '%/postgresql.auto.conf' AND error IS NULL
"""
_LIMITS = """
SELECT 'role', rolname, rolconnlimit, rolvaliduntil < now() FROM pg_roles
 WHERE rolname !~ '^pg_' AND (rolconnlimit >= 0 OR rolvaliduntil < now())
UNION ALL
SELECT 'database', datname, datconnlimit, false FROM pg_database
 WHERE datconnlimit >= 0 AND NOT datistemplate
"""


def _suspect(name: str) -> bool:
    name = name.lower()
    return name in SUSPECT_SETTINGS or name.startswith(SUSPECT_PREFIXES)


def _cause_of(name: str, value: str, boot: str | None, unit: str | None) -> str:
    """The vocabulary's id for ``name`` set to ``value`` (``boot``: its built-in value,
    ``unit``: its unit), read off the ids alone: <name>_off, or _too_high / _too_low by the
    value's direction, else the first id for the setting, else the generic configuration
    change."""
    ids = [i for i in taxonomy().ids if i.startswith(name.lower() + "_")]
    if not ids:
        return "configuration_change"
    if parse_pg_bool(value) is False and f"{name}_off" in ids:
        return f"{name}_off"
    now, built_in = pg_magnitude(value, unit), pg_magnitude(boot or "", unit)
    if now is not None and built_in is not None:
        wanted = f"{name}_too_high" if now > built_in else f"{name}_too_low"
        if wanted in ids:
            return wanted
    return ids[0]


class ResetAgent:
    """The careless-but-polite blind control (issue 39): it reads no evidence of the symptom
    and knows no scenario. It lists the settings stored at every layer (each role, each
    database, each role in a database, ALTER SYSTEM) and the connection limits and expiries of
    roles and databases; resets, one plain statement each, those whose names are on a list of
    commonly mis-set parameters, lifts every limit and expiry; reloads; reads the layers
    back; and files a configuration cause naming what it changed. It terminates nothing. A
    scenario this passes is solved by resetting the usual suspects, not by a diagnosis."""

    name = "reset"

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        async def sql(text: str) -> dict[str, Any]:
            return await gate.call(ToolName.execute_sql, {"sql": text})

        await sql("SET default_transaction_read_only = off")
        stored = _rows(await sql(_LAYERS))
        limits = _rows(await sql(_LIMITS))
        boots = {name: (boot, unit) for name, boot, unit in _rows(await sql(
            "SELECT name, boot_val, unit FROM pg_settings"))}
        changed: list[tuple[str, str, str]] = []  # (layer, setting, value it had)
        for role, database, name, value in stored:
            if not _suspect(name):
                continue
            if role == "ALTER SYSTEM":
                statement, layer = f"ALTER SYSTEM RESET {_ident(name)}", "server"
            elif role and database:
                statement = (f"ALTER ROLE {_ident(role)} IN DATABASE {_ident(database)}"
                             f" RESET {_ident(name)}")
                layer = f"role {role} in database {database}"
            elif role:
                statement, layer = f"ALTER ROLE {_ident(role)} RESET {_ident(name)}", f"role {role}"
            else:
                statement = f"ALTER DATABASE {_ident(database)} RESET {_ident(name)}"
                layer = f"database {database}"
            if (await sql(statement))["ok"]:
                changed.append((layer, name, value))
        lifted: dict[tuple[str, str], None] = {}  # (kind, name), in order
        for kind, name, limit, expired in limits:
            target = "ROLE" if kind == "role" else "DATABASE"
            if int(limit) >= 0 and (await sql(f"ALTER {target} {_ident(name)}"
                                              " CONNECTION LIMIT -1"))["ok"]:
                lifted[(kind, name)] = None
            if expired and (await sql(f"ALTER ROLE {_ident(name)} VALID UNTIL 'infinity'"))["ok"]:
                lifted[("role", name)] = None
        await sql("SELECT pg_reload_conf()")
        after = await sql(_LAYERS)
        causes = list(dict.fromkeys(_cause_of(name, value, *boots.get(name, (None, None)))
                                    for _, name, value in changed))
        if lifted and not causes:
            causes = ["configuration_change"]
        gate.submit_report(Report(
            root_cause_type=causes[0] if causes else "configuration_change",
            causal_factors=causes[1:4],
            affected_objects=[*(ObjectRef(kind="setting", name=name) for _, name, _ in changed),
                              *(ObjectRef(kind=kind, name=name)  # type: ignore[arg-type]
                                for kind, name in lifted)][:8],
            evidence=[Evidence(tool=ToolName.execute_sql, observation="the setting layers after the"
                               " resets", trace_seq=after["seq"])],
            actions=[Action(description=f"reset {name} of {layer} (was {value})",
                            tool=ToolName.execute_sql) for layer, name, value in changed][:10],
            verification="re-read every setting layer after the resets and a reload",
        ).model_dump(mode="json"))


SCRIPTED_AGENTS: tuple[ScriptedAgent, ...] = get_args(ScriptedAgent)


def scripted_agent(name: str, scenario: Scenario, remediation: str | None = None) -> Any:
    if name == "reference":
        return ReferenceAgent(scenario, remediation)
    if remediation is not None:
        raise ScriptedAgentError("--remediation applies to the reference agent only")
    if name == "decoy":
        return DecoyAgent(scenario)
    if name == "null":
        return NullAgent()
    if name == "sweep":
        return SweepAgent()
    if name == "reset":
        return ResetAgent()
    raise ScriptedAgentError(f"unknown agent {name!r}: use {', '.join(SCRIPTED_AGENTS)}")
