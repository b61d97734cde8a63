"""The structured report an agent files when it stops (the paper's r_s^a)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from dbabench.model.base import Model
from dbabench.model.taxonomy import CauseId, ObjectKind, resolve_cause

QUALIFIED = frozenset({"table", "index", "sequence", "view", "function"})
SERVER_NAMES = {"primary": "primary", "master": "primary", "replica": "replica",
                "replica1": "replica", "standby": "replica", "hot_standby": "replica"}


def _identifiers(text: str) -> list[str]:
    """A dotted name split as PostgreSQL reads it: "Quoted" parts keep their case and dots,
    unquoted ones fold to lower case."""
    parts, current, quoted, i = [], "", False, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            if quoted and text[i + 1:i + 2] == '"':
                current += '"'
                i += 1
            else:
                quoted = not quoted
        elif ch == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += ch if quoted else ch.lower()
        i += 1
    parts.append(current)
    return [p.strip() for p in parts]


class ObjectRef(Model):
    """An affected object: its kind and its name as PostgreSQL would resolve it
    (``public.orders``, ``orders`` and ``"orders"`` are one table)."""

    kind: ObjectKind
    name: str = Field(min_length=1, max_length=200,
                      description="schema-qualified where the kind has a schema"
                                  " (table, index, sequence, view, function); a session by"
                                  " application_name or role; a prepared transaction by gid")

    def key(self) -> tuple[str | None, str]:
        """(schema, name) for the kinds that have a schema, else (None, name), normalised."""
        name = self.name.strip()
        if self.kind == "function":
            name = re.sub(r"\(.*\)\s*$", "", name)
        if self.kind in QUALIFIED or self.kind == "column":
            parts = _identifiers(name)
            if self.kind == "column":
                parts = parts[:-1]  # a column is matched by its table
            return (parts[-2] if len(parts) > 1 else None), parts[-1]
        if self.kind in ("trigger", "policy"):
            name = re.split(r"\s+on\s+", name, flags=re.IGNORECASE)[0]
        if self.kind == "setting":
            return None, re.split(r"[\s=]", name.lower(), maxsplit=1)[0]
        if self.kind == "server":
            folded = re.sub(r"[^a-z0-9]+", "_", name.lower())
            return None, SERVER_NAMES.get(folded, folded)
        if self.kind in ("prepared_transaction", "large_object", "advisory_lock"):
            return None, name.strip("'\"")
        if self.kind == "file":
            return None, name.rstrip("/")
        if self.kind == "session":
            return None, name.lower()
        return None, _identifiers(name)[-1]

    def matches(self, other: "ObjectRef") -> bool:
        """Is ``other`` (a report's) this object (a condition's)? An unqualified name matches
        any schema; a column matches its table; a session and a role of one name are one."""
        kinds = {self.kind, other.kind}
        if self.kind != other.kind and kinds not in ({"table", "column"}, {"session", "role"}):
            return False
        if self.kind == "column" and other.kind == "table":
            return False  # naming the table does not name the column
        (schema, name), (their_schema, their_name) = self.key(), other.key()
        if {self.kind, other.kind} == {"session", "role"}:
            return name.lower() == their_name.lower()
        return name == their_name and (schema is None or their_schema is None
                                       or schema == their_schema)


# Bounds on what only people read. The body of POST /v1/report is capped at 1 MiB, but a model
# agent hands its report to the gate directly and a report is kept, shown in every run page and
# read back by rescore: each field gets a cap well past any honest report (the scripted agents'
# longest statement is ~2,500 characters, a reply is a few thousand tokens) and far below what
# would make a page or a ConfigMap unwieldy.
MAX_TEXT_CHARS = 20_000
MAX_NOTE_CHARS = 5_000
MAX_NAME_CHARS = 100
MAX_ENTRIES = 100
MAX_TRACE_SEQ = 10**9
"""Past any trace: a run's budget allows hundreds of calls, not 10**9."""


