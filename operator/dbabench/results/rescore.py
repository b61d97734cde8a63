"""``dbabench rescore``: judge a stored run again under the current scorer.

Diagnosis and safety are functions of what the run left behind (its report and its trace) and
are recomputed; the outcome was measured on a live database and stays as recorded, as do the
cost and the verdict's inputs that only the run could see. The new evaluation is written beside
the old one (``evaluation.rescored-<time>.json``), never over it, and says what changed.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from dbabench.records.run import RunFiles
from dbabench.model.artifacts import RunArtifact
from dbabench.errors import BadInput
from dbabench.evaluate import evaluator, scorer
from dbabench.model.base import Record
from dbabench.model.evaluation import EVALUATION_VERSION, EvaluationResult
from dbabench.model.scenario import Scenario
from dbabench.workload.businesslog import read_events
from dbabench.scenario.loader import ScenarioError, parse, resolve


class RescoreError(BadInput, ValueError):
    """A run directory that cannot be rescored; the message says which file and why."""


class Rescored(Record):
    version: int = 1
    run_dir: str
    rescored_at: datetime
    manifest: Literal["run", "current"] = Field(
        description="run: the run's own scenario.yaml; current: the catalog's manifest of the"
                    " same name (asked for, or the run's is of a format this version no longer"
                    " reads)")
    changes: list[str] = Field(description="what the new scorer judges differently")
    before: EvaluationResult
    after: EvaluationResult


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as e:
        raise RescoreError(f"{path}: {e.strerror}; rescore takes a finished run's directory"
                           " (with evaluation.json, trace.jsonl and scenario.yaml)") from e


def _scenario(run_dir: Path, name: str, root: Path | None,
              current: bool) -> tuple[Scenario, str]:
    if current:
        try:
            return resolve(name, root)[1], "current"
        except ScenarioError as e:
            raise RescoreError(f"{run_dir}: the catalog has no scenario {name!r}") from e
    try:
        manifest = RunFiles(run_dir).path(RunArtifact.MANIFEST)
        return parse(_read(manifest), str(manifest)), "run"
    except ScenarioError:
        try:
            return resolve(name, root)[1], "current"
        except ScenarioError as e:
            raise RescoreError(f"{run_dir}: its scenario.yaml is of an older format and the"
                               f" catalog has no scenario {name!r} to read instead") from e


def _rules(evaluation: EvaluationResult) -> list[str]:
    return sorted(v.rule for v in (evaluation.safety.violations if evaluation.safety else []))


def _changes(before: EvaluationResult, after: EvaluationResult) -> list[str]:
    found = []
    b, a = before.diagnosis, after.diagnosis
    if b is None or a is None or (b.passed, b.f1) != (a.passed, a.f1):
        found.append(f"diagnosis: {'pass' if before.diagnosis_pass else 'fail'}"
                     f" F1={b.f1 if b else 0:.2f} -> {'pass' if after.diagnosis_pass else 'fail'}"
                     f" F1={a.f1 if a else 0:.2f}" + (f" ({a.reason})" if a and a.reason else ""))
    if _rules(before) != _rules(after):
        found.append(f"safety: {', '.join(_rules(before)) or 'no violations'} ->"
                     f" {', '.join(_rules(after)) or 'no violations'}")
    if before.safe_pass != after.safe_pass:
        found.append(f"Safe Pass: {before.safe_pass} -> {after.safe_pass}")
    return found


def rescore(run_dir: Path, root: Path | None = None, *, current: bool = False) -> Rescored:
    """Judge ``run_dir`` again; write and return the result (``root``: the catalog).
    ``current``: by the catalog's manifest of the scenario as it is now (what its diagnosis
    and safety sections say today of the same incident), not the run's own copy."""
    files = RunFiles(run_dir)
    try:
        before = EvaluationResult.model_validate_json(
            _read(files.path(RunArtifact.EVALUATION)))
        # an agent that made no call (the null control) left no trace: an empty one
        events = files.events()
        report = files.report() if before.report_valid else None
    except (ValidationError, json.JSONDecodeError, OSError) as e:
        raise RescoreError(f"{run_dir}: a record does not read: {e}") from e
    if before.status == "infra_error":
        raise RescoreError(f"{run_dir}: an infrastructure error, never scored: {before.infra_reason}")
    scenario, manifest = _scenario(run_dir, before.scenario, root, current)
    spec = scenario.spec
    # what the agent's records say is judged again, as a run is scored (its stages guarded);
    # what the database said at grading is kept
    business_log = files.path(RunArtifact.BUSINESS_LOG)
    judged_diagnosis, judged_safety, judged_integrity = evaluator.judge_records(
        spec, events, report, unpriced_models=before.efficiency.unpriced_models,
        steering=[f for f in before.integrity.findings if f.kind == "steering"],
        agent_sandboxed=before.integrity.agent_sandboxed,
        business=read_events(business_log) if business_log.exists() else None)
    after = before.model_copy(update={
        "version": EVALUATION_VERSION, "scorer": scorer.current(),
        "diagnosis": judged_diagnosis, "safety": judged_safety, "integrity": judged_integrity})
    now = datetime.now(timezone.utc)
    result = Rescored(run_dir=str(run_dir), rescored_at=now, manifest=manifest,
                      changes=_changes(before, after), before=before, after=after)
    files.write_rescored(result, now)
    return result
