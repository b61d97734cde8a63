"""env.kube's run objects: the isolation the pods executor promises, read off the manifests."""

from __future__ import annotations

from typing import Any

from dbabench.env import kube
from dbabench.model.kube import AgentSpec
from dbabench.model.scenario import ReplicaSpec

OWNER = {"apiVersion": "dbabench.io/v1alpha1", "kind": "AgentRun", "name": "r1", "uid": "u",
         "controller": True, "blockOwnerDeletion": True}
PASSWORDS = {"superuser-password": "s", "app-password": "a"}
EXTERNAL = kube.AgentContainer(name="external",
                               spec=AgentSpec(kind="external", image="me/agent:1"))
REFERENCE = kube.AgentContainer(name="reference", spec=AgentSpec(kind="reference"),
                                sees_scenario=True)
REACT = kube.AgentContainer(name="react:openai:gpt-4o-mini", spec=AgentSpec.model_validate(
    {"kind": "react", "model": "openai:gpt-4o-mini",
     "apiKeySecret": {"name": "openai-key", "key": "api-key"}}))


def objects(agent: kube.AgentContainer, settings: kube.KubeSettings | None = None,
            replica: ReplicaSpec | None = None) -> dict[str, list[dict[str, Any]]]:
    return kube.run_objects("r1", "ns", "golden-x", "kind: Scenario\n", "app", PASSWORDS,
                            "golden-pw", "tok", "ctl", agent, settings or kube.KubeSettings(),
                            OWNER, replica)


def by_kind(objs: dict[str, list[dict[str, Any]]], kind: str, name: str) -> dict[str, Any]:
    return next(o for phase in objs.values() for o in phase
                if o["kind"] == kind and o["metadata"]["name"] == name)


def secrets_seen(container: dict[str, Any]) -> set[str]:
    return {e["valueFrom"]["secretKeyRef"]["name"] for e in container.get("env", [])
            if "secretKeyRef" in e.get("valueFrom", {})}


def test_every_object_is_labelled_and_owned_by_its_run() -> None:
    objs = objects(REFERENCE)
    for phase in objs.values():
        for o in phase:
            assert o["metadata"]["labels"][kube.RUN_LABEL] == "r1", o["metadata"]["name"]
            assert o["metadata"]["ownerReferences"] == [OWNER]
            assert o["metadata"]["name"].startswith("r1-")


