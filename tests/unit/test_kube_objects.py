"""env.kube's run objects: the isolation the pods executor promises, read off the manifests."""

from __future__ import annotations

from typing import Any

from dbabench.env import kube

OWNER = {"apiVersion": "dbabench.io/v1alpha1", "kind": "AgentRun", "name": "r1", "uid": "u",
         "controller": True, "blockOwnerDeletion": True}
PASSWORDS = {"superuser-password": "s", "app-password": "a"}


def objects(agent: kube.AgentContainer,
            settings: kube.KubeSettings | None = None) -> dict[str, list[dict[str, Any]]]:
    return kube.run_objects("r1", "ns", "golden-x", "kind: Scenario\n", PASSWORDS, "tok", agent,
                            settings or kube.KubeSettings(), OWNER)


def by_kind(objs: dict[str, list[dict[str, Any]]], kind: str, name: str) -> dict[str, Any]:
    return next(o for phase in objs.values() for o in phase
                if o["kind"] == kind and o["metadata"]["name"] == name)


def secrets_seen(container: dict[str, Any]) -> set[str]:
    return {e["valueFrom"]["secretKeyRef"]["name"] for e in container.get("env", [])
            if "secretKeyRef" in e.get("valueFrom", {})}


def test_every_object_is_labelled_and_owned_by_its_run() -> None:
    objs = objects(kube.AgentContainer(name="reference", command=["agent"], sees_scenario=True))
    for phase in objs.values():
        for o in phase:
            assert o["metadata"]["labels"][kube.RUN_LABEL] == "r1", o["metadata"]["name"]
            assert o["metadata"]["ownerReferences"] == [OWNER]
            assert o["metadata"]["name"].startswith("r1-")


def test_the_agent_gets_the_token_and_nothing_else() -> None:
    for agent in (kube.AgentContainer(name="external", image="me/agent:1"),
                  kube.AgentContainer(name="reference", command=["agent"], sees_scenario=True)):
        pod = by_kind(objects(agent), "Pod", "r1-agent")
        (main,) = pod["spec"]["containers"]
        (sidecar,) = pod["spec"]["initContainers"]
        assert secrets_seen(main) == {"r1-tools"}
        assert secrets_seen(sidecar) == {"r1-db", "r1-tools"}
        assert pod["spec"]["automountServiceAccountToken"] is False
        assert not any(m["name"] == "api-token" for m in main.get("volumeMounts", []))
        assert any(m["name"] == "api-token" for m in sidecar["volumeMounts"])
        assert sidecar["restartPolicy"] == "Always" and "startupProbe" in sidecar
        scenario_mounted = any(m["name"] == "scenario" for m in main.get("volumeMounts", []))
        assert scenario_mounted == agent.sees_scenario
    external = by_kind(objects(kube.AgentContainer(name="external", image="me/agent:1")), "Pod",
                       "r1-agent")["spec"]["containers"][0]
    assert external["image"] == "me/agent:1" and "command" not in external


def test_agent_egress_is_dns_and_the_gateway_only() -> None:
    agent = kube.AgentContainer(name="external", image="me/agent:1")
    closed = by_kind(objects(agent), "NetworkPolicy", "r1-agent")["spec"]
    assert closed["podSelector"]["matchLabels"] == {kube.RUN_LABEL: "r1",
                                                    kube.COMPONENT_LABEL: "agent"}
    assert closed["ingress"] == [] and [r.get("to") for r in closed["egress"]] == [None]
    opened = by_kind(objects(agent, kube.KubeSettings(model_gateway_cidr="10.1.2.0/24")),
                     "NetworkPolicy", "r1-agent")["spec"]
    assert opened["egress"][1] == {"to": [{"ipBlock": {"cidr": "10.1.2.0/24"}}]}


def test_data_volume_is_restored_from_the_golden_snapshot() -> None:
    pvc = by_kind(objects(kube.AgentContainer(name="null", command=["agent"])),
                  "PersistentVolumeClaim", "r1-data")
    assert pvc["spec"]["dataSource"] == {"apiGroup": "snapshot.storage.k8s.io",
                                         "kind": "VolumeSnapshot", "name": "golden-x"}


def test_settings_reach_every_pod() -> None:
    settings = kube.KubeSettings(image="reg/dbabench:2", node_selector={"pool": "bench"},
                                 tolerations=[{"key": "bench", "operator": "Exists"}])
    objs = objects(kube.AgentContainer(name="null", command=["agent"]), settings)
    pods = [o["spec"]["template"] if o["kind"] == "Job" else o
            for phase in objs.values() for o in phase if o["kind"] in ("Pod", "Job")]
    assert len(pods) == 5
    for pod in pods:
        assert pod["spec"]["nodeSelector"] == {"pool": "bench"}
        assert pod["spec"]["tolerations"] == [{"key": "bench", "operator": "Exists"}]
        for c in pod["spec"]["containers"]:
            assert c["image"] == "reg/dbabench:2"


def test_results_survive_packing() -> None:
    body = kube.result_configmap("r1-trace", "r1", OWNER, {"outcome.json": b"{}" * 1000})
    assert len(body["binaryData"]["outcome.json"]) < 200
    assert kube.unpack(body["binaryData"]["outcome.json"]) == b"{}" * 1000
