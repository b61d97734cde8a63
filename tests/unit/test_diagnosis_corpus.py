"""A corpus that grades the grader: honest reports in their own words pass; the decoy's, a
stuffed one, the right cause on the wrong object, a contradicted root cause and a contradicted
factor fail.

The honest reports are in diagnosis_corpus.yaml, each with why it is honest; the failing ones
are made here from each scenario's manifest, each with why it must fail."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import yaml

from dbabench.evaluate.diagnosis import evaluate_diagnosis
from dbabench.evaluate.incident import Incident, incident_of
from dbabench.model import taxonomy
from dbabench.model.report import ObjectRef, Report
from dbabench.model.scenario import Category, Scenario
from dbabench.scenario.loader import resolve

CORPUS: dict[str, list[dict[str, Any]]] = yaml.safe_load(
    (Path(__file__).with_name("diagnosis_corpus.yaml")).read_text())


@functools.cache
def scenario(name: str) -> Scenario:
    return resolve(name)[1]


@functools.cache
def incident(name: str) -> Incident:
    return incident_of(scenario(name).spec)


def report(case: dict[str, Any]) -> Report:
    return Report(root_cause_type=case["root"], causal_factors=case.get("factors", []),
                  affected_objects=case.get("objects", []))


HONEST = [(name, case) for name, cases in CORPUS.items() for case in cases]


def test_the_corpus_covers_every_domain() -> None:
    categories = {scenario(name).spec.category for name in CORPUS}
    assert len(CORPUS) >= 15 and categories == set(Category)
    assert all(len(cases) >= 3 for cases in CORPUS.values())


@pytest.mark.parametrize("name, case", HONEST,
                         ids=[f"{n}: {c['why']}" for n, c in HONEST])
def test_an_honest_report_passes(name: str, case: dict[str, Any]) -> None:
    result = evaluate_diagnosis(report(case), scenario(name).spec.diagnosis, incident(name))
    assert result.passed, f"{case['why']}: {result.reason}"


def dishonest(name: str) -> list[tuple[str, Report]]:
    spec = scenario(name).spec
    diagnosis, terse = spec.diagnosis, report(CORPUS[name][0])
    vocabulary = taxonomy.taxonomy()
    right = [c for cond in diagnosis.conditions for c in cond.causes] + diagnosis.also_true.causes
    unrelated = [c.id for c in vocabulary.causes
                 if not any(vocabulary.within(c.id, r) or vocabulary.within(r, c.id)
                            for r in right)]
    stub = spec.decoy_report
    cases = [
        ("the decoy's report: the symptom dressed up as the cause",
         Report(root_cause_type=stub.root_cause_type, causal_factors=stub.causal_factors,
                affected_objects=stub.affected_objects)),
        ("stuffed: the right diagnosis buried in a dozen causes that are not true",
         terse.model_copy(update={"causal_factors": [*terse.causal_factors,
                                                     *unrelated[::15][:12]]})),
        ("the right causes on the wrong objects",
         terse.model_copy(update={"affected_objects": [
             ObjectRef(kind=o.kind, name=f"{o.name}_elsewhere")
             for o in terse.affected_objects]})),
    ]
    wrong = [c for x in diagnosis.contradictions for c in x.causes]
    if wrong:
        cases.append((f"a contradicted root cause ({wrong[0]}) with every right one as factor",
                      terse.model_copy(update={
                          "root_cause_type": wrong[0],
                          "causal_factors": [terse.root_cause_type, *terse.causal_factors]})))
    false = [c for c in wrong if not any(vocabulary.within(c, t)
                                         for t in diagnosis.also_true.causes)]
    if false:
        cases.append((f"the right diagnosis with a ruled-out factor ({false[0]})",
                      terse.model_copy(update={
                          "causal_factors": [*terse.causal_factors, false[0]]})))
    return cases


DISHONEST = [(name, why, r) for name in CORPUS for why, r in dishonest(name)]


@pytest.mark.parametrize("name, why, bad", DISHONEST,
                         ids=[f"{n}: {w}" for n, w, _ in DISHONEST])
def test_a_dishonest_report_fails(name: str, why: str, bad: Report) -> None:
    result = evaluate_diagnosis(bad, scenario(name).spec.diagnosis, incident(name))
    assert not result.passed, f"{why}: passed with F1 {result.f1}"