class Evidence(Model):
    tool: str = Field(max_length=MAX_NAME_CHARS,
                      description="the tool whose observation shows it")
    observation: str = Field(max_length=MAX_TEXT_CHARS,
                             description="what was seen, quoted or summarised")
    trace_seq: int | None = Field(default=None, ge=0, le=MAX_TRACE_SEQ,
                                  description="seq of the trace event, if known")


class Action(Model):
    description: str = Field(max_length=MAX_NOTE_CHARS)
    tool: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    statement: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)


REPORT_VERSION = 2
"""1: free-text causes and bare object names; 2: vocabulary ids and object references."""
_V1_PREFIX = re.compile(r"^(?P<kind>table|index|role|database|setting|function|session|schema"
                        r"|sequence|view|extension)[\s:]+(?P<name>.+)$", re.IGNORECASE)


def _v1_object(name: str) -> ObjectRef:
    prefixed = _V1_PREFIX.match(name.strip())
    if prefixed:
        return ObjectRef(kind=prefixed["kind"].lower(), name=prefixed["name"])  # type: ignore[arg-type]
    kind = ("function" if "(" in name else "sequence" if name.endswith("_seq")
            else "index" if re.search(r"_(idx|key|pkey|uq)$", name) else "table")
    return ObjectRef(kind=kind, name=name)  # type: ignore[arg-type]


class Report(Model):
    """Scoring reads the structured fields only: the causes, which are ids of the diagnosis
    vocabulary (model/taxonomy.yaml; synonyms accepted), and the objects. ``narrative`` and
    ``evidence`` are for people and never score."""


    # No example label: the schema is what a model is shown, and an example is an answer.
    root_cause_type: CauseId = Field(
        
        description="the root cause: one id of the diagnosis vocabulary (definitions:"
                    " query_knowledge_base, e.g. 'diagnosis vocabulary locking')")
    affected_objects: list[ObjectRef] = Field(
        default_factory=list, max_length=50,
        description="the objects the incident is about, each {kind, name}; a few true extras"
                    " cost nothing, many do")
    causal_factors: list[CauseId] = Field(
        default_factory=list, max_length=20,
        description="other links of the causal chain, ids of the same vocabulary; every one"
                    " that is not true of the incident counts against the diagnosis")
    evidence: list[Evidence] = Field(default_factory=list, max_length=MAX_ENTRIES)
    actions: list[Action] = Field(default_factory=list, max_length=MAX_ENTRIES)
    verification: str = Field(default="", max_length=MAX_NOTE_CHARS,
                              description="how the fix was checked to hold")
    narrative: str = Field(default="", max_length=MAX_TEXT_CHARS,
                           description="free text for people; never scored")
    # the record's version, not the agent's business: not in the schema it is shown
    version: SkipJsonSchema[int] = REPORT_VERSION

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> "Report":
        """A ``report.json`` of any version. Version 1 (no version field) had free-text causes
        and bare object names: the causes are kept as written (the matcher resolves what it
        can and counts the rest against the report), and each object gets the kind its name
        suggests, since none was recorded."""
        if data.get("version") == REPORT_VERSION:
            return cls.model_validate(data)
        return cls.model_construct(
            root_cause_type=data.get("rootCauseType", data.get("root_cause_type", "")),
            causal_factors=list(data.get("causalFactors", data.get("causal_factors", []))),
            affected_objects=[_v1_object(o) for o in data.get(
                "affectedObjects", data.get("affected_objects", []))],
            evidence=[Evidence.model_validate(e) for e in data.get("evidence", [])],
            actions=[Action.model_validate(a) for a in data.get("actions", [])],
            verification=data.get("verification", ""), narrative=data.get("narrative", ""),
            version=1)

    # before the enum's own check: a synonym is read as its id, and an unknown value is
    # answered with the nearest ids rather than all of them
    @field_validator("root_cause_type", mode="before")
    @classmethod
    def _root(cls, value: Any) -> Any:
        return resolve_cause(value, "root_cause_type") if isinstance(value, str) else value

    @field_validator("causal_factors", mode="before")
    @classmethod
    def _factors(cls, values: Any) -> Any:
        if not isinstance(values, list):
            return values
        return [resolve_cause(v, "causal_factors item") if isinstance(v, str) else v
                for v in values]
