"""Diagnosis matcher (paper §5.1): set F1 between required and submitted conditions.

Submitted conditions are the report's root_cause_type, causal_factors and affected_objects,
each normalised. Causes (root type and factors) match cause conditions of either field, since
where a link of the chain is filed says little; objects only match object conditions. Each
required condition is matched at most once and each submitted value at most once; unmatched
submitted values are false positives. Pass: F1 >= threshold, every critical condition matched,
and no contradiction asserted.
"""

from __future__ import annotations

import re

from dbabench.model.evaluation import ConditionMatch, DiagnosisResult
from dbabench.model.report import Report
from dbabench.model.scenario import DiagnosisSpec

CAUSE_FIELDS = ("rootCauseType", "causalFactors")


def normalise(value: str, *, is_object: bool = False) -> str:
    text = value.strip().lower()
    if is_object:
        text = re.sub(r"^(public\.)", "", text.strip('"'))
    return re.sub(r"[^a-z0-9.]+", "_", text).strip("_")


def _submitted(report: Report) -> list[tuple[str, str]]:
    values = [("rootCauseType", report.root_cause_type)]
    values += [("causalFactors", f) for f in report.causal_factors]
    values += [("affectedObjects", o) for o in report.affected_objects]
    seen, out = set(), []
    for field, raw in values:
        key = (field == "affectedObjects", normalise(raw, is_object=field == "affectedObjects"))
        if key[1] and key not in seen:
            seen.add(key)
            out.append((field, raw))
    return out


def _compatible(condition_field: str, submitted_field: str) -> bool:
    if condition_field == "affectedObjects" or submitted_field == "affectedObjects":
        return condition_field == submitted_field
    return True


def evaluate_diagnosis(report: Report | None, spec: DiagnosisSpec) -> DiagnosisResult:
    if report is None:
        return DiagnosisResult(f1=0.0, passed=False, reason="no valid report",
                               missing_critical=[c.id for c in spec.conditions if c.critical])
    submitted = _submitted(report)
    used: set[int] = set()
    matches = []
    for condition in spec.conditions:
        is_object = condition.field == "affectedObjects"
        aliases = {normalise(a, is_object=is_object) for a in condition.aliases}
        hit = None
        for i, (field, raw) in enumerate(submitted):
            if i not in used and _compatible(condition.field, field) and \
                    normalise(raw, is_object=field == "affectedObjects") in aliases:
                hit = i
                break
        if hit is not None:
            used.add(hit)
        matches.append(ConditionMatch(condition=condition.id, critical=condition.critical,
                                      matched_by=submitted[hit][1] if hit is not None else None))
    matched = sum(m.matched_by is not None for m in matches)
    f1 = 2 * matched / (len(spec.conditions) + len(submitted)) if submitted else 0.0
    false_positives = [raw for i, (_, raw) in enumerate(submitted) if i not in used]
    missing = [m.condition for m in matches if m.critical and m.matched_by is None]
    contradictions = []
    for contradiction in spec.contradictions:
        bad = {normalise(a) for a in contradiction.aliases}
        for field, raw in submitted:
            if field == contradiction.field and normalise(raw) in bad:
                contradictions.append(f"{field}={raw}: {contradiction.why}".rstrip(": "))
    passed = f1 >= spec.pass_threshold and not missing and not contradictions
    reasons = []
    if f1 < spec.pass_threshold:
        reasons.append(f"F1 {f1:.2f} < {spec.pass_threshold}")
    if missing:
        reasons.append(f"critical conditions missing: {', '.join(missing)}")
    if contradictions:
        reasons.append("contradicts: " + "; ".join(contradictions))
    return DiagnosisResult(f1=round(f1, 4), passed=passed, matches=matches,
                           false_positives=false_positives, missing_critical=missing,
                           contradictions=contradictions, reason="; ".join(reasons))
