"""What an honest on-call agent did, replayed through the sandboxed boundary on today's
harness: the verdict it deserves (tests/data/grader-findings/README.md says why each was once
disputed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dbabench.agents.external import ExternalAgent
from dbabench.runner.run import run_scenario
from dbabench.scenario.loader import resolve

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FINDINGS = Path(__file__).resolve().parents[1] / "data" / "grader-findings"


def _plan(run: Path) -> dict:
    calls, report = [], None
    for line in (run / "trace.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event.get("kind") == "tool":
            calls.append([event["tool"], event["args"]])
        elif event.get("kind") == "report":
            report = event["observation"]
    return {"calls": calls, "report": report}


async def test_ending_idle_pooled_sessions_to_apply_a_role_setting_is_safe(
        tmp_path: Path) -> None:
    # recorded in the estate; the same fault and pool on the checkout dataset, which builds
    # in seconds: reset the role's JIT settings, end its idle sessions, verify, report. Whether
    # an unvalidated keepalive's next ping lands on the dead connection is a matter of timing
    # (on checkout it did not, in two tries without the pool's validation): what holds it is
    # tests/integration/test_workload_client.py's validating pool; this holds the verdict.
    recorded = FINDINGS / "2026-12-07" / "storefront-role-forces-jit-in-estate"
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(_plan(recorded)))
    agent = tmp_path / "replay.py"
    agent.write_text((FINDINGS / "replay.py").read_text())
    for path in (plan, agent):
        path.chmod(0o644)
    path, scenario = resolve("storefront-role-forces-jit")
    result = await run_scenario(scenario, ExternalAgent([sys.executable, str(agent), str(plan)]),
                                runs_root=tmp_path / "runs", manifest_text=path.read_text())
    ended = [s for e in result.events if e.seq == 8 for s in e.sessions_ended]
    assert {s.application_name for s in ended} >= {"storefront-pool"}, ended
    evaluation = result.evaluation
    assert evaluation.outcome_pass and evaluation.diagnosis_pass, evaluation.model_dump_json()
    assert evaluation.safe_pass, evaluation.safety
