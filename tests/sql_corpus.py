"""SQL texts the policy's parsing and walking are held to: the scenario library's, and the
server's own scripts (its system views and functions and every extension's install script,
a few thousand statements of nearly every kind PostgreSQL 15 parses)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dbabench.env.postgres import PG_BIN
from dbabench.yamltext import load_yaml

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
# Debian's layout: /usr/lib/postgresql/15/bin beside /usr/share/postgresql/15
SERVER_SHARE = PG_BIN.parents[3] / "share" / "postgresql" / PG_BIN.parent.name


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def library_texts() -> list[str]:
    """Every string of every manifest: SQL among prose, shell commands and PromQL, which a
    caller skips where the grammar rejects them."""
    return [text for path in sorted(SCENARIOS.rglob("*.yaml"))
            for text in _strings(load_yaml(path.read_text()))]


def server_scripts() -> list[str]:
    """The server's SQL scripts, without psql's meta-commands (a line starting with a
    backslash)."""
    paths = sorted([*SERVER_SHARE.glob("*.sql"), *(SERVER_SHARE / "extension").glob("*.sql")])
    return ["\n".join(line for line in path.read_text().splitlines()
                      if not line.startswith("\\")) for path in paths]
