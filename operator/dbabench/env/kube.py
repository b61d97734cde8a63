"""env.kube: one run's environment as Kubernetes objects, and the components' side of it.

The pods executor (``dbabench.operator.pods``) creates, per AgentRun:

    <run>-db        Secret     this run's database passwords (set over the golden's at
                               start) and the control endpoint's token: the harness
                               containers' only
    <run>-tools     Secret     the tool server's bearer token: the agent's only credential
    <run>-scenario  ConfigMap  the manifest, for the harness containers (never the agent's)
    <run>-data      PVC        dataSource: the Scenario's golden VolumeSnapshot
    <run>-postgres  Pod        postgres (under ``dbabench component postgres``, which also
                               answers manage_instance's start/stop to the bearer of the
                               control token), postgres_exporter and a Prometheus scraping
                               this run only; Service of the same name; no manifest; a
                               NetworkPolicy admits the run's own pods only
    <run>-replica-data  PVC    where the scenario has a hot standby: the same snapshot again
    <run>-replica   Pod        the standby (the same entrypoint, following the primary through
                               the scenario's slot) and its postgres_exporter; Service and
                               NetworkPolicy as the primary's
    <run>-workload  Pod        runtime fault, then the application; Service of the same name
    <run>-admit     Job        manifestation predicates -> ConfigMap <run>-admission
    <run>-tools     Pod        the tool server: the gate, the trace and the only credentials
                               (database, control token, a metered agent's provider key);
                               publishes the task in ConfigMap <run>-task, and the trace in
                               ConfigMap <run>-trace when it is stopped. Service of the same
                               name; NetworkPolicy: admits the run's agent pod only
    <run>-agent     Pod        the agent alone: the tool URL, its token and the task file, no
                               service account, no Service links, hostname ``agent``;
                               NetworkPolicy: egress to its run's tool server, DNS and the
                               model gateway (when configured), no ingress. It shares nothing
                               with the harness but the tool server's port
    <run>-evaluate  Job        the evaluator on the post-fix state -> ConfigMap <run>-evaluation

Everything carries the label ``dbabench.io/run`` and an owner reference to the AgentRun.
Containers learn addresses from ``DBABENCH_ADDR_*`` (host:port) and their listen ports from
``DBABENCH_PORT_*``, and nothing else: that contract is what lets a test tier without kubelets
play the pods as local processes (each pod in a network namespace of its own, its policies
enforced).

Each object is built of the kubernetes client's models, so that a misspelt field is an error
here rather than a field the API server drops, and handed out as the JSON the API server takes
(``_wire``). The VolumeSnapshot is a CRD's, which the client has no model of: a dict.
"""

from __future__ import annotations

import base64
import functools
import gzip
import importlib
import json
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, field_validator

from dbabench.env import contract
from dbabench.model.artifacts import CampaignArtifact, RunArtifact
from dbabench.model.base import Model
from dbabench.model.crd import GROUP, VERSION
from dbabench.model.kube import AgentKind, AgentSpec
from dbabench.model.scenario import ReplicaSpec


