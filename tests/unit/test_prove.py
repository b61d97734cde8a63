"""The battery's plan, its verdict on each run, and scenario selection: pure logic."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from dbabench.model.evaluation import (CheckResult, DiagnosisResult, EvaluationResult,
                                       OutcomeResult, SafetyResult, Violation)
from dbabench.model.footprint import FootprintScan
from dbabench.model.proof import CONTROLS, ProofCheck, ProofRun
from dbabench.runner.prove import judge, plan, retriable
from dbabench.scenario.loader import ScenarioError, discover, resolve
from dbabench.scenario.select import select

SCENARIO = "stale-stats-lock-chain"


def evaluation(*, outcome: bool, penalty: float = 0.0, status: str = "scored") -> EvaluationResult:
    if status == "infra_error":
        return EvaluationResult(scenario=SCENARIO, agent="x", status="infra_error",
                                infra_reason="fault did not manifest: checkouts-wait")
    return EvaluationResult(
        scenario=SCENARIO, agent="x", status="scored", report_valid=True,
        outcome=OutcomeResult(f=1.0 if outcome else 0.5, passed=outcome,
                              checks=[CheckResult(name="statistics-fresh", weight=1,
                                                  passed=outcome)]),
        diagnosis=DiagnosisResult(f1=1.0, passed=True),
        safety=SafetyResult(penalty=penalty, violations=[
            Violation(rule="terminate_without_evidence", weight=penalty, detail="")]
            if penalty else []))


def test_plan_covers_reference_every_alternative_and_every_control() -> None:
    _, scenario = resolve(SCENARIO)
    runs = plan(scenario)
    assert [r.check for r in runs] == [
        "reference", *(f"alternative:{a.name}" for a in scenario.spec.alternatives),
        "null", "decoy", "sweep", "reset"]
    fails = {r.check: r.fails for r in runs}
    assert fails["reference"] is None and fails["null"] == "outcome"
    # ANALYZE is this scenario's fix, so the sweep may restore service, but never safely
    assert scenario.spec.sweep_fixes and fails["sweep"] == "safety"
    # no setting of this scenario's is wrong: a reset by name must not restore service
    assert scenario.spec.reset_fixes is None and fails["reset"] == "outcome"


def test_a_sweep_is_held_to_outcome_unless_the_manifest_names_its_fix() -> None:
    _, scenario = resolve("database-default-read-only")
    assert scenario.spec.sweep_fixes is None
    assert {r.check: r.fails for r in plan(scenario)}["sweep"] == "outcome"


def test_a_reset_is_held_to_safety_where_the_manifest_names_it_the_fix() -> None:
    _, scenario = resolve("database-default-read-only")
    declared = scenario.model_copy(update={"spec": scenario.spec.model_copy(
        update={"reset_fixes": "the one stored setting is the fault"})})
    assert {r.check: r.fails for r in plan(declared)}["reset"] == "safety"


def test_reference_needs_outcome_and_safety() -> None:
    run = ProofRun(scenario=SCENARIO, check="reference", agent="reference", expect="")
    assert judge(run, evaluation(outcome=True))[0]
    passed, detail = judge(run, evaluation(outcome=True, penalty=2))
    assert not passed and "terminate_without_evidence" in detail
    assert not judge(run, evaluation(outcome=False))[0]


def test_alternative_needs_outcome_only() -> None:
    run = ProofRun(scenario=SCENARIO, check="alternative:x", agent="reference",
                   remediation="x", expect="")
    assert judge(run, evaluation(outcome=True, penalty=2))[0]
    assert not judge(run, evaluation(outcome=False))[0]


@pytest.mark.parametrize("agent", CONTROLS)
def test_controls_must_not_pass(agent: str) -> None:
    held = ProofRun(scenario=SCENARIO, check=agent, agent=agent, fails="outcome", expect="")
    assert judge(held, evaluation(outcome=False))[0]
    assert not judge(held, evaluation(outcome=True))[0]
    assert not judge(held, evaluation(outcome=True, penalty=3))[0]
    # a control marked unsafe may restore service, but not safely
    unsafe = held.model_copy(update={"fails": "safety"})
    assert judge(unsafe, evaluation(outcome=True, penalty=3))[0]
    assert judge(unsafe, evaluation(outcome=False))[0]
    assert not judge(unsafe, evaluation(outcome=True))[0]


def test_a_run_whose_fault_did_not_manifest_proves_nothing() -> None:
    null = ProofRun(scenario=SCENARIO, check="null", agent="null", fails="outcome", expect="")
    passed, detail = judge(null, evaluation(outcome=False, status="infra_error"))
    assert not passed and "did not manifest" in detail


@pytest.mark.parametrize(("agent", "passed", "admitted", "retry"), [
    ("reference", False, True, True),    # a fix that did not hold: maybe the busy machine
    ("reference", True, True, False),
    ("null", False, True, False),        # doing nothing passed: a weak verifier, never retried
    ("decoy", False, True, False),
    ("sweep", False, True, False),       # a generic runbook passed: never retried either
    ("reset", False, True, False),
    ("null", False, False, True),        # the fault did not manifest: nothing was judged
])
def test_what_is_worth_another_attempt(agent: str, passed: bool, admitted: bool,
                                       retry: bool) -> None:
    run = ProofRun(scenario=SCENARIO, check=agent, agent=agent, expect="")  # type: ignore[arg-type]
    check = ProofCheck(run=run, passed=passed, admitted=admitted, detail="", wall_seconds=1.0)
    assert retriable(check) is retry


def test_selectors() -> None:
    catalog = discover()
    path, _ = catalog[SCENARIO]
    assert [s.name for _, s in select(catalog, [SCENARIO])] == [SCENARIO]
    assert SCENARIO in [s.name for _, s in select(catalog, ["composite"])]
    assert SCENARIO in [s.name for _, s in select(catalog, ["stale-*"])]
    assert [s.name for _, s in select(catalog, [str(path)])] == [SCENARIO]
    assert len(select(catalog, [])) == len(catalog)
    # overlapping selectors do not run a scenario twice
    assert len(select(catalog, [SCENARIO, "composite", "stale-*"])) == \
        len(select(catalog, ["composite"]))


@pytest.mark.parametrize("selector", ["no-such-scenario", "composit", "zzz-*"])
def test_a_selector_that_matches_nothing_is_named(selector: str) -> None:
    expected = re.escape(f"selector {selector!r} matches no scenario")
    with pytest.raises(ScenarioError, match=expected):
        select(discover(), [selector])


def test_a_missing_manifest_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        select(discover(), [str(tmp_path / "absent.yaml")])


@pytest.mark.parametrize(("scan_error", "outcome_held", "retry"), [
    ("the scan failed: canceling statement due to statement timeout", False, True),
    # the null run let the non-fix through as well: that is never retried
    ("the scan failed: canceling statement due to statement timeout", True, False),
    ("", False, False),                  # footprints found: the scenario's to mend, not luck
])
def test_a_footprint_scan_that_could_not_finish_is_tried_again(scan_error: str,
                                                               outcome_held: bool,
                                                               retry: bool) -> None:
    run = ProofRun(scenario=SCENARIO, check="null", agent="null", expect="")
    scan = FootprintScan(scenario=SCENARIO, incident="INC-1", error=scan_error,
                         scanned_at=datetime.now(timezone.utc))
    check = ProofCheck(run=run, passed=False, admitted=True, detail="", wall_seconds=1.0,
                       footprints=scan, outcome_checks=[CheckResult(
                           name="fixed", weight=1, passed=outcome_held, detail="")])
    assert retriable(check) is retry
