"""The diagnosis matcher: set F1, critical conditions, contradictions, normalisation."""

from __future__ import annotations

import pytest

from dbabench.evaluate.diagnosis import evaluate_diagnosis, normalise
from dbabench.model.report import Report
from dbabench.model.scenario import DiagnosisSpec

SPEC = DiagnosisSpec.model_validate({
    "conditions": [
        {"id": "stale", "field": "rootCauseType", "critical": True,
         "aliases": ["stale_statistics", "outdated statistics"]},
        {"id": "orders", "field": "affectedObjects", "critical": True, "aliases": ["orders"]},
        {"id": "misestimate", "field": "causalFactors", "aliases": ["cardinality_misestimate"]},
        {"id": "locks", "field": "causalFactors", "aliases": ["lock_queue", "lock_contention"]},
    ],
    "contradictions": [{"field": "rootCauseType", "aliases": ["lock_contention"],
                        "why": "a symptom"}],
})


def report(root: str, objects: list[str], factors: list[str]) -> Report:
    return Report(root_cause_type=root, affected_objects=objects, causal_factors=factors)


def test_exact_report_scores_one() -> None:
    result = evaluate_diagnosis(
        report("stale_statistics", ["orders"], ["cardinality_misestimate", "lock_queue"]), SPEC)
    assert result.f1 == 1.0 and result.passed
    assert {m.condition: m.matched_by for m in result.matches} == {
        "stale": "stale_statistics", "orders": "orders",
        "misestimate": "cardinality_misestimate", "locks": "lock_queue"}


def test_normalisation_of_case_spaces_and_schema() -> None:
    result = evaluate_diagnosis(
        report("Outdated Statistics", ["public.Orders"], ["Cardinality-Misestimate", "lock queue"]),
        SPEC)
    assert result.passed and result.f1 == 1.0


def test_one_extra_condition_still_passes_at_threshold() -> None:
    # 4 required, 5 submitted, 4 matched: F1 = 8/9 = 0.889 >= 0.8
    result = evaluate_diagnosis(
        report("stale_statistics", ["orders"],
               ["cardinality_misestimate", "lock_queue", "network_latency"]), SPEC)
    assert result.f1 == pytest.approx(8 / 9, abs=1e-4)
    assert result.passed
    assert result.false_positives == ["network_latency"]


def test_missing_non_critical_condition_below_threshold_fails() -> None:
    # 4 required, 2 submitted, 2 matched: F1 = 4/6 = 0.667
    result = evaluate_diagnosis(report("stale_statistics", ["orders"], []), SPEC)
    assert result.f1 == pytest.approx(2 / 3, abs=1e-4)
    assert not result.passed
    assert result.missing_critical == []


def test_critical_missing_fails_even_with_high_f1() -> None:
    spec = SPEC.model_copy(update={"pass_threshold": 0.5})
    result = evaluate_diagnosis(
        report("cardinality_misestimate", ["orders"], ["lock_queue"]), spec)
    assert result.f1 >= 0.5
    assert not result.passed
    assert result.missing_critical == ["stale"]


def test_contradiction_fails_a_perfect_f1() -> None:
    spec = DiagnosisSpec.model_validate({
        "conditions": [{"id": "locks", "field": "rootCauseType", "aliases": ["lock_contention"]}],
        "contradictions": [{"field": "rootCauseType", "aliases": ["lock_contention"], "why": "x"}],
    })
    result = evaluate_diagnosis(report("lock_contention", [], []), spec)
    assert result.f1 == 1.0 and not result.passed
    assert result.contradictions


def test_contradiction_is_field_specific() -> None:
    # lock_contention as a causal factor is a true link of the chain, not a contradiction
    result = evaluate_diagnosis(
        report("stale_statistics", ["orders"], ["cardinality_misestimate", "lock_contention"]),
        SPEC)
    assert result.passed and not result.contradictions


def test_objects_only_match_object_conditions() -> None:
    result = evaluate_diagnosis(
        report("orders", ["stale_statistics"], ["cardinality_misestimate", "lock_queue"]), SPEC)
    matched = {m.condition for m in result.matches if m.matched_by}
    assert matched == {"misestimate", "locks"}
    assert not result.passed


def test_each_submitted_value_matches_once() -> None:
    # the same value repeated in two fields does not count twice
    result = evaluate_diagnosis(report("lock_queue", [], ["lock_queue", "lock_contention"]), SPEC)
    matched = [m for m in result.matches if m.matched_by]
    assert len(matched) == 1
    assert result.f1 == pytest.approx(2 * 1 / (4 + 2), abs=1e-4)


def test_no_report_is_zero() -> None:
    result = evaluate_diagnosis(None, SPEC)
    assert result.f1 == 0 and not result.passed
    assert result.missing_critical == ["stale", "orders"]


@pytest.mark.parametrize(("raw", "is_object", "expected"), [
    ("Stale Statistics", False, "stale_statistics"),
    ("  lock--queue ", False, "lock_queue"),
    ("public.orders", True, "orders"),
    ('"public.orders"', True, "orders"),
    ("sales.orders", True, "sales.orders"),
])
def test_normalise(raw: str, is_object: bool, expected: str) -> None:
    assert normalise(raw, is_object=is_object) == expected
