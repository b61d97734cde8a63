"""Smoke tests of the control plane the cluster tests run against: each one checks a part
the operator will lean on (API version, CRD validation, pods on the fake node, garbage
collection by owner, helm), so a broken build or start fails here, not deep in an operator
test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from waiting import eventually

if TYPE_CHECKING:
    from conftest import ControlPlane

pytestmark = pytest.mark.cluster

@pytest.fixture(scope="module")
def api(control_plane: ControlPlane) -> Iterator[client.ApiClient]:
    with config.new_client_from_config(config_file=str(control_plane.kubeconfig)) as api_client:
        yield api_client


@pytest.fixture
def namespace(api: client.ApiClient) -> str:
    name = f"t-{uuid.uuid4().hex[:10]}"
    client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata={"name": name}))
    return name


def test_api_server_is_the_pinned_release(control_plane: ControlPlane,
                                          api: client.ApiClient) -> None:
    info = client.VersionApi(api).get_code()
    assert info.git_version.startswith("v1.36."), info
    assert (info.major, info.minor) == ("1", "36")
    # The version ldflags reached the binaries themselves, not only the API.
    banner = control_plane.run("kube-apiserver", "--version").stdout.strip()
    assert banner == f"Kubernetes {info.git_version}"


GROUP, VERSION, PLURAL = "test.dbabench.io", "v1", "widgets"
WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{PLURAL}.{GROUP}"},
    "spec": {
        "group": GROUP, "scope": "Namespaced",
        "names": {"plural": PLURAL, "singular": "widget", "kind": "Widget"},
        "versions": [{
            "name": VERSION, "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {
                    "type": "object", "required": ["engine"],
                    "properties": {
                        "engine": {"type": "string", "enum": ["postgres"]},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 5}}}}}},
        }],
    },
}


def test_crd_accepts_valid_and_rejects_invalid_objects(api: client.ApiClient,
                                                       namespace: str) -> None:
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(WIDGET_CRD)

    def established() -> bool:
        crd = ext.read_custom_resource_definition(WIDGET_CRD["metadata"]["name"])
        return any(c.type == "Established" and c.status == "True"
                   for c in crd.status.conditions or [])
    eventually(established, "CRD established")

    objects = client.CustomObjectsApi(api)

    def widget(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Widget",
                "metadata": {"name": name}, "spec": spec}

    objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL,
                                            widget("good", {"engine": "postgres", "replicas": 3}))
    stored = objects.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "good")
    assert stored["spec"] == {"engine": "postgres", "replicas": 3}

    with pytest.raises(ApiException) as rejected:
        objects.create_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, widget("bad", {"engine": "postgres", "replicas": 9}))
    assert rejected.value.status == 422
    assert "spec.replicas" in rejected.value.body


@pytest.mark.parametrize("bound", [True, False], ids=["node-name", "scheduled"])
def test_pod_on_the_fake_node_runs(control_plane: ControlPlane, api: client.ApiClient,
                                   namespace: str, bound: bool) -> None:
    core = client.CoreV1Api(api)
    # The ServiceAccount admission plugin refuses pods until kube-controller-manager has
    # given the new namespace its default service account.
    eventually(lambda: core.list_namespaced_service_account(
        namespace, field_selector="metadata.name=default").items, "default service account")
    # nodeName skips the scheduler; without it kube-scheduler has to place the pod.
    core.create_namespaced_pod(namespace, client.V1Pod(
        metadata=client.V1ObjectMeta(name="db"),
        spec=client.V1PodSpec(node_name=control_plane.fake_node if bound else None, containers=[
            client.V1Container(name="postgres", image="postgres:16")])))

    pod = eventually(lambda: (p := core.read_namespaced_pod("db", namespace)).status.phase
                     == "Running" and p, "pod Running")
    assert pod.spec.node_name == control_plane.fake_node
    ready = {c.type: c.status for c in pod.status.conditions}
    assert ready.get("Ready") == "True"
    assert pod.status.pod_ip


def test_dependent_is_garbage_collected_with_its_owner(api: client.ApiClient,
                                                       namespace: str) -> None:
    core = client.CoreV1Api(api)
    owner = core.create_namespaced_config_map(
        namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owner")))
    core.create_namespaced_config_map(namespace, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="dependent", owner_references=[
            client.V1OwnerReference(api_version="v1", kind="ConfigMap", name="owner",
                                    uid=owner.metadata.uid)])))
    core.delete_namespaced_config_map("owner", namespace)

    def dependent_gone() -> bool:
        try:
            core.read_namespaced_config_map("dependent", namespace)
        except ApiException as e:
            return e.status == 404
        return False
    eventually(dependent_gone, "garbage collection of the dependent ConfigMap")


def test_helm_runs_against_the_cluster(control_plane: ControlPlane) -> None:
    assert control_plane.run("helm", "version", "--short").stdout.startswith("v3.22.")
    assert control_plane.run("helm", "list", "--all-namespaces", "-q").stdout == ""
