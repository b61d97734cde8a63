"""The generated pages (the catalog, the diagnosis contract) and the stored difficulty
measurements match the manifests and the vocabulary."""

from __future__ import annotations

from pathlib import Path

from dbabench.evaluate import diagnosis_doc
from dbabench.evaluate.complexity import unsignalled
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
