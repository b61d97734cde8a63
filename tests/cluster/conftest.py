"""A real Kubernetes control plane for the cluster tests, started once per session.

etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok run as our own
processes on loopback ports, from the binaries that scripts/build-k8s.sh builds from Go
modules (no container engine, no download of release binaries). kube-controller-manager is
what envtest lacks: without it nothing garbage-collects, namespaces never finish deleting,
no service account appears and a StatefulSet makes no pods. kwok stands in for kubelets:
pods on its one fake node go Running, but no container ever starts.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from dbabench.env.processes import die_with_parent, stop_pid

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "scripts" / "build-k8s.sh"
FAKE_NODE = "kwok-node-0"
STARTUP_TIMEOUT = 90.0


def pytest_configure(config: pytest.Config) -> None:
    # pyproject's --strict-markers rejects unregistered markers; registering here keeps the
    # cluster suite self-contained.
    config.addinivalue_line(
        "markers", "cluster: needs the Kubernetes control plane that scripts/build-k8s.sh builds")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Build before the first test, outside pytest-timeout's per-test limit: a cold build
    takes far longer than any one test may. Warm, the build script returns at once."""
    if session.config.option.collectonly:
        return
    if any(item.get_closest_marker("cluster") for item in session.items):
        capman = session.config.pluginmanager.getplugin("capturemanager")
        if capman is None:
            bin_dir()
            return
        # Shown live: a cold build runs for many minutes and would otherwise look hung.
        with capman.global_and_fixture_disabled():
            bin_dir()


