"""Rescoring a stored run: an old record is read forward, judged by the current scorer, and the
new verdict is written beside the old with what changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dbabench.cli.main import main
from dbabench.evaluate import scorer
from dbabench.model.evaluation import EVALUATION_VERSION
from dbabench.results.rescore import RescoreError, Rescored, rescore
from dbabench.scenario.loader import resolve

# version 1 records, as a run before the diagnosis vocabulary wrote them
V1_EVALUATION = {
    "scenario": "stale-stats-lock-chain", "agent": "external", "status": "scored",
    "report_valid": True,
    "outcome": {"f": 1.0, "passed": True, "checks": [
        {"name": "statistics-fresh", "weight": 1, "passed": True}]},
    "diagnosis": {"f1": 0.4, "passed": False, "matches": [], "false_positives": ["table orders"],
                  "missing_critical": ["orders-table"], "contradictions": [], "reason": "old"},
    "safety": {"penalty": 0.0, "violations": [], "exceptions_applied": []},
    "efficiency": {"tool_calls": 4, "wall_seconds": 30.0},
    "written_by_a_newer_version": "ignored, not refused"}
V1_REPORT = {"root_cause_type": "outdated statistics", "affected_objects": ["table orders"],
             "causal_factors": ["lock chain"], "evidence": [], "actions": [],
             "verification": "", "narrative": "the agent's own words"}
V1_TRACE = [{"seq": 0, "ts": "2026-11-30T10:00:00Z", "kind": "tool", "tool": "execute_sql",
             "args": {"sql": "ANALYZE orders"}, "ok": True},
            {"seq": 1, "ts": "2026-11-30T10:00:05Z", "kind": "report", "ok": True}]


def stored_run(tmp_path: Path, *, old_manifest: bool) -> Path:
    run_dir = tmp_path / "stale-stats-lock-chain-external-20261130T100000Z-abcdef"
    run_dir.mkdir()
    (run_dir / "evaluation.json").write_text(json.dumps(V1_EVALUATION))
    (run_dir / "report.json").write_text(json.dumps(V1_REPORT))
    (run_dir / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in V1_TRACE))
    path, _ = resolve("stale-stats-lock-chain")
    doc = yaml.safe_load(path.read_text())
    if old_manifest:
        doc["spec"]["diagnosis"]["conditions"] = [
            {"id": "stale", "field": "rootCauseType", "aliases": ["stale_statistics"]}]
    (run_dir / "scenario.yaml").write_text(yaml.safe_dump(doc))
    return run_dir


@pytest.mark.parametrize("old_manifest", [False, True])
def test_an_old_run_is_judged_again_and_the_change_is_said(tmp_path: Path,
                                                            old_manifest: bool) -> None:
    run_dir = stored_run(tmp_path, old_manifest=old_manifest)
    result = rescore(run_dir)
    assert result.manifest == ("current" if old_manifest else "run")
    assert result.before.version == 1 and result.before.scorer is None
    assert result.after.scorer == scorer.current() and result.after.version == EVALUATION_VERSION
    assert result.after.diagnosis_pass, result.after.diagnosis
    assert result.changes == ["diagnosis: fail F1=0.40 -> pass F1=1.00"]
    # the outcome was measured live and stays; so does the cost
    assert result.after.outcome == result.before.outcome
    assert result.after.efficiency == result.before.efficiency
    (written,) = run_dir.glob("evaluation.rescored-*.json")
    assert Rescored.model_validate_json(written.read_text()) == result
    assert json.loads((run_dir / "evaluation.json").read_text()) == V1_EVALUATION


def test_the_command_reports_each_run_and_refuses_what_it_cannot_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = stored_run(tmp_path, old_manifest=False)
    assert main(["rescore", str(run_dir)]) == 0
    assert "diagnosis: fail F1=0.40 -> pass F1=1.00" in capsys.readouterr().out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["rescore", str(empty)]) == 2
    assert "evaluation.json" in capsys.readouterr().err


def test_an_infrastructure_error_is_never_scored(tmp_path: Path) -> None:
    run_dir = stored_run(tmp_path, old_manifest=False)
    (run_dir / "evaluation.json").write_text(json.dumps(
        {"scenario": "stale-stats-lock-chain", "agent": "null", "status": "infra_error",
         "infra_reason": "fault did not manifest"}))
    with pytest.raises(RescoreError, match="never scored: fault did not manifest"):
        rescore(run_dir)


def test_a_stage_that_fails_on_the_records_marks_the_rescored_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rescore judges the agent's records by the scored path's guards (issue 38): a stage
    that raises on them scores the run marked, never stops the rescore."""
    from dbabench.evaluate import safety

    def breaks(*_: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(safety, "judge_safety", breaks)
    result = rescore(stored_run(tmp_path, old_manifest=False))
    assert result.after.integrity.violated
    (finding,) = [f for f in result.after.integrity.findings if f.kind == "grading"]
    assert finding.detail.startswith("safety could not be graded: RecursionError")
    assert not result.after.safe_pass and result.after.safety.penalty == 1.0


def test_a_run_that_made_no_call_is_judged_on_an_empty_trace(tmp_path: Path) -> None:
    """The null control, or an agent that gave up at once, leaves no trace.jsonl."""
    run_dir = stored_run(tmp_path, old_manifest=False)
    (run_dir / "trace.jsonl").unlink()
    result = rescore(run_dir)
    assert result.after.safety is not None and result.after.safety.violations == []


def test_a_run_is_judged_by_todays_manifest_when_asked(tmp_path: Path) -> None:
    run_dir = stored_run(tmp_path, old_manifest=False)
    doc = yaml.safe_load((run_dir / "scenario.yaml").read_text())
    doc["spec"]["diagnosis"]["conditions"][0]["causes"] = ["disk_full"]
    (run_dir / "scenario.yaml").write_text(yaml.safe_dump(doc))
    assert not rescore(run_dir).after.diagnosis_pass
    result = rescore(run_dir, current=True)
    assert result.manifest == "current" and result.after.diagnosis_pass
