"""A kubelet, CSI provisioner and snapshotter for one node, playing pods as local processes.

kwok makes pods look Running but starts nothing. For the pods executor's test this node does
what a real node would: it provisions PersistentVolumes (directories; a volume restored from a
VolumeSnapshot is a copy of it), takes VolumeSnapshots of them, and runs each pod's containers,
exactly their command lines (``dbabench component ...``), with their environment resolved from
the API (Secrets, fieldRefs) and a service account token when the pod mounts one. Each pod runs
in a network namespace of its own, joined to the others where the NetworkPolicies allow
(fabric.py). Ports are the node's business: every container port gets a local port unused on
the host (the same one for the Service port that targets it), and ``host:port`` references to
Services (or to the pod's own ports on 127.0.0.1) are rewritten to those; other
``127.0.0.1:port`` references are the world outside the cluster. Status goes back to the API the
way a kubelet reports it: phase, container states, Ready from each readinessProbe. Deleted pods
are stopped by pid and then released with grace period 0.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kubernetes import client, config
from kubernetes.client.rest import ApiException

from dbabench.env.netns import AgentNetwork
from dbabench.env.processes import stop_pid

from fabric import Endpoint, Fabric, allowed

NODE = "dbabench-player"
NODE_LABEL = {"dbabench.io/player": "true"}
# Only pods that ask for this node land on it; everything else stays kwok's.
TAINT = {"key": "dbabench.io/player", "value": "true", "effect": "NoSchedule"}
TOLERATION = {"key": "dbabench.io/player", "operator": "Equal", "value": "true",
              "effect": "NoSchedule"}
STORAGE_CLASS = "dbabench-player"
PROVISIONER = "player.dbabench.io"
SNAPSHOT = ("snapshot.storage.k8s.io", "v1", "volumesnapshots")
SERVICE_REF = re.compile(r"([a-z0-9-]+)\.([a-z0-9-]+)\.svc:(\d+)")
BIN = Path(sys.executable).parent


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Container:
    name: str
    proc: subprocess.Popen[bytes]
    sidecar: bool
    ready_port: int | None
    exit_code: int | None = None


@dataclass
class PlayedPod:
    uid: str
    namespace: str
    name: str
    root: Path
    ports: dict[int, int] = field(default_factory=dict)
    containers: list[Container] = field(default_factory=list)
    waiting: list[Any] = field(default_factory=list)
    """Main containers held back until the sidecars' startup probes pass."""
    volumes: dict[str, Path] = field(default_factory=dict)
    finished: bool = False
    labels: dict[str, str] = field(default_factory=dict)
    named_ports: dict[str, int] = field(default_factory=dict)
    network: AgentNetwork | None = None
    outside: set[int] = field(default_factory=set)
    """Ports of the host's loopback its environment names: the world outside the cluster."""

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.namespace, self.labels, self.named_ports)


