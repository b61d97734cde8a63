"""The generated pages (the catalog, the diagnosis contract) and the stored difficulty
measurements match the manifests and the vocabulary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dbabench.evaluate import diagnosis_doc
from dbabench.evaluate.complexity import unsignalled
from dbabench.policy import REFUSED, classify
from dbabench.policy.reach import setting_reach
from dbabench.scenario import catalog, difficulty
from dbabench.scenario.loader import discover, scenarios_root

DOC = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"
DIAGNOSIS_DOC = DOC.with_name("diagnosis.md")


def test_docs_scenarios_md_is_generated_from_the_manifests() -> None:
    assert DOC.read_text() == catalog.render(scenarios_root()), (
        "docs/scenarios.md is out of date: run `make catalog`")


def test_docs_diagnosis_md_is_generated_from_the_vocabulary() -> None:
    assert DIAGNOSIS_DOC.read_text() == diagnosis_doc.render(), (
        "docs/diagnosis.md is out of date: run `make catalog`")


def test_stored_difficulty_is_of_the_manifests_as_they_are() -> None:
    root = scenarios_root()
    scenarios = {name: s for name, (_, s) in discover(root).items()}
    stored = difficulty.load(root)
    orphans = sorted(set(stored) - set(scenarios))
    stale = sorted(n for n in stored if n in scenarios
                   and difficulty.current(scenarios[n], stored) is None)
    unmeasured = sorted(n for n, s in scenarios.items()
                        if n not in stored and not unsignalled(s))
    assert not (orphans or stale or unmeasured), (
        f"{difficulty.FILE_NAME} does not match the manifests: no such scenario: {orphans};"
        f" measured before the last change: {stale}; declares its signal but was never"
        f" measured: {unmeasured}. Run `dbabench scenarios measure NAME...`, then"
        " `make catalog`, and commit both files")


def _agent_calls(node: Any, tool: str) -> Iterator[dict[str, Any]]:
    """The arguments of every call of ``tool`` in a manifest's agent-side steps."""
    if isinstance(node, dict):
        if node.get("tool") == tool and isinstance(node.get("args"), dict):
            yield node["args"]
        for value in node.values():
            yield from _agent_calls(value, tool)
    elif isinstance(node, list):
        for item in node:
            yield from _agent_calls(item, tool)


def _agent_sql(node: Any) -> Iterator[str]:
    """The SQL of every execute_sql call in a manifest's agent-side steps."""
    return (args["sql"] for args in _agent_calls(node, "execute_sql"))


def test_every_scripted_agent_statement_passes_the_policy() -> None:
    # A reference the gate refuses is no fix; a decoy whose YAML broke its SQL (an unquoted
    # comma in a flow mapping) fails for the wrong reason. The config tool's settings are
    # held to the policy as the gate holds them (ALTER SYSTEM SET by another route).
    refused, settings = [], set()
    for name, (_, scenario) in discover(scenarios_root()).items():
        spec = scenario.spec.model_dump(mode="json", by_alias=True)
        for key in ("reference", "alternatives", "decoy", "verification", "referencePath"):
            for text in _agent_sql(spec.get(key)):
                classes = {c for st in classify(text) for c in st.classes} & REFUSED
                if classes:
                    refused.append(f"{name} {key}: {sorted(classes)} {text[:80]!r}")
            for args in _agent_calls(spec.get(key), "manage_instance"):
                if args.get("action") != "config_set":
                    continue
                settings.add(args["name"])
                classes = {c.value for c in setting_reach(args["name"], str(args["value"]))}
                if classes & REFUSED:
                    refused.append(f"{name} {key}: {sorted(classes)} config_set"
                                   f" {args['name']}={args['value']!r}")
    assert not refused, "\n".join(refused)
    # the settings that run programs or load code are among those held to it
    assert {"archive_command", "shared_preload_libraries",
            "session_preload_libraries"} <= settings, settings
