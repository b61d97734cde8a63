"""The agent boundary: a process outside ours works the scenario through the tool server.

The example from the docs (examples/external_agent.py) must pass the demo scenario; an agent
that overruns its time budget is stopped by pid, and its run gets no pass.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from dbabench.agents.external import ExternalAgent
from dbabench.runner.run import run_scenario
from dbabench.scenario.loader import resolve

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "external_agent.py"


async def test_the_documented_external_agent_reaches_safe_pass(tmp_path: Path) -> None:
    path, scenario = resolve("stale-stats-lock-chain")
    result = await run_scenario(scenario, ExternalAgent([sys.executable, str(EXAMPLE)]),
                                runs_root=tmp_path, manifest_text=path.read_text())
    evaluation = result.evaluation
    assert evaluation.safe_pass and evaluation.diagnosis_pass, evaluation.model_dump_json()
    task = json.loads((result.run_dir / "task.json").read_text())
    assert task["symptom"] == scenario.spec.symptom and "referencePath" not in task
    # the agent never had database credentials: only the tool server's address and token
    assert "password" not in (result.run_dir / "task.json").read_text()
    kinds = [json.loads(line)["kind"] for line in
             (result.run_dir / "trace.jsonl").read_text().splitlines()]
    assert kinds.count("tool") >= 5 and "thought" in kinds and kinds[-1] == "report"


async def test_an_agent_over_its_time_budget_is_stopped_and_not_graded(tmp_path: Path) -> None:
    path, scenario = resolve("stale-stats-lock-chain")
    scenario.spec.budget.timeout_seconds = 3
    # what is judged here is the stop, not the database it leaves
    scenario.spec.outcome.settle_seconds = 0
    scenario.spec.outcome.window_seconds = 1
    # a child that leaves the process group (setsid) must end with the agent all the same
    token = f"600.{os.getpid()}{time.monotonic_ns() % 10**6}"
    agent = ExternalAgent(["/bin/sh", "-c", f"setsid sleep {token} & echo started; exec sleep {token}"])
    result = await run_scenario(scenario, agent, runs_root=tmp_path / "runs",
                                manifest_text=path.read_text())
    assert "started" in (result.run_dir / "agent.log").read_text()
    assert not _running(token), "an agent's process outlived its run"
    evaluation = result.evaluation
    assert not evaluation.report_valid and not evaluation.outcome_pass
    assert evaluation.report_error is not None and "budget exhausted" in evaluation.report_error
    assert evaluation.integrity.agent_sandboxed is True


def _running(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and token in (entry / "cmdline").read_bytes().decode():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_an_external_agent_needs_a_command() -> None:
    with pytest.raises(ValueError, match="needs a command"):
        ExternalAgent([])


# Everything an agent can look at without leaving the tools: its task, its environment, and
# what the tools say about the system (settings with paths, sessions, logs, metrics, docs).
LOOK_AROUND = r'''
import json, os, sys
from dbabench.tools.client import ToolClient
tools = ToolClient(os.environ["DBABENCH_TOOLS_URL"], os.environ["DBABENCH_TOOLS_TOKEN"])
seen = {"task": tools.task(), "task_file": os.environ["DBABENCH_TASK_FILE"],
        "task_text": open(os.environ["DBABENCH_TASK_FILE"]).read(),
        "environ": dict(os.environ), "cwd": os.getcwd(), "argv": sys.argv, "calls": []}
for tool, args in [
        ("execute_sql", {"sql": "SHOW data_directory; SHOW log_directory; SHOW config_file;"
                                " SELECT name, setting FROM pg_settings WHERE setting ~ '/';"
                                " SELECT DISTINCT application_name, usename FROM pg_stat_activity;"
                                " SELECT * FROM pg_ls_logdir(); SELECT current_database()"}),
        ("read_log", {"source": "postgresql", "tail": 500}),
        ("read_log", {"source": "business", "tail": 500}),
        ("query_metrics", {"query": "up"}),
        ("query_metrics", {"query": "pg_settings_data_directory or pg_static"}),
        ("query_metrics", {"query": ".", "list_names": True}),
        ("manage_instance", {"action": "status"}),
        ("manage_instance", {"action": "config_get", "name": "data_directory"}),
        ("query_knowledge_base", {"query": "stale statistics lock chain"})]:
    seen["calls"].append(tools.call(tool, **args))
print(json.dumps(seen, default=str))
tools.report({"root_cause_type": "stale_statistics",
              "affected_objects": [{"kind": "table", "name": "orders"}]})
'''


async def test_nothing_an_agent_sees_names_the_scenario(tmp_path: Path) -> None:
    path, scenario = resolve("stale-stats-lock-chain")
    scenario.spec.outcome.settle_seconds = 0
    scenario.spec.outcome.window_seconds = 1
    result = await run_scenario(scenario, ExternalAgent([sys.executable, "-c", LOOK_AROUND]),
                                runs_root=tmp_path, manifest_text=path.read_text())
    seen = (result.run_dir / "agent.log").read_text()
    observations = json.loads(seen.splitlines()[0])
    assert observations["task"]["incident"].startswith("INC-")
    assert all(call["ok"] for call in observations["calls"]), observations["calls"]
    data_directory = observations["calls"][0]["observation"]["results"][0]["rows"][0][0]
    assert observations["task"]["incident"] in data_directory
    for needle in (scenario.name, "stale-stats", "lock-chain", result.run_dir.name):
        assert needle not in seen, f"{needle!r} is visible to the agent"