class Player:
    def __init__(self, kubeconfig: Path, root: Path,
                 images: dict[str, list[str]] | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.root = root
        self.images = images or {}
        """image -> the entrypoint it would run, for containers that are not dbabench's"""
        api = config.new_client_from_config(str(kubeconfig))
        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.storage = client.StorageV1Api(api)
        self.coordination = client.CoordinationV1Api(api)
        self.networking = client.NetworkingV1Api(api)
        self.server = api.configuration.host
        self.api_port = urlsplit(self.server).port
        self.ca = api.configuration.ssl_ca_cert
        self.pods: dict[str, PlayedPod] = {}
        self.processes: list[subprocess.Popen[bytes]] = []
        """every process this node started, reaped at the end whatever became of its pod"""
        self.started: dict[str, str] = {}
        """uid -> name of every pod this node ever started"""
        self.service_ports: dict[tuple[str, str, int], int] = {}
        self._reserved: list[socket.socket] = []
        """a bound socket on the host for each port handed out: no later server takes it"""
        self.fabric = Fabric()
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="player", daemon=True)

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.storage.create_storage_class(client.V1StorageClass(
            metadata=client.V1ObjectMeta(name=STORAGE_CLASS), provisioner=PROVISIONER,
            reclaim_policy="Delete", volume_binding_mode="Immediate"))
        self.core.create_node({"metadata": {"name": NODE, "labels": {
            **NODE_LABEL, "kubernetes.io/hostname": NODE}}, "spec": {"taints": [TAINT]}})
        self._heartbeat()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        for pod in list(self.pods.values()):
            self._kill(pod)
        for proc in self.processes:
            if proc.poll() is None:
                stop_pid(proc.pid, timeout=30)
                proc.wait()
        self.fabric.stop()
        for sock in self._reserved:
            sock.close()

    def _loop(self) -> None:
        beat = 0.0
        while not self._stop.is_set():
            try:
                if time.monotonic() - beat > 10:
                    self._heartbeat()
                    beat = time.monotonic()
                self._provision()
                self._snapshot()
                self._release_volumes()
                self._sync_pods()
                self._sync_network()
            except Exception:
                self.errors.append(traceback.format_exc())
            self._stop.wait(0.3)

    def _heartbeat(self) -> None:
        condition = {"type": "Ready", "status": "True", "reason": "KubeletReady",
                     "message": "dbabench player", "lastHeartbeatTime": _now(),
                     "lastTransitionTime": _now()}
        capacity = {"cpu": "32", "memory": "64Gi", "pods": "110"}
        self.core.patch_node_status(NODE, {"status": {
            "conditions": [condition], "capacity": capacity, "allocatable": capacity,
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}]}})
        lease = {"metadata": {"name": NODE, "namespace": "kube-node-lease"},
                 "spec": {"holderIdentity": NODE, "leaseDurationSeconds": 40,
                          "renewTime": datetime.now(timezone.utc).strftime(
                              "%Y-%m-%dT%H:%M:%S.%fZ")}}
        try:
            self.coordination.patch_namespaced_lease(NODE, "kube-node-lease", lease)
        except ApiException as e:
            if e.status != 404:
                raise
            self.coordination.create_namespaced_lease("kube-node-lease", lease)

    # -- storage ---------------------------------------------------------------------------------

    def _provision(self) -> None:
        for pvc in self.core.list_persistent_volume_claim_for_all_namespaces().items:
            if (pvc.spec.storage_class_name != STORAGE_CLASS or pvc.spec.volume_name
                    or pvc.metadata.deletion_timestamp):
                continue
            source = pvc.spec.data_source
            path = self.root / f"pv-{pvc.metadata.uid}"
            if source is not None and source.kind == "PersistentVolumeClaim":
                golden = self.core.read_namespaced_persistent_volume_claim(
                    source.name, pvc.metadata.namespace)
                if not path.exists():
                    self._copy(self.root / f"pv-{golden.metadata.uid}", path)
            elif source is not None:
                snap = self.custom.get_namespaced_custom_object(
                    *SNAPSHOT[:2], pvc.metadata.namespace, SNAPSHOT[2], source.name)
                if not (snap.get("status") or {}).get("readyToUse"):
                    continue
                if not path.exists():
                    self._copy(self.root / f"snap-{snap['metadata']['uid']}", path)
            else:
                path.mkdir(exist_ok=True)
                path.chmod(0o777)
            try:
                self.core.create_persistent_volume({
                    "metadata": {"name": f"pv-{pvc.metadata.uid}",
                                 "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER}},
                    "spec": {"capacity": {"storage": pvc.spec.resources.requests["storage"]},
                             "accessModes": pvc.spec.access_modes,
                             "persistentVolumeReclaimPolicy": "Delete",
                             "storageClassName": STORAGE_CLASS,
                             "hostPath": {"path": str(path)},
                             "claimRef": {"namespace": pvc.metadata.namespace,
                                          "name": pvc.metadata.name, "uid": pvc.metadata.uid}}})
            except ApiException as e:
                if e.status != 409:
                    raise

    def _snapshot(self) -> None:
        snaps = self.custom.list_cluster_custom_object(*SNAPSHOT)["items"]
        for snap in snaps:
            if (snap.get("status") or {}).get("readyToUse"):
                continue
            ns = snap["metadata"]["namespace"]
            claim = self.core.read_namespaced_persistent_volume_claim(
                snap["spec"]["source"]["persistentVolumeClaimName"], ns)
            if not claim.spec.volume_name:
                continue
            source = self.root / f"pv-{claim.metadata.uid}"
            target = self.root / f"snap-{snap['metadata']['uid']}"
            if not target.exists():
                self._copy(source, target)
            size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
            self.custom.patch_namespaced_custom_object_status(
                *SNAPSHOT[:2], ns, SNAPSHOT[2], snap["metadata"]["name"],
                {"status": {"readyToUse": True, "restoreSize": str(size),
                            "creationTime": _now()}})

    def _release_volumes(self) -> None:
        for pv in self.core.list_persistent_volume().items:
            if pv.spec.storage_class_name == STORAGE_CLASS and pv.status.phase == "Released":
                shutil.rmtree(pv.spec.host_path.path, ignore_errors=True)
                self.core.delete_persistent_volume(pv.metadata.name)

    @staticmethod
    def _copy(source: Path, target: Path) -> None:
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        subprocess.run(["cp", "-a", "--reflink=auto", str(source), str(partial)], check=True)
        partial.rename(target)

    # -- pods ------------------------------------------------------------------------------------

    def _sync_pods(self) -> None:
        listed = self.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={NODE}")
        seen = set()
        for pod in listed.items:
            uid = pod.metadata.uid
            seen.add(uid)
            played = self.pods.get(uid)
            if pod.metadata.deletion_timestamp is not None:
                if played is not None:
                    self._kill(played)
                    del self.pods[uid]
                try:
                    self.core.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace,
                                                    grace_period_seconds=0)
                except ApiException as e:
                    if e.status != 404:
                        raise
            elif played is None:
                self._start(pod)
            elif not played.finished:
                self._report(pod, played)
        for uid in set(self.pods) - seen:
            self._kill(self.pods.pop(uid))

    def _start(self, pod: Any) -> None:
        ns, name = pod.metadata.namespace, pod.metadata.name
        played = PlayedPod(pod.metadata.uid, ns, name, self.root / f"pod-{pod.metadata.uid}",
                           labels=dict(pod.metadata.labels or {}))
        # Known before anything starts: a failure half-way leaves processes to stop, not orphans.
        self.pods[played.uid] = played
        self.started[played.uid] = name
        played.root.mkdir(parents=True, exist_ok=True)
        played.root.chmod(0o755)
        try:
            played.network = AgentNetwork([])
            for c in [*(pod.spec.init_containers or []), *pod.spec.containers]:
                for port in c.ports or []:
                    played.ports[port.container_port] = self._port_for(pod, port.container_port)
                    if port.name:
                        played.named_ports[port.name] = port.container_port
            # As a CNI plugin and kube-proxy do, the pod's network is wired before any of its
            # containers starts: what it reads of its network at start is what it has.
            self._sync_network()
            played.volumes = self._volumes(pod, played)
            for spec in pod.spec.init_containers or []:
                if spec.restart_policy == "Always":
                    played.containers.append(self._run(pod, played, spec, sidecar=True))
        except Exception:
            # started afresh on the next pass
            self._kill(self.pods.pop(played.uid))
            raise
        played.waiting = list(pod.spec.containers)
        self._report(pod, played)

    def _port_for(self, pod: Any, port: int) -> int:
        """The local port of a container port: the one its Services already use, if any."""
        labels = pod.metadata.labels or {}
        for svc in self.core.list_namespaced_service(pod.metadata.namespace).items:
            selector = svc.spec.selector or {}
            if selector and all(labels.get(k) == v for k, v in selector.items()):
                for sp in svc.spec.ports:
                    if self._target(pod, sp.target_port or sp.port) == port:
                        return self._service_port(pod.metadata.namespace, svc.metadata.name,
                                                  sp.port)
        return self._free_port()

    def _free_port(self) -> int:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self._reserved.append(sock)
        return int(sock.getsockname()[1])

    @staticmethod
    def _target(pod: Any, target: int | str) -> int | None:
        """A Service's targetPort as a number: named ones are the pod's container ports."""
        if isinstance(target, int) or str(target).isdigit():
            return int(target)
        return next((p.container_port for c in pod.spec.containers for p in c.ports or []
                     if p.name == target), None)

    def _service_port(self, ns: str, svc: str, port: int) -> int:
        key = (ns, svc, port)
        if key not in self.service_ports:
            self.service_ports[key] = self._free_port()
        return self.service_ports[key]

    def _volumes(self, pod: Any, played: PlayedPod) -> dict[str, Path]:
        paths: dict[str, Path] = {}
        for v in pod.spec.volumes or []:
            if v.persistent_volume_claim is not None:
                claim = self.core.read_namespaced_persistent_volume_claim(
                    v.persistent_volume_claim.claim_name, played.namespace)
                pv = self.core.read_persistent_volume(claim.spec.volume_name)
                paths[v.name] = Path(pv.spec.host_path.path)
            elif v.config_map is not None:
                cm = self.core.read_namespaced_config_map(v.config_map.name, played.namespace)
                paths[v.name] = played.root / f"cm-{v.name}"
                paths[v.name].mkdir(exist_ok=True)
                for key, text in (cm.data or {}).items():
                    (paths[v.name] / key).write_text(text)
            elif v.empty_dir is not None:
                paths[v.name] = played.root / f"empty-{v.name}"
                paths[v.name].mkdir(exist_ok=True)
                paths[v.name].chmod(0o777)
        return paths

    def _kubeconfig(self, pod: Any, played: PlayedPod) -> Path:
        """What a mounted service account token gives a container: the pod's identity."""
        sa = pod.spec.service_account_name or "default"
        token = self.core.create_namespaced_service_account_token(
            sa, played.namespace, {"spec": {"expirationSeconds": 3600}}).status.token
        path = played.root / "kubeconfig"
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "pod",
            "clusters": [{"name": "c", "cluster": {"server": self.server,
                                                   "certificate-authority": self.ca}}],
            "users": [{"name": "sa", "user": {"token": token}}],
            "contexts": [{"name": "pod", "context": {"cluster": "c", "user": "sa",
                                                     "namespace": played.namespace}}]}))
        return path

    def _rewrite(self, value: str, played: PlayedPod, mounts: dict[str, Path]) -> str:
        played.outside.update(int(p) for p in re.findall(r"127\.0\.0\.1:(\d+)", value)
                              if int(p) not in played.ports)
        value = SERVICE_REF.sub(lambda m: f"127.0.0.1:{self._service_port(m[2], m[1], int(m[3]))}",
                                value)
        value = re.sub(r"127\.0\.0\.1:(\d+)",
                       lambda m: f"127.0.0.1:{played.ports.get(int(m[1]), int(m[1]))}", value)
        for mount_path, local in mounts.items():
            if value == mount_path or value.startswith(mount_path + "/"):
                value = str(local) + value[len(mount_path):]
        return value

    def _env(self, pod: Any, played: PlayedPod, spec: Any,
             mounts: dict[str, Path]) -> dict[str, str]:
        env = {"PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin", "HOME": str(played.root),
               "HOSTNAME": pod.spec.hostname or played.name}
        for e in spec.env or []:
            if e.value_from is None:
                value = e.value or ""
            elif e.value_from.secret_key_ref is not None:
                ref = e.value_from.secret_key_ref
                secret = self.core.read_namespaced_secret(ref.name, played.namespace)
                value = base64.b64decode(secret.data[ref.key]).decode()
            elif e.value_from.field_ref is not None:
                value = {"metadata.namespace": played.namespace,
                         "metadata.name": played.name}[e.value_from.field_ref.field_path]
            else:
                raise RuntimeError(f"{played.name}/{spec.name}: unsupported env source {e.name}")
            if e.name.startswith("DBABENCH_PORT_"):
                value = str(played.ports[int(value)])
            env[e.name] = self._rewrite(value, played, mounts)
        tokened = any(m.mount_path == "/var/run/secrets/kubernetes.io/serviceaccount"
                      for m in spec.volume_mounts or []) or pod.spec.automount_service_account_token
        if tokened:
            env["KUBECONFIG"] = str(self._kubeconfig(pod, played))
            played.outside.add(self.api_port)
        return env

    def _run(self, pod: Any, played: PlayedPod, spec: Any, *, sidecar: bool) -> Container:
        mounts = {m.mount_path: played.volumes[m.name] for m in spec.volume_mounts or []
                  if m.name in played.volumes}
        argv = [*(spec.command or self.images.get(spec.image, [])), *(spec.args or [])]
        if argv and argv[0] == "dbabench":
            argv[0] = str(BIN / "dbabench")
        elif spec.image not in self.images:
            raise RuntimeError(f"{played.name}/{spec.name}: the player runs dbabench's own"
                               f" entrypoints and the images it was given, not {spec.image}")
        env = self._env(pod, played, spec, mounts)
        log = (self.root / "logs")
        log.mkdir(exist_ok=True)
        with (log / f"{played.namespace}_{played.name}_{spec.name}.log").open("ab") as out:
            proc = subprocess.Popen(argv, env=env, cwd=played.root, stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, preexec_fn=played.network.enter)
        self.processes.append(proc)
        probe = spec.startup_probe or spec.readiness_probe
        port = (played.ports[int(probe.tcp_socket.port)]
                if probe is not None and probe.tcp_socket is not None else None)
        return Container(spec.name, proc, sidecar, port)

    @staticmethod
    def _ready(played: PlayedPod, c: Container) -> bool:
        if c.exit_code is not None:
            return False
        if c.ready_port is None:
            return True
        assert played.network is not None
        with played.network.inside(socket.socket) as s:
            s.settimeout(0.2)
            return s.connect_ex(("127.0.0.1", c.ready_port)) == 0

    def _report(self, pod: Any, played: PlayedPod) -> None:
        for c in played.containers:
            if c.exit_code is None:
                c.exit_code = c.proc.poll()
        if played.waiting and all(self._ready(played, c) for c in played.containers):
            while played.waiting:
                played.containers.append(self._run(pod, played, played.waiting.pop(0),
                                                   sidecar=False))
        main = [c for c in played.containers if not c.sidecar]
        if main and all(c.exit_code is not None for c in main):
            for c in played.containers:
                if c.sidecar and c.exit_code is None:
                    stop_pid(c.proc.pid, timeout=60)
                    c.exit_code = c.proc.wait()
            phase = "Succeeded" if all(c.exit_code == 0 for c in main) else "Failed"
            played.finished = True
        else:
            phase = "Running"
        statuses = []
        for c in played.containers:
            state = ({"running": {"startedAt": _now()}} if c.exit_code is None else
                     {"terminated": {"exitCode": c.exit_code, "finishedAt": _now(),
                                     "reason": "Completed" if c.exit_code == 0 else "Error"}})
            statuses.append({"name": c.name, "ready": self._ready(played, c), "state": state,
                             "image": "dbabench", "imageID": "", "restartCount": 0})
        ready = phase == "Running" and all(s["ready"] for s in statuses)
        conditions = [{"type": t, "status": "True" if ok else "False"}
                      for t, ok in (("PodScheduled", True), ("Initialized", True),
                                    ("ContainersReady", ready), ("Ready", ready))]
        body = {"status": {"phase": phase, "conditions": conditions, "podIP": "127.0.0.1",
                           "hostIP": "127.0.0.1", "podIPs": [{"ip": "127.0.0.1"}],
                           "containerStatuses": [s for s in statuses
                                                 if s["name"] in {c.name for c in pod.spec.containers}],
                           "initContainerStatuses": [s for s in statuses if s["name"] not in
                                                     {c.name for c in pod.spec.containers}]}}
        try:
            self.core.patch_namespaced_pod_status(played.name, played.namespace, body)
        except ApiException as e:
            if e.status != 404:
                raise

    def _kill(self, played: PlayedPod) -> None:
        for c in reversed(played.containers):
            stop_pid(c.proc.pid, timeout=30)
            c.proc.poll()
        if played.network is not None:
            for port in self.fabric.ports_of(played.network):
                self.fabric.drop(played.network, port)
            played.network.close()
            played.network = None

    # -- the network -----------------------------------------------------------------------------

    def _sync_network(self) -> None:
        """Every live pod's relays: to the pods behind each Service of its namespace and to
        the outside endpoints it names, where the policies of both ends allow."""
        policies = [self.core.api_client.sanitize_for_serialization(p) for p in
                    self.networking.list_network_policy_for_all_namespaces().items]
        services = self.core.list_service_for_all_namespaces().items
        live = [p for p in self.pods.values() if p.network is not None and not p.finished]
        for source in live:
            want: dict[int, tuple[AgentNetwork | None, int]] = {}
            for svc in services:
                selector = svc.spec.selector or {}
                if svc.metadata.namespace != source.namespace or not selector:
                    continue
                for sp in svc.spec.ports:
                    port = self.service_ports.get((source.namespace, svc.metadata.name, sp.port))
                    for target in live:
                        if (port is None or target is source or target.namespace != svc.metadata.namespace
                                or not all(target.labels.get(k) == v for k, v in selector.items())):
                            continue
                        aim = sp.target_port or sp.port
                        container = (int(aim) if str(aim).isdigit()
                                     else target.named_ports.get(str(aim)))
                        if container in target.ports and allowed(
                                policies, source.endpoint, target.endpoint, container):
                            want[port] = (target.network, target.ports[container])
                            break
            for port in source.outside:
                if allowed(policies, source.endpoint, None, port):
                    want[port] = (None, port)
            for port in self.fabric.ports_of(source.network) - set(want):
                self.fabric.drop(source.network, port)
            for port, (network, target_port) in want.items():
                self.fabric.relay(source.network, port, network, target_port)

    def forward(self, pod: str, container_port: int) -> int:
        """A port on the host that reaches ``container_port`` of the live pod named ``pod``,
        as ``kubectl port-forward`` would (no policy governs it)."""
        played = next(p for p in self.pods.values() if p.name == pod and p.network is not None)
        return self.fabric.forward(played.network, played.ports[container_port])
