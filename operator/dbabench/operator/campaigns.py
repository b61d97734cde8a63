"""Campaigns: the AgentRuns of a comparison, created a few at a time, tallied per agent.

Every run of a campaign has a name fixed by its position (scenario x agent x repeat), so a
restarted operator finds the runs it already created instead of adding more, and the tally is
always recomputed from the runs' own status: nothing lives only in the operator's memory.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dbabench.model.campaign import CellResult
from dbabench.env.kube import CAMPAIGN_LABEL
from dbabench.model.crd import GROUP
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.scenario import Scenario
from dbabench.records import campaign as files
from dbabench.runner.campaign import Cell, cell_result, cells, digest, record
from dbabench.results.leaderboard import board, markdown
from dbabench.scenario import difficulty
from dbabench.model.evaluation import combined_basis
from dbabench.model.kube import (AgentRun, AgentRunSpec, AgentSpec, AgentTally, CampaignSpec,
                                 CampaignStatus, ObjectMeta, OwnerReference, Phase, wire)

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


def _capped(spec: CampaignSpec, cost: float) -> bool:
    return spec.max_cost_usd is not None and cost >= spec.max_cost_usd


def to_start(planned: list[PlannedRun], existing: dict[str, dict[str, Any]],
             spec: CampaignSpec) -> list[PlannedRun]:
    """The next runs to create: in plan order, while fewer than ``maxParallel`` are open and
    the finished runs' cost is under the campaign's cap."""
    if _capped(spec, tally(planned, existing, spec).cost_usd):
        return []
    max_parallel = spec.max_parallel
    open_runs = sum(1 for body in existing.values()
                    if (body.get("status") or {}).get("phase") not in TERMINAL)
    missing = [p for p in planned if p.name not in existing]
    return missing[:max(0, max_parallel - open_runs)]


def tally(planned: list[PlannedRun], existing: dict[str, dict[str, Any]],
          spec: CampaignSpec) -> CampaignStatus:
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
    cost = round(sum(t.cost_usd for t in agents.values()), 6)
    not_started = (sum(1 for p in planned if p.name not in existing)
                   if _capped(spec, cost) else 0)
    reason = f"{finished}/{len(planned)} runs finished"
    if finished == len(planned):
        phase = "Succeeded"
    elif not_started and finished == len(existing):
        phase = "Capped"
        reason += (f"; the cost cap of ${spec.max_cost_usd:g} was reached (${cost:g}):"
                   f" {not_started} not started")
    else:
        phase = "Running" if existing else "Pending"
    return CampaignStatus(phase=phase, phase_reason=reason, runs=len(planned),
                          finished=finished, not_started=not_started, cost_usd=cost,
                          agents=list(agents.values()))


def finished_cells(planned: list[PlannedRun], existing: dict[str, dict[str, Any]],
                   evaluations: dict[str, EvaluationResult], scenarios: dict[str, Scenario],
                   stored: dict[str, difficulty.Difficulty]) -> list[CellResult]:
    """The campaign's finished runs as the results lines a local campaign writes: a run
    without an Evaluation (refused, or the harness failed) is a cell without a fair run.
    The report and the trace stay in the run's pods: whether it claimed a verified fix, or
    a model's reply was cut, is not known here."""
    found = []
    for run in planned:
        status = (existing.get(run.name) or {}).get("status") or {}
        if status.get("phase") not in TERMINAL or run.scenario not in scenarios:
            continue
        found.append(cell_result(
            Cell(run.scenario, run.agent, run.repeat), scenarios[run.scenario], stored,
            evaluations.get(run.name), reason=status.get("phaseReason") or status["phase"],
            unscored="infra_error" if status["phase"] == Phase.infra_error.value
            else "harness_error",
            finished_at=_when(status.get("finishedAt"))))
    return found


def not_started(planned: list[PlannedRun], existing: dict[str, dict[str, Any]],
                spec: CampaignSpec) -> list[dict[str, Any]]:
    """The cells the cost cap kept from starting, as a local campaign's events name them."""
    if not tally(planned, existing, spec).not_started:
        return []
    return [files.event_record(files.NOT_STARTED, agent=p.agent.label, scenario=p.scenario,
                               repeat=p.repeat, reason=f"the campaign's cost cap of"
                                                       f" ${spec.max_cost_usd:g} was reached")
            for p in planned if p.name not in existing]


@dataclass(frozen=True)
class Tables:
    leaderboard: str
    records: dict[str, str]
    """The campaign directory's records by file name (campaign_files.RECORD_FILES)."""


def tables(campaign: str, spec: CampaignSpec, created_at: str | None,
           scenario_bodies: dict[str, dict[str, Any]], scenarios: dict[str, Scenario],
           found: list[CellResult], skipped: list[dict[str, Any]]) -> Tables:
    """leaderboard.md of the campaign's finished runs, as ``dbabench campaign`` writes it, and
    the records it is built from, as a local campaign keeps them."""
    digests = {s: digest(json.dumps(body.get("spec"), sort_keys=True).encode())
               for s, body in scenario_bodies.items()}
    made = record(campaign, spec, scenarios, {s: digests.get(s, "") for s in spec.scenarios},
                  jobs=spec.max_parallel, max_cost_usd=spec.max_cost_usd,
                  command=["dbabench", "operator"], cwd="", created_at=_when(created_at))
    return Tables(markdown(board(made, found, skipped)), {
        files.CAMPAIGN_FILE: made.model_dump_json(indent=1),
        files.RESULTS_FILE: "".join(files.line(r.model_dump(mode="json")) for r in found),
        files.EVENTS_FILE: "".join(files.line(e) for e in skipped)})


def _when(stamp: str | None) -> datetime | None:
    """A timestamp as the API server writes it (RFC 3339)."""
    return None if stamp is None else datetime.fromisoformat(stamp)
