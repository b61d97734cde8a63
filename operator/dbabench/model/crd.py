"""CustomResourceDefinitions generated from the pydantic models: one source of truth.

Kubernetes wants a *structural* OpenAPI v3 schema: no ``$ref``, a type on every node, no
``additionalProperties: false``, no ``const``, and unions only where every branch has the same
type. The translation here keeps as much validation as the API server can enforce:

* a tagged union of objects becomes one object with all branches' properties, the tag as an
  enum, and a CEL rule per branch for the fields that branch requires;
* ``X | None`` becomes ``X`` with ``nullable: true``;
* a union of string enums (a ``NameEnum`` or a ``Literal`` of strings, or both) becomes one
  enum of all their values;
* a map's ``propertyNames`` (the keys of a ``dict[SomeNameEnum, ...]``) is dropped: the
  schema has no such field, and the operator validates the keys with pydantic;
* a union of scalars, or of mixed literals, keeps its values unchecked
  (``x-kubernetes-preserve-unknown-fields``) — the operator validates with pydantic anyway.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from dbabench.model.kube import AgentRun, Campaign, Evaluation
from dbabench.model.scenario import Scenario

GROUP = "dbabench.io"
VERSION = "v1alpha1"

Schema = dict[str, Any]
_DROP = {"title", "discriminator", "default", "examples", "propertyNames"}


def _resolve(node: Any, defs: Schema) -> Any:
    if isinstance(node, list):
        return [_resolve(n, defs) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[1]])
        extra = {k: v for k, v in node.items() if k != "$ref"}
        return _resolve({**target, **extra}, defs)
    return {k: _resolve(v, defs) for k, v in node.items()}


def _merge_objects(branches: list[Schema]) -> Schema:
    tag = next(k for k, v in branches[0]["properties"].items() if "enum" in v)
    properties: Schema = {}
    rules = []
    for branch in branches:
        value = branch["properties"][tag]["enum"][0]
        for name, prop in branch["properties"].items():
            if name != tag:
                properties.setdefault(name, prop)
        needed = [r for r in branch.get("required", []) if r != tag]
        if needed:
            has = " && ".join(f"has(self.{r})" for r in needed)
            rules.append({"rule": f"self.{tag} != '{value}' || ({has})",
                          "message": f"{tag} {value} requires {', '.join(needed)}"})
    properties[tag] = {"type": "string",
                       "enum": [b["properties"][tag]["enum"][0] for b in branches]}
    merged: Schema = {"type": "object", "properties": properties, "required": [tag]}
    if rules:
        merged["x-kubernetes-validations"] = rules
    return merged


def _structural(node: Schema) -> Schema:
    node = {k: v for k, v in node.items() if k not in _DROP}
    if "const" in node:
        value = node.pop("const")
        node["enum"] = [value]
        node.setdefault("type", {bool: "boolean", int: "integer", float: "number"}.get(
            type(value), "string"))
    if "exclusiveMinimum" in node:
        node["minimum"], node["exclusiveMinimum"] = node["exclusiveMinimum"], True
    if "exclusiveMaximum" in node:
        node["maximum"], node["exclusiveMaximum"] = node["exclusiveMaximum"], True
    if node.get("additionalProperties") is False:
        del node["additionalProperties"]
    if isinstance(node.get("additionalProperties"), dict):
        node["additionalProperties"] = _structural(node["additionalProperties"])
    if "properties" in node:
        node["properties"] = {k: _structural(v) for k, v in node["properties"].items()}
    if "items" in node:
        node["items"] = _structural(node["items"])
    union = node.pop("anyOf", None) or node.pop("oneOf", None)
    if union is not None:
        branches = [_structural(b) for b in union]
        nullable = any(b.get("type") == "null" for b in branches)
        branches = [b for b in branches if b.get("type") != "null"]
        if len(branches) == 1:
            node.update(branches[0])
        elif all(b.get("type") == "string" and "enum" in b for b in branches):
            node.update(enum=[v for b in branches for v in b["enum"]], type="string")
        elif all(b.get("type") == "object" and "properties" in b for b in branches):
            node.update(_merge_objects(branches))
        else:
            node["x-kubernetes-preserve-unknown-fields"] = True
        if nullable:
            node["nullable"] = True
    if "enum" in node and "type" not in node:
        kinds = {type(v) for v in node["enum"]}
        if kinds == {str}:
            node["type"] = "string"
        else:
            node.pop("enum")
            node["x-kubernetes-preserve-unknown-fields"] = True
    if "type" not in node and "x-kubernetes-preserve-unknown-fields" not in node:
        node["x-kubernetes-preserve-unknown-fields"] = True
    return node


def openapi_schema(model: type[BaseModel], *, fields: tuple[str, ...]) -> Schema:
    """The structural schema of a resource model's ``fields`` (spec, status)."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    defs = raw.pop("$defs", {})
    resolved = _resolve(raw, defs)
    properties: Schema = {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
    }
    for name in fields:
        properties[name] = _structural(resolved["properties"][name])
    return {"type": "object", "properties": properties, "required": ["spec"]}


@dataclass(frozen=True)
class Resource:
    model: type[BaseModel]
    kind: str
    plural: str
    short_names: tuple[str, ...]
    has_status: bool
    columns: tuple[tuple[str, str, str], ...]


RESOURCES = (
    Resource(Scenario, "Scenario", "scenarios", ("dbsc",), True, (
        ("Category", "string", ".spec.category"),
        ("Phase", "string", ".status.phase"),
        ("Snapshot", "string", ".status.snapshot.name"),
    )),
    Resource(AgentRun, "AgentRun", "agentruns", ("ar",), True, (
        ("Scenario", "string", ".spec.scenario"),
        ("Agent", "string", ".spec.agent.kind"),
        ("Model", "string", ".spec.agent.model"),
        ("Phase", "string", ".status.phase"),
        ("Outcome", "boolean", ".status.summary.outcomePass"),
        ("Safe Pass", "boolean", ".status.summary.safePass"),
        ("Cost USD", "number", ".status.summary.costUsd"),
    )),
    Resource(Campaign, "Campaign", "campaigns", ("camp",), True, (
        ("Phase", "string", ".status.phase"),
        ("Runs", "integer", ".status.runs"),
        ("Finished", "integer", ".status.finished"),
    )),
    Resource(Evaluation, "Evaluation", "evaluations", ("ev",), False, (
        ("Run", "string", ".spec.agentRun"),
        ("Outcome", "boolean", ".spec.result.outcome.passed"),
        ("Diagnosis", "boolean", ".spec.result.diagnosis.passed"),
        ("Penalty", "number", ".spec.result.safety.penalty"),
    )),
)


def crd(resource: Resource) -> Schema:
    fields = ("spec", "status") if resource.has_status else ("spec",)
    version: Schema = {
        "name": VERSION, "served": True, "storage": True,
        "schema": {"openAPIV3Schema": openapi_schema(resource.model, fields=fields)},
        "additionalPrinterColumns": [
            {"name": name, "type": kind, "jsonPath": path} for name, kind, path in resource.columns
        ] + [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
    }
    if resource.has_status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{resource.plural}.{GROUP}"},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"kind": resource.kind, "plural": resource.plural,
                      "singular": resource.kind.lower(), "listKind": f"{resource.kind}List",
                      "shortNames": list(resource.short_names), "categories": ["dbabench"]},
            "versions": [version],
        },
    }
