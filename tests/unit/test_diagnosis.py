"""The diagnosis matcher's rules: set F1 over vocabulary ids and object references, critical
conditions, alsoTrue, what is true of the incident, the tolerance for extra causes and
objects, generality, contradictions wherever a cause is filed."""

from __future__ import annotations

from typing import Any

import pytest

from dbabench.evaluate.diagnosis import (
    TOLERATED_EXTRA_CAUSES,
    TOLERATED_EXTRA_OBJECTS,
    evaluate_diagnosis,
)
from dbabench.evaluate.incident import incident_of
from dbabench.model.report import ObjectRef, Report
from dbabench.model.scenario import DiagnosisSpec

SPEC = DiagnosisSpec.model_validate({
    "conditions": [
        {"id": "stale", "causes": ["stale_statistics"], "critical": True},
        {"id": "orders", "objects": [{"kind": "table", "name": "public.orders"}],
         "critical": True},
    ],
    "alsoTrue": {"causes": ["cardinality_misestimate", "lock_contention"],
                 "objects": [{"kind": "table", "name": "merchants"}]},
    "contradictions": [{"causes": ["lock_contention"], "why": "a symptom"}],
})


def obj(kind: str, name: str) -> dict[str, str]:
    return {"kind": kind, "name": name}


def report(root: str, objects: list[dict[str, str]] = (), factors: list[str] = ()) -> Report:
    return Report(root_cause_type=root, affected_objects=[ObjectRef(**o) for o in objects],
                  causal_factors=list(factors))


def spec(**diagnosis: Any) -> DiagnosisSpec:
    return DiagnosisSpec.model_validate(diagnosis)


def test_the_conditions_and_nothing_else_score_one() -> None:
    result = evaluate_diagnosis(report("stale_statistics", [obj("table", "orders")]), SPEC)
    assert result.f1 == 1.0 and result.passed
    assert {m.condition: m.matched_by for m in result.matches} == {
        "stale": "cause stale_statistics", "orders": "table orders"}


def test_synonyms_spellings_and_postgres_name_resolution() -> None:
    result = evaluate_diagnosis(
        report("Outdated Statistics", [obj("table", '"orders"')]), SPEC)
    assert result.passed, result.reason
    assert evaluate_diagnosis(report("stale-stats", [obj("table", "PUBLIC.Orders")]), SPEC).passed


def test_true_extras_are_neutral() -> None:
    result = evaluate_diagnosis(
        report("stale_statistics", [obj("table", "orders"), obj("table", "public.merchants")],
               ["cardinality_misestimate", "blocking_session"]), SPEC)
    # blocking_session is within lock_contention, which alsoTrue names
    assert result.f1 == 1.0 and result.passed
    assert set(result.neutral) == {"table public.merchants", "cause cardinality_misestimate",
                                   "cause blocking_session"}


def test_a_few_unlisted_objects_are_tolerated_then_they_count() -> None:
    extra = [obj("index", f"idx_{i}") for i in range(TOLERATED_EXTRA_OBJECTS + 2)]
    result = evaluate_diagnosis(report("stale_statistics", [obj("table", "orders"), *extra]),
                                SPEC)
    assert len(result.neutral) == TOLERATED_EXTRA_OBJECTS
    assert len(result.false_positives) == 2
    # 2 matched, 2 counted against: F1 = 4 / (2 + 4)
    assert result.f1 == pytest.approx(4 / 6, abs=1e-4) and not result.passed


def test_a_few_unrelated_causes_are_tolerated_then_they_count() -> None:
    unrelated = ["missing_index", "disk_full", "work_mem_too_low", "plan_regression"]
    assert TOLERATED_EXTRA_CAUSES == 2
    result = evaluate_diagnosis(
        report("stale_statistics", [obj("table", "orders")], unrelated[:2]), SPEC)
    assert result.passed and result.neutral == ["cause missing_index", "cause disk_full"]
    result = evaluate_diagnosis(
        report("stale_statistics", [obj("table", "orders")], unrelated), SPEC)
    assert result.false_positives == ["cause work_mem_too_low", "cause plan_regression"]
    assert result.f1 == pytest.approx(4 / 6, abs=1e-4) and not result.passed