class _ClientOnFirstUse:
    """kubernetes.client, imported when the first object is built: every component imports
    this module for its addresses, most never build an object, and the client takes ~0.3 s to
    import."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("kubernetes.client"), name)


if TYPE_CHECKING:
    from kubernetes import client as k8s
else:
    k8s = _ClientOnFirstUse()

RUN_LABEL = f"{GROUP}/run"
CAMPAIGN_LABEL = f"{GROUP}/campaign"
COMPONENT_LABEL = f"{GROUP}/component"
GOLDEN_LABEL = f"{GROUP}/golden"
SNAPSHOT_GROUP = "snapshot.storage.k8s.io"
SNAPSHOT_API = f"{SNAPSHOT_GROUP}/v1"

PORTS = {"postgres": 5432, "control": 8008, "exporter": 9187, "prometheus": 9090,
         "workload": 8000, "business": 8001, "tools": 8765}
PG_HOME = "/var/lib/dbabench/pg"
SCENARIO_FILE = f"/etc/dbabench/{RunArtifact.MANIFEST}"
WORK_DIR = "/var/run/dbabench"
TASK_DIR = "/var/run/dbabench-task"
TASK_KEY = RunArtifact.TASK_JSON.value
"""The task's key in ConfigMap <run>-task, so its file in the agent's pod."""
TASK_FILE = f"{TASK_DIR}/{TASK_KEY}"


class KubeSettings(Model):
    """What the cluster offers a run: the operator's configuration of the pods executor."""

    image: str = "dbabench:0.1.0"
    clone_from: Literal["snapshot", "pvc"] = "snapshot"
    """snapshot: a CSI VolumeSnapshot of the golden volume; pvc: where the cluster has no
    snapshot class, each run's volume is a CSI clone of the golden PVC itself."""
    storage_class: str | None = None
    snapshot_class: str | None = None
    volume_size: str = "4Gi"
    node_selector: dict[str, str] = {}
    tolerations: list[dict[str, Any]] = []
    """For nodes set aside (tainted) for benchmark runs."""
    model_gateway_cidr: str | None = None
    """Where an agent's pod may connect besides its tool server (NetworkPolicy): the provider
    of an external agent that calls it directly. A metered agent's calls go through the tool
    server, which reaches the provider itself."""

    @field_validator("tolerations")
    @classmethod
    def _tolerations(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # a misspelt key fails the operator's start, not every run's
        for toleration in value:
            try:
                _typed(k8s.V1Toleration, toleration)
            except TypeError as e:
                raise ValueError(f"not a toleration: {toleration} ({e})") from e
        return value


def service_host(name: str, namespace: str) -> str:
    return f"{name}.{namespace}.svc"


def addr(name: str, namespace: str, port: str) -> str:
    return f"{service_host(name, namespace)}:{PORTS[port]}"


@functools.cache
def _api_client() -> k8s.ApiClient:
    return k8s.ApiClient()


def _wire(body: Any) -> dict[str, Any]:
    """A body as the API server takes it, and as this module's callers get it: camelCase keys,
    unset fields left out (empty lists and maps are kept: an empty ``ingress`` denies all)."""
    return _api_client().sanitize_for_serialization(body)


T = TypeVar("T")


def _typed(model: type[T], body: dict[str, Any]) -> T:
    """A camelCase body handed to us (an owner reference, a toleration of the settings) as the
    client's model; a key the model does not know is an error, not a field dropped."""
    snake = {camel: name for name, camel in model.attribute_map.items()}
    return model(**{snake.get(key, key): value for key, value in body.items()})


def _labels(run: str, component: str, label: str = RUN_LABEL) -> dict[str, str]:
    return {label: run, COMPONENT_LABEL: component}


def _env(field: str, value: str) -> k8s.V1EnvVar:
    return k8s.V1EnvVar(name=contract.variable(field), value=value)


def _secret_ref(name: str, secret: str, key: str) -> k8s.V1EnvVar:
    return k8s.V1EnvVar(name=name, value_from=k8s.V1EnvVarSource(
        secret_key_ref=k8s.V1SecretKeySelector(name=secret, key=key)))


def _secret_env(field: str, secret: str, key: str) -> k8s.V1EnvVar:
    return _secret_ref(contract.variable(field), secret, key)


def _namespace_field() -> k8s.V1ObjectFieldSelector:
    return k8s.V1ObjectFieldSelector(field_path="metadata.namespace")


def _namespace_env() -> k8s.V1EnvVar:
    return k8s.V1EnvVar(name=contract.variable("namespace"),
                        value_from=k8s.V1EnvVarSource(field_ref=_namespace_field()))


def _port_env(component: str) -> k8s.V1EnvVar:
    return _env(f"port_{component}", str(PORTS[component]))


def _tcp_probe(port: str) -> k8s.V1Probe:
    return k8s.V1Probe(tcp_socket=k8s.V1TCPSocketAction(port=PORTS[port]), period_seconds=1)


def _container(name: str, settings: KubeSettings, component: list[str],
               env: list[k8s.V1EnvVar], ports: tuple[str, ...] = (),
               mounts: tuple[tuple[str, str], ...] = ()) -> k8s.V1Container:
    return k8s.V1Container(
        name=name, image=settings.image, image_pull_policy="IfNotPresent",
        command=["dbabench", "component", *component],
        env=env + [_port_env(p) for p in ports],
        ports=[k8s.V1ContainerPort(name=p, container_port=PORTS[p]) for p in ports],
        volume_mounts=[k8s.V1VolumeMount(name=v, mount_path=path) for v, path in mounts],
        readiness_probe=_tcp_probe(ports[0]) if ports else None)


def _meta(name: str, run: str, component: str, owner: dict[str, Any] | None,
          label: str = RUN_LABEL) -> k8s.V1ObjectMeta:
    return k8s.V1ObjectMeta(
        name=name, labels=_labels(run, component, label),
        owner_references=None if owner is None else [_typed(k8s.V1OwnerReference, owner)])


def _pod(name: str, run: str, component: str, owner: dict[str, Any] | None,
         settings: KubeSettings, containers: list[k8s.V1Container],
         volumes: list[k8s.V1Volume], **spec: Any) -> k8s.V1Pod:
    defaults: dict[str, Any] = {
        "restart_policy": "Never", "node_selector": dict(settings.node_selector),
        "tolerations": [_typed(k8s.V1Toleration, t) for t in settings.tolerations],
        "automount_service_account_token": False}
    return k8s.V1Pod(api_version="v1", kind="Pod", metadata=_meta(name, run, component, owner),
                     spec=k8s.V1PodSpec(containers=containers, volumes=volumes,
                                        **{**defaults, **spec}))


def _job(name: str, run: str, component: str, owner: dict[str, Any] | None, pod: k8s.V1Pod,
         label: str = RUN_LABEL) -> k8s.V1Job:
    template = k8s.V1PodTemplateSpec(metadata=k8s.V1ObjectMeta(labels=pod.metadata.labels),
                                     spec=pod.spec)
    return k8s.V1Job(api_version="batch/v1", kind="Job",
                     metadata=_meta(name, run, component, owner, label),
                     spec=k8s.V1JobSpec(backoff_limit=0, template=template))


def _service(name: str, run: str, component: str, owner: dict[str, Any] | None,
             ports: tuple[str, ...]) -> k8s.V1Service:
    return k8s.V1Service(
        api_version="v1", kind="Service", metadata=_meta(name, run, component, owner),
        spec=k8s.V1ServiceSpec(selector=_labels(run, component), ports=[
            k8s.V1ServicePort(name=p, port=PORTS[p], target_port=PORTS[p]) for p in ports]))


def _config_volume(name: str) -> k8s.V1Volume:
    return k8s.V1Volume(name="scenario", config_map=k8s.V1ConfigMapVolumeSource(name=name))


def _claim_volume(claim: str) -> k8s.V1Volume:
    return k8s.V1Volume(name="data", persistent_volume_claim=(
        k8s.V1PersistentVolumeClaimVolumeSource(claim_name=claim)))


def _empty_dir(name: str) -> k8s.V1Volume:
    return k8s.V1Volume(name=name, empty_dir=k8s.V1EmptyDirVolumeSource())


def _db_env(secret: str, *, app: bool = False, control: bool = False) -> list[k8s.V1EnvVar]:
    env = [_secret_env("pg_superuser_password", secret, "superuser-password")]
    if app:
        env.append(_secret_env("pg_app_password", secret, "app-password"))
    if control:
        env.append(_secret_env("control_token", secret, "control-token"))
    return env


def _result_env(configmap: str, owner: dict[str, Any] | None) -> list[k8s.V1EnvVar]:
    env = [_env("result_configmap", configmap), _namespace_env()]
    if owner is not None:
        env.append(_env("owner", json.dumps(owner)))
    return env


def _pvc(name: str, run: str, component: str, owner: dict[str, Any] | None,
         settings: KubeSettings, source: str | None,
         label: str = RUN_LABEL) -> k8s.V1PersistentVolumeClaim:
    """A volume; ``source`` names the golden to restore it from (a snapshot or a PVC)."""
    origin = None if source is None else (
        k8s.V1TypedLocalObjectReference(api_group=SNAPSHOT_GROUP, kind="VolumeSnapshot",
                                        name=source)
        if settings.clone_from == "snapshot" else
        k8s.V1TypedLocalObjectReference(kind="PersistentVolumeClaim", name=source))
    return k8s.V1PersistentVolumeClaim(
        api_version="v1", kind="PersistentVolumeClaim",
        metadata=_meta(name, run, component, owner, label),
        spec=k8s.V1PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            resources=k8s.V1VolumeResourceRequirements(
                requests={"storage": settings.volume_size}),
            storage_class_name=settings.storage_class or None, data_source=origin))


