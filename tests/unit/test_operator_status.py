"""The operator's status derivation: pure functions, no cluster."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from dbabench.model.evaluation import (DiagnosisResult, EfficiencyResult, EvaluationResult,
                                       OutcomeResult, SafetyResult)
from dbabench.model.kube import Phase, RunSummary
from dbabench.operator import status as st


def evaluation(outcome: bool, penalty: float) -> EvaluationResult:
    return EvaluationResult(
        scenario="s", agent="a", status="scored", report_valid=True,
        outcome=OutcomeResult(f=1.0 if outcome else 0.5, passed=outcome),
        diagnosis=DiagnosisResult(f1=0.9, passed=True),
        safety=SafetyResult(penalty=penalty), efficiency=EfficiencyResult(cost_usd=0.25, cost_basis="metered"))


def test_condition_keeps_transition_time_while_status_holds() -> None:
    first = st.set_condition([], "Ready", None, "Provisioning")
    again = st.set_condition(first, "Ready", None, "Admitting", "checking")
    assert len(again) == 1
    assert again[0].last_transition_time == first[0].last_transition_time
    assert again[0].reason == "Admitting" and again[0].status == "Unknown"


def test_condition_moves_transition_time_on_change(monkeypatch: pytest.MonkeyPatch) -> None:
    first = st.set_condition([], "Ready", None, "Provisioning")
    monkeypatch.setattr(st, "now", lambda: datetime(2030, 1, 1, tzinfo=timezone.utc))
    changed = st.set_condition(first, "Ready", True, "Graded")
    assert changed[0].last_transition_time == datetime(2030, 1, 1, tzinfo=timezone.utc)
    assert changed[0].status == "True"


def test_other_conditions_are_kept() -> None:
    both = st.set_condition(st.set_condition([], "Valid", True, "Validated"), "Ready", False, "X")
    assert {c.type for c in both} == {"Valid", "Ready"}


def test_conditions_read_back_from_a_body_keep_their_time() -> None:
    written = st.patch(st.phase_status(Phase.running, "running", [], 3))
    (read,) = st.conditions_of({"status": written})
    assert written["conditions"][0]["lastTransitionTime"].endswith("Z")
    again = st.set_condition([read], "Ready", None, "Evaluating")
    assert again[0].last_transition_time == read.last_transition_time


def test_phase_status_terminal_sets_finished_and_ready() -> None:
    patch = st.patch(st.phase_status(Phase.succeeded, "graded: Safe Pass", [], 3,
                                     evaluation="r1"))
    assert patch["phase"] == "Succeeded" and patch["finishedAt"].endswith("Z")
    assert patch["observedGeneration"] == 3 and patch["evaluation"] == "r1"
    ready = patch["conditions"][0]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "True", "Graded")
    # a merge patch: what was not given is not written (no summary, no startedAt)
    assert "summary" not in patch and "startedAt" not in patch
    running = st.patch(st.phase_status(Phase.running, "running", [], 3))
    assert "finishedAt" not in running and running["conditions"][0]["status"] == "Unknown"
    infra = st.patch(st.phase_status(Phase.infra_error, "SnapshotNotReady: x", [], 3))
    assert infra["conditions"][0]["status"] == "False"
    assert infra["conditions"][0]["reason"] == "InfraError"


def test_finished_and_summary() -> None:
    safe = evaluation(True, 0)
    assert st.finished(safe) == (Phase.succeeded, "graded: Safe Pass")
    assert RunSummary.of(safe).safe_pass and RunSummary.of(safe).cost_usd == 0.25
    assert RunSummary.of(safe).cost_basis == "metered"
    assert st.finished(evaluation(True, 2))[1] == "graded: Outcome Pass, not safe"
    assert st.finished(evaluation(False, 0))[1] == "graded: no Outcome Pass"
    infra = EvaluationResult(scenario="s", agent="a", status="infra_error",
                             infra_reason="fault did not manifest: x")
    assert st.finished(infra) == (Phase.infra_error, "fault did not manifest: x")
