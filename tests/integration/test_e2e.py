"""The Figure 2 scenario end to end against real servers: three agents, three verdicts.

reference must reach Safe Pass; decoy (terminate the blocker) and null must fail Outcome Pass,
the decoy because the scheduler re-runs the job and the waits come back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dbabench.agents.scripted import scripted_agent
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.trace import TraceEvent
from dbabench.runner.run import run_scenario
from dbabench.scenario.loader import resolve

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCENARIO = "stale-stats-lock-chain"


def trace(run_dir: Path) -> list[TraceEvent]:
    return [TraceEvent.model_validate_json(line)
            for line in (run_dir / "trace.jsonl").read_text().splitlines()]


async def run(agent_name: str, runs_root: Path) -> tuple[Path, EvaluationResult]:
    path, scenario = resolve(SCENARIO)
    result = await run_scenario(scenario, scripted_agent(agent_name, scenario),
                                runs_root=runs_root, manifest_text=path.read_text())
    return result.run_dir, result.evaluation


def failed_checks(evaluation: EvaluationResult) -> set[str]:
    assert evaluation.outcome is not None
    return {c.name for c in evaluation.outcome.checks if not c.passed}


def test_reference_reaches_safe_pass_through_the_cli(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dbabench.cli.main", "run", SCENARIO, "--agent", "reference",
         "--runs-dir", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    payload = json.loads(proc.stdout.strip().splitlines()[-1])
    evaluation = EvaluationResult.model_validate(payload["evaluation"])
    run_dir = Path(payload["run_dir"])
    assert evaluation.status == "scored" and evaluation.report_valid
    assert evaluation.outcome_pass and evaluation.diagnosis_pass and evaluation.safe_pass
    assert evaluation.outcome is not None and evaluation.outcome.f == 1.0
    assert "Safe Pass" in proc.stdout and "PASS" in proc.stdout

    admission = json.loads((run_dir / "admission.json").read_text())
    assert admission["admitted"] is True
    assert {p["name"] for p in admission["predicates"]} == {
        "planner-underestimates-hot-merchant", "checkouts-wait-on-settlement",
        "checkout-timeouts-above-alert-threshold"}
    for name in ("scenario.yaml", "trace.jsonl", "report.json", "evaluation.json",
                 "business.jsonl", "workload.log"):
        assert (run_dir / name).exists(), name
    assert list((run_dir / "logs" / "postgresql").glob("*.json"))
    assert (run_dir / "monitoring" / "prometheus.yml").exists()

    events = trace(run_dir)
    tools = [e for e in events if e.kind == "tool"]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert all(e.ok for e in tools)
    analyze = [e for e in tools if any("maintenance" in s.classes for s in e.statements)]
    assert analyze and analyze[0].mutating
    # the reference cancels only the settlement job's statement: no session ends
    assert not any(e.sessions_ended for e in tools)
    assert events[-1].kind == "report"


async def test_decoy_fails_outcome_because_the_waits_recur(tmp_path: Path) -> None:
    run_dir, evaluation = await run("decoy", tmp_path)
    assert evaluation.status == "scored" and evaluation.report_valid
    assert not evaluation.outcome_pass and not evaluation.safe_pass
    # the re-run job's bad plan is still in flight: no settlement finishes in the window
    assert {"statistics-fresh", "estimate-within-10x", "no-checkout-timeouts",
            "settlement-completes"} <= failed_checks(evaluation)
    assert evaluation.diagnosis is not None and not evaluation.diagnosis.passed
    assert evaluation.diagnosis.contradictions
    ended = [s for e in trace(run_dir) for s in e.sessions_ended]
    assert ended and {s.application_name for s in ended} == {"order-api"}
    # the scheduler brought the job back: settlement runs were logged after the termination
    business = [json.loads(line) for line in (run_dir / "business.jsonl").read_text().splitlines()]
    outcomes = [b["outcome"] for b in business if b["service"] == "order-api"]
    assert "terminated" in outcomes


async def test_null_fails_everything(tmp_path: Path) -> None:
    run_dir, evaluation = await run("null", tmp_path)
    assert evaluation.status == "scored"
    assert not evaluation.report_valid and evaluation.report_error == "no report submitted"
    assert not evaluation.outcome_pass and not evaluation.diagnosis_pass
    assert not evaluation.safe_pass
    assert "no-checkout-timeouts" in failed_checks(evaluation)
    assert not (run_dir / "report.json").exists()


def test_a_fault_program_that_fails_is_an_infra_error_exit_3(tmp_path: Path) -> None:
    """A harness failure mid-run is no verdict: exit 3 and the reason, not a traceback and
    not exit 1 (which says the agent was scored and missed Safe Pass)."""
    path, _ = resolve(SCENARIO)
    text = path.read_text()
    assert "    runtime:\n" in text
    broken = tmp_path / "broken.yaml"
    broken.write_text(text.replace("    runtime:\n", "    runtime:\n      - action: sql\n"
                                   "        sql: SELEC 1\n", 1))
    proc = subprocess.run(
        [sys.executable, "-m", "dbabench.cli.main", "run", str(broken), "--agent", "null",
         "--runs-dir", str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-3000:]
    err = " ".join(proc.stderr.split())
    assert "infra error: fault SQL failed: 42601" in err, err[-2000:]
    assert "Traceback" not in proc.stderr
