"""The Helm chart: what it renders, that it installs, and that the ServiceAccount it creates
is enough for the operator to do its job and nothing more.

The permission checks run as the chart's ServiceAccount itself (a token kubeconfig), not with
``--as`` impersonation: impersonation is evaluated for the admin, a token is what the pod gets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from dbabench.cli.main import crd_files
from dbabench.env.processes import free_port, stop_pid
from dbabench.operator.handlers import OperatorConfig

from waiting import eventually

if TYPE_CHECKING:
    from conftest import ControlPlane

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "dbabench"
SCENARIO_FILE = REPO / "scenarios" / "composite" / "stale-stats-lock-chain.yaml"
RELEASE = "bench"
def render(plane: ControlPlane, *sets: str, namespace: str = "dbabench") -> list[dict[str, Any]]:
    args = [a for s in sets for a in ("--set", s)]
    out = plane.run("helm", "template", RELEASE, str(CHART), "--namespace", namespace,
                    *args).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def operator_deployment(docs: list[dict[str, Any]]) -> dict[str, Any]:
    (dep,) = [d for d in of_kind(docs, "Deployment")
              if d["metadata"]["labels"].get("app.kubernetes.io/component") == "operator"]
    return dep


def _config(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> OperatorConfig:
    """The settings the operator reads from the environment the chart gives its container."""
    for name in [n for n in os.environ if n.startswith("DBABENCH_OPERATOR_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return OperatorConfig()


def assert_least_privilege(docs: list[dict[str, Any]], *, run_secrets: bool = False) -> None:
    """``run_secrets``: the pods executor, which creates each run's Secrets in the watched
    namespaces (namespaced Roles only, never a ClusterRole)."""
    roles = of_kind(docs, "Role") + of_kind(docs, "ClusterRole")
    assert roles, "the chart grants the operator nothing"
    for role in roles:
        for rule in role["rules"]:
            for key in ("verbs", "resources", "apiGroups"):
                assert "*" not in rule.get(key, []), (role["metadata"]["name"], rule)
            if any(r == "secrets" or r.startswith("secrets/") for r in rule.get("resources", [])):
                if rule.get("resourceNames"):
                    # the model agents' keys: these, by name, and read only
                    assert rule["verbs"] == ["get"], rule
                else:
                    assert run_secrets and role["kind"] == "Role", rule
                    assert not {"update", "patch", "watch"} & set(rule["verbs"]), rule
            # verbs that let the holder grant or assume more than the role itself holds
            assert not {"escalate", "bind", "impersonate"} & set(rule.get("verbs", [])), rule
            assert "nonResourceURLs" not in rule, rule
    for binding in of_kind(docs, "RoleBinding") + of_kind(docs, "ClusterRoleBinding"):
        ref = binding["roleRef"]
        assert ref["name"] not in ("cluster-admin", "admin", "edit"), binding
        # bound only to roles the chart itself ships, so what we checked above is all it gets
        assert any(r["kind"] == ref["kind"] and r["metadata"]["name"] == ref["name"]
                   for r in roles), binding


@pytest.mark.parametrize("sets", [(), ("watchNamespaces={a,b}",), ("prometheus.enabled=true",),
                                  ("executor=pods", "watchNamespaces={a}")],
                         ids=["defaults", "namespaced", "prometheus", "pods"])
def test_chart_lints(control_plane: ControlPlane, sets: tuple[str, ...]) -> None:
    args = [a for s in sets for a in ("--set", s)]
    done = control_plane.run("helm", "lint", "--strict", str(CHART), *args)
    assert "0 chart(s) failed" in done.stdout


def test_rendered_deployment_runs_the_operator_as_the_chart_service_account(
        control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = render(control_plane)
    dep = operator_deployment(docs)
    pod = dep["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"][0] == "operator"
    # cluster-wide by default: a --namespace would narrow the watch below what RBAC grants
    assert not any(a.startswith("--namespace") for a in container["args"])

    env = {e["name"]: e["value"] for e in container["env"]}
    operator_env = {k: v for k, v in env.items() if k.startswith("DBABENCH_OPERATOR_")}
    # Every setting the operator reads is set by the chart, and the values are ones the
    # operator's own config model accepts (a typo'd name would silently fall to a default).
    assert {f"DBABENCH_OPERATOR_{f.upper()}" for f in OperatorConfig.model_fields} == set(
        operator_env)
    config = _config(operator_env, monkeypatch)
    mount = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}["state"]
    assert config.runs_dir.is_relative_to(mount), "run directories would not be on the volume"
    assert env["DBABENCH_CACHE"].startswith(mount)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["metrics"] == config.metrics_port

    (sa,) = of_kind(docs, "ServiceAccount")
    assert pod["serviceAccountName"] == sa["metadata"]["name"]
    assert sa["metadata"]["namespace"] == dep["metadata"]["namespace"] == "dbabench"
    # selector and pod labels must agree or the Deployment is rejected / the Service is empty
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    (svc,) = of_kind(docs, "Service")
    assert svc["spec"]["selector"].items() <= labels.items()
    assert svc["spec"]["ports"][0]["targetPort"] == "metrics"

    assert_least_privilege(docs)
    (cluster_role,) = of_kind(docs, "ClusterRole")
    (binding,) = of_kind(docs, "ClusterRoleBinding")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                                    "namespace": "dbabench"}]
    assert not of_kind(docs, "Role") and not of_kind(docs, "RoleBinding")
    assert cluster_role["metadata"]["name"] == binding["roleRef"]["name"]


def test_rendered_namespaced_mode_has_a_role_per_namespace_and_no_cluster_role(
        control_plane: ControlPlane) -> None:
    docs = render(control_plane, "watchNamespaces={a,b}")
    assert_least_privilege(docs)
    assert not of_kind(docs, "ClusterRole") and not of_kind(docs, "ClusterRoleBinding")
    assert sorted(r["metadata"]["namespace"] for r in of_kind(docs, "Role")) == ["a", "b"]
    bindings = of_kind(docs, "RoleBinding")
    assert sorted(b["metadata"]["namespace"] for b in bindings) == ["a", "b"]
    (sa,) = of_kind(docs, "ServiceAccount")
    for b in bindings:
        assert b["roleRef"]["kind"] == "Role"
        # the operator lives in the release namespace, its permissions in the watched ones
        assert b["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                                  "namespace": "dbabench"}]
    args = operator_deployment(docs)["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [a for a in args if a.startswith("--namespace")] == ["--namespace=a", "--namespace=b"]


def test_rendered_pods_executor_grants_run_objects_in_watched_namespaces_only(
        control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = render(control_plane, "executor=pods", "watchNamespaces={a,b}",
                  "pods.storageClass=fast", "pods.nodeSelector.pool=bench")
    assert_least_privilege(docs, run_secrets=True)
    assert not of_kind(docs, "ClusterRole")
    container = operator_deployment(docs)["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    config = _config(env, monkeypatch)
    assert config.executor == "pods"
    assert (config.kube.image, config.kube.storage_class, config.kube.node_selector) == (
        container["image"], "fast", {"pool": "bench"})
    operator_roles = [r for r in of_kind(docs, "Role") if r["metadata"]["name"] != "dbabench-run"]
    assert sorted(r["metadata"]["namespace"] for r in operator_roles) == ["a", "b"]
    for role in operator_roles:
        granted = {res for rule in role["rules"] for res in rule["resources"]}
        assert {"pods", "jobs", "persistentvolumeclaims", "volumesnapshots",
                "networkpolicies"} <= granted
    run_roles = [r for r in of_kind(docs, "Role") if r["metadata"]["name"] == "dbabench-run"]
    assert [r["rules"] for r in run_roles] == [[{"apiGroups": [""], "resources": ["configmaps"],
                                                 "verbs": ["get", "create"]}]] * 2
    done = control_plane.run("helm", "template", RELEASE, str(CHART), "--set", "executor=pods",
                             check=False)
    assert done.returncode != 0 and "set watchNamespaces" in done.stderr


@pytest.mark.parametrize("mode", [(), ("watchNamespaces={a}",)], ids=["cluster", "namespaced"])
def test_rendered_model_secrets_are_readable_by_name_only(control_plane: ControlPlane,
                                                          mode: tuple[str, ...]) -> None:
    docs = render(control_plane, *mode, "modelSecrets={openai-key,gateway}")
    assert_least_privilege(docs)
    secret_rules = [rule for role in of_kind(docs, "Role") + of_kind(docs, "ClusterRole")
                    for rule in role["rules"] if "secrets" in rule["resources"]]
    assert secret_rules == [{"apiGroups": [""], "resources": ["secrets"],
                             "resourceNames": ["openai-key", "gateway"], "verbs": ["get"]}]


def test_rendered_prometheus_scrapes_the_metrics_service(control_plane: ControlPlane) -> None:
    docs = render(control_plane, "prometheus.enabled=true")
    assert_least_privilege(docs)
    (svc,) = of_kind(docs, "Service")
    config = next(c for c in of_kind(docs, "ConfigMap") if "prometheus.yml" in c["data"])
    scrape = yaml.safe_load(config["data"]["prometheus.yml"])
    (target,) = scrape["scrape_configs"][0]["static_configs"][0]["targets"]
    assert target == (f"{svc['metadata']['name']}.dbabench.svc:"
                      f"{svc['spec']['ports'][0]['port']}")


def test_chart_crds_are_the_generated_ones() -> None:
    generated = crd_files()
    for crd_dir in (REPO / "crds", CHART / "crds"):
        on_disk = {p.name: p.read_text() for p in crd_dir.glob("*.yaml")}
        assert on_disk == generated, f"{crd_dir} is stale: run `dbabench crds --out {crd_dir}`"


# --- installed into the test cluster ---------------------------------------------------------

@pytest.fixture(scope="module")
def release(control_plane: ControlPlane, crds: None) -> Iterator[str]:
    """The chart installed in namespaced mode, watching its own (fresh) namespace."""
    ns = f"chart-{uuid.uuid4().hex[:8]}"
    control_plane.kubectl("create", "namespace", ns)
    control_plane.run("helm", "install", RELEASE, str(CHART), "--namespace", ns, "--skip-crds",
                      "--set", f"watchNamespaces={{{ns}}}", timeout=120)
    try:
        yield ns
    finally:
        control_plane.run("helm", "uninstall", RELEASE, "--namespace", ns, check=False)
        control_plane.kubectl("delete", "namespace", ns, "--wait=false", check=False)


def service_account(docs: list[dict[str, Any]]) -> str:
    (sa,) = of_kind(docs, "ServiceAccount")
    return str(sa["metadata"]["name"])


def test_helm_install_creates_the_operator_deployment(control_plane: ControlPlane,
                                                      release: str) -> None:
    status = json.loads(control_plane.run("helm", "status", RELEASE, "-n", release,
                                          "-o", "json").stdout)
    assert status["info"]["status"] == "deployed"
    dep = json.loads(control_plane.kubectl("get", "deployment", f"{RELEASE}-dbabench-operator",
                                           "-n", release, "-o", "json").stdout)
    sa = dep["spec"]["template"]["spec"]["serviceAccountName"]
    control_plane.kubectl("get", "serviceaccount", sa, "-n", release)
    # The ReplicaSet's pod is admitted only if its ServiceAccount exists; kwok then schedules
    # it on the fake node (no container actually starts).
    pods = eventually(lambda: json.loads(control_plane.kubectl(
        "get", "pods", "-n", release, "-l", "app.kubernetes.io/component=operator",
        "-o", "json").stdout)["items"], "operator pod created")
    assert pods[0]["spec"]["serviceAccountName"] == sa


def token_kubeconfig(plane: ControlPlane, namespace: str, path: Path,
                     sa: str | None = None) -> Path:
    """A kubeconfig that authenticates as the chart's ServiceAccount, as the pod would."""
    sa = sa or service_account(render(plane, namespace=namespace))
    token = plane.kubectl("create", "token", sa, "-n", namespace, "--duration=1h").stdout.strip()
    admin = yaml.safe_load(plane.kubeconfig.read_text())
    ca = admin["clusters"][0]["cluster"]["certificate-authority"]
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "sa",
        "clusters": [{"name": "c", "cluster": {"server": plane.server,
                                               "certificate-authority": ca}}],
        "users": [{"name": "sa", "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "c", "user": "sa"}}]}))
    path.chmod(0o600)
    whoami = plane.kubectl("--kubeconfig", str(path), "auth", "whoami", "-o",
                           "jsonpath={.status.userInfo.username}").stdout
    assert whoami == f"system:serviceaccount:{namespace}:{sa}"
    return path


@pytest.fixture(scope="module")
def sa_kubeconfig(control_plane: ControlPlane, release: str, tmp_path_factory: Any) -> Path:
    return token_kubeconfig(control_plane, release, tmp_path_factory.mktemp("sa") / "kubeconfig")


def can(plane: ControlPlane, kubeconfig: Path, verb: str, resource: str, namespace: str | None,
        *extra: str) -> bool:
    scope = ("-n", namespace) if namespace else ()
    done = plane.kubectl("--kubeconfig", str(kubeconfig), "auth", "can-i", verb, resource,
                         *scope, *extra, check=False)
    # 0 yes, 1 no; anything else (or other output) is kubectl failing, not an answer
    assert done.stdout.strip() in ("yes", "no"), done.stderr
    return done.stdout.strip() == "yes"


def wrong_answers(plane: ControlPlane, kubeconfig: Path, allowed: list[tuple[Any, ...]],
                  denied: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return ([c for c in allowed if not can(plane, kubeconfig, *c)]
            + [("NOT DENIED", *c) for c in denied if can(plane, kubeconfig, *c)])


def test_service_account_has_exactly_what_the_operator_needs(
        control_plane: ControlPlane, release: str, sa_kubeconfig: Path) -> None:
    other = "default"
    allowed = [(v, r, release) for r in ("scenarios.dbabench.io", "agentruns.dbabench.io")
               for v in ("get", "list", "watch", "patch")]
    allowed += [("patch", r, release, "--subresource=status")
                for r in ("scenarios.dbabench.io", "agentruns.dbabench.io")]
    allowed += [("create", "evaluations.dbabench.io", release), ("create", "events", release)]
    # a Campaign's results record, and nothing else of ConfigMaps
    allowed += [(v, "configmaps", release) for v in ("get", "create", "patch")]
    denied = [("get", "secrets", release), ("list", "secrets", release),
              ("delete", "configmaps", release), ("get", "configmaps", other),
              ("get", "secrets", other), ("get", "secrets", "kube-system"),
              ("list", "pods", "kube-system"),
              ("create", "scenarios.dbabench.io", other),
              ("create", "agentruns.dbabench.io", other),
              ("get", "scenarios.dbabench.io", other),
              ("delete", "evaluations.dbabench.io", release),
              ("create", "pods", release), ("create", "rolebindings", release),
              # namespaced mode is the one without cluster-scoped grants
              ("list", "namespaces", None),
              ("list", "customresourcedefinitions.apiextensions.k8s.io", None)]
    assert not wrong_answers(control_plane, sa_kubeconfig, allowed, denied)


def test_cluster_wide_service_account_reaches_every_namespace_but_no_secrets(
        control_plane: ControlPlane, crds: None, tmp_path: Path) -> None:
    ns = f"chartwide-{uuid.uuid4().hex[:8]}"
    control_plane.kubectl("create", "namespace", ns)
    # its own release name: the ClusterRole and its binding are cluster-scoped, one per release
    release_name = f"wide-{ns[-8:]}"
    control_plane.run("helm", "install", release_name, str(CHART), "--namespace", ns,
                      "--skip-crds", timeout=120)
    try:
        sa = f"{release_name}-dbabench-operator"
        kubeconfig = token_kubeconfig(control_plane, ns, tmp_path / "kubeconfig", sa=sa)
        allowed = [(v, "scenarios.dbabench.io", n) for v in ("list", "watch", "patch")
                   for n in (ns, "default")]
        allowed += [("patch", "agentruns.dbabench.io", "default", "--subresource=status"),
                    ("create", "evaluations.dbabench.io", "default"),
                    # kopf's CRD watch; without it kopf retries 403s for about a minute
                    ("watch", "customresourcedefinitions.apiextensions.k8s.io", None)]
        denied = [("get", "secrets", ns), ("list", "secrets", "default"),
                  ("get", "secrets", "kube-system"), ("list", "pods", "kube-system"),
                  ("delete", "scenarios.dbabench.io", "default"),
                  ("delete", "evaluations.dbabench.io", "default"),
                  ("create", "customresourcedefinitions.apiextensions.k8s.io", None),
                  ("create", "clusterrolebindings", None)]
        assert not wrong_answers(control_plane, kubeconfig, allowed, denied)
    finally:
        control_plane.run("helm", "uninstall", release_name, "--namespace", ns, check=False)
        control_plane.kubectl("delete", "namespace", ns, "--wait=false", check=False)


def test_operator_with_only_the_chart_permissions_marks_an_invalid_scenario_failed(
        control_plane: ControlPlane, release: str, sa_kubeconfig: Path, tmp_path: Path) -> None:
    # Duplicate condition ids pass the CRD's schema (it cannot express uniqueness by field),
    # so the API server stores it and only the operator's pydantic validation can catch it.
    scenario = yaml.safe_load(SCENARIO_FILE.read_text())
    scenario["metadata"]["name"] = "dup-conditions"
    conditions = scenario["spec"]["diagnosis"]["conditions"]
    conditions.append(dict(conditions[0]))
    control_plane.kubectl("apply", "-n", release, "-f", "-", stdin=yaml.safe_dump(scenario))

    log = tmp_path / "operator.log"
    since = control_plane.audit_offset()
    env = {**os.environ, "KUBECONFIG": str(sa_kubeconfig),
           "DBABENCH_OPERATOR_RUNS_DIR": str(tmp_path / "runs"),
           "DBABENCH_OPERATOR_METRICS_PORT": str(free_port())}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dbabench.cli.main", "operator", "--verbose",
             "--namespace", release],
            env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        def failed() -> dict[str, Any] | None:
            assert proc.poll() is None, f"operator exited {proc.returncode}"
            body = json.loads(control_plane.kubectl(
                "get", "scenario", "dup-conditions", "-n", release, "-o", "json").stdout)
            status = body.get("status", {})
            return status if status.get("phase") == "Failed" else None

        status = eventually(failed, "operator marks the scenario Failed", timeout=30)
        valid = next(c for c in status["conditions"] if c["type"] == "Valid")
        assert valid["status"] == "False" and valid["reason"] == "InvalidSpec"
        assert "condition ids must be unique" in valid["message"]
        # kopf outlives some 403s by falling back after a minute of retries: any 403 at all
        # is a permission the operator wanted and the chart did not grant
        sa = service_account(render(control_plane, namespace=release))
        user = f"system:serviceaccount:{release}:{sa}"
        answers = control_plane.responses(user, since)
        assert any(a.verb == "patch" and "/scenarios/dup-conditions/status" in a.uri
                   and a.code == 200 for a in answers), answers
        refused = [a for a in answers if a.code in (401, 403)]
        assert not refused, refused
    finally:
        stop_pid(proc.pid, timeout=20)
        proc.wait()
        print(log.read_text(errors="replace")[-20000:])
