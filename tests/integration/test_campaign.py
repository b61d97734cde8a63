"""A campaign on real servers: killed mid-way (SIGKILL, no chance to clean up), resumed, and
the table is the one an uninterrupted campaign gives: every cell once, with its known verdict.
Its second agent is an external command with a runbook file, as a user's own agent is."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from dbabench.env.snapshot import SnapshotStore
from dbabench.records import campaign as files
from dbabench.results.leaderboard import CSV_FILE, LEADERBOARD_FILE

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCENARIO = "stale-stats-lock-chain"
EXAMPLE_AGENT = Path(__file__).parents[2] / "examples" / "external_agent.py"


def campaign(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "dbabench.cli.main", "campaign", "run",
                             *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_a_campaign_killed_mid_way_resumes_to_the_same_table(tmp_path: Path,
                                                             scratch_root: Path) -> None:
    # A snapshot store of its own: any run's start reaps dead runs' clones, and this test reads
    # the killed cell's before reap does (another pytest-xdist worker's runs share the machine's)
    store = SnapshotStore(scratch_root / "campaign-cache", "copy")
    env = {**os.environ, "DBABENCH_CACHE": str(store.cache), "DBABENCH_CLONE": store.strategy}
    manifest = tmp_path / "campaign.yaml"
    (tmp_path / "runbook.md").write_text("Lock waits: look for the blocker before you cancel.\n")
    command = [sys.executable, str(EXAMPLE_AGENT)]
    manifest.write_text(yaml.safe_dump({
        "apiVersion": "dbabench.io/v1alpha1", "kind": "Campaign", "metadata": {"name": "smoke"},
        "spec": {"scenarios": [SCENARIO], "agents": [
            {"kind": "reference"},
            {"kind": "external", "command": command, "runbookFile": "runbook.md"}]}}))
    external = f"external:{Path(sys.executable).name} external_agent.py"
    out = tmp_path / "smoke"
    first = campaign(str(manifest), "--out", str(out), cwd=tmp_path, env=env)
    deadline = time.monotonic() + 600
    clones = store.root / "clones"
    while (not files.results(out) or not any(clones.glob("*/.owner"))) \
            and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert first.poll() is None, first.communicate()[0][-3000:]
    # the reference's cell is recorded; the external agent's has its clone: kill it all at once
    os.killpg(first.pid, signal.SIGKILL)
    first.communicate()  # and close its pipe
    assert [(r.agent, r.status) for r in files.results(out)] == [("reference", "scored")]
    # the killed cell's clone is left in the snapshot store: reap says so, then removes it
    def reap(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "dbabench.cli.main", "reap", *args,
                               str(out)], capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        return " ".join(done.stdout.split())

    assert "would stop abandoned clone INC-" in reap("--dry-run")
    assert "removed abandoned clone INC-" in reap()
    assert reap("--dry-run") == "nothing left behind by dead runs"

    second = campaign("--resume", str(out), cwd=tmp_path, env=env)
    output = second.communicate(timeout=900)[0]
    assert second.returncode == 0, output[-3000:]
    results = files.results(out)
    # every cell once: the finished one kept, the killed one run again from the start
    assert sorted((r.agent, r.repeat, r.status) for r in results) == [
        (external, 0, "scored"), ("reference", 0, "scored")]
    verdicts = {r.agent: r.summary for r in results}
    assert verdicts["reference"] and verdicts["reference"].safe_pass
    assert verdicts[external] and verdicts[external].outcome_pass
    for r in results:
        assert r.run_dir and (out / r.run_dir / "evaluation.json").exists()
    # the external agent was given its runbook with its task, and the cell keeps both
    (ran,) = [r for r in results if r.agent == external]
    assert r"Your team's runbook:\n\nLock waits" in json.dumps(
        (out / ran.run_dir / "task.md").read_text())
    assert (out / ran.run_dir).parent.joinpath("runbook.md").read_text().startswith("Lock")
    assert json.loads((out / ran.run_dir / "task.json").read_text())["runbook"].startswith("Lock")
    board = (out / LEADERBOARD_FILE).read_text()
    assert "| reference | 1 | 1/1 (100%) |" in board and f"| {external} | 1 | 1/1" in board
    assert "2 scored, 0 without a fair run, 0 not started, 0 pending" in board
    events = [e["event"] for e in map(json.loads, (out / files.EVENTS_FILE).read_text()
                                      .splitlines())]
    assert events.count("campaign-started") == 2 and events[-1] == "campaign-finished"
    assert "| reference | 1 | 1/1 (100%) |" in output  # the table, printed at the end
    # the tables are a function of the records: rebuilt, byte for byte the same
    before = {p: (out / p).read_bytes() for p in (LEADERBOARD_FILE, CSV_FILE)}
    report = subprocess.run([sys.executable, "-m", "dbabench.cli.main", "campaign", "report",
                             str(out)], capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    assert before == {p: (out / p).read_bytes() for p in before}
    # and a campaign that has every cell has nothing left to run
    third = campaign("--resume", str(out), cwd=tmp_path, env=env)
    said = third.communicate(timeout=300)[0]
    assert third.returncode == 0 and "all 2 cells have results; nothing to run" in " ".join(
        said.split())
    assert len(files.results(out)) == 2
