"""Measured difficulty, kept in ``difficulty.json`` beside the manifests.

Measuring runs the scenario (``dbabench scenarios measure``); listing and the catalog only
read the file. Each entry carries the digest of the manifest parts the evidence depends on,
so an edited scenario shows as stale instead of showing an old measurement as current.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import ValidationError

from dbabench.model.artifacts import StoreArtifact
from dbabench.model.difficulty import DEPTH_BOUNDARY, Difficulty, DifficultyFile
from dbabench.model.scenario import Scenario
from dbabench.scenario.loader import ScenarioError

FILE_NAME = StoreArtifact.DIFFICULTY
DIGEST_CHARS = 12


def evidence_digest(scenario: Scenario) -> str:
    """Changes whenever what the reference path's calls would return may change. Fields left
    at their defaults are not part of it: a new optional field keeps every measurement."""
    spec = scenario.spec
    parts = {
        "database": spec.database.model_dump(mode="json", exclude_defaults=True),
        "workload": spec.workload.model_dump(mode="json", exclude_defaults=True),
        "fault": spec.fault.model_dump(mode="json", exclude_defaults=True),
        "manifestation": spec.manifestation.model_dump(mode="json", exclude_defaults=True),
        "referencePath": [h.model_dump(mode="json", exclude_defaults=True)
                          for h in spec.reference_path],
    }
    if spec.intended:
        # the settings listings a reference path reads show them
        parts["intended"] = [s.statement() for s in spec.intended]
    material = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()[:DIGEST_CHARS]


def load(root: Path) -> dict[str, Difficulty]:
    path = root / FILE_NAME
    if not path.exists():
        return {}
    try:
        return DifficultyFile.model_validate_json(path.read_text()).root
    except ValidationError as e:
        raise ScenarioError(f"{path}: not a difficulty file ({e.error_count()} problem(s);"
                            f" first: {e.errors()[0]['msg']})") from e


def save(root: Path, measured: dict[str, Difficulty]) -> Path:
    """Merge ``measured`` into the file (sorted, so that a re-measurement diffs cleanly)."""
    entries = {**load(root), **measured}
    path = root / FILE_NAME
    doc = DifficultyFile(dict(sorted(entries.items())))
    path.write_text(doc.model_dump_json(indent=1, by_alias=True) + "\n")
    return path


def current(scenario: Scenario, stored: dict[str, Difficulty]) -> Difficulty | None:
    """The stored measurement if it was taken of this very evidence, else None."""
    entry = stored.get(scenario.name)
    return entry if entry is not None and entry.digest == evidence_digest(scenario) else None


def describe(scenario: Scenario, stored: dict[str, Difficulty]) -> tuple[str, str]:
    """C and the label as a listing shows them; without a current measurement C is unknown,
    but a path of at most two hops is Easy whatever C turns out to be."""
    entry = current(scenario, stored)
    if entry is not None:
        return f"{entry.complexity:.2f}", entry.label
    c = "stale" if scenario.name in stored else "unmeasured"
    return c, "Easy" if len(scenario.spec.reference_path) <= DEPTH_BOUNDARY else "?"
