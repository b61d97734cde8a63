"""Status of Scenario and AgentRun resources, derived by pure functions (unit-tested alone)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel

from dbabench.model.evaluation import EvaluationResult
from dbabench.model.kube import AgentRunStatus, Phase
from dbabench.model.status import Condition

TERMINAL = frozenset({Phase.succeeded, Phase.failed, Phase.infra_error})


def now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def patch(status: BaseModel) -> dict[str, Any]:
    """A status written as a merge patch: the fields given when ``status`` was made, in the
    resource's own spelling (the CRD is generated from the same model)."""
    return status.model_dump(mode="json", by_alias=True, exclude_unset=True)


def conditions_of(body: Mapping[str, Any]) -> list[Condition]:
    return [Condition.model_validate(c) for c in (body.get("status") or {}).get("conditions", [])]


def set_condition(conditions: list[Condition], type_: str, status: bool | None,
                  reason: str, message: str = "", *,
                  generation: int | None = None) -> list[Condition]:
    """Conditions with ``type_`` set; lastTransitionTime moves only when the status changes."""
    value: Literal["True", "False", "Unknown"] = (
        "Unknown" if status is None else ("True" if status else "False"))
    existing = next((c for c in conditions if c.type == type_), None)
    changed_at = (existing.last_transition_time if existing and existing.status == value
                  else now())
    condition = Condition(type=type_, status=value, reason=reason, message=message[:32768],
                          observed_generation=generation, last_transition_time=changed_at)
    return [c for c in conditions if c.type != type_] + [condition]


def finished(evaluation: EvaluationResult) -> tuple[Phase, str]:
    """The terminal phase of a run with this evaluation, and why."""
    if evaluation.status == "infra_error":
        return Phase.infra_error, evaluation.infra_reason or "infrastructure error"
    verdict = "integrity violated" if evaluation.integrity.violated else (
        "Safe Pass" if evaluation.safe_pass else (
            "Outcome Pass, not safe" if evaluation.outcome_pass else "no Outcome Pass"))
    return Phase.succeeded, f"graded: {verdict}"


def phase_status(phase: Phase, reason: str, conditions: list[Condition],
                 generation: int | None, **fields: Any) -> AgentRunStatus:
    """The AgentRun status of entering ``phase``: phase, reason, the Ready condition, and
    ``fields`` (started_at, evaluation, summary) where given."""
    ready = True if phase == Phase.succeeded else (False if phase in TERMINAL else None)
    condition_reason = {Phase.succeeded: "Graded", Phase.failed: "Failed",
                        Phase.infra_error: "InfraError"}.get(phase, phase.value)
    if phase in TERMINAL:
        fields["finished_at"] = now()
    return AgentRunStatus(
        phase=phase, phase_reason=reason, observed_generation=generation,
        conditions=set_condition(conditions, "Ready", ready, condition_reason, reason,
                                 generation=generation), **fields)
