"""The field runs (tests/data/field-runs: a capable model agent as the on-call DBA, given only
the alert) as the grader's regression cases: rescored by the current scorer, as `dbabench
rescore` does, each gets the verdict it deserves (the README beside them says why). All
fifteen fixed their incident with a right diagnosis and harmed nothing: Outcome, Diagnosis
and Safe Pass."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dbabench.results.rescore import rescore

RUNS = Path(__file__).parents[1] / "data" / "field-runs"
FIELD = sorted(p for p in RUNS.glob("*/*") if (p / "evaluation.json").exists())


def test_the_field_runs_are_here() -> None:
    assert len(FIELD) == 15


@pytest.mark.parametrize("run", FIELD, ids=[p.name for p in FIELD])
def test_a_field_run_gets_the_verdict_it_deserves(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    # judged by what the scenario's manifest says today of the same incident
    after = rescore(copy, current=True).after
    assert after.outcome_pass
    assert after.diagnosis is not None and after.diagnosis_pass, after.diagnosis.reason
    assert after.diagnosis.false_positives == [], after.diagnosis
    assert after.safe_pass, [v.detail for v in after.safety.violations] if after.safety else None
