"""crds/ is generated from the models; the scenario files are valid Scenario resources."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dbabench.cli.main import crd_files
from dbabench.model.kube import AgentRun
from dbabench.scenario.loader import scenarios_root

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("directory", ["crds", "charts/dbabench/crds"])
def test_crds_directory_matches_the_models(directory: str) -> None:
    expected = crd_files()
    on_disk = {p.name: p.read_text() for p in (REPO / directory).glob("*.yaml")}
    assert on_disk.keys() == expected.keys()
    for name, text in expected.items():
        assert on_disk[name] == text, f"{directory}/{name} drifted from the models: run `make crds`"


def _walk(node: object, path: str = "") -> list[str]:
    """Places that break Kubernetes' structural-schema rules."""
    problems = []
    if isinstance(node, dict):
        if "$ref" in node or "const" in node or node.get("additionalProperties") is False:
            problems.append(path)
        if ("properties" in node or "items" in node) and "type" not in node:
            problems.append(path + " (no type)")
        for key, value in node.items():
            problems += _walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            problems += _walk(value, f"{path}[{i}]")
    return problems


def test_schemas_are_structural() -> None:
    for text in crd_files().values():
        doc = yaml.safe_load(text.split("\n", 1)[1])
        schema = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        assert _walk(schema) == []


def test_printer_columns_of_agentruns() -> None:
    doc = yaml.safe_load(crd_files()["agentruns.dbabench.io.yaml"].split("\n", 1)[1])
    names = [c["name"] for c in doc["spec"]["versions"][0]["additionalPrinterColumns"]]
    assert names == ["Scenario", "Agent", "Model", "Phase", "Outcome", "Safe Pass", "Cost USD", "Age"]


def test_scenario_files_fit_the_scenario_crd_schema() -> None:
    doc = yaml.safe_load(crd_files()["scenarios.dbabench.io.yaml"].split("\n", 1)[1])
    spec_props = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"]
    for path in scenarios_root().rglob("*.yaml"):
        manifest = yaml.safe_load(path.read_text())
        assert manifest["apiVersion"] == "dbabench.io/v1alpha1"
        assert set(manifest["spec"]) <= set(spec_props), path


def test_agentrun_example_validates() -> None:
    run = AgentRun.model_validate({
        "apiVersion": "dbabench.io/v1alpha1", "kind": "AgentRun",
        "metadata": {"name": "demo"},
        "spec": {"scenario": "stale-stats-lock-chain", "agent": {"kind": "reference"}},
    })
    assert run.spec.agent.kind.value == "reference"
