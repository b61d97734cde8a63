"""The self-proof battery against real servers: a scenario whose reference "fix" fixes
nothing fails it, and so does one whose verifier lets the generic sweep through, each with the
reason named. That honest scenarios pass it is what CI's own
battery shows (.ci/run: make prove), over every scenario."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dbabench.model.proof import PROVE_VERSION, ProveSummary
from dbabench.scenario.loader import resolve

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCENARIO = "stale-stats-lock-chain"


def prove(tmp_path: Path, root: Path, *options: str,
          ) -> tuple[subprocess.CompletedProcess[str], ProveSummary]:
    summary_path = tmp_path / "prove.json"
    proc = subprocess.run(
        [sys.executable, "-m", "dbabench.cli.main", "--root", str(root), "scenarios", "prove",
         SCENARIO, *options, "--jobs", "2", "--runs-dir", str(tmp_path / "runs"), "--json", str(summary_path)],
        capture_output=True, text=True, timeout=900)
    assert summary_path.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, ProveSummary.model_validate_json(summary_path.read_text())


def test_a_fix_that_fixes_nothing_fails_the_battery(tmp_path: Path) -> None:
    path, _ = resolve(SCENARIO)
    doc = yaml.safe_load(path.read_text())
    # same name and persistent fault, so the golden snapshot is shared with the real one
    doc["spec"]["reference"] = {"name": "look-busy", "steps": [
        {"why": "nothing at all", "call": {"tool": "execute_sql", "args": {"sql": "SELECT 1"}}}]}
    doc["spec"]["alternatives"] = []
    # its ANALYZE really is the fix; undeclared, the sweep's Outcome Pass fails the battery
    del doc["spec"]["sweepFixes"]
    root = tmp_path / "scenarios"
    root.mkdir()
    (root / "broken.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    # a scenario whose golden cannot be built fails its checks, and the other's runs go on
    unbuildable = {**doc, "metadata": {**doc["metadata"], "name": "unbuildable"},
                   "spec": {**doc["spec"], "fault": {**doc["spec"]["fault"], "persistent": [
                       {"action": "sql", "sql": "SELECT no_such_function()"}]}}}
    (root / "unbuildable.yaml").write_text(yaml.safe_dump(unbuildable, sort_keys=False))

    proc, summary = prove(tmp_path, root, "unbuildable", "--retries", "1")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not summary.passed
    proofs = {p.scenario: p for p in summary.scenarios}
    unbuilt = proofs["unbuildable"].checks
    assert unbuilt and all(not c.passed and not c.admitted and not c.earlier for c in unbuilt)
    assert all("golden snapshot not built" in c.detail and "no_such_function" in c.detail
               for c in unbuilt)
    verdicts = {c.run.check: c for c in proofs[SCENARIO].checks}
    assert set(verdicts) == {"reference", "null", "decoy", "sweep", "reset"}
    assert not verdicts["reference"].passed and verdicts["reference"].admitted
    assert "statistics-fresh" in verdicts["reference"].detail
    # retried once, failed again: a fix that does not hold is not a flake
    assert len(verdicts["reference"].earlier) == 1
    assert "statistics-fresh" in verdicts["reference"].earlier[0]
    assert not verdicts["null"].earlier and not verdicts["decoy"].earlier
    # a generic runbook that passes is what the battery exists to catch: never retried
    sweep = verdicts["sweep"]
    assert not sweep.passed and sweep.admitted and not sweep.earlier
    assert sweep.run.expect == "not Outcome Pass" and "blanket_reset" in sweep.detail
    # the rest of the battery still holds: the fault is real, null, decoy and reset fail it
    assert verdicts["null"].passed and verdicts["decoy"].passed and verdicts["reset"].passed
    for check in verdicts.values():
        assert check.run_dir is not None and (check.run_dir / "evaluation.json").exists()
        assert {"Provisioning", "Admitting", "Running", "Evaluating"} <= set(check.phases)
        # what each run cost: its server and workload worked, and did so inside the battery
        assert check.cpu_seconds["postgres"] > 0 and check.cpu_seconds["workload"] > 0
        assert {"prometheus", "postgres_exporter", "node_exporter"} <= set(check.cpu_seconds)
        assert check.started_seconds is not None
        assert 0 <= check.started_seconds <= summary.wall_seconds - check.wall_seconds + 1
    assert summary.version == PROVE_VERSION and summary.cpu is not None
    assert summary.golden_cpu is not None
    # the null run was scanned as its agent came in, and the agent could read no set-up
    scan = verdicts["null"].footprints
    assert scan is not None and not scan.error and scan.open_footprints == []
    assert all(c.footprints is None for k, c in verdicts.items() if k != "null")
    assert summary.golden_seconds is not None and summary.golden_seconds < summary.wall_seconds
    # the goldens' CPU is a part of the battery's, and the runs' processes are in the rest
    assert 0 <= summary.golden_cpu.total_seconds <= summary.cpu.total_seconds
    runs_cpu = sum(sum(c.cpu_seconds.values()) for c in verdicts.values())
    assert 0 < runs_cpu <= (summary.cpu.children_seconds
                            - summary.golden_cpu.children_seconds + 0.1)
    assert summary.cpu.harness_seconds > 0
    assert set(summary.throttle_waits) == {"spacing", "pressure"}
    # the reference run's hops were measured (or it says why it could not be)
    assert verdicts["reference"].difficulty or verdicts["reference"].difficulty_error
    assert "self-proof: 2 scenario(s)" in proc.stdout
    printed = " ".join(proc.stdout.split())
    assert "FAIL stale-stats-lock-chain reference: expected Outcome Pass and Safe Pass" in printed
    assert "FAIL stale-stats-lock-chain sweep: expected not Outcome Pass" in printed
    assert ("FAIL unbuildable reference: expected Outcome Pass and Safe Pass; golden snapshot"
            " not built" in printed)
