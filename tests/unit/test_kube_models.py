"""env.kube's objects are the kubernetes client's: each reads back as its model field for field,
so none carries a key the client (and the API server) does not know and would drop."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from kubernetes.client import ApiClient

from dbabench.env import kube
from dbabench.model.kube import AgentSpec
from dbabench.model.scenario import ReplicaSpec

from test_kube_objects import EXTERNAL, OWNER, PASSWORDS, REACT, REFERENCE, objects

MODELS = {"Pod": "V1Pod", "Job": "V1Job", "Service": "V1Service",
          "NetworkPolicy": "V1NetworkPolicy", "PersistentVolumeClaim": "V1PersistentVolumeClaim",
          "ConfigMap": "V1ConfigMap", "Secret": "V1Secret"}
SETTINGS = kube.KubeSettings(
    image="reg/x:2", storage_class="sc", snapshot_class="snap", clone_from="pvc",
    node_selector={"pool": "b"},
    tolerations=[{"key": "b", "operator": "Equal", "value": "v", "effect": "NoExecute",
                  "tolerationSeconds": 30}],
    model_gateway_cidr="10.1.0.0/16")
METERED = kube.AgentContainer(name="metered", spec=AgentSpec.model_validate(
    {"kind": "external", "image": "me/a:1", "meter": "openai",
     "apiKeySecret": {"name": "k", "key": "api-key"}}))


def bodies() -> list[dict[str, Any]]:
    standby = ReplicaSpec(slot="replica1", settings={"hot_standby_feedback": True})
    runs = [objects(agent, settings, replica)
            for agent in (EXTERNAL, REFERENCE, REACT, METERED)
            for settings in (None, SETTINGS) for replica in (None, standby)]
    return [
        *(body for run in runs for phase in run.values() for body in phase),
        *kube.golden_objects("k1", "kind: Scenario\n", PASSWORDS, SETTINGS, OWNER),
        kube.result_configmap("r1-trace", "r1", OWNER, {"outcome.json": b"{}"}),
    ]


def test_every_object_round_trips_through_its_client_model() -> None:
    client = ApiClient()
    seen = set()
    for body in bodies():
        # how the client reads an API response; its public deserialize wants the raw text
        model = client._ApiClient__deserialize(body, MODELS[body["kind"]])
        assert client.sanitize_for_serialization(model) == body, body["metadata"]["name"]
        seen.add(body["kind"])
    assert seen == set(MODELS)


def test_a_toleration_the_client_does_not_know_is_refused_with_the_settings() -> None:
    # when the operator reads its settings, not when each run builds its pods
    with pytest.raises(ValidationError, match="operatr"):
        kube.KubeSettings(tolerations=[{"key": "b", "operatr": "Exists"}])
