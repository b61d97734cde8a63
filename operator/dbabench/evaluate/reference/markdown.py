"""How the page writes what it shows: Markdown (a docstring as a paragraph, code spans, tables),
values as a manifest spells them, numbers, and the stand-in for generated passwords."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from enum import Enum

PASSWORD = "<generated>"
"""Stands for the generated passwords in what the page shows."""


def doc(obj: object) -> str:
    """A docstring as one Markdown paragraph."""
    return " ".join((inspect.getdoc(obj) or "").replace("``", "`").split())


def code(text: object) -> str:
    return f"`{text}`"


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, pipes outside code spans escaped (inside
    one, Python-Markdown's tables, which build the site, take a pipe as it is)."""
    parts = " ".join(str(text).split()).split("`")
    return "`".join(p if i % 2 else p.replace("|", "\\|") for i, p in enumerate(parts))


def table(header: Iterable[str], rows: Iterable[Iterable[object]]) -> list[str]:
    header = list(header)
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(_cell(str(c)) for c in row) + " |" for row in rows)]


def count(n: int) -> str:
    return f"{n:,}"


def yaml(value: object) -> str:
    """A value as a manifest (YAML) spells it."""
    if value == "":
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
