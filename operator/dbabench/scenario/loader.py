"""Load and validate scenario manifests; find them by name.

A bad manifest is reported with the path of every offending field
(``spec.outcome.checks[2].predicate.op: Input should be '<', ...``), never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import yaml
from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from dbabench.errors import BadInput
from dbabench.model.scenario import Scenario
from dbabench.scenario.datasets import Dataset, complete, dataset_of
from dbabench.yamltext import load_yaml


KEY_DIGEST_CHARS = 12


class ScenarioError(BadInput, ValueError):
    """A manifest that cannot be used; the message names the file and every bad field."""


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(document)"


def format_validation_error(source: str, error: ValidationError) -> str:
    lines = [f"{source}: invalid Scenario ({error.error_count()} problem(s))"]
    for e in error.errors():
        # Discriminated unions add the tag value to the path (predicate.sql.timeoutMs): keep it,
        # it tells which variant was being checked.
        message = e["msg"]
        last = e["loc"][-1] if e["loc"] else None
        if e["type"] == "extra_forbidden" and isinstance(last, str) and "_" in last:
            message += f" (manifests name fields in camelCase: {to_camel(last)})"
        elif e.get("input", "") is None and "'null'" in message:
            message += ' (YAML reads a bare null as no value: write "null")'
        lines.append(f"  {_field_path(e['loc'])}: {message}")
    return "\n".join(lines)


VARIANT_KIND = "ScenarioVariant"
"""A manifest that is another scenario with some of its spec changed (``base``, a path next
to it; ``spec``, merged over the base's): the same fault in another setting, such as the
estate, written once."""


def _merged(base: object, change: object) -> object:
    """``change`` over ``base``: mappings merge key by key, anything else is replaced."""
    if isinstance(base, dict) and isinstance(change, dict):
        return {**base, **{k: _merged(base.get(k), v) for k, v in change.items()}}
    return change


def _read(text: str, source: str) -> dict:
    try:
        doc = load_yaml(text)
    except yaml.YAMLError as e:
        raise ScenarioError(f"{source}: not valid YAML: {e}") from e
    if not isinstance(doc, dict):
        raise ScenarioError(f"{source}: expected a mapping with apiVersion, kind, metadata, spec")
    return doc


def _variant(doc: dict, source: str) -> dict:
    """The whole manifest a ``ScenarioVariant`` stands for."""
    extra = sorted(set(doc) - {"apiVersion", "kind", "metadata", "base", "spec"})
    if extra or not isinstance(doc.get("base"), str) or not isinstance(doc.get("spec", {}), dict):
        raise ScenarioError(f"{source}: a {VARIANT_KIND} has apiVersion, kind, metadata, base"
                            " (the path of the scenario it varies, next to it) and spec (what"
                            " it changes)" + (f"; not {extra}" if extra else ""))
    if source.startswith("<"):
        raise ScenarioError(f"{source}: a {VARIANT_KIND} is read from a file (its base is a path"
                            " next to it)")
    path = Path(source).parent / doc["base"]
    try:
        base = _read(path.read_text(), str(path))
    except OSError as e:
        raise ScenarioError(f"{source}: base {doc['base']!r}: cannot read {path}:"
                            f" {e.strerror}") from e
    if base.get("kind") != "Scenario":
        raise ScenarioError(f"{source}: base {doc['base']!r} is a {base.get('kind')}, not a"
                            " Scenario (a variant of a variant is not read)")
    metadata = doc.get("metadata") or {}
    labels = {**(base.get("metadata") or {}).get("labels", {}), **metadata.get("labels", {}),
              VARIANT_OF_LABEL: base.get("metadata", {}).get("name", "")}
    annotations = {**(base.get("metadata") or {}).get("annotations", {}),
                   **metadata.get("annotations", {})}
    return {"apiVersion": doc.get("apiVersion"), "kind": "Scenario",
            "metadata": {**metadata, "labels": labels, "annotations": annotations},
            "spec": _merged(base.get("spec"), doc.get("spec", {}))}


VARIANT_OF_LABEL = "dbabench.io/variant-of"


def parse(text: str, source: str = "<string>") -> Scenario:
    doc = _read(text, source)
    if doc.get("kind") == VARIANT_KIND:
        doc = _variant(doc, source)
    try:
        # the names the CRD has (camelCase): a manifest the loader takes, kubectl applies
        return complete(Scenario.model_validate(doc, by_name=False))
    except ValidationError as e:
        raise ScenarioError(format_validation_error(source, e)) from e


def load_file(path: Path) -> Scenario:
    try:
        text = path.read_text()
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror}") from e
    return parse(text, str(path))


def scenarios_root() -> Path:
    """``$DBABENCH_SCENARIOS``, else ``scenarios/`` of the source checkout, else ``./scenarios``."""
    env = os.environ.get("DBABENCH_SCENARIOS")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[3] / "scenarios"
    return checkout if checkout.is_dir() else Path.cwd() / "scenarios"


def discover(root: Path | None = None) -> dict[str, tuple[Path, Scenario]]:
    root = root or scenarios_root()
    found: dict[str, tuple[Path, Scenario]] = {}
    for path in sorted(root.rglob("*.yaml")):
        scenario = load_file(path)
        if scenario.name in found:
            raise ScenarioError(f"{path}: scenario name {scenario.name!r} is also used by"
                                f" {found[scenario.name][0]}")
        found[scenario.name] = (path, scenario)
    return found


def resolve(name_or_path: str, root: Path | None = None) -> tuple[Path, Scenario]:
    """A scenario by file path or by ``metadata.name``."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return path, load_file(path)
    catalog = discover(root)
    if name_or_path not in catalog:
        known = ", ".join(sorted(catalog)) or "none"
        raise ScenarioError(f"no scenario named {name_or_path!r} under {root or scenarios_root()}"
                            f" (known: {known})")
    return catalog[name_or_path]


def golden_key(scenario: Scenario, baseline: dict[str, str]) -> str:
    """Changes whenever anything baked into the golden snapshot would change (fields left at
    their defaults are not part of it: a new optional field keeps every golden)."""
    spec = scenario.spec
    dataset = dataset_of(spec.database)
    material = json.dumps({
        "database": spec.database.model_dump(mode="json", exclude_defaults=True),
        "persistent": [s.model_dump(mode="json", exclude_defaults=True)
                       for s in spec.fault.persistent],
        # some stored before the fault, all after it (faults.steps.populate_golden): goldens
        # built when all were stored after it only are not this one
        "intended": [*(["split-around-fault"] if spec.intended else []),
                     *(s.statement() for s in spec.intended)],
        "dataset": [dataset.name, dataset.version, list(dataset.statements)],
        "baseline": baseline,
    }, sort_keys=True)
    return f"{scenario.name}-{hashlib.sha256(material.encode()).hexdigest()[:KEY_DIGEST_CHARS]}"


def base_key(dataset: Dataset, database: str, baseline: dict[str, str]) -> str:
    """The key of a shared dataset's own snapshot (``Dataset.shared``): what each golden of a
    scenario built on it is a clone of."""
    material = json.dumps({"dataset": [dataset.name, dataset.version, list(dataset.statements),
                                       [s.statement() for s in dataset.intended]],
                           "database": database, "baseline": baseline}, sort_keys=True)
    return f"{dataset.name}-base-{hashlib.sha256(material.encode()).hexdigest()[:KEY_DIGEST_CHARS]}"