def test_causes_on_a_conditions_lineage_and_symptoms_are_never_counted() -> None:
    # a more general type of the condition's cause, a more specific one of another's, and
    # what the incident shows (the vocabulary marks symptoms)
    lineage = spec(conditions=[
        {"id": "horizon", "causes": ["vacuum_defer_cleanup_age_set"], "critical": True},
        {"id": "blind", "causes": ["autovacuum_blind"]}])
    result = evaluate_diagnosis(report("vacuum_defer_cleanup_age_set", [], [
        "xmin_horizon_held", "autovacuum_blind", "table_bloat", "temp_file_spill",
        "missing_index", "disk_full"]), lineage)
    assert result.passed and result.false_positives == [], result


def test_a_stuffed_report_fails() -> None:
    every_cause = ["missing_index", "table_bloat", "lock_timeout_too_low", "disk_full",
                   "plan_regression", "idle_in_transaction", "work_mem_too_low"]
    result = evaluate_diagnosis(
        report("stale_statistics", [obj("table", "orders")], every_cause), SPEC)
    # table_bloat is a symptom, two of the rest are tolerated, four count
    assert len(result.false_positives) == 4
    assert not result.passed and result.f1 == pytest.approx(0.5)


def test_critical_missing_fails_even_with_a_perfect_f1() -> None:
    result = evaluate_diagnosis(report("stale_statistics", [obj("table", "customers")]),
                                SPEC.model_copy(update={"pass_threshold": 0.1}))
    assert result.missing_critical == ["orders"] and not result.passed


def test_the_right_cause_on_the_wrong_object_fails() -> None:
    result = evaluate_diagnosis(report("stale_statistics", [obj("table", "merchants")]), SPEC)
    assert not result.passed and result.missing_critical == ["orders"]


def test_a_cause_matches_as_root_or_as_factor() -> None:
    result = evaluate_diagnosis(
        report("cardinality_misestimate", [obj("table", "orders")], ["stale_statistics"]), SPEC)
    assert result.passed, result.reason


def test_a_more_specific_cause_matches_a_general_condition_not_the_reverse() -> None:
    general = spec(conditions=[{"id": "t", "causes": ["work_mem_too_low"], "critical": True}])
    assert evaluate_diagnosis(report("database_work_mem_too_low"), general).passed
    specific = spec(conditions=[{"id": "t", "causes": ["database_work_mem_too_low"],
                                 "critical": True}])
    assert not evaluate_diagnosis(report("work_mem_too_low"), specific).passed


def test_contradiction_is_of_the_root_cause_and_its_children() -> None:
    result = evaluate_diagnosis(
        report("blocking_session", [obj("table", "orders")], ["stale_statistics"]), SPEC)
    assert not result.passed and result.contradictions == ["root cause blocking_session: a symptom"]
    # as a factor, the same cause is true of the incident: alsoTrue says so
    assert evaluate_diagnosis(
        report("stale_statistics", [obj("table", "orders")], ["lock_contention"]), SPEC).passed


def test_a_contradiction_not_true_of_the_incident_fails_as_a_factor_too() -> None:
    ruled_out = SPEC.model_copy(update={"contradictions": [
        *SPEC.contradictions, *spec(conditions=SPEC.model_dump()["conditions"], contradictions=[
            {"causes": ["disk_full"], "why": "the disk has room"}]).contradictions]})
    result = evaluate_diagnosis(
        report("stale_statistics", [obj("table", "orders")], ["disk_full"]), ruled_out)
    assert not result.passed and result.contradictions == ["factor disk_full: the disk has room"]


def test_objects_that_are_part_of_the_incident_are_never_counted() -> None:
    from dbabench.scenario.loader import resolve
    scenario = resolve("util-library-shadows-review-routing")[1].spec
    named = [obj("function", "public.orders_route()"), obj("function", "util.initial_status"),
             obj("trigger", "orders_route")]
    true = [obj("table", "risk.merchant_review"), obj("role", "app"),
            obj("setting", "search_path"), obj("schema", "util"), obj("table", "orders")]
    made_up = [obj("table", "no_such_table"), obj("schema", "nowhere"), obj("role", "ghost")]
    result = evaluate_diagnosis(report("search_path_function_shadowing", named + true,
                                       ["role_search_path_change"]), scenario.diagnosis,
                                incident_of(scenario))
    assert result.passed and result.false_positives == [], result
    result = evaluate_diagnosis(report("search_path_function_shadowing", named + made_up,
                                       ["role_search_path_change"]), scenario.diagnosis,
                                incident_of(scenario))
    # two unlisted objects are tolerated, the third is counted
    assert result.false_positives == ["role ghost"]


