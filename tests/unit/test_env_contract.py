"""The run pods' environment: what env.kube writes is what runner.components reads."""

from __future__ import annotations

import pytest

from dbabench.env import contract, kube
from dbabench.errors import disposition
from dbabench.model.scenario import ReplicaSpec

from test_kube_objects import REACT, objects


def _containers(objs: dict[str, list[dict]]) -> list[dict]:
    return [c for phase in objs.values() for o in phase if o["kind"] in ("Pod", "Job")
            for c in (o["spec"].get("template", o)["spec"].get("containers", [])
                      + o["spec"].get("template", o)["spec"].get("initContainers", []))]


def test_every_variable_a_pod_is_given_is_the_contracts() -> None:
    # (a metered external agent's OPENAI_* variables are every OpenAI client's, not ours)
    written = {e["name"] for objs in (objects(REACT), objects(REACT, replica=ReplicaSpec()))
               for c in _containers(objs) for e in c.get("env", [])
               if e["name"].startswith(contract.PREFIX)}
    known = {contract.variable(f) for f in contract.ComponentEnv.model_fields}
    assert written and written <= known, written - known
    # and the contract has nothing no pod is given (a variable read but never written)
    assert known - written <= {"DBABENCH_OWNER"}, known - written


def test_a_component_reads_its_container_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    (tools,) = [c for c in _containers(objects(REACT)) if c["name"] == "tools"]
    for e in tools["env"]:
        monkeypatch.setenv(e["name"], e.get("value", "from-a-secret"))
    assert contract.need("port_tools") == str(kube.PORTS["tools"])
    assert contract.need("tools_token") == "from-a-secret"
    assert contract.need("addr_control").endswith(f":{kube.PORTS['control']}")


def test_a_missing_variable_is_named_and_is_an_infra_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBABENCH_RUN", raising=False)
    with pytest.raises(contract.ContractError) as caught:
        contract.need("run")
    assert str(caught.value) == ("DBABENCH_RUN is not set; the run's pod spec (env.kube) sets it")
    assert disposition(caught.value).kind == "infra"
    with pytest.raises(KeyError, match="not a variable"):
        contract.variable("no_such_thing")
