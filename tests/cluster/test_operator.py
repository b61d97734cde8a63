"""The operator against a real API server: CRDs, validation, a graded AgentRun, restart.

The operator runs as its own process (``dbabench operator``) with the test cluster's
kubeconfig, and executes runs with the local environment backend, so each AgentRun here is a
real run on a real PostgreSQL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import yaml

from dbabench.env.processes import free_port, reap_orphans, stop_pid
from dbabench.operator.handlers import CAMPAIGN_POLL_SECONDS
from dbabench.scenario.loader import VARIANT_KIND, load_file

from model_server import call, scripted_model
from waiting import eventually

if TYPE_CHECKING:
    from conftest import ControlPlane

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SCENARIO_FILE = REPO / "scenarios" / "composite" / "stale-stats-lock-chain.yaml"
# a second scenario with short windows, for a campaign of more than one
SECOND_SCENARIO = "new-market-without-partition"
SECOND_SCENARIO_FILE = REPO / "scenarios" / "business-change" / f"{SECOND_SCENARIO}.yaml"
class Operator:
    """``dbabench operator`` as a process we can kill and start again."""

    def __init__(self, plane: ControlPlane, runs_dir: Path,
                 extra_env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> None:
        self.plane = plane
        self.runs_dir = runs_dir
        self.extra_env = extra_env or {}
        self.args = args
        self.metrics_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = runs_dir / "operator.log"

    def start(self) -> None:
        env = {**os.environ, **self.plane.env(),
               "DBABENCH_OPERATOR_RUNS_DIR": str(self.runs_dir),
               "DBABENCH_OPERATOR_METRICS_PORT": str(self.metrics_port), **self.extra_env}
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dbabench.cli.main", "operator", "--verbose", *self.args],
                env=env, stdout=out, stderr=subprocess.STDOUT)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None:
            stop_pid(self.proc.pid, sig=sig, timeout=150)
            self.proc.wait()
        self.proc = None


@pytest.fixture
def namespace(control_plane: ControlPlane, crds: None) -> str:
    name = f"op-{uuid.uuid4().hex[:8]}"
    control_plane.kubectl("create", "namespace", name)
    return name


@pytest.fixture
def operator(control_plane: ControlPlane, crds: None, scratch_root: Path) -> Iterator[Operator]:
    runs = scratch_root / f"operator-{uuid.uuid4().hex[:6]}"
    runs.mkdir()
    op = Operator(control_plane, runs)
    op.start()
    try:
        yield op
    finally:
        op.stop()
        # a run the test killed the operator under, and that no later run reaped
        reap_orphans(runs)
        # pytest shows captured output of failed tests only: the operator's side of the story
        print(op.log.read_text(errors="replace")[-20000:])


def get(plane: ControlPlane, kind: str, name: str, namespace: str) -> dict[str, Any] | None:
    done = plane.kubectl("get", kind, name, "-n", namespace, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def phase_of(plane: ControlPlane, kind: str, name: str, namespace: str) -> str | None:
    body = get(plane, kind, name, namespace)
    return (body or {}).get("status", {}).get("phase")


def apply(plane: ControlPlane, namespace: str, doc: dict[str, Any]) -> None:
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=yaml.safe_dump(doc))


def agentrun(name: str, scenario: str, kind: str) -> dict[str, Any]:
    return {"apiVersion": "dbabench.io/v1alpha1", "kind": "AgentRun",
            "metadata": {"name": name}, "spec": {"scenario": scenario, "agent": {"kind": kind}}}


def test_api_server_rejects_invalid_manifests_naming_the_field(
        control_plane: ControlPlane, namespace: str) -> None:
    bad_run = agentrun("bad", "x", "oracle")
    done = control_plane.kubectl("apply", "-n", namespace, "-f", "-", check=False,
                                 stdin=yaml.safe_dump(bad_run))
    assert done.returncode != 0
    assert "spec.agent.kind" in done.stderr and "oracle" in done.stderr

    scenario = yaml.safe_load(SCENARIO_FILE.read_text())
    scenario["spec"]["fault"]["runtime"][0].pop("statements")
    done = control_plane.kubectl("apply", "-n", namespace, "-f", "-", check=False,
                                 stdin=yaml.safe_dump(scenario))
    assert done.returncode != 0
    assert "action job requires" in done.stderr


def test_scenario_file_applies_as_is(control_plane: ControlPlane, namespace: str,
                                     tmp_path: Path) -> None:
    control_plane.kubectl("apply", "-n", namespace, "-f", str(SCENARIO_FILE))
    assert get(control_plane, "scenario", "stale-stats-lock-chain", namespace)
    # every scenario of the library is a Scenario the API server takes as it is written (a
    # variant as the whole scenario it stands for, as `dbabench scenarios show` prints it),
    # and the example campaign a Campaign
    files = [*sorted((REPO / "scenarios").rglob("*.yaml")), REPO / "examples" / "campaign.yaml"]
    assert len(files) > 50
    variants = [f for f in files if yaml.safe_load(f.read_text())["kind"] == VARIANT_KIND]
    assert variants
    whole = tmp_path / "variants"
    whole.mkdir()
    for path in variants:
        (whole / path.name).write_text(load_file(path).model_dump_json(
            by_alias=True, exclude_defaults=True))
    files = [*(f for f in files if f not in variants), *sorted(whole.iterdir())]
    done = control_plane.kubectl("apply", "--dry-run=server", "-n", namespace,
                                 *(a for f in files for a in ("-f", str(f))))
    assert done.stdout.count("(server dry run)") == len(files), done.stdout


def test_agentrun_is_graded_and_survives_an_operator_restart(
        control_plane: ControlPlane, namespace: str, operator: Operator) -> None:
    control_plane.kubectl("apply", "-n", namespace, "-f", str(SCENARIO_FILE))
    eventually(lambda: phase_of(control_plane, "scenario", "stale-stats-lock-chain",
                                namespace) == "Ready", "scenario snapshot ready", timeout=300)
    snapshot = get(control_plane, "scenario", "stale-stats-lock-chain", namespace)["status"][
        "snapshot"]
    assert snapshot["ready"] and snapshot["name"].startswith("stale-stats-lock-chain-")

    apply(control_plane, namespace, agentrun("ref", "stale-stats-lock-chain", "reference"))
    seen: list[str] = []

    def running() -> bool:
        phase = phase_of(control_plane, "agentrun", "ref", namespace)
        if phase and (not seen or seen[-1] != phase):
            seen.append(phase)
        return phase == "Running"

    eventually(running, "reference run reaches Running", timeout=240)
    # Kill the operator mid-run; the new one must finish the run with exactly one Evaluation.
    operator.stop(signal.SIGKILL)
    operator.start()
    eventually(lambda: phase_of(control_plane, "agentrun", "ref", namespace) in (
        "Succeeded", "Failed", "InfraError"), "run finished", timeout=400)
    body = get(control_plane, "agentrun", "ref", namespace)
    status = body["status"]
    assert status["phase"] == "Succeeded", status
    assert status["summary"]["safePass"] is True
    assert {"Provisioning", "Admitting", "Running"} <= set(seen)
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True" and ready["reason"] == "Graded"

    evaluations = json.loads(control_plane.kubectl(
        "get", "evaluations", "-n", namespace, "-o", "json").stdout)["items"]
    assert [e["metadata"]["name"] for e in evaluations] == ["ref"]
    owner = evaluations[0]["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"]) == (
        "AgentRun", "ref", body["metadata"]["uid"])

    table = control_plane.kubectl("get", "agentruns,evaluations", "-n", namespace).stdout
    assert "stale-stats-lock-chain" in table and "Succeeded" in table and "true" in table

    metrics = httpx.get(f"http://127.0.0.1:{operator.metrics_port}/metrics").text
    assert 'dbabench_operator_phase_transitions_total{phase="Succeeded"}' in metrics

    # deleting the run garbage-collects its Evaluation (kube-controller-manager)
    control_plane.kubectl("delete", "agentrun", "ref", "-n", namespace, "--wait=true")
    eventually(lambda: get(control_plane, "evaluation", "ref", namespace) is None,
               "owned Evaluation collected", timeout=60)


def test_campaign_of_model_and_scripted_agents_survives_an_operator_kill(
        control_plane: ControlPlane, namespace: str, operator: Operator,
        scratch_root: Path) -> None:
    """react and reference on two scenarios, two at a time: the operator is SIGKILLed while the
    first two runs are in flight, and its successor finishes them and starts the other two, each
    run with one Evaluation. (Repeats are the campaign plan's, one definition for both shells:
    the unit tests of campaign tables prove them.)"""
    control_plane.kubectl("create", "secret", "generic", "gateway-key", "-n", namespace,
                          "--from-literal=api-key=sk-from-the-secret")
    for manifest in (SCENARIO_FILE, SECOND_SCENARIO_FILE):
        control_plane.kubectl("apply", "-n", namespace, "-f", str(manifest))
    # every run gets a report at once, whichever order the runs ask in
    with scripted_model([call("submit_report", **MODEL_REPORT)],
                        scratch_root / f"model-{namespace}") as model:
        react = model_agentrun("x", "openai:gpt-4o-mini", "gateway-key", model.url)
        campaign_body = {
            "apiVersion": "dbabench.io/v1alpha1", "kind": "Campaign", "metadata": {"name": "cmp"},
            "spec": {"scenarios": ["stale-stats-lock-chain", "new-market-*"], "maxParallel": 2,
                     "agents": [{"kind": "reference"}, react["spec"]["agent"]]}}
        apply(control_plane, namespace, campaign_body)

        def campaign_runs() -> list[dict[str, Any]]:
            return list(json.loads(control_plane.kubectl(
                "get", "agentruns", "-n", namespace, "-l", "dbabench.io/campaign=cmp", "-o",
                "json").stdout)["items"])

        eventually(lambda: sum(r.get("status", {}).get("phase") in ("Running", "Evaluating")
                               for r in campaign_runs()) >= 1 and len(campaign_runs()) >= 2,
                   "campaign runs in flight", timeout=400, interval=1)
        operator.stop(signal.SIGKILL)
        operator.start()
        eventually(lambda: phase_of(control_plane, "campaign", "cmp", namespace) == "Succeeded",
                   "campaign finished", timeout=1200, interval=2)
        # a campaign-wide cost cap the first run's cost reaches: no run starts after it
        capped = {"apiVersion": "dbabench.io/v1alpha1", "kind": "Campaign",
                  "metadata": {"name": "capped"},
                  "spec": {"scenarios": [SECOND_SCENARIO], "repeats": 3, "maxCostUsd": 1e-6,
                           "agents": [react["spec"]["agent"]]}}
        apply(control_plane, namespace, capped)
        eventually(lambda: phase_of(control_plane, "campaign", "capped", namespace) == "Capped",
                   "capped campaign stopped", timeout=400, interval=2)
    capped_status = get(control_plane, "campaign", "capped", namespace)["status"]
    assert (capped_status["finished"], capped_status["notStarted"]) == (1, 2), capped_status
    assert "cost cap of $1e-06 was reached" in capped_status["phaseReason"]
    assert "The campaign's cost cap of $1e-06 was reached: 2 cells were not started." \
        in capped_status["leaderboard"]
    assert [r["metadata"]["name"] for r in json.loads(control_plane.kubectl(
        "get", "agentruns", "-n", namespace, "-l", "dbabench.io/campaign=capped", "-o",
        "json").stdout)["items"]] == ["capped-0000"]
    campaign = get(control_plane, "campaign", "cmp", namespace)
    status = campaign["status"]
    assert (status["runs"], status["finished"]) == (4, 4), status
    # the pattern resolved against the namespace's Scenarios, and kept
    assert status["scenarios"] == ["stale-stats-lock-chain", SECOND_SCENARIO]
    runs = campaign_runs()
    names = sorted(r["metadata"]["name"] for r in runs)
    assert names == [f"cmp-{i:04d}" for i in range(4)]
    evaluations = json.loads(control_plane.kubectl(
        "get", "evaluations", "-n", namespace, "-l", "dbabench.io/campaign=cmp", "-o",
        "json").stdout)["items"]
    # a run that ended without one says why in its status
    assert sorted(e["metadata"]["name"] for e in evaluations) == names, {
        r["metadata"]["name"]: r.get("status") for r in runs}
    for r in runs:
        (owner,) = r["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"]) == ("Campaign", campaign["metadata"]["uid"])
        assert r["status"]["phase"] == "Succeeded", r["status"]
    tallies = {t["agent"]: t for t in status["agents"]}
    reference, model_agent = tallies["reference"], tallies["react:openai:gpt-4o-mini@low"]
    assert (reference["scored"], reference["safePass"], reference["safePassRate"]) == (2, 2, 1)
    assert (model_agent["scored"], model_agent["safePass"]) == (2, 0)
    assert model_agent["costBasis"] == "metered" and model_agent["costUsd"] > 0
    assert sorted(r["spec"]["scenario"] for r in runs) == sorted(
        ["stale-stats-lock-chain", SECOND_SCENARIO] * 2)
    table = control_plane.kubectl("get", "campaigns", "-n", namespace).stdout
    assert "Succeeded" in table
    # applied again unchanged (GitOps): the same runs, no new one
    apply(control_plane, namespace, campaign_body)
    time.sleep(2 * CAMPAIGN_POLL_SECONDS)
    assert sorted(r["metadata"]["name"] for r in campaign_runs()) == names
    # the leaderboard a local campaign writes, from the runs and their Evaluations
    assert all(e["metadata"]["labels"]["dbabench.io/campaign"] == "cmp" for e in evaluations)
    board = status["leaderboard"]
    assert "4 cells planned (2 agents x 2 scenarios x 1 repeats): 4 scored" in board
    assert "| reference | 2 | 2/2 (100%) | 2/2 (100%) | 2/2 (100%) | – |" in board
    assert "| react:openai:gpt-4o-mini@low | 2 | 0/2 (0%) |" in board
    assert f"| {SECOND_SCENARIO} | 1/1 (100%) | 0/1 (0%) |" in board
    # its records, kept in ConfigMaps, give a local campaign directory the same table
    fetched = scratch_root / f"fetched-{namespace}"
    done = subprocess.run([sys.executable, "-m", "dbabench.cli.main", "campaign", "fetch",
                           "cmp", "-n", namespace, "--out", str(fetched)],
                          env=control_plane.env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (fetched / "leaderboard.md").read_text() == board
    assert len((fetched / "results.jsonl").read_text().splitlines()) == 4


def test_reap_deletes_what_deleted_campaigns_left_and_nothing_else(
        control_plane: ControlPlane, namespace: str) -> None:
    """A Campaign deleted with --cascade=orphan leaves its runs and records labelled with its
    name; ``dbabench reap --kube`` finds and deletes them, and leaves a live campaign's be."""
    apply(control_plane, namespace, {
        "apiVersion": "dbabench.io/v1alpha1", "kind": "Campaign", "metadata": {"name": "kept"},
        "spec": {"scenarios": ["x"], "agents": [{"kind": "null"}]}})
    for campaign in ("kept", "gone"):
        run = agentrun(f"{campaign}-0000", "x", "null")
        run["metadata"]["labels"] = {"dbabench.io/campaign": campaign}
        apply(control_plane, namespace, run)
        control_plane.kubectl("create", "configmap", f"{campaign}-results-0", "-n", namespace)
        control_plane.kubectl("label", "configmap", f"{campaign}-results-0", "-n", namespace,
                              f"dbabench.io/campaign={campaign}")

    def reap(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "dbabench.cli.main", "reap", "--kube",
                               "-n", namespace, *args], env=control_plane.env(),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return " ".join(done.stdout.split())

    assert reap("--dry-run") == (
        f"would delete agentruns/gone-0000 in {namespace} (its Campaign is gone)"
        f" would delete configmaps/gone-results-0 in {namespace} (its Campaign is gone)")
    assert get(control_plane, "agentrun", "gone-0000", namespace) is not None
    assert "deleted agentruns/gone-0000" in reap()
    eventually(lambda: get(control_plane, "agentrun", "gone-0000", namespace) is None,
               "the orphaned run deleted", timeout=60)
    assert get(control_plane, "configmap", "gone-results-0", namespace) is None
    assert get(control_plane, "agentrun", "kept-0000", namespace) is not None
    assert get(control_plane, "configmap", "kept-results-0", namespace) is not None
    assert reap("--dry-run") == "nothing left behind by deleted Campaigns"


