"""pglast's syntax tree, built at a fraction of pglast's cost.

pglast's parser builds each node through ``Node.__setattr__``, which checks every value
against the member's declared type and looks its enum up by name in a module, for every
member of every node: over half of what classifying a statement costs, spent re-checking
values that pglast's own parser has just produced with the right types. Importing this module
puts a ``__setattr__`` in front of pglast's that decides from a table, built once per class and
member, the cases whose result it knows: ``None``; a value of a type pglast stores as it is
(a string for a ``char*``, a node for a node pointer, an enum member for an enum, a tuple
without a dict in it for a list). Every other value, which only code building trees by hand
passes (dicts, lists, names or numbers of enum members, wrong types), goes to pglast's own method, errors included. The trees are the same, value
for value and type for type; ``tests/unit/test_policy_nodes.py`` holds them to it over every
SQL text of the library. The policy parses through ``parse_sql`` here, so the table is in
place before its first tree, and no text deeper than ``MAX_NESTING`` reaches pglast.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pglast import ast, enums
from pglast.parser import parse_sql as _pglast_parse_sql
from pglast.parser import scan

__all__ = ["MAX_NESTING", "PGLAST_SETATTR", "TooDeep", "parse_sql"]

MAX_NESTING = 5_000
"""The most operators and keywords one statement may hold beyond its bracket depth: a bound on
how deep its tree can be. PostgreSQL's grammar stops deep brackets itself ("memory
exhausted"), but a left-deep chain (1+1+...+1, SELECT ... UNION SELECT ...) builds a tree as
deep as it is long, and libpg_query turns that tree into pglast's recursively in C: ~35,000
levels of + overflow an 8 MB stack and the process dies (SIGSEGV), where no exception can be
caught. A DBA's statement holds a few hundred."""

# Tokens that cannot open a level of the tree by themselves: names, constants, separators.
# Brackets open one each, so they count by depth, not number (a long VALUES list is flat).
_LEAF_TOKENS = frozenset({
    "IDENT", "UIDENT", "ICONST", "FCONST", "SCONST", "USCONST", "BCONST", "XCONST", "PARAM",
    "NULL_P", "TRUE_P", "FALSE_P", "SQL_COMMENT", "C_COMMENT", "ASCII_44", "ASCII_46",
})
_OPEN = frozenset({"ASCII_40", "ASCII_91"})  # ( [
_CLOSE = frozenset({"ASCII_41", "ASCII_93"})  # ) ]
_END = "ASCII_59"  # ;


class TooDeep(RecursionError):
    """SQL nested deeper than the gate can judge: what the walk would meet as a RecursionError,
    found before pglast could crash on it."""


def parse_sql(text: str) -> tuple[ast.RawStmt, ...]:
    """pglast's ``parse_sql``, once ``text`` is known to be shallow enough for it. Raises
    TooDeep (a RecursionError) beside pglast's own errors."""
    # every counted token is at least one character, so a short text needs no scan
    if len(text) > MAX_NESTING:
        _check_nesting(text)
    parsed: tuple[ast.RawStmt, ...] = _pglast_parse_sql(text)
    return parsed


def _check_nesting(text: str) -> None:
    counted = depth = deepest = 0
    for token in scan(text):
        name = token.name
        if name in _LEAF_TOKENS:
            continue
        if name in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif name in _CLOSE:
            depth -= 1
        elif name == _END:
            counted = deepest = depth = 0
        else:
            counted += 1
        if counted + deepest > MAX_NESTING:
            raise TooDeep(f"a statement holds more than {MAX_NESTING} operators and keywords"
                          " beyond its bracket depth, which can nest it too deep to judge;"
                          " split it")

PGLAST_SETATTR = ast.Node.__setattr__
"""pglast's own method: the fallback, and the reference the tests compare with."""


class _Rule(NamedTuple):
    stored: tuple[type, ...]
    """Types pglast keeps unchanged in this member (subclasses included)."""
    listing: bool
    """For a list (or a node member that may hold one): a tuple is kept unless it holds a
    dict, which pglast would turn into a node."""


def _rule(info: Any) -> _Rule | None:
    ctype, ptype = info.c_type, info.py_type
    kinds = ptype if isinstance(ptype, tuple) else (ptype,)
    nodes = tuple(k for k in kinds if isinstance(k, type) and issubclass(k, ast.Node))
    if ctype == "List*":
        return _Rule((), True)
    if ctype in ("Node*", "Expr*"):
        return _Rule(nodes, True)
    if ctype == "bool":
        return _Rule((bool,), False)
    if ctype == "char*" and info.adaptor is None:
        return _Rule((str,), False)
    if info.adaptor is not None:
        return None  # char, Float's char*, Bitmapset*, CreateStmt: pglast's method
    if hasattr(enums, ctype):
        return _Rule((getattr(enums, ctype),), False)
    if kinds in ((int,), (float,)):
        # an int member keeps a bool as a bool, and so does this rule: bool is an int
        return _Rule(kinds, False)
    return _Rule(nodes, False) if nodes else None


def _rules() -> dict[tuple[type, str], _Rule]:
    table = {}
    pending: list[type] = [ast.Node]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        slots = cls.__dict__.get("__slots__")
        if not isinstance(slots, dict):
            continue
        for name, info in slots.items():
            rule = _rule(info)
            if rule is not None:
                table[cls, name] = rule
    return table


_RULES = _rules()
_store = object.__setattr__


def _setattr(node: ast.Node, name: str, value: Any) -> None:
    rule = _RULES.get((node.__class__, name))
    if rule is not None:
        if value is None or isinstance(value, rule.stored):
            _store(node, name, value)
            return
        if (rule.listing and value.__class__ is tuple
                and not any(item.__class__ is dict for item in value)):
            _store(node, name, value)
            return
    PGLAST_SETATTR(node, name, value)


ast.Node.__setattr__ = _setattr  # type: ignore[method-assign]
