"""Choose scenarios from the catalog by name, category, glob or file."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from dbabench.model.scenario import Category, Scenario
from dbabench.scenario.loader import ScenarioError, load_file

Catalog = dict[str, tuple[Path, Scenario]]


def select(catalog: Catalog, selectors: list[str]) -> list[tuple[Path, Scenario]]:
    """Scenarios matching any selector, in catalog order; no selector means all of them.

    A selector is a scenario name, a category (``composite``), a glob over names
    (``stale-*``) or a manifest's path. One that matches nothing is an error naming it,
    so a typo cannot shrink a battery to zero scenarios that all "pass".
    """
    if not selectors:
        return [catalog[name] for name in sorted(catalog)]
    chosen: dict[str, tuple[Path, Scenario]] = {}
    for selector in selectors:
        found = _matches(catalog, selector)
        if not found:
            categories = ", ".join(c.value for c in Category)
            known = ", ".join(sorted(catalog)) or "none"
            raise ScenarioError(f"selector {selector!r} matches no scenario: not a scenario"
                                f" name ({known}), a category ({categories}), a glob over"
                                " names, or a manifest file")
        for path, scenario in found:
            chosen.setdefault(scenario.name, (path, scenario))
    return [chosen[name] for name in sorted(chosen)]


def _matches(catalog: Catalog, selector: str) -> list[tuple[Path, Scenario]]:
    if selector in catalog:
        return [catalog[selector]]
    if selector in {c.value for c in Category}:
        return [entry for entry in catalog.values() if entry[1].spec.category.value == selector]
    path = Path(selector)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        return [(path, load_file(path))]
    return [catalog[name] for name in sorted(fnmatch.filter(catalog, selector))]
