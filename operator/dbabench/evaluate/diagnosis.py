"""Diagnosis matcher (paper §5.1): set F1 between a scenario's conditions and a report's
structured values, with every critical condition required and no contradiction allowed.

A report submits causes (its root cause and causal factors, ids of the diagnosis vocabulary;
synonyms resolve to their id) and objects ({kind, name}, compared as PostgreSQL resolves
names). A cause condition is met by a submitted cause that is its id or more specific than it
(``taxonomy.within``), filed as root or as factor: where a link of the chain is filed says
little. An object condition is met by a submitted object that ``ObjectRef.matches`` it. Each
condition is met at most once and each submitted value meets at most one condition.

What is left over counts against the report (a false positive, as in the paper) unless it is
true of the incident (the scenario's ``alsoTrue``) or one of the first TOLERATED_EXTRA_OBJECTS
other objects: an honest report may name a few true objects the author did not list, a
stuffed one cannot hide behind that. Extra causes are never tolerated: they are the
diagnosis. A contradiction is a root cause the scenario rules out (or anything more specific
than it), or an object it rules out, wherever that object is named.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbabench.model import taxonomy
from dbabench.model.evaluation import ConditionMatch, DiagnosisResult
from dbabench.model.report import ObjectRef, Report
from dbabench.model.scenario import Condition, DiagnosisSpec

TOLERATED_EXTRA_OBJECTS = 2


@dataclass(frozen=True)
class _Cause:
    id: str | None  # None: not in the vocabulary (a stored report from before it)
    raw: str

    def __str__(self) -> str:
        return f"cause {self.raw}"


@dataclass(frozen=True)
class _Object:
    ref: ObjectRef

    def __str__(self) -> str:
        return f"{self.ref.kind} {self.ref.name}"


def _submitted(report: Report) -> tuple[list[_Cause], list[_Object]]:
    vocabulary = taxonomy.taxonomy()
    causes: list[_Cause] = []
    for raw in [report.root_cause_type, *report.causal_factors]:
        cause = _Cause(vocabulary.resolve(raw), raw)
        if not any(c.id == cause.id and (c.id is not None or c.raw == raw) for c in causes):
            causes.append(cause)
    objects: list[_Object] = []
    for ref in report.affected_objects:
        if not any(o.ref.kind == ref.kind and o.ref.key() == ref.key() for o in objects):
            objects.append(_Object(ref))
    return causes, objects


def _meets(condition: Condition, value: _Cause | _Object) -> bool:
    if isinstance(value, _Cause):
        vocabulary = taxonomy.taxonomy()
        return value.id is not None and any(vocabulary.within(value.id, c)
                                            for c in condition.causes)
    return any(o.matches(value.ref) for o in condition.objects)


def evaluate_diagnosis(report: Report | None, spec: DiagnosisSpec) -> DiagnosisResult:
    if report is None:
        return DiagnosisResult(f1=0.0, passed=False, reason="no valid report",
                               missing_critical=[c.id for c in spec.conditions if c.critical])
    vocabulary = taxonomy.taxonomy()
    causes, objects = _submitted(report)
    submitted: list[_Cause | _Object] = [*causes, *objects]
    used: set[int] = set()
    matches: dict[str, ConditionMatch] = {}
    # critical conditions first: a value that could meet either goes where it is required
    for condition in sorted(spec.conditions, key=lambda c: not c.critical):
        hit = next((i for i, v in enumerate(submitted)
                    if i not in used and _meets(condition, v)), None)
        if hit is not None:
            used.add(hit)
        matches[condition.id] = ConditionMatch(
            condition=condition.id, critical=condition.critical,
            matched_by=str(submitted[hit]) if hit is not None else None)
    neutral, false_positives = [], []
    extra_objects = 0
    for i, value in enumerate(submitted):
        if i in used:
            continue
        if isinstance(value, _Cause):
            true = value.id is not None and any(vocabulary.within(value.id, c)
                                                for c in spec.also_true.causes)
        else:
            true = any(o.matches(value.ref) for o in spec.also_true.objects)
            if not true and extra_objects < TOLERATED_EXTRA_OBJECTS:
                extra_objects += 1
                true = True
        (neutral if true else false_positives).append(str(value))
    matched = len(used)
    counted = matched + len(false_positives)
    f1 = 2 * matched / (len(spec.conditions) + counted) if counted else 0.0
    ordered = [matches[c.id] for c in spec.conditions]
    missing = [m.condition for m in ordered if m.critical and m.matched_by is None]
    contradictions = []
    root = causes[0]
    for contradiction in spec.contradictions:
        why = f": {contradiction.why}" if contradiction.why else ""
        if root.id is not None and any(vocabulary.within(root.id, c)
                                       for c in contradiction.causes):
            contradictions.append(f"root cause {root.raw}{why}")
        contradictions += [f"{o}{why}" for o in objects
                           if any(ref.matches(o.ref) for ref in contradiction.objects)]
    passed = f1 >= spec.pass_threshold and not missing and not contradictions
    reasons = []
    if f1 < spec.pass_threshold:
        reasons.append(f"F1 {f1:.2f} < {spec.pass_threshold}")
    if missing:
        reasons.append(f"critical conditions missing: {', '.join(missing)}")
    if contradictions:
        reasons.append("contradicts: " + "; ".join(contradictions))
    return DiagnosisResult(f1=round(f1, 4), passed=passed, matches=ordered,
                           false_positives=false_positives, neutral=neutral,
                           missing_critical=missing, contradictions=contradictions,
                           reason="; ".join(reasons))