def _agent_and_tools(agent: kube.AgentContainer, settings: kube.KubeSettings | None = None
                     ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The agent's pod, its one container and the tool server's one container."""
    objs = objects(agent, settings)
    pod = by_kind(objs, "Pod", "r1-agent")
    (main,) = pod["spec"]["containers"]
    (tools,) = by_kind(objs, "Pod", "r1-tools")["spec"]["containers"]
    return pod, main, tools


def test_the_agent_gets_the_token_and_nothing_else() -> None:
    for agent in (EXTERNAL, REFERENCE):
        pod, main, tools = _agent_and_tools(agent)
        assert "initContainers" not in pod["spec"]
        assert secrets_seen(main) == {"r1-tools"}
        assert secrets_seen(tools) == {"r1-db", "r1-tools"}
        # issue 38: nothing of the harness or the namespace in its pod
        assert pod["spec"]["automountServiceAccountToken"] is False
        assert "serviceAccountName" not in pod["spec"]
        assert pod["spec"]["enableServiceLinks"] is False
        assert pod["spec"]["hostname"] == "agent"
        volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
        assert volumes["task"] == {"name": "task", "configMap": {"name": "r1-task"}}
        assert set(volumes) == ({"task", "scenario"} if agent.sees_scenario else {"task"})
        env = {e["name"]: e.get("value") for e in main["env"]}
        assert env["DBABENCH_TOOLS_URL"] == f"http://r1-tools.ns.svc:{kube.PORTS['tools']}"
        assert env["DBABENCH_TASK_FILE"] == kube.TASK_FILE
        assert not any(n.startswith("DBABENCH_ADDR") for n in env)
        scenario_mounted = any(m["name"] == "scenario" for m in main.get("volumeMounts", []))
        assert scenario_mounted == agent.sees_scenario
    objs = objects(EXTERNAL)
    tools_pod = by_kind(objs, "Pod", "r1-tools")
    assert tools_pod["spec"]["serviceAccountName"] == "dbabench-run"
    assert tools_pod["spec"]["automountServiceAccountToken"] is True
    (tools,) = tools_pod["spec"]["containers"]
    assert {e["name"]: e.get("value") for e in tools["env"]}["DBABENCH_TASK_CONFIGMAP"] == "r1-task"
    service = by_kind(objs, "Service", "r1-tools")
    assert service["spec"]["selector"] == {kube.RUN_LABEL: "r1", kube.COMPONENT_LABEL: "tools"}
    # each policy is created before the pod it fences
    for phase, component in (("serving", "tools"), ("running", "agent")):
        kinds = [o["kind"] for o in objs[phase] if o["metadata"]["name"] == f"r1-{component}"]
        assert kinds.index("NetworkPolicy") < kinds.index("Pod"), phase
    external = by_kind(objs, "Pod", "r1-agent")["spec"]["containers"][0]
    assert external["image"] == "me/agent:1" and "command" not in external


def test_a_model_agent_gets_the_token_and_the_tool_server_the_providers_key() -> None:
    _, main, tools = _agent_and_tools(REACT)
    # the key of the Secret the spec names reaches the tool server, which meters the calls
    assert secrets_seen(main) == {"r1-tools"}
    assert secrets_seen(tools) == {"r1-db", "r1-tools", "openai-key"}
    (key,) = [e for e in tools["env"] if e["name"] == "DBABENCH_MODEL_API_KEY"]
    assert key["valueFrom"]["secretKeyRef"] == {"name": "openai-key", "key": "api-key"}
    # both know the spec; the agent works blind
    for container in (main, tools):
        (spec,) = [e["value"] for e in container["env"] if e["name"] == "DBABENCH_AGENT_SPEC"]
        assert AgentSpec.model_validate_json(spec) == REACT.spec
    assert main["command"] == ["dbabench", "component", "agent"]
    assert not any(m["name"] == "scenario" for m in main.get("volumeMounts", []))
    assert "DBABENCH_SCENARIO_FILE" not in {e["name"] for e in main["env"]}


def test_a_metered_external_agent_gets_the_meter_and_its_token_as_its_key() -> None:
    metered = kube.AgentContainer(name="external", spec=AgentSpec.model_validate(
        {"kind": "external", "image": "me/agent:1", "meter": "openrouter",
         "apiKeySecret": {"name": "router-key", "key": "api-key"}, "maxCostUsd": 2}))
    _, main, tools = _agent_and_tools(metered)
    env = {e["name"]: e for e in main["env"]}
    assert env["OPENAI_BASE_URL"]["value"] == (f"http://r1-tools.ns.svc:{kube.PORTS['tools']}"
                                               "/openai/v1")
    assert env["OPENAI_API_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "r1-tools",
                                                                 "key": "token"}
    assert secrets_seen(main) == {"r1-tools"}
    assert secrets_seen(tools) == {"r1-db", "r1-tools", "router-key"}
    # an external agent unmetered gets neither
    (plain,) = by_kind(objects(EXTERNAL), "Pod", "r1-agent")["spec"]["containers"]
    assert not {"OPENAI_BASE_URL", "OPENAI_API_KEY"} & {e["name"] for e in plain["env"]}


def _selected(rule: dict[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """(run, components) of each pod selector of a policy rule's peers."""
    return [(peer["podSelector"]["matchLabels"][kube.RUN_LABEL],
             tuple(peer["podSelector"]["matchExpressions"][0]["values"]))
            for peer in rule.get("to", rule.get("from", [])) if "podSelector" in peer]


def test_the_agent_reaches_its_tool_server_dns_and_the_gateway_and_nothing_reaches_it() -> None:
    closed = by_kind(objects(EXTERNAL), "NetworkPolicy", "r1-agent")["spec"]
    assert closed["podSelector"]["matchLabels"] == {kube.RUN_LABEL: "r1",
                                                    kube.COMPONENT_LABEL: "agent"}
    assert closed["policyTypes"] == ["Ingress", "Egress"] and closed["ingress"] == []
    dns, tools = closed["egress"]
    assert "to" not in dns and {p["port"] for p in dns["ports"]} == {53}
    # issue 38: not its database, Prometheus or workload: only the tool server's port
    assert _selected(tools) == [("r1", ("tools",))]
    assert [p["port"] for p in tools["ports"]] == [kube.PORTS["tools"]]
    opened = by_kind(objects(EXTERNAL, kube.KubeSettings(model_gateway_cidr="10.1.2.0/24")),
                     "NetworkPolicy", "r1-agent")["spec"]
    assert opened["egress"][2:] == [{"to": [{"ipBlock": {"cidr": "10.1.2.0/24"}}]}]
    # the tool server admits its run's agent pod on its port, and nothing else
    admits = by_kind(objects(EXTERNAL), "NetworkPolicy", "r1-tools")["spec"]
    assert admits["policyTypes"] == ["Ingress"]
    [rule] = admits["ingress"]
    assert _selected(rule) == [("r1", ("agent",))]
    assert [p["port"] for p in rule["ports"]] == [kube.PORTS["tools"]]


def test_the_database_pod_admits_its_own_run_and_holds_no_manifest() -> None:
    objs = objects(kube.AgentContainer(name="null", spec=AgentSpec(kind="null")))
    policy = by_kind(objs, "NetworkPolicy", "r1-postgres")["spec"]
    assert policy["podSelector"]["matchLabels"] == {kube.RUN_LABEL: "r1",
                                                    kube.COMPONENT_LABEL: "postgres"}
    assert policy["policyTypes"] == ["Ingress"]
    [rule] = policy["ingress"]
    assert _selected(rule) == [("r1", ("workload", "admit", "tools", "evaluate"))]
    pod = by_kind(objs, "Pod", "r1-postgres")
    assert not any(v["name"] == "scenario" for v in pod["spec"]["volumes"])
    for container in pod["spec"]["containers"]:
        names = {e["name"] for e in container.get("env", [])}
        assert "DBABENCH_SCENARIO_FILE" not in names
        assert not any(m["name"] == "scenario" for m in container.get("volumeMounts", []))
    # the control token: in the harness's Secret, for the server and the tool server only
    secret = by_kind(objs, "Secret", "r1-db")
    assert secret["stringData"] == {**PASSWORDS, "golden-superuser-password": "golden-pw",
                                    "control-token": "ctl"}
    (server,) = [c for c in pod["spec"]["containers"] if c["name"] == "postgres"]
    # ready once the control endpoint listens, which is after the run's passwords are set
    assert server["readinessProbe"]["tcpSocket"]["port"] == kube.PORTS["control"]
    assert _holders(objs, "DBABENCH_CONTROL_TOKEN") == ["postgres", "tools"]
    # the application's password: where its workload runs and where checks log in as it
    # (application-session checks); never in the agent's own container
    assert _holders(objs, "DBABENCH_PG_APP_PASSWORD") == [
        "postgres", "workload", "admit", "tools", "evaluate"]


def _holders(objs: dict[str, list[dict]], variable: str) -> list[str]:
    return [c["name"] for phase in objs.values() for o in phase if o["kind"] in ("Pod", "Job")
            for c in (o["spec"].get("template", o)["spec"].get("containers", [])
                      + o["spec"].get("template", o)["spec"].get("initContainers", []))
            if any(e["name"] == variable for e in c.get("env", []))]


def _env_of(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container.get("env", [])}


def test_a_standby_is_a_second_database_pod_restored_from_the_same_snapshot() -> None:
    spec = ReplicaSpec(slot="replica1", settings={"hot_standby_feedback": True})
    objs = objects(REFERENCE, replica=spec)
    plain = objects(REFERENCE)
    assert not any(o["metadata"]["name"].startswith("r1-replica")
                   for phase in plain.values() for o in phase)
    assert "DBABENCH_ADDR_REPLICA" not in _env_of(by_kind(plain, "Pod", "r1-workload")[
        "spec"]["containers"][0])
    # its own volume, of the primary's snapshot: both start at the golden's checkpoint
    pvc = by_kind(objs, "PersistentVolumeClaim", "r1-replica-data")
    assert pvc["spec"]["dataSource"] == by_kind(objs, "PersistentVolumeClaim",
                                                "r1-data")["spec"]["dataSource"]
    pod = by_kind(objs, "Pod", "r1-replica")
    assert pod["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {
        "claimName": "r1-replica-data"}}]
    server, exporter = pod["spec"]["containers"]
    env = _env_of(server)
    # the same entrypoint as the primary's, told whom to follow and how: no manifest
    assert server["command"] == ["dbabench", "component", "postgres"]
    assert ReplicaSpec.model_validate_json(env["DBABENCH_REPLICA_SPEC"]) == spec
    assert env["DBABENCH_ADDR_POSTGRES"] == "r1-postgres.ns.svc:5432"
    assert "DBABENCH_SCENARIO_FILE" not in env
    assert _env_of(exporter)["DBABENCH_ADDR_POSTGRES"] == "127.0.0.1:5432"
    service = by_kind(objs, "Service", "r1-replica")
    assert service["spec"]["selector"] == {kube.RUN_LABEL: "r1", kube.COMPONENT_LABEL: "replica"}
    # the primary's Prometheus scrapes the standby's exporter
    (prometheus,) = [c for c in by_kind(objs, "Pod", "r1-postgres")["spec"]["containers"]
                     if c["name"] == "prometheus"]
    assert _env_of(prometheus)["DBABENCH_ADDR_REPLICA_EXPORTER"] == "r1-replica.ns.svc:9187"
    # every component that reaches a server reaches both; the tool server controls both
    for name in ("r1-workload", "r1-admit", "r1-tools", "r1-evaluate"):
        body = by_kind(objs, "Job" if name in ("r1-admit", "r1-evaluate") else "Pod", name)
        (harness,) = body["spec"].get("template", body)["spec"]["containers"]
        assert _env_of(harness)["DBABENCH_ADDR_REPLICA"] == "r1-replica.ns.svc:5432", name
    (tools,) = by_kind(objs, "Pod", "r1-tools")["spec"]["containers"]
    assert _env_of(tools)["DBABENCH_ADDR_REPLICA_CONTROL"] == "r1-replica.ns.svc:8008"
    (agent,) = by_kind(objs, "Pod", "r1-agent")["spec"]["containers"]
    assert not any(n.startswith("DBABENCH_ADDR") for n in _env_of(agent))
    # the servers admit each other (streaming, scraping) and their run's pods, nothing else
    [rule] = by_kind(objs, "NetworkPolicy", "r1-postgres")["spec"]["ingress"]
    assert _selected(rule) == [("r1", ("workload", "admit", "tools", "evaluate", "replica"))]
    [rule] = by_kind(objs, "NetworkPolicy", "r1-replica")["spec"]["ingress"]
    assert _selected(rule) == [("r1", ("workload", "admit", "tools", "evaluate", "postgres"))]
    assert {p["port"] for p in rule["ports"]} == {5432, 8008, 9187}
    assert _holders(objs, "DBABENCH_CONTROL_TOKEN") == ["postgres", "postgres", "tools"]