def test_run_of_a_scenario_that_never_gets_a_snapshot_is_an_infra_error(
        control_plane: ControlPlane, namespace: str, operator: Operator) -> None:
    broken = yaml.safe_load(SCENARIO_FILE.read_text())
    broken["metadata"]["name"] = "broken-fault"
    broken["spec"]["fault"]["persistent"][0]["sql"] = "ALTER TABLE no_such_table SET (fillfactor = 50)"
    apply(control_plane, namespace, broken)
    apply(control_plane, namespace, agentrun("doomed", "broken-fault", "null"))
    eventually(lambda: phase_of(control_plane, "scenario", "broken-fault", namespace) == "Failed",
               "broken scenario fails", timeout=240)
    eventually(lambda: phase_of(control_plane, "agentrun", "doomed", namespace) == "InfraError",
               "run is an infra error", timeout=120)
    status = get(control_plane, "agentrun", "doomed", namespace)["status"]
    assert status["phaseReason"].startswith("SnapshotNotReady")
    assert get(control_plane, "evaluation", "doomed", namespace) is None


def test_run_whose_fault_program_fails_is_an_infra_error_not_retried(
        control_plane: ControlPlane, namespace: str, operator: Operator) -> None:
    """The same program fails the same way each time: one attempt, then InfraError with the
    reason (before, kopf restarted the daemon, and the run, forever)."""
    broken = yaml.safe_load(SCENARIO_FILE.read_text())
    broken["metadata"]["name"] = "broken-runtime"
    broken["spec"]["fault"]["runtime"].insert(0, {"action": "sql", "sql": "SELEC 1"})
    apply(control_plane, namespace, broken)
    apply(control_plane, namespace, agentrun("misfired", "broken-runtime", "null"))
    eventually(lambda: phase_of(control_plane, "agentrun", "misfired", namespace) == "InfraError",
               "run is an infra error", timeout=300)
    reason = get(control_plane, "agentrun", "misfired", namespace)["status"]["phaseReason"]
    assert reason.startswith("fault SQL failed: 42601"), reason
    assert "retr" not in reason
    assert get(control_plane, "evaluation", "misfired", namespace) is None
    assert operator.log.read_text(errors="replace").count("applying the runtime fault") == 1


