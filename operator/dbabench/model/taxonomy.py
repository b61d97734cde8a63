"""The diagnosis vocabulary (``taxonomy.yaml``): the root-cause types and causal factors a
report may name, and the kinds of object it may point at.

One list of causes serves the root cause and the causal factors: where a link of the chain is
filed says little, and a second vocabulary would split synonyms across two lists. Each cause
has an id, an area, a one-line definition, synonyms (other spellings of the same id) and
optionally a parent, a more general cause. ``within(child, ancestor)`` is the one rule of
generality: a report's cause matches a condition on itself or on any of its ancestors, never on
a descendant (naming "a timeout is too low" does not find "this database's timeout is").
"""

from __future__ import annotations

import difflib
import enum
import functools
import hashlib
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from dbabench.model.base import Model
from dbabench.yamltext import load_yaml

SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
TAXONOMY_FILE = Path(__file__).with_name("taxonomy.yaml")

ObjectKind = Literal[
    "table", "column", "index", "sequence", "view", "function", "trigger", "policy",
    "publication", "role", "database", "schema", "setting", "session",
    "prepared_transaction", "replication_slot", "extension", "large_object", "server",
    "advisory_lock", "file"]
"""What an affected object is. ``session`` names a session by its application_name or role;
``prepared_transaction`` by its gid; ``server`` is primary or replica; ``file`` a path on the
server (a configuration file, an archive target)."""


class Cause(Model):
    id: str = Field(pattern=SNAKE.pattern)
    area: str
    definition: str = Field(min_length=10)
    synonyms: list[str] = Field(default_factory=list)
    parent: str | None = None
    symptom: bool = Field(default=False, description="what an incident shows rather than why")


class Taxonomy(Model):
    version: int = Field(ge=1)
    areas: dict[str, str]
    causes: list[Cause] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> "Taxonomy":
        ids = [c.id for c in self.causes]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"cause ids given twice: {dupes}")
        spellings: dict[str, str] = {i: i for i in ids}
        for cause in self.causes:
            if cause.area not in self.areas:
                raise ValueError(f"{cause.id}: unknown area {cause.area!r}")
            if cause.parent is not None and cause.parent not in spellings:
                raise ValueError(f"{cause.id}: unknown parent {cause.parent!r}")
            for synonym in cause.synonyms:
                key = spelling(synonym)
                if key in spellings and spellings[key] != cause.id:
                    raise ValueError(f"{synonym!r} of {cause.id} already means {spellings[key]}")
                spellings[key] = cause.id
        for cause in self.causes:
            seen, node = {cause.id}, cause.parent
            while node is not None:
                if node in seen:
                    raise ValueError(f"{cause.id}: parents form a cycle through {node}")
                seen.add(node)
                node = self.cause(node).parent
        return self

    @functools.cached_property
    def _spellings(self) -> dict[str, str]:
        found = {c.id: c.id for c in self.causes}
        for cause in self.causes:
            found.update({spelling(s): cause.id for s in cause.synonyms})
        return found

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.causes]

    def cause(self, cause_id: str) -> Cause:
        return next(c for c in self.causes if c.id == cause_id)

    def resolve(self, value: str) -> str | None:
        """The id ``value`` spells (an id or a synonym, in any case and separators), or None."""
        return self._spellings.get(spelling(value))

    def nearest(self, value: str, n: int = 5) -> list[str]:
        """The ids closest in spelling to ``value``, for an error message."""
        closest = difflib.get_close_matches(spelling(value), list(self._spellings), n=n * 3,
                                            cutoff=0.4)
        return list(dict.fromkeys(self._spellings[s] for s in closest))[:n]

    def complete(self, text: str, n: int = 12) -> list[str]:
        """Ids for a partial answer: those it begins, then those whose id, synonyms or
        definition hold all its words (a person's completion in the report form)."""
        key = spelling(text)
        words = [w for w in key.split("_") if w]
        begins = [c.id for c in self.causes
                  if c.id.startswith(key) or any(spelling(s).startswith(key) for s in c.synonyms)]
        holds = [c.id for c in self.causes if words and all(
            w in " ".join([c.id, *c.synonyms, c.definition.lower()]) for w in words)]
        return list(dict.fromkeys(begins + holds))[:n]

    def within(self, cause_id: str, ancestor: str) -> bool:
        """``cause_id`` is ``ancestor`` or more specific than it."""
        node: str | None = cause_id
        while node is not None:
            if node == ancestor:
                return True
            node = self.cause(node).parent
        return False


def spelling(value: str) -> str:
    """The form ids are compared in: lower case, words joined by underscores."""
    return re.sub(r"[^a-z0-9]+", "_", value.strip().lower()).strip("_")


class UnknownCause(ValueError):
    """A cause outside the vocabulary; the message lists the nearest valid ids."""


@functools.cache
def taxonomy() -> Taxonomy:
    return Taxonomy.model_validate(load_yaml(TAXONOMY_FILE.read_text()))


@functools.cache
def digest() -> str:
    """SHA-256 of the vocabulary as shipped: a scorer's version includes it."""
    return hashlib.sha256(TAXONOMY_FILE.read_bytes()).hexdigest()


def resolve_cause(value: str, where: str = "cause") -> str:
    """The id ``value`` spells, else UnknownCause naming the nearest ids."""
    vocabulary = taxonomy()
    resolved = vocabulary.resolve(value)
    if resolved is None:
        near = vocabulary.nearest(value)
        raise UnknownCause(f"{where} {value!r} is not in the diagnosis vocabulary (v"
                           f"{vocabulary.version}); nearest: {', '.join(near) or 'none'}")
    return resolved


CauseId = enum.StrEnum("CauseId", {i: i for i in taxonomy().ids})  # type: ignore[misc]
"""An id of the vocabulary, as a type: its JSON schema enumerates them all, once ($defs)."""


def area_entries(area: str) -> list[str]:
    """The vocabulary of one area as text lines, ``id: definition (also: synonyms)``: the
    same words in docs/diagnosis.md and in the knowledge base."""
    vocabulary = taxonomy()
    lines = []
    for cause in (c for c in vocabulary.causes if c.area == area):
        more = f"; more specific than {cause.parent}" if cause.parent else ""
        more += "; a symptom" if cause.symptom else ""
        also = f" (also: {', '.join(cause.synonyms)})" if cause.synonyms else ""
        lines.append(f"{cause.id}: {cause.definition}{more}{also}")
    return lines