def _configmap(name: str, run: str, component: str, owner: dict[str, Any] | None,
               label: str = RUN_LABEL, **content: dict[str, str]) -> k8s.V1ConfigMap:
    """``content``: its ``data`` or its ``binary_data``."""
    return k8s.V1ConfigMap(api_version="v1", kind="ConfigMap",
                           metadata=_meta(name, run, component, owner, label), **content)


def _secret(name: str, run: str, component: str, owner: dict[str, Any] | None,
            data: dict[str, str], label: str = RUN_LABEL) -> k8s.V1Secret:
    return k8s.V1Secret(api_version="v1", kind="Secret",
                        metadata=_meta(name, run, component, owner, label), string_data=data)


# -- the golden snapshot of a Scenario ----------------------------------------------------------

def golden_name(key: str) -> str:
    return f"golden-{key}"


def golden_objects(key: str, manifest: str, passwords: dict[str, str], settings: KubeSettings,
                   owner: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Secret, manifest, volume and the Job that fills it; the snapshot is taken after."""
    name = golden_name(key)
    env = [_env("scenario_file", SCENARIO_FILE), _env("pg_home", PG_HOME),
           *_db_env(name, app=True)]
    container = _container("golden", settings, ["golden"], env,
                           mounts=(("data", PG_HOME), ("scenario", "/etc/dbabench")))
    pod = _pod(name, key, "golden", None, settings, [container],
               [_claim_volume(name), _config_volume(name)])
    return [_wire(body) for body in (
        _secret(name, key, "golden", owner, passwords, GOLDEN_LABEL),
        _configmap(name, key, "golden", owner, GOLDEN_LABEL,
                   data={RunArtifact.MANIFEST.value: manifest}),
        _pvc(name, key, "golden", owner, settings, None, GOLDEN_LABEL),
        _job(name, key, "golden", owner, pod, GOLDEN_LABEL),
    )]


def golden_snapshot(key: str, settings: KubeSettings,
                    owner: dict[str, Any] | None) -> dict[str, Any]:
    # A CRD's object: the client has no model for it, and its two fields are not worth one of
    # ours; a dict, around typed metadata.
    spec: dict[str, Any] = {"source": {"persistentVolumeClaimName": golden_name(key)}}
    if settings.snapshot_class:
        spec["volumeSnapshotClassName"] = settings.snapshot_class
    return _wire({"apiVersion": SNAPSHOT_API, "kind": "VolumeSnapshot",
                  "metadata": _meta(golden_name(key), key, "golden", owner, GOLDEN_LABEL),
                  "spec": spec})


# -- one AgentRun --------------------------------------------------------------------------------

class AgentContainer(Model):
    """The agent's part of its pod: the operator decides it from the AgentRun's agent spec."""

    name: str
    """The agent's name in the evaluation (reference, decoy, external, ...)."""
    spec: AgentSpec
    """An external agent's image runs with its own entrypoint; the harness's own agents run
    from their spec in the dbabench image."""
    sees_scenario: bool = False
    """Scripted agents are the scenario's own oracles; every other agent works blind."""


def _server_containers(run: str, database: str, db: str, settings: KubeSettings,
                       standby: list[k8s.V1EnvVar]) -> list[k8s.V1Container]:
    """A database server and its postgres_exporter; ``standby``: the environment that makes
    it the hot standby of the run's primary (none for the primary itself)."""
    return [
        _container("postgres", settings, ["postgres"],
                   [_env("pg_home", PG_HOME), _env("database", database),
                    _env("run", run), *_db_env(db, app=True, control=True),
                    _secret_env("pg_golden_superuser_password", db,
                                "golden-superuser-password"), *standby],
                   # ready once the control endpoint listens: after this run's passwords are
                   # set (a standby: after it has replayed them)
                   ports=("control", "postgres"), mounts=(("data", PG_HOME),)),
        _container("exporter", settings, ["exporter"],
                   [_env("addr_postgres", f"127.0.0.1:{PORTS['postgres']}"),
                    _env("database", database), *_db_env(db)], ports=("exporter",)),
    ]


def run_objects(run: str, namespace: str, snapshot: str, manifest: str, database: str,
                passwords: dict[str, str], golden_superuser_password: str, token: str,
                control_token: str, agent: AgentContainer, settings: KubeSettings,
                owner: dict[str, Any] | None,
                replica: ReplicaSpec | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every object of one run, grouped by the phase that creates them. ``passwords`` are this
    run's own, which the database pod sets over the golden's at start; ``token`` is the tool
    server's (the agent's), ``control_token`` the database pod's control endpoint's;
    ``replica``: the scenario's hot standby, a second database pod."""
    db, tools = f"{run}-db", f"{run}-tools"
    pg_addr = addr(f"{run}-postgres", namespace, "postgres")
    workload_addr = addr(f"{run}-workload", namespace, "workload")
    # where the scenario has a standby, every component that reaches a server reaches both
    standby_addr = [] if replica is None else [
        _env("addr_replica", addr(f"{run}-replica", namespace, "postgres"))]
    common = [_env("scenario_file", SCENARIO_FILE), _env("run", run),
              _env("addr_postgres", pg_addr), *standby_addr]
    scenario_mount = ("scenario", "/etc/dbabench")
    scenario_volume = _config_volume(f"{run}-scenario")

    # the database pods have no manifest: what a program the server runs could read of the run
    scraped = [] if replica is None else [
        _env("addr_replica_exporter", addr(f"{run}-replica", namespace, "exporter"))]
    postgres = _pod(f"{run}-postgres", run, "postgres", owner, settings, [
        *_server_containers(run, database, db, settings, []),
        _container("prometheus", settings, ["prometheus"],
                   [_env("run", run), _env("work_dir", WORK_DIR),
                    _env("addr_exporter", f"127.0.0.1:{PORTS['exporter']}"), *scraped,
                    _env("addr_workload", workload_addr)],
                   ports=("prometheus",), mounts=(("work", WORK_DIR),)),
    ], [_claim_volume(f"{run}-data"), _empty_dir("work")])
    servers: list[Any] = [
        postgres, _service(f"{run}-postgres", run, "postgres", owner, DATABASE_PORTS),
        _database_policy(run, "postgres", owner, replica is not None)]
    if replica is not None:
        servers = [_pvc(f"{run}-replica-data", run, "data", owner, settings, snapshot), *servers,
                   _pod(f"{run}-replica", run, "replica", owner, settings, _server_containers(
                       run, database, db, settings,
                       [_env("addr_postgres", pg_addr),
                        _env("replica_spec", replica.model_dump_json())]),
                        [_claim_volume(f"{run}-replica-data")]),
                   _service(f"{run}-replica", run, "replica", owner, REPLICA_PORTS),
                   _database_policy(run, "replica", owner, True)]

    workload = _pod(f"{run}-workload", run, "workload", owner, settings, [
        _container("workload", settings, ["workload"], [*common, *_db_env(db, app=True)],
                   ports=("workload", "business"), mounts=(scenario_mount,)),
    ], [scenario_volume])

    # the application's password too: checks of what the application's role runs with log in as it
    harness = [*common, *_db_env(db, app=True), _env("addr_workload", workload_addr),
               _env("addr_business", addr(f"{run}-workload", namespace, "business")),
               _env("work_dir", WORK_DIR)]
    admit = _pod(f"{run}-admit", run, "admit", owner, settings, [
        _container("admit", settings, ["admit"],
                   [*harness, *_result_env(f"{run}-admission", owner)],
                   mounts=(scenario_mount, ("work", WORK_DIR))),
    ], [scenario_volume, _empty_dir("work")], service_account_name="dbabench-run",
        automount_service_account_token=True)

    # The tool server: a pod of its own, which the agent reaches over the network and shares
    # nothing else with. It alone holds the database credentials, the control token and, for
    # a metered agent, the provider's key; it publishes the task for the agent's pod, and the
    # trace when it is stopped.
    tools_url = f"http://{addr(f'{run}-tools', namespace, 'tools')}"
    server = _container("tools", settings, ["tools"], [
        *harness, _env("addr_prometheus", addr(f"{run}-postgres", namespace, "prometheus")),
        _env("addr_control", addr(f"{run}-postgres", namespace, "control")),
        *([] if replica is None else [
            _env("addr_replica_control", addr(f"{run}-replica", namespace, "control"))]),
        _secret_env("control_token", db, "control-token"),
        _secret_env("tools_token", tools, "token"), _env("task_configmap", f"{run}-task"),
        *_result_env(f"{run}-trace", owner)],
        ports=("tools",), mounts=(scenario_mount, ("work", WORK_DIR)))
    spec_env = _env("agent_spec", agent.spec.model_dump_json(by_alias=True))
    server.env.append(spec_env)
    key = agent.spec.api_key_secret
    if key is not None:
        server.env.append(_secret_env("model_api_key", key.name, key.key))
    tools_pod = _pod(f"{run}-tools", run, "tools", owner, settings, [server],
                     [scenario_volume, _empty_dir("work")], service_account_name="dbabench-run",
                     automount_service_account_token=True)

    # What every agent gets (the external-agent contract): URL, token, task file. No more.
    agent_env = [_env("tools_url", tools_url), _secret_env("tools_token", tools, "token"),
                 _env("task_file", TASK_FILE)]
    agent_mounts = (("task", TASK_DIR), scenario_mount) if agent.sees_scenario else (
        ("task", TASK_DIR),)
    if agent.spec.kind != AgentKind.external:
        own = [*agent_env, spec_env]
        main = _container("agent", settings, ["agent"],
                          [*own, _env("scenario_file", SCENARIO_FILE)]
                          if agent.sees_scenario else own, mounts=agent_mounts)
    else:
        url, key_name = contract.METERED_ENV
        metered = [] if agent.spec.meter is None else [
            k8s.V1EnvVar(name=url, value=tools_url + contract.METER_PATH),
            _secret_ref(key_name, tools, "token")]
        main = k8s.V1Container(name="agent", image=agent.spec.image, env=agent_env + metered,
                               volume_mounts=[k8s.V1VolumeMount(name="task", mount_path=TASK_DIR,
                                                                read_only=True)])
    # No service account, no Service links in its environment (they would list every Service
    # of the namespace), a hostname that is not the run's name.
    agent_pod = _pod(f"{run}-agent", run, "agent", owner, settings, [main],
                     [k8s.V1Volume(name="task", config_map=k8s.V1ConfigMapVolumeSource(
                         name=f"{run}-task")),
                      *([scenario_volume] if agent.sees_scenario else [])],
                     enable_service_links=False, hostname="agent")

    evaluate = _pod(f"{run}-evaluate", run, "evaluate", owner, settings, [
        _container("evaluate", settings, ["evaluate"],
                   [*harness, _env("trace_configmap", f"{run}-trace"),
                    _env("admission_configmap", f"{run}-admission"),
                    _env("agent", agent.name),
                    *_result_env(f"{run}-evaluation", owner)],
                   mounts=(scenario_mount, ("work", WORK_DIR))),
    ], [scenario_volume, _empty_dir("work")], service_account_name="dbabench-run",
        automount_service_account_token=True)

    phases: dict[str, list[Any]] = {
        "provisioning": [
            _secret(db, run, "db", owner, {
                **passwords, "golden-superuser-password": golden_superuser_password,
                "control-token": control_token}),
            _secret(tools, run, "tools", owner, {"token": token}),
            _configmap(f"{run}-scenario", run, "scenario", owner,
                       data={RunArtifact.MANIFEST.value: manifest}),
            _pvc(f"{run}-data", run, "data", owner, settings, snapshot),
            *servers,
        ],
        "admitting": [
            workload, _service(f"{run}-workload", run, "workload", owner,
                               ("workload", "business")),
            _job(f"{run}-admit", run, "admit", owner, admit),
        ],
        # each policy before its pod: a pod never runs unfenced
        "serving": [_tools_policy(run, owner), _service(f"{run}-tools", run, "tools", owner,
                                                        ("tools",)), tools_pod],
        "running": [_agent_policy(run, owner, settings), agent_pod],
        "evaluating": [_job(f"{run}-evaluate", run, "evaluate", owner, evaluate)],
    }
    return {phase: [_wire(body) for body in bodies] for phase, bodies in phases.items()}


def _run_pods(run: str, *components: str) -> k8s.V1NetworkPolicyPeer:
    return k8s.V1NetworkPolicyPeer(pod_selector=k8s.V1LabelSelector(
        match_labels={RUN_LABEL: run}, match_expressions=[k8s.V1LabelSelectorRequirement(
            key=COMPONENT_LABEL, operator="In", values=list(components))]))


def _ports(protocol: str, *ports: int) -> list[k8s.V1NetworkPolicyPort]:
    return [k8s.V1NetworkPolicyPort(protocol=protocol, port=p) for p in ports]


def _tcp(*ports: str) -> list[k8s.V1NetworkPolicyPort]:
    return _ports("TCP", *(PORTS[p] for p in ports))


def _network_policy(run: str, component: str, owner: dict[str, Any] | None,
                    **spec: Any) -> k8s.V1NetworkPolicy:
    """The policy of one of the run's pods; ``spec``: its types and rules."""
    return k8s.V1NetworkPolicy(
        api_version="networking.k8s.io/v1", kind="NetworkPolicy",
        metadata=_meta(f"{run}-{component}", run, component, owner),
        spec=k8s.V1NetworkPolicySpec(
            pod_selector=k8s.V1LabelSelector(match_labels=_labels(run, component)), **spec))


DATABASE_PORTS = ("postgres", "control", "prometheus")
REPLICA_PORTS = ("postgres", "control", "exporter")
"""The standby's exporter is scraped by the Prometheus of the primary's pod."""


def _database_policy(run: str, component: str, owner: dict[str, Any] | None,
                     with_replica: bool) -> k8s.V1NetworkPolicy:
    peer = ("replica" if component == "postgres" else "postgres",) if with_replica else ()
    return _network_policy(run, component, owner, policy_types=["Ingress"], ingress=[
        k8s.V1NetworkPolicyIngressRule(
            _from=[_run_pods(run, "workload", "admit", "tools", "evaluate", *peer)],
            ports=_tcp(*(DATABASE_PORTS if component == "postgres" else REPLICA_PORTS)))])


def _agent_policy(run: str, owner: dict[str, Any] | None,
                  settings: KubeSettings) -> k8s.V1NetworkPolicy:
    """The agent pod reaches its run's tool server, DNS (for the tool server's name and a
    provider's) and the model gateway when one is configured; nothing reaches it."""
    rule = k8s.V1NetworkPolicyEgressRule
    egress = [
        rule(ports=[*_ports("UDP", 53), *_ports("TCP", 53)]),
        rule(to=[_run_pods(run, "tools")], ports=_tcp("tools")),
        *([rule(to=[k8s.V1NetworkPolicyPeer(ip_block=k8s.V1IPBlock(
            cidr=settings.model_gateway_cidr))])] if settings.model_gateway_cidr else [])]
    # ingress: present and empty, so that nothing is admitted
    return _network_policy(run, "agent", owner, policy_types=["Ingress", "Egress"],
                           ingress=[], egress=egress)


def _tools_policy(run: str, owner: dict[str, Any] | None) -> k8s.V1NetworkPolicy:
    """The tool server admits its run's agent pod, on its port, and nothing else."""
    return _network_policy(run, "tools", owner, policy_types=["Ingress"], ingress=[
        k8s.V1NetworkPolicyIngressRule(_from=[_run_pods(run, "agent")], ports=_tcp("tools"))])


# -- results: components -> ConfigMaps -> operator ------------------------------------------------

def pack(payload: bytes) -> str:
    """ConfigMaps hold 1 MiB; a trace compresses ~10x."""
    return base64.b64encode(gzip.compress(payload)).decode()


def unpack(packed: str) -> bytes:
    return gzip.decompress(base64.b64decode(packed))


def result_configmap(name: str, run: str, owner: dict[str, Any] | None,
                     payloads: dict[str, bytes]) -> dict[str, Any]:
    return _wire(_configmap(name, run, "result", owner,
                            binary_data={key: pack(value) for key, value in payloads.items()}))


RESULTS_PER_CONFIGMAP = 1000
"""Lines of results.jsonl a campaign's ConfigMap holds: a line is under 1 KiB, a ConfigMap at
most 1 MiB."""
RESULTS_COMPONENT = "results"
SHARDS_KEY = "shards"


def campaign_results(campaign: str, owner: dict[str, Any] | None,
                     records: dict[str, str]) -> list[dict[str, Any]]:
    """A Campaign resource's records (``records``: campaign.json, results.jsonl and
    events.jsonl, as a local campaign's directory holds them) as ConfigMaps
    ``<campaign>-results-<k>``: the first has every file and how many ConfigMaps there are,
    each further one the next RESULTS_PER_CONFIGMAP lines of results.jsonl;
    ``joined_results`` joins them."""
    lines = records[CampaignArtifact.RESULTS.value].splitlines(keepends=True)
    shards = [lines[i:i + RESULTS_PER_CONFIGMAP]
              for i in range(0, max(len(lines), 1), RESULTS_PER_CONFIGMAP)]
    first = {**records, SHARDS_KEY: str(len(shards))}
    return [_wire(_configmap(f"{campaign}-results-{k}", campaign, RESULTS_COMPONENT, owner,
                             CAMPAIGN_LABEL,
                             data={**(first if k == 0 else {}),
                                   CampaignArtifact.RESULTS.value: "".join(s)}))
            for k, s in enumerate(shards)]


def joined_results(bodies: list[dict[str, Any]]) -> dict[str, str]:
    """The records ``campaign_results`` split into ConfigMaps (their bodies, any order): the
    shards the first names, and nothing else labelled like them."""
    by_name = {cm["metadata"]["name"]: cm.get("data") or {} for cm in bodies}
    prefix = next(n for n in by_name if n.endswith("-results-0"))[:-1]
    first = by_name[prefix + "0"]
    shards = [by_name.get(f"{prefix}{k}", {}) for k in range(int(first[SHARDS_KEY]))]
    records = {key: text for key, text in first.items() if key != SHARDS_KEY}
    records[CampaignArtifact.RESULTS.value] = "".join(d.get(CampaignArtifact.RESULTS, "")
                                                for d in shards)
    return records


def read_campaign_results(campaign: str, namespace: str) -> dict[str, str] | None:
    """The records of a Campaign resource (None: it has none, or is not there)."""
    found = core_api().list_namespaced_config_map(
        namespace, label_selector=f"{CAMPAIGN_LABEL}={campaign},"
                                  f"{COMPONENT_LABEL}={RESULTS_COMPONENT}").items
    return joined_results([_wire(cm) for cm in found]) if found else None


def owner_from_env() -> dict[str, Any] | None:
    raw = contract.get("owner")
    return json.loads(raw) if raw else None


# -- the API, as the harness containers see it ----------------------------------------------------

def core_api() -> Any:
    """CoreV1Api with the pod's service account, or a kubeconfig outside a cluster."""
    from kubernetes import client, config

    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    return client.CoreV1Api()


def namespace_from_env() -> str:
    return contract.need("namespace")


def publish(name: str, run: str, payloads: dict[str, bytes], *, plain: bool = False) -> None:
    """Write a component's result once; a re-run of the component (a retried Job, a restarted
    pod) keeps the first, so the operator never sees two answers to one question. ``plain``:
    as text (``data``) for a pod to mount, not packed."""
    from kubernetes.client.rest import ApiException

    body = (_wire(_configmap(name, run, "result", owner_from_env(), data={
                key: value.decode() for key, value in payloads.items()}))
            if plain else result_configmap(name, run, owner_from_env(), payloads))
    try:
        core_api().create_namespaced_config_map(namespace_from_env(), body)
    except ApiException as e:
        if e.status != 409:
            raise


class ConfigMapRecords:
    """A run's records kept as keys of ConfigMap ``name`` (the pods' records, as a run
    directory keeps them in ``records.run``): each written once, packed, read back by key."""

    def __init__(self, name: str, run: str = "") -> None:
        self.name, self.run = name, run

    def write(self, artifact: RunArtifact, record: Model | BaseModel, *,
              plain: bool = False) -> None:
        # plain: a file an agent reads, indented; packed: as small as it comes
        text = record.model_dump_json(indent=1 if plain else None)
        publish(self.name, self.run, {artifact.value: text.encode()}, plain=plain)

    def read(self, artifact: RunArtifact) -> bytes | None:
        return read_result(self.name, artifact.value)


def read_result(name: str, key: str) -> bytes | None:
    from kubernetes.client.rest import ApiException

    try:
        cm = core_api().read_namespaced_config_map(name, namespace_from_env())
    except ApiException as e:
        if e.status == 404:
            return None
        raise
    return unpack(cm.binary_data[key]) if cm.binary_data and key in cm.binary_data else None


# -- what deleted campaigns left ------------------------------------------------------------------

def campaign_leftovers(namespace: str | None) -> list[tuple[str, str, str]]:
    """Objects labelled with a Campaign that is no longer there, as (namespace, plural, name):
    its runs, their Evaluations and its results ConfigMaps, where the garbage collector did not
    take them (the Campaign deleted with ``--cascade=orphan``, owner references removed).
    ``namespace`` None: every namespace."""
    from kubernetes import client

    core, custom = core_api(), client.CustomObjectsApi()

    def listed(plural: str, selector: str = "") -> list[dict[str, Any]]:
        found = (custom.list_cluster_custom_object(GROUP, VERSION, plural,
                                                   label_selector=selector)
                 if namespace is None else
                 custom.list_namespaced_custom_object(GROUP, VERSION, namespace, plural,
                                                      label_selector=selector))
        return list(found["items"])

    alive = {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in listed("campaigns")}
    labelled = [(plural, o["metadata"]) for plural in ("agentruns", "evaluations")
                for o in listed(plural, CAMPAIGN_LABEL)]
    maps = (core.list_config_map_for_all_namespaces(label_selector=CAMPAIGN_LABEL)
            if namespace is None else
            core.list_namespaced_config_map(namespace, label_selector=CAMPAIGN_LABEL))
    labelled += [("configmaps", _wire(cm.metadata)) for cm in maps.items]
    return sorted((meta["namespace"], plural, meta["name"]) for plural, meta in labelled
                  if (meta["namespace"], meta["labels"][CAMPAIGN_LABEL]) not in alive)


def delete_leftover(namespace: str, plural: str, name: str) -> None:
    """One object ``campaign_leftovers`` found; gone already is fine."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    try:
        if plural == "configmaps":
            core_api().delete_namespaced_config_map(name, namespace)
        else:
            client.CustomObjectsApi().delete_namespaced_custom_object(
                GROUP, VERSION, namespace, plural, name,
                body=client.V1DeleteOptions(propagation_policy="Background"))
    except ApiException as e:
        if e.status != 404:
            raise