MODEL_REPORT = {"root_cause_type": "lock_contention",
                "affected_objects": [{"kind": "table", "name": "orders"}],
                "evidence": [{"tool": "execute_sql", "observation": "sessions wait on a lock",
                              "trace_seq": 1}],
                "verification": "looked once"}


def model_agentrun(name: str, model: str, secret: str, base_url: str) -> dict[str, Any]:
    body = agentrun(name, "stale-stats-lock-chain", "react")
    body["spec"]["agent"].update({"model": model, "baseUrl": base_url, "effort": "low",
                                  "apiKeySecret": {"name": secret, "key": "api-key"}})
    return body


def test_react_agentrun_is_graded_with_its_metered_cost_and_bad_keys_are_refused(
        control_plane: ControlPlane, namespace: str, operator: Operator,
        scratch_root: Path) -> None:
    """A model agent in an AgentRun: its key from a Secret (sent to the gateway, in no status),
    its calls and their cost recorded as locally. A missing Secret or a model without a price
    ends the run Failed before anything starts."""
    control_plane.kubectl("create", "secret", "generic", "gateway-key", "-n", namespace,
                          "--from-literal=api-key=sk-from-the-secret")
    control_plane.kubectl("apply", "-n", namespace, "-f", str(SCENARIO_FILE))
    script = [call("execute_sql", sql="SELECT count(*) FROM pg_stat_activity"),
              call("submit_report", **MODEL_REPORT)]
    with scripted_model(script, scratch_root / f"model-{namespace}") as model:
        apply(control_plane, namespace, model_agentrun("react", "openai:gpt-4o-mini",
                                                       "gateway-key", model.url))
        apply(control_plane, namespace, model_agentrun("no-secret", "openai:gpt-4o-mini",
                                                       "no-such-secret", model.url))
        apply(control_plane, namespace, model_agentrun("no-price", "openai:gpt-9-unpriced",
                                                       "gateway-key", model.url))
        apply(control_plane, namespace, {
            "apiVersion": "dbabench.io/v1alpha1", "kind": "AgentRun",
            "metadata": {"name": "command"},
            "spec": {"scenario": "stale-stats-lock-chain",
                     "agent": {"kind": "external", "command": ["./my-agent"]}}})
        eventually(lambda: phase_of(control_plane, "agentrun", "react", namespace) in (
            "Succeeded", "Failed", "InfraError"), "react run finished", timeout=400)
        requests = model.requests()
    body = get(control_plane, "agentrun", "react", namespace)
    status = body["status"]
    assert status["phase"] == "Succeeded", status
    assert len(requests) == 2 and {r["auth"] for r in requests} == {
        "Bearer sk-from-the-secret"}
    assert requests[0]["body"]["model"] == "gpt-4o-mini"
    summary = status["summary"]
    # two calls of 1,000 input tokens (400 cached) and 50 output, at gpt-4o-mini's prices
    assert summary["costBasis"] == "metered" and summary["costUsd"] > 0
    evaluation = get(control_plane, "evaluation", "react", namespace)["spec"]["result"]
    assert evaluation["efficiency"]["inputTokens"] == 2000
    assert "sk-from-the-secret" not in json.dumps(body) + json.dumps(evaluation)
    table = control_plane.kubectl("get", "agentruns", "react", "-n", namespace).stdout
    assert "gpt-4o-mini" in table and "Succeeded" in table

    for name, needle in (("no-secret", "Secret no-such-secret (agent.apiKeySecret) not found"),
                         ("no-price", "gpt-9-unpriced"),
                         ("command", "agent.command runs an external agent on the machine")):
        refused = get(control_plane, "agentrun", name, namespace)["status"]
        assert refused["phase"] == "Failed" and needle in refused["phaseReason"], refused
        assert "startedAt" not in refused
        assert get(control_plane, "evaluation", name, namespace) is None