@functools.cache
def bin_dir() -> Path:
    done = subprocess.run([str(BUILD_SCRIPT)], stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        pytest.exit(f"{BUILD_SCRIPT} failed ({done.returncode}); see its output above", 3)
    return Path(done.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class ApiResponse:
    """One request a service account made, as the API server's audit log records it."""

    verb: str
    uri: str
    code: int
    user_agent: str


# Service accounts' requests only (the operator under test authenticates as one): the control
# plane's own components would fill the log with nothing any test reads.
AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
"""


@dataclass(frozen=True)
class ControlPlane:
    kubeconfig: Path
    server: str
    bin_dir: Path
    audit_log: Path
    fake_node: str = FAKE_NODE

    def audit_offset(self) -> int:
        """Where the audit log ends now: pass it to ``responses`` to see only what follows."""
        return self.audit_log.stat().st_size if self.audit_log.exists() else 0

    def responses(self, user: str, since: int = 0) -> list[ApiResponse]:
        """What the API server answered ``user`` (system:serviceaccount:NS:NAME), from the
        audit log from byte ``since`` on. The log is written before each response is sent
        (the log backend's blocking mode), so a request a client has seen answered is in it."""
        with self.audit_log.open("rb") as f:
            f.seek(since)
            lines = f.read().decode().splitlines()
        found = []
        for line in lines:
            event = json.loads(line)
            if event["stage"] != "ResponseComplete" or event["user"]["username"] != user:
                continue
            found.append(ApiResponse(verb=event["verb"], uri=event["requestURI"],
                                     code=int(event["responseStatus"]["code"]),
                                     user_agent=event.get("userAgent", "")))
        return found

    def env(self) -> dict[str, str]:
        """The environment for a client binary (kubectl, helm) aimed at this cluster only."""
        return {**os.environ, "KUBECONFIG": str(self.kubeconfig),
                "HELM_CACHE_HOME": str(self.kubeconfig.parent / "helm" / "cache"),
                "HELM_CONFIG_HOME": str(self.kubeconfig.parent / "helm" / "config"),
                "HELM_DATA_HOME": str(self.kubeconfig.parent / "helm" / "data")}

    def run(self, binary: str, *args: str, stdin: str | None = None, check: bool = True,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(self.bin_dir / binary), *args], input=stdin,
                              capture_output=True, text=True, env=self.env(), timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"{binary} {' '.join(args)} exited {done.returncode}:\n"
                                 f"{done.stdout}{done.stderr}")
        return done

    def kubectl(self, *args: str, stdin: str | None = None,
                check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run("kubectl", *args, stdin=stdin, check=check)

    def wait_established(self, *crds: str, timeout: float = 30) -> None:
        """Until each CRD serves its resource. Not ``kubectl wait --for=condition=Established``:
        a CRD read before the API server has written its first status has no conditions at
        all, and kubectl wait exits 1 on that instead of waiting (a CI run lost its whole
        cluster suite to it)."""
        deadline = time.monotonic() + timeout
        for crd in crds:
            while self.kubectl("get", "crd", crd, "-o",
                               "jsonpath={.status.conditions[?(@.type=='Established')].status}"
                               ).stdout != "True":
                if time.monotonic() > deadline:
                    raise TimeoutError(f"CRD {crd} not established after {timeout:.0f} s")
                time.sleep(0.1)


def _free_port() -> int:
    # The port is free when we look; the few milliseconds until the server binds it are a
    # race we accept on a test machine (every server here binds 127.0.0.1 only).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_OPENSSL_CNF = """\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
"""


def _openssl(pki: Path, *args: str) -> None:
    done = subprocess.run(["openssl", *args], cwd=pki, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)}: {done.stderr}")


def _make_pki(pki: Path) -> None:
    """A throwaway CA, the apiserver's serving cert, client certs and the service-account
    key pair. The openssl CLI rather than the cryptography package: the project does not
    depend on cryptography, and every machine here has openssl."""
    pki.mkdir(mode=0o700)
    (pki / "openssl.cnf").write_text(_OPENSSL_CNF)
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl(pki, "req", "-x509", "-new", "-config", "openssl.cnf", "-extensions", "ca", *ec,
             "-keyout", "ca.key", "-out", "ca.crt", "-days", "7", "-subj", "/CN=dbabench-test-ca")
    leaves = {"apiserver": ("server", "/CN=kube-apiserver"),
              # system:masters bypasses RBAC: the tests and kwok act as cluster admin.
              "admin": ("client", "/O=system:masters/CN=dbabench-admin"),
              # The users the bootstrap RBAC policy grants the components' roles to.
              "controller-manager": ("client", "/CN=system:kube-controller-manager"),
              "scheduler": ("client", "/CN=system:kube-scheduler")}
    for name, (ext, subject) in leaves.items():
        _openssl(pki, "req", "-new", "-config", "openssl.cnf", *ec, "-keyout", f"{name}.key",
                 "-out", f"{name}.csr", "-subj", subject)
        _openssl(pki, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-days", "7", "-extfile", "openssl.cnf", "-extensions", ext,
                 "-out", f"{name}.crt")
    _openssl(pki, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-out", "sa.key")
    _openssl(pki, "pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub")


def _write_kubeconfig(path: Path, server: str, pki: Path, user: str) -> None:
    # JSON is YAML, and every Kubernetes client reads it; paths rather than inline data keep
    # the Python client from writing temp copies of the keys.
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "dbabench",
        "clusters": [{"name": "dbabench", "cluster": {
            "server": server, "certificate-authority": str(pki / "ca.crt")}}],
        "users": [{"name": user, "user": {
            "client-certificate": str(pki / f"{user}.crt"),
            "client-key": str(pki / f"{user}.key")}}],
        "contexts": [{"name": "dbabench", "context": {"cluster": "dbabench", "user": user}}],
    }, indent=2))
    path.chmod(0o600)


@dataclass
class _Processes:
    log_dir: Path
    running: list[tuple[str, subprocess.Popen[bytes], IO[bytes]]] = field(default_factory=list)

    def start(self, name: str, argv: Sequence[str]) -> None:
        log = (self.log_dir / f"{name}.log").open("wb")
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
        self.running.append((name, proc, log))

    def log_tail(self, name: str, lines: int = 40) -> str:
        try:
            text = (self.log_dir / f"{name}.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def check_alive(self) -> None:
        for name, proc, _ in self.running:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{self.log_tail(name)}")

    def wait_for(self, what: str, ready: Any, timeout: float = STARTUP_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            if ready():
                return
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {n}\n{self.log_tail(n, 15)}" for n, _, _ in self.running)
                raise TimeoutError(f"{what} not ready after {timeout:.0f} s\n{logs}")
            time.sleep(0.2)

    def stop_all(self) -> None:
        # Clients first, etcd last, so nothing spends its shutdown retrying a dead server.
        for name, proc, log in reversed(self.running):
            stop_pid(proc.pid, timeout=10)
            proc.wait()
            log.close()
        self.running.clear()


def _https_ok(url: str, context: ssl.SSLContext) -> bool:
    try:
        with urllib.request.urlopen(url, context=context, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _fake_node() -> dict[str, Any]:
    resources = {"cpu": "32", "memory": "256Gi", "pods": "110"}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": FAKE_NODE,
            # The selector kwok is started with: it manages this node and no other.
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {"type": "kwok", "kubernetes.io/hostname": FAKE_NODE,
                       "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
        "status": {"allocatable": resources, "capacity": resources},
    }


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    bins = bin_dir()
    # Picked by build-k8s.sh out of the kwok module (the set kwokctl itself uses).
    stages = sorted((bins.parent / "kwok-stages").glob("*.yaml"))
    root = Path(tempfile.mkdtemp(prefix="dbabench-k8s-"))
    procs = _Processes(root)
    try:
        pki = root / "pki"
        _make_pki(pki)
        etcd_port, etcd_peer, api_port = _free_port(), _free_port(), _free_port()
        server = f"https://127.0.0.1:{api_port}"
        admin_kubeconfig = root / "admin.kubeconfig"
        _write_kubeconfig(admin_kubeconfig, server, pki, "admin")
        for user in ("controller-manager", "scheduler"):
            _write_kubeconfig(root / f"{user}.kubeconfig", server, pki, user)

        audit_policy, audit_log = root / "audit-policy.yaml", root / "audit.jsonl"
        audit_policy.write_text(AUDIT_POLICY)
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        peer_url = f"http://127.0.0.1:{etcd_peer}"
        procs.start("etcd", [
            str(bins / "etcd"), "--name=default", f"--data-dir={root / 'etcd'}",
            f"--listen-client-urls={etcd_url}", f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=default={peer_url}",
            # A test cluster lost on a crash costs nothing; fsync on every write costs seconds.
            "--unsafe-no-fsync", "--log-level=warn"])
        procs.wait_for("etcd", lambda: _http_ok(f"{etcd_url}/health"))

        procs.start("kube-apiserver", [
            str(bins / "kube-apiserver"), f"--etcd-servers={etcd_url}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={api_port}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            # Nothing routes to these addresses: there is no kube-proxy, no pod network.
            "--service-cluster-ip-range=10.96.0.0/16",
            "--allow-privileged=true", "--profiling=false",
            f"--audit-policy-file={audit_policy}", f"--audit-log-path={audit_log}",
            "--audit-log-format=json", "--audit-log-mode=blocking"])
        tls = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        tls.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        procs.wait_for("kube-apiserver", lambda: _https_ok(f"{server}/readyz", tls))

        procs.start("kube-controller-manager", [
            str(bins / "kube-controller-manager"),
            f"--kubeconfig={root / 'controller-manager.kubeconfig'}",
            "--controllers=*", "--use-service-account-credentials=true",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}",
            f"--cluster-signing-cert-file={pki / 'ca.crt'}",
            f"--cluster-signing-key-file={pki / 'ca.key'}",
            # One instance: leader election would only delay the start by a lease period.
            "--leader-elect=false",
            # No HTTPS endpoint: nothing scrapes it, and its default port (10257) could
            # clash with another cluster on the machine.
            "--secure-port=0", "--profiling=false"])
        procs.start("kube-scheduler", [
            str(bins / "kube-scheduler"), f"--kubeconfig={root / 'scheduler.kubeconfig'}",
            "--leader-elect=false", "--secure-port=0", "--profiling=false"])

        procs.start("kwok", [
            str(bins / "kwok"), f"--kubeconfig={admin_kubeconfig}",
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            # With a lease duration kwok renews the node's Lease, so the node lifecycle
            # controller keeps the node Ready instead of tainting it unreachable.
            "--node-lease-duration-seconds=40",
            "--cidr=10.244.0.0/16",
            *(f"--config={s}" for s in stages)])

        plane = ControlPlane(kubeconfig=admin_kubeconfig, server=server, bin_dir=bins,
                             audit_log=audit_log)
        plane.kubectl("create", "-f", "-", stdin=json.dumps(_fake_node()))
        procs.wait_for("fake node (kwok)", lambda: plane.kubectl(
            "get", "node", FAKE_NODE, "-o",
            "jsonpath={.status.conditions[?(@.type=='Ready')].status}").stdout == "True")
        # The service-account controller is a kube-controller-manager controller; pods are
        # refused until their namespace has its default service account.
        procs.wait_for("kube-controller-manager", lambda: plane.kubectl(
            "get", "serviceaccount", "default", "-n", "default", check=False).returncode == 0)
        yield plane
    finally:
        procs.stop_all()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def crds(control_plane: ControlPlane) -> None:
    """dbabench's CRDs, applied server-side once, so tests never fight over field ownership
    (the chart is then installed with --skip-crds)."""
    control_plane.kubectl("apply", "--server-side", "-f", str(REPO / "crds"))
    control_plane.wait_established(*sorted(f.stem for f in (REPO / "crds").glob("*.yaml")))
