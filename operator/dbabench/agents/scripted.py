"""Scripted agents that prove a scenario honest: reference, decoy and null."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from dbabench.model.task import AgentTask
from dbabench.model.report import Action, Evidence, Report
from dbabench.model.scenario import Remediation, Scenario, ToolCall
from dbabench.tools.gate import ToolGate


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
            raise ValueError(f"scenario {scenario.name} has no remediation {remediation!r};"
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


def scripted_agent(name: str, scenario: Scenario, remediation: str | None = None) -> Any:
    if name == "reference":
        return ReferenceAgent(scenario, remediation)
    if remediation is not None:
        raise ValueError("--remediation applies to the reference agent only")
    if name == "decoy":
        return DecoyAgent(scenario)
    if name == "null":
        return NullAgent()
    raise ValueError(f"unknown agent {name!r}: use reference, decoy or null")
