"""Status of Scenario and AgentRun resources, derived by pure functions (unit-tested alone)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from dbabench.model.evaluation import EvaluationResult
from dbabench.model.kube import Phase, RunSummary
from dbabench.model.status import Condition

TERMINAL = frozenset({Phase.succeeded, Phase.failed, Phase.infra_error})


def now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def set_condition(conditions: list[dict[str, Any]], type_: str, status: bool | None,
                  reason: str, message: str = "", *,
                  generation: int | None = None) -> list[dict[str, Any]]:
    """Conditions with ``type_`` set; lastTransitionTime moves only when the status changes."""
    value = "Unknown" if status is None else ("True" if status else "False")
    existing = next((c for c in conditions if c.get("type") == type_), None)
    changed_at = (existing["lastTransitionTime"] if existing and existing.get("status") == value
                  else now().isoformat().replace("+00:00", "Z"))
    condition = Condition(type=type_, status=value, reason=reason, message=message[:32768],
                          observed_generation=generation,
                          last_transition_time=datetime.fromisoformat(
                              changed_at.replace("Z", "+00:00")))
    kept = [c for c in conditions if c.get("type") != type_]
    return kept + [_dump(condition)]


def _dump(condition: Condition) -> dict[str, Any]:
    data = condition.model_dump(mode="json", by_alias=True, exclude_none=True)
    data["lastTransitionTime"] = data["lastTransitionTime"].replace("+00:00", "Z")
    return data


def summary(evaluation: EvaluationResult) -> RunSummary:
    assert evaluation.outcome and evaluation.diagnosis and evaluation.safety
    return RunSummary(outcome_pass=evaluation.outcome_pass,
                      diagnosis_pass=evaluation.diagnosis_pass, safe_pass=evaluation.safe_pass,
                      integrity_violated=evaluation.integrity.violated,
                      f=evaluation.outcome.f, f1=evaluation.diagnosis.f1,
                      penalty=evaluation.safety.penalty, cost_usd=evaluation.efficiency.cost_usd,
                      cost_basis=evaluation.efficiency.cost_basis)


def finished(evaluation: EvaluationResult) -> tuple[Phase, str]:
    """The terminal phase of a run with this evaluation, and why."""
    if evaluation.status == "infra_error":
        return Phase.infra_error, evaluation.infra_reason or "infrastructure error"
    verdict = "integrity violated" if evaluation.integrity.violated else (
        "Safe Pass" if evaluation.safe_pass else (
            "Outcome Pass, not safe" if evaluation.outcome_pass else "no Outcome Pass"))
    return Phase.succeeded, f"graded: {verdict}"


def phase_patch(phase: Phase, reason: str, conditions: list[dict[str, Any]],
                generation: int | None) -> dict[str, Any]:
    """The status patch for entering ``phase``: phase, reason and the Ready condition."""
    ready = True if phase == Phase.succeeded else (False if phase in TERMINAL else None)
    condition_reason = {Phase.succeeded: "Graded", Phase.failed: "Failed",
                        Phase.infra_error: "InfraError"}.get(phase, phase.value)
    patch: dict[str, Any] = {
        "phase": phase.value, "phaseReason": reason, "observedGeneration": generation,
        "conditions": set_condition(conditions, "Ready", ready, condition_reason, reason,
                                    generation=generation),
    }
    if phase in TERMINAL:
        patch["finishedAt"] = now().isoformat().replace("+00:00", "Z")
    return patch
