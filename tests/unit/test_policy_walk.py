"""``policy.walk.Walk`` visits what pglast's own ``Visitor`` visits, in the same order, with
the same ancestry and the same pruning, over every SQL text of the scenario library."""

from __future__ import annotations

from typing import Any

import pytest
from pglast import ast
from pglast.parser import parse_sql
from pglast.visitors import Ancestor, Skip, Visitor

from dbabench.policy.walk import Walk, walk
from sql_corpus import library_texts

# what the walks must agree on beyond the library: bodies that are skipped, lists of lists
EXTRA = [
    "CREATE VIEW v AS SELECT pg_read_file('/etc/passwd')",
    "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "EXPLAIN SELECT * FROM orders o JOIN pg_locks l ON l.pid = o.id",
    "INSERT INTO t VALUES (1, 'a'), (2, 'b'), ((SELECT 3), 'c')",
    "WITH x AS (SELECT 1) SELECT * FROM x, LATERAL (SELECT ARRAY[[1, 2], [3, 4]]) y",
]


def _statements() -> list[ast.Node]:
    found = []
    for text in [*library_texts(), *EXTRA]:
        try:
            found += [raw.stmt for raw in parse_sql(text) if raw.stmt is not None]
        except Exception:
            continue  # prose, shell commands, PromQL
    return found


STATEMENTS = _statements()
PRUNED = (ast.ViewStmt, ast.CreateFunctionStmt, ast.ExplainStmt, ast.SubLink)


class _PglastOrder(Visitor):
    def __init__(self, pruned: tuple[type, ...] = PRUNED) -> None:
        super().__init__()
        self.seen: list[tuple[str, str]] = []
        self.pruned = pruned

    def visit(self, ancestors: Ancestor, node: ast.Node) -> Any:
        self.seen.append((type(node).__name__, repr(ancestors)))
        return Skip if isinstance(node, self.pruned) else None


class _WalkOrder(Walk):
    def __init__(self, pruned: tuple[type, ...] = PRUNED) -> None:
        self.seen: list[tuple[str, str]] = []
        self.pruned = pruned

    def visit(self, ancestors: Ancestor, node: ast.Node) -> Any:
        self.seen.append((type(node).__name__, repr(ancestors)))
        return Skip if isinstance(node, self.pruned) else None

    def visit_RangeVar(self, ancestors: Ancestor, node: ast.RangeVar) -> None:
        self.seen.append(("RangeVar", repr(ancestors)))


def test_the_library_gives_the_walk_something_to_agree_on() -> None:
    assert len(STATEMENTS) > 300


def test_the_walk_meets_what_pglast_meets_in_its_order() -> None:
    for statement in STATEMENTS:
        theirs, ours = _PglastOrder(), _WalkOrder()
        theirs(statement)
        ours(statement)
        assert ours.seen == theirs.seen, statement


def test_walkers_that_share_a_pass_each_meet_what_a_walk_of_their_own_would() -> None:
    for statement in STATEMENTS:
        pruning, whole, theirs, theirs_whole = (_WalkOrder(), _WalkOrder(()), _PglastOrder(),
                                                _PglastOrder(()))
        walk(statement, pruning, whole)
        theirs(statement)
        theirs_whole(statement)
        assert pruning.seen == theirs.seen and whole.seen == theirs_whole.seen, statement


def test_a_walk_changes_nothing() -> None:
    class Replacing(Walk):
        def visit_RangeVar(self, ancestors: Ancestor, node: ast.RangeVar) -> Any:
            return ast.RangeVar(relname="other")

    with pytest.raises(TypeError, match="a walk changes nothing"):
        Replacing()(parse_sql("SELECT * FROM orders")[0].stmt)
