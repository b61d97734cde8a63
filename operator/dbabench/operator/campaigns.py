"""Campaigns: the AgentRuns of a comparison, created a few at a time, tallied per agent.

Every run of a campaign has a name fixed by its position (scenario x agent x repeat), so a
restarted operator finds the runs it already created instead of adding more, and the tally is
always recomputed from the runs' own status: nothing lives only in the operator's memory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from dbabench.model.crd import GROUP
from dbabench.runner.campaign import cells
from dbabench.model.evaluation import combined_basis
from dbabench.model.kube import (AgentRun, AgentRunSpec, AgentSpec, AgentTally, CampaignSpec,
                                 CampaignStatus, ObjectMeta, OwnerReference, Phase, wire)

CAMPAIGN_LABEL = f"{GROUP}/campaign"
TERMINAL = {Phase.succeeded.value, Phase.failed.value, Phase.infra_error.value}
# Label values stop at 63 characters; a run name is one.
MAX_PREFIX = 55


@dataclass(frozen=True)
class PlannedRun:
    name: str
    scenario: str
    agent: AgentSpec
    repeat: int


def _prefix(campaign: str) -> str:
    if len(campaign) <= MAX_PREFIX:
        return campaign
    digest = hashlib.sha256(campaign.encode()).hexdigest()[:6]
    return f"{campaign[:MAX_PREFIX - 7]}-{digest}"


def plan(campaign: str, spec: CampaignSpec) -> list[PlannedRun]:
    """The campaign's cells in the order they start (as locally), each named by its place."""
    return [PlannedRun(f"{_prefix(campaign)}-{i:04d}", c.scenario, c.agent, c.repeat)
            for i, c in enumerate(cells(spec))]


def agentrun_body(run: PlannedRun, campaign: str, spec: CampaignSpec,
                  owner: OwnerReference) -> dict[str, Any]:
    return wire(AgentRun(
        api_version=f"{GROUP}/v1alpha1", kind="AgentRun",
        metadata=ObjectMeta(name=run.name, owner_references=[owner],
                            labels={CAMPAIGN_LABEL: campaign}),
        spec=AgentRunSpec(scenario=run.scenario, agent=run.agent, budget=spec.budget)))


def to_start(planned: list[PlannedRun], existing: dict[str, dict[str, Any]],
             max_parallel: int) -> list[PlannedRun]:
    """The next runs to create: in plan order, while fewer than ``max_parallel`` are open."""
    open_runs = sum(1 for body in existing.values()
                    if (body.get("status") or {}).get("phase") not in TERMINAL)
    missing = [p for p in planned if p.name not in existing]
    return missing[:max(0, max_parallel - open_runs)]


def tally(planned: list[PlannedRun], existing: dict[str, dict[str, Any]]) -> CampaignStatus:
    agents: dict[str, AgentTally] = {}
    for run in planned:
        t = agents.setdefault(run.agent.label, AgentTally(agent=run.agent.label))
        t.runs += 1
        status = (existing.get(run.name) or {}).get("status") or {}
        if status.get("phase") not in TERMINAL:
            continue
        t.finished += 1
        summary = status.get("summary")
        if status["phase"] == Phase.infra_error.value or summary is None:
            t.infra_errors += status["phase"] == Phase.infra_error.value
            continue
        t.scored += 1
        t.integrity_violated += bool(summary.get("integrityViolated"))
        t.outcome_pass += bool(summary["outcomePass"])
        t.diagnosis_pass += bool(summary["diagnosisPass"])
        t.safe_pass += bool(summary["safePass"])
        t.cost_usd = round(t.cost_usd + float(summary.get("costUsd", 0.0)), 6)
        t.cost_basis = combined_basis((t.cost_basis, summary.get("costBasis") or "none"))
    for t in agents.values():
        t.safe_pass_rate = round(t.safe_pass / t.scored, 4) if t.scored else None
    finished = sum(t.finished for t in agents.values())
    phase = "Succeeded" if finished == len(planned) else ("Running" if existing else "Pending")
    return CampaignStatus(phase=phase, phase_reason=f"{finished}/{len(planned)} runs finished",
                          runs=len(planned), finished=finished, agents=list(agents.values()))