def test_data_volume_is_restored_from_the_golden_snapshot() -> None:
    pvc = by_kind(objects(kube.AgentContainer(name="null", spec=AgentSpec(kind="null"))),
                  "PersistentVolumeClaim", "r1-data")
    assert pvc["spec"]["dataSource"] == {"apiGroup": "snapshot.storage.k8s.io",
                                         "kind": "VolumeSnapshot", "name": "golden-x"}


def test_settings_reach_every_pod() -> None:
    settings = kube.KubeSettings(image="reg/dbabench:2", node_selector={"pool": "bench"},
                                 tolerations=[{"key": "bench", "operator": "Exists"}])
    objs = objects(kube.AgentContainer(name="null", spec=AgentSpec(kind="null")), settings)
    pods = [o["spec"]["template"] if o["kind"] == "Job" else o
            for phase in objs.values() for o in phase if o["kind"] in ("Pod", "Job")]
    assert len(pods) == 6
    for pod in pods:
        assert pod["spec"]["nodeSelector"] == {"pool": "bench"}
        assert pod["spec"]["tolerations"] == [{"key": "bench", "operator": "Exists"}]
        for c in pod["spec"]["containers"]:
            assert c["image"] == "reg/dbabench:2"


def test_results_survive_packing() -> None:
    body = kube.result_configmap("r1-trace", "r1", OWNER, {"outcome.json": b"{}" * 1000})
    assert len(body["binaryData"]["outcome.json"]) < 200
    assert kube.unpack(body["binaryData"]["outcome.json"]) == b"{}" * 1000
