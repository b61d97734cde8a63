"""Scripted agents that prove a scenario honest: reference, decoy, null and sweep."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from psycopg import sql as pgsql

from dbabench.errors import BadInput
from dbabench.model.task import AgentTask
from dbabench.model.report import Action, Evidence, Report
from dbabench.model.scenario import Remediation, Scenario, ToolCall
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
            return await gate.call("execute_sql", {"sql": text})

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
            evidence=[Evidence(tool="execute_sql", observation="settings after the sweep",
                               trace_seq=after["seq"])],
            actions=[Action(description="reset every setting layer, ended stuck and blocking"
                                        " sessions, ANALYZE, VACUUM, cancelled long queries",
                            tool="execute_sql")],
            verification="re-read pg_settings after the sweep",
        ).model_dump(mode="json"))


SCRIPTED_AGENTS = ("reference", "decoy", "null", "sweep")


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
    raise ScriptedAgentError(f"unknown agent {name!r}: use {', '.join(SCRIPTED_AGENTS)}")