def test_a_contradicted_object_fails_wherever_it_is_named() -> None:
    slots = spec(conditions=[
        {"id": "slot", "causes": ["abandoned_replication_slot"], "critical": True},
        {"id": "name", "objects": [obj("replication_slot", "replica_dr_old")], "critical": True}],
        contradictions=[{"objects": [obj("replication_slot", "cdc_orders")],
                         "why": "the CDC slot is in use"}])
    result = evaluate_diagnosis(report("abandoned_replication_slot", [
        obj("replication_slot", "replica_dr_old"), obj("replication_slot", "cdc_orders")]), slots)
    assert not result.passed and result.contradictions


def test_each_submitted_value_meets_one_condition() -> None:
    twice = spec(conditions=[
        {"id": "a", "causes": ["idle_in_transaction"], "critical": True},
        {"id": "b", "causes": ["long_running_transaction"]}])
    result = evaluate_diagnosis(report("idle_in_transaction"), twice)
    assert [m.matched_by for m in result.matches] == ["cause idle_in_transaction", None]


def test_unknown_causes_of_an_old_report_count_against_it() -> None:
    old = Report.model_construct(root_cause_type="stale_statistics", causal_factors=["made_up"],
                                 affected_objects=[ObjectRef(kind="table", name="orders")])
    result = evaluate_diagnosis(old, SPEC)
    # not a type at all: never within the tolerance for unlisted ones
    assert result.false_positives == ["cause made_up"]


def test_no_report_is_zero() -> None:
    result = evaluate_diagnosis(None, SPEC)
    assert result.f1 == 0.0 and not result.passed
    assert result.missing_critical == ["stale", "orders"]


@pytest.mark.parametrize("condition, submitted, same", [
    (obj("table", "public.orders"), obj("table", "orders"), True),
    (obj("table", "public.orders"), obj("table", '"orders"'), True),
    (obj("table", "public.orders"), obj("table", '"Orders"'), False),
    (obj("table", "public.orders"), obj("table", "audit.orders"), False),
    (obj("table", "public.orders"), obj("column", "orders.sku"), True),
    (obj("column", "orders.sku"), obj("table", "orders"), False),
    (obj("function", "util.initial_status"), obj("function", "initial_status(integer)"), True),
    (obj("function", "util.initial_status"), obj("function", "public.initial_status"), False),
    (obj("setting", "work_mem"), obj("setting", "work_mem = 64kB"), True),
    (obj("session", "bi-notebook"), obj("role", "BI-Notebook"), True),
    (obj("server", "replica"), obj("server", "replica1"), True),
    (obj("prepared_transaction", "payout-7f3a"), obj("prepared_transaction", "'payout-7f3a'"),
     True),
    (obj("index", "orders_merchant_idx"), obj("table", "orders_merchant_idx"), False),
])
def test_object_references(condition: dict[str, str], submitted: dict[str, str],
                           same: bool) -> None:
    assert ObjectRef(**condition).matches(ObjectRef(**submitted)) is same


@pytest.mark.parametrize("diagnosis, error", [
    ({"conditions": [{"id": "x", "causes": ["stale_stats"], "critical": True}]},
     "synonym: write its id 'stale_statistics'"),
    ({"conditions": [{"id": "x", "causes": ["no_such_cause"], "critical": True}]},
     "not in the diagnosis vocabulary"),
    ({"conditions": [{"id": "x", "objects": [obj("table", "t")], "critical": True}]},
     "a critical cause condition is required"),
    ({"conditions": [{"id": "x", "causes": ["role_temp_file_limit_too_low"], "critical": True}],
      "contradictions": [{"causes": ["temp_file_limit_too_low"]}]},
     "more general than one"),
    ({"conditions": [{"id": "x", "causes": ["disk_full"], "objects": [obj("table", "t")],
                      "critical": True}]}, "one of them"),
    ({"conditions": [{"id": "x", "objects": [obj("tablespace", "t")], "critical": True}]},
     "kind"),
])
def test_manifest_diagnosis_errors(diagnosis: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        DiagnosisSpec.model_validate(diagnosis)


def test_an_object_is_part_of_the_incident_only_by_its_whole_name() -> None:
    from dbabench.scenario.loader import resolve
    incident = incident_of(resolve("database-work-mem-floor-blamed-on-bi-report")[1].spec)
    assert incident.involves(ObjectRef(kind="session", name="merchant-export"))
    for fragment in ("-", "merchant-exp", "chant-export", "t-e"):
        assert not incident.involves(ObjectRef(kind="session", name=fragment)), fragment
