"""Diagnosis matcher (paper §5.1): set F1 between a scenario's conditions and a report's
structured values, with every critical condition required and no contradiction allowed.

A report submits causes (its root cause and causal factors, ids of the diagnosis vocabulary;
synonyms resolve to their id) and objects ({kind, name}, compared as PostgreSQL resolves
names). A cause condition is met by a submitted cause that is its id or more specific than it
(``taxonomy.within``), filed as root or as factor: where a link of the chain is filed says
little. An object condition is met by a submitted object that ``ObjectRef.matches`` it. Each
condition is met at most once and each submitted value meets at most one condition.

What is left over counts against the report (a false positive, as in the paper) only when it
is not known to be true (issue 40: a report is judged by what it gets wrong, not by how much
it says). Never counted: a cause on the lineage of a condition's (an accepted alternative, a
more general or more specific type, a second value for a met condition), one the scenario
lists as true (``alsoTrue``), a symptom the vocabulary marks as such; an object that meets a
condition or is part of the incident (``incident.Incident``: what the scenario's manifest and
dataset name). Of the rest, the first TOLERATED_EXTRA_CAUSES causes and
TOLERATED_EXTRA_OBJECTS objects are neutral too (a mechanism or object the author did not
think of); a stuffed report's dozen guesses are not.

A contradiction is a cause the scenario rules out (or anything more specific), wherever the
report files it (as a factor it stands only when ``alsoTrue`` says it is true of the incident
short of being its root: the lock queue behind a stale plan), or an object it rules out,
wherever that object is named.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbabench.evaluate.incident import Incident
from dbabench.model import taxonomy
from dbabench.model.evaluation import ConditionMatch, DiagnosisResult
from dbabench.model.report import ObjectRef, Report
from dbabench.model.scenario import Condition, DiagnosisSpec

TOLERATED_EXTRA_CAUSES = 2
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


def _related(cause_id: str, others: list[str]) -> bool:
    vocabulary = taxonomy.taxonomy()
    return any(vocabulary.within(cause_id, c) or vocabulary.within(c, cause_id) for c in others)


def _true_value(value: _Cause | _Object, spec: DiagnosisSpec,
                incident: Incident | None) -> bool:
    """Known to be true of the incident, so never counted against a report."""
    if isinstance(value, _Cause):
        if value.id is None:
            return False
        lineage = [c for condition in spec.conditions for c in condition.causes]
        return (_related(value.id, lineage) or _related(value.id, spec.also_true.causes)
                or taxonomy.taxonomy().cause(value.id).symptom)
    return (any(_meets(condition, value) for condition in spec.conditions)
            or any(o.matches(value.ref) for o in spec.also_true.objects)
            or (incident is not None and incident.involves(value.ref)))


def _contradicted(cause: _Cause, root: bool, ruled_out: list[str], spec: DiagnosisSpec) -> bool:
    vocabulary = taxonomy.taxonomy()
    if cause.id is None or not any(vocabulary.within(cause.id, c) for c in ruled_out):
        return False
    return root or not any(vocabulary.within(cause.id, c) for c in spec.also_true.causes)


def evaluate_diagnosis(report: Report | None, spec: DiagnosisSpec,
                       incident: Incident | None = None) -> DiagnosisResult:
    """The verdict on a report; ``incident``: what the scenario involves (None: only the
    diagnosis section's conditions and alsoTrue say what is true)."""
    if report is None:
        return DiagnosisResult(f1=0.0, passed=False, reason="no valid report",
                               missing_critical=[c.id for c in spec.conditions if c.critical])
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
    extra = {_Cause: 0, _Object: 0}
    tolerated = {_Cause: TOLERATED_EXTRA_CAUSES, _Object: TOLERATED_EXTRA_OBJECTS}
    for i, value in enumerate(submitted):
        if i in used:
            continue
        true = _true_value(value, spec, incident)
        # a cause outside the vocabulary (an old report's) is no type at all: never tolerated
        known = not isinstance(value, _Cause) or value.id is not None
        if not true and known and extra[type(value)] < tolerated[type(value)]:
            extra[type(value)] += 1
            true = True
        (neutral if true else false_positives).append(str(value))
    matched = len(used)
    counted = matched + len(false_positives)
    f1 = 2 * matched / (len(spec.conditions) + counted) if counted else 0.0
    ordered = [matches[c.id] for c in spec.conditions]
    missing = [m.condition for m in ordered if m.critical and m.matched_by is None]
    contradictions = []
    for contradiction in spec.contradictions:
        why = f": {contradiction.why}" if contradiction.why else ""
        contradictions += [f"{'root cause' if i == 0 else 'factor'} {cause.raw}{why}"
                           for i, cause in enumerate(causes)
                           if _contradicted(cause, i == 0, contradiction.causes, spec)]
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
