"""The pods executor end to end: every component of a run in a pod of its own.

The operator (``DBABENCH_OPERATOR_EXECUTOR=pods``) builds the Scenario's golden volume with a
Job and snapshots it with a CSI VolumeSnapshot (the real external-snapshotter CRDs), then runs an
AgentRun as a PVC restored from that snapshot, a database pod, a workload pod, an admission Job,
a tool server pod, an agent pod and an evaluator Job. The player (player.py) is the node those
pods land on: it runs their real entrypoints as local processes, each pod in a network of its
own joined to the others as the run's NetworkPolicies allow (fabric.py), so a graded Evaluation
here means the whole operator -> pods -> tool server -> evaluator path worked on a real
PostgreSQL across the policies a cluster would enforce.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import sys
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
import pytest

from dbabench.env import kube
from dbabench.model.evaluation import EVALUATION_VERSION

from player import NODE_LABEL, STORAGE_CLASS, TOLERATION, Player
from test_chart import CHART, RELEASE, token_kubeconfig
from model_server import call, scripted_model
from test_operator import (MODEL_REPORT, SCENARIO_FILE, Operator, agentrun, apply, get,
                           model_agentrun, phase_of)
from waiting import eventually

if TYPE_CHECKING:
    from conftest import ControlPlane

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
# agent-images/external-agent.Containerfile: examples/external_agent.py as its entrypoint
EXTERNAL_IMAGE = "dbabench-external-agent:0.1.0"
# tests/cluster/metered_agent.py: asks its model through OPENAI_BASE_URL, then reports
METERED_IMAGE = "dbabench-metered-agent:0.1.0"
# tests/cluster/scanning_agent.py: looks around its pod's network, then works as the example
SCANNING_IMAGE = "dbabench-scanning-agent:0.1.0"

SNAPSHOTTER = "github.com/kubernetes-csi/external-snapshotter/client/v8@v8.4.0"
def snapshot_crds() -> Path:
    """The VolumeSnapshot CRDs as external-snapshotter releases them, from the Go module proxy."""
    cache = Path(os.environ.get("DBABENCH_CACHE", "/var/cache/dbabench")) / "k8s" / "gomodcache"
    done = subprocess.run(["go", "mod", "download", "-json", SNAPSHOTTER], capture_output=True,
                          text=True, check=True,
                          env={**os.environ, "GOMODCACHE": str(cache), "GOFLAGS": "-mod=mod"})
    return Path(json.loads(done.stdout)["Dir"]) / "config" / "crd"


@pytest.fixture(scope="module")
def player(control_plane: ControlPlane, crds: None, scratch_root: Path) -> Iterator[Player]:
    crd_dir = snapshot_crds()
    for kind in ("volumesnapshotclasses", "volumesnapshotcontents", "volumesnapshots"):
        control_plane.kubectl("apply", "--server-side", "-f",
                              str(crd_dir / f"snapshot.storage.k8s.io_{kind}.yaml"))
        control_plane.wait_established(f"{kind}.snapshot.storage.k8s.io")
    node = Player(control_plane.kubeconfig, scratch_root / "player", images={
        EXTERNAL_IMAGE: [sys.executable, str(REPO / "examples" / "external_agent.py")],
        METERED_IMAGE: [sys.executable, str(Path(__file__).with_name("metered_agent.py"))],
        SCANNING_IMAGE: [sys.executable, str(Path(__file__).with_name("scanning_agent.py")),
                         str(REPO / "examples" / "external_agent.py")]})
    node.start()
    try:
        yield node
    finally:
        node.stop()
        assert not node.errors, "\n".join(node.errors[-3:])


@contextlib.contextmanager
def chart_operator(plane: ControlPlane, player: Player, scratch_root: Path,
                   *sets: str) -> Iterator[tuple[str, Operator]]:
    """A fresh namespace with the chart installed for the pods executor, and the operator
    running with that chart's ServiceAccount token and the settings it renders: the
    permissions are proven sufficient by the runs themselves."""
    namespace = f"pods-{uuid.uuid4().hex[:8]}"
    plane.kubectl("create", "namespace", namespace)
    plane.run("helm", "install", RELEASE, str(CHART), "--namespace", namespace, "--skip-crds",
              "--set", f"watchNamespaces={{{namespace}}}", "--set", "executor=pods",
              "--set", f"pods.storageClass={STORAGE_CLASS}",
              "--set-json", f"pods.nodeSelector={json.dumps(NODE_LABEL)}",
              "--set-json", f"pods.tolerations={json.dumps([TOLERATION])}",
              *(a for s in sets for a in ("--set", s)), timeout=120)
    dep = json.loads(plane.kubectl("get", "deployment", f"{RELEASE}-dbabench-operator",
                                   "-n", namespace, "-o", "json").stdout)
    env = {e["name"]: e["value"] for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]
           if e["name"] in ("DBABENCH_OPERATOR_EXECUTOR", "DBABENCH_OPERATOR_KUBE")}
    runs = scratch_root / f"operator-{uuid.uuid4().hex[:6]}"
    runs.mkdir()
    kubeconfig = token_kubeconfig(plane, namespace, runs / "kubeconfig",
                                  sa=f"{RELEASE}-dbabench-operator")
    operator = Operator(plane, runs, {**env, "KUBECONFIG": str(kubeconfig)},
                        ("--namespace", namespace))
    operator.start()
    try:
        yield namespace, operator
    finally:
        operator.stop()
        plane.run("helm", "uninstall", RELEASE, "--namespace", namespace, check=False)
        print(operator.log.read_text(errors="replace")[-20000:])
        print("player errors:", *player.errors[-3:], sep="\n")
        logs = player.root / "logs"
        for path in sorted(logs.glob(f"{namespace}_*.log")) if logs.exists() else []:
            print(f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}")


def wait_ready(plane: ControlPlane, namespace: str,
               manifest: Path = SCENARIO_FILE) -> dict[str, Any]:
    plane.kubectl("apply", "-n", namespace, "-f", str(manifest))
    eventually(lambda: phase_of(plane, "scenario", manifest.stem, namespace) in (
        "Ready", "Failed"), "golden volume", timeout=400)
    status: dict[str, Any] = get(plane, "scenario", manifest.stem, namespace)["status"]
    assert status["phase"] == "Ready", status
    return status


def test_agentrun_runs_as_pods_and_is_graded(control_plane: ControlPlane, player: Player,
                                             scratch_root: Path) -> None:
    with chart_operator(control_plane, player, scratch_root, "modelSecrets={gateway-key}") as (
            namespace, operator):
        snapshot = wait_ready(control_plane, namespace)["snapshot"]
        assert snapshot["method"] == "volume-snapshot" and snapshot["sizeBytes"] > 10 << 20
        snap = get(control_plane, "volumesnapshot", snapshot["name"], namespace)
        assert snap["status"]["readyToUse"] is True

        apply(control_plane, namespace, agentrun("ref", "stale-stats-lock-chain", "reference"))
        seen: list[str] = []
        components: set[str] = set()

        def finished() -> bool:
            phase = phase_of(control_plane, "agentrun", "ref", namespace)
            if phase and (not seen or seen[-1] != phase):
                seen.append(phase)
            pods = json.loads(control_plane.kubectl(
                "get", "pods", "-n", namespace, "-l", "dbabench.io/run=ref", "-o",
                "json").stdout)["items"]
            components.update(p["metadata"]["labels"]["dbabench.io/component"] for p in pods)
            return phase in ("Succeeded", "Failed", "InfraError")

        eventually(lambda: finished() or "Running" in seen, "agent pod running", timeout=400,
                   interval=1)
        # the database pod's control endpoint (stop, start) answers the harness's token only
        control = f"http://127.0.0.1:{player.forward('ref-postgres', kube.PORTS['control'])}/status"
        postgres = player.forward("ref-postgres", kube.PORTS["postgres"])

        def secret(name: str, key: str) -> str:
            return base64.b64decode(get(control_plane, "secret", name, namespace)["data"][key]
                                    ).decode()

        token = secret("ref-db", "control-token")
        assert httpx.get(control, timeout=10).status_code == 401
        assert httpx.get(control, headers={"Authorization": "Bearer wrong"},
                         timeout=10).status_code == 401
        assert httpx.get(control, headers={"Authorization": f"Bearer {token}"},
                         timeout=10).json()["running"] is True
        # the run's own passwords replaced its golden's, which every run of the scenario has
        def login(password: str) -> bool:
            try:
                psycopg.connect(host="127.0.0.1", port=postgres,
                                dbname="postgres", user="postgres", password=password,
                                connect_timeout=10).close()
                return True
            except psycopg.OperationalError:
                return False

        assert login(secret("ref-db", "superuser-password"))
        assert not login(secret(snapshot["name"], "superuser-password"))
        # The operator dies mid-run; its successor carries the same run on, with the same pods.
        # (Running starts the tool server; the agent's pod follows once the task is published)
        agent_uid = eventually(lambda: get(control_plane, "pod", "ref-agent", namespace),
                               "the agent's pod", timeout=120, interval=0.5)["metadata"]["uid"]
        operator.stop(signal.SIGKILL)
        operator.start()
        eventually(finished, "pods run graded", timeout=600, interval=1)
        body = get(control_plane, "agentrun", "ref", namespace)
        assert body["status"]["phase"] == "Succeeded", body["status"]
        evaluation = get(control_plane, "evaluation", "ref", namespace)
        result = evaluation["spec"]["result"]
        assert body["status"]["summary"]["safePass"] is True, json.dumps(result, indent=1)
        assert {"Provisioning", "Admitting", "Running", "Evaluating"} <= set(seen), seen
        assert {"postgres", "workload", "admit", "tools", "agent", "evaluate"} <= components
        assert agent_uid in player.started, "the restarted operator made a second agent pod"
        assert sum(1 for uid, name in player.started.items() if name == "ref-agent") == 1
        assert result["status"] == "scored" and result["outcome"]["passed"] is True
        # the Evaluation resource says which scorer judged it
        assert result["version"] == EVALUATION_VERSION and len(result["scorer"]["digest"]) == 64
        evaluations = json.loads(control_plane.kubectl(
            "get", "evaluations", "-n", namespace, "-o", "json").stdout)["items"]
        assert [e["metadata"]["name"] for e in evaluations] == ["ref"]

        # graded runs leave nothing behind but the AgentRun and its Evaluation
        def cleaned() -> bool:
            left = control_plane.kubectl(
                "get", "pods,jobs,pvc,services,secrets,configmaps,networkpolicies", "-n",
                namespace, "-l", "dbabench.io/run=ref", "-o", "name").stdout.split()
            return not left

        eventually(cleaned, "run objects deleted", timeout=120)

        # Any agent image: it gets the tool URL, its token and the task file, nothing else;
        # its network holds its run's tool server and nothing else of the cluster (issue 38:
        # it shared the tool server's network and reached its run's Prometheus).
        apply(control_plane, namespace, {
            "apiVersion": "dbabench.io/v1alpha1", "kind": "AgentRun", "metadata": {"name": "ext"},
            "spec": {"scenario": "stale-stats-lock-chain",
                     "agent": {"kind": "external", "image": SCANNING_IMAGE}}})
        eventually(lambda: phase_of(control_plane, "agentrun", "ext", namespace) in (
            "Succeeded", "Failed", "InfraError"), "external agent graded", timeout=600,
            interval=2)
        status = get(control_plane, "agentrun", "ext", namespace)["status"]
        result = get(control_plane, "evaluation", "ext", namespace)["spec"]["result"]
        assert status["phase"] == "Succeeded" and status["summary"]["safePass"] is True, (
            json.dumps(result, indent=1))
        assert result["agent"] == "external" and result["efficiency"]["toolCalls"] >= 4
        seen = json.loads((player.root / "logs" / f"{namespace}_ext-agent_agent.log").read_text(
            errors="replace").splitlines()[0])
        tools_port = int(seen["env"]["DBABENCH_TOOLS_URL"].rsplit(":", 1)[1])
        assert seen["listening"] == [tools_port] and seen["answering"] == [tools_port], seen
        assert seen["hostname"] == "agent"
        # (LC_CTYPE: Python's own, coercing the C locale: PEP 538)
        assert set(seen["env"]) - {"LC_CTYPE"} <= {
            "DBABENCH_TOOLS_URL", "DBABENCH_TOOLS_TOKEN", "DBABENCH_TASK_FILE", "PATH", "HOME",
            "HOSTNAME"}, seen["env"]

        # A model agent: its calls go through the sidecar's meter, which alone has the key; and
        # an external image metered the same way: it gets the meter and its tool token. The two
        # run at once, each with a model server of its own, so whose requests are whose is plain.
        control_plane.kubectl("create", "secret", "generic", "gateway-key", "-n", namespace,
                              "--from-literal=api-key=sk-from-the-secret")
        script = [call("execute_sql", sql="SELECT count(*) FROM pg_stat_activity"),
                  call("submit_report", **MODEL_REPORT)]
        with scripted_model(script, scratch_root / f"model-{namespace}") as model, \
                scripted_model(script, scratch_root / f"metered-{namespace}") as meter_model:
            apply(control_plane, namespace, model_agentrun("react", "openai:gpt-4o-mini",
                                                           "gateway-key", model.url))
            apply(control_plane, namespace, {
                "apiVersion": "dbabench.io/v1alpha1", "kind": "AgentRun",
                "metadata": {"name": "metered"},
                "spec": {"scenario": "stale-stats-lock-chain", "agent": {
                    "kind": "external", "image": METERED_IMAGE, "meter": "openai",
                    "baseUrl": meter_model.url,
                    "apiKeySecret": {"name": "gateway-key", "key": "api-key"}}}})
            eventually(lambda: all(phase_of(control_plane, "agentrun", name, namespace) in (
                "Succeeded", "Failed", "InfraError") for name in ("react", "metered")),
                "model and metered external agents graded", timeout=600, interval=2)
            requests, metered_requests = model.requests(), meter_model.requests()
        status = get(control_plane, "agentrun", "react", namespace)["status"]
        result = get(control_plane, "evaluation", "react", namespace)["spec"]["result"]
        assert status["phase"] == "Succeeded", (status, json.dumps(result, indent=1))
        assert len(requests) == 2 and {r["auth"] for r in requests} == {
            "Bearer sk-from-the-secret"}
        assert requests[0]["body"]["model"] == "gpt-4o-mini"
        assert result["agent"] == "react:openai:gpt-4o-mini"
        assert status["summary"]["costBasis"] == "metered" and status["summary"]["costUsd"] > 0
        assert result["efficiency"]["inputTokens"] == 2000
        assert "sk-from-the-secret" not in json.dumps(status) + json.dumps(result)
        agent_logs = player.root / "logs"
        assert not any("sk-from-the-secret" in p.read_text(errors="replace")
                       for p in agent_logs.glob(f"{namespace}_react-agent*.log"))

        status = get(control_plane, "agentrun", "metered", namespace)["status"]
        result = get(control_plane, "evaluation", "metered", namespace)["spec"]["result"]
        assert status["phase"] == "Succeeded", (status, json.dumps(result, indent=1))
        assert [r["auth"] for r in metered_requests] == ["Bearer sk-from-the-secret"]
        assert result["agent"] == "external"
        assert status["summary"]["costBasis"] == "metered" and status["summary"]["costUsd"] > 0
        seen = json.loads((agent_logs / f"{namespace}_metered-agent_agent.log").read_text(
            errors="replace").splitlines()[0])
        assert seen["status"] == 200 and {"OPENAI_BASE_URL", "OPENAI_API_KEY"} <= set(seen["env"])
        assert not any("API_KEY" in name and name != "OPENAI_API_KEY" for name in seen["env"])


def test_without_snapshots_runs_restore_by_cloning_the_golden_pvc(
        control_plane: ControlPlane, player: Player, scratch_root: Path) -> None:
    with chart_operator(control_plane, player, scratch_root, "pods.cloneFrom=pvc") as (
            namespace, _):
        snapshot = wait_ready(control_plane, namespace)["snapshot"]
        assert snapshot["method"] == "pvc-clone" and snapshot["ready"] is True
        assert get(control_plane, "pvc", snapshot["name"], namespace) is not None
        assert not json.loads(control_plane.kubectl(
            "get", "volumesnapshots", "-n", namespace, "-o", "json").stdout)["items"]
        apply(control_plane, namespace, agentrun("nil", "stale-stats-lock-chain", "null"))
        claim = eventually(lambda: get(control_plane, "pvc", "nil-data", namespace),
                           "the run's volume", timeout=120)
        source = claim["spec"]["dataSource"]
        assert (source["kind"], source["name"]) == ("PersistentVolumeClaim", snapshot["name"])
        eventually(lambda: phase_of(control_plane, "agentrun", "nil", namespace) in (
            "Succeeded", "Failed", "InfraError"), "null run graded", timeout=600, interval=2)
        status = get(control_plane, "agentrun", "nil", namespace)["status"]
        # restored, manifested and scored: the null agent fixes nothing
        assert status["phase"] == "Succeeded", status
        assert status["summary"]["outcomePass"] is False


REPLICA_SCENARIO = (REPO / "scenarios" / "system-failure"
                    / "replica-slot-name-typo-stops-streaming.yaml")


def test_a_replica_scenario_runs_as_pods_with_a_standby_pod(
        control_plane: ControlPlane, player: Player, scratch_root: Path) -> None:
    """The standby is a pod of its own, restored from the same snapshot and following the
    primary's pod; the agent's tools reach it (SQL, its log, its restart), the workload's jobs
    and the checks address it, and the fix on it is graded."""
    with chart_operator(control_plane, player, scratch_root) as (namespace, _):
        wait_ready(control_plane, namespace, REPLICA_SCENARIO)
        apply(control_plane, namespace, agentrun("rep", REPLICA_SCENARIO.stem, "reference"))
        eventually(lambda: phase_of(control_plane, "agentrun", "rep", namespace) in (
            "Succeeded", "Failed", "InfraError"), "replica run graded", timeout=600,
            interval=2)
        status = get(control_plane, "agentrun", "rep", namespace)["status"]
        result = get(control_plane, "evaluation", "rep", namespace)["spec"]["result"]
        assert status["phase"] == "Succeeded", (status, json.dumps(result, indent=1))
        # manifested (the standby served stale data, the primary had no standby streaming),
        # then fixed on the standby: it streams through the slot and serves fresh orders
        assert status["summary"]["safePass"] is True, json.dumps(result, indent=1)
        checks = {c["name"]: c["passed"] for c in result["outcome"]["checks"]}
        assert checks["standby-streams"] and checks["replica-data-fresh"], checks
        started = set(player.started.values())
        assert {"rep-postgres", "rep-replica"} <= started, started
        # every hop of the reference path found its evidence: among them the standby's own
        # log (its WAL receiver refused the slot replica_1), mirrored from its pod into the
        # tool server's
        (uid,) = [u for u, n in player.started.items() if n == "rep-tools"]
        trace = (player.root / f"pod-{uid}" / "empty-work" / "trace.jsonl").read_text()
        assert "could not start WAL streaming" in trace, trace[-3000:]
        assert "expected evidence" not in trace, trace[-3000:]
