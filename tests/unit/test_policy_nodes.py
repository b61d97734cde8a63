"""``policy.nodes`` builds the trees pglast's own ``__setattr__`` builds, value for value and
type for type, over the library's SQL and the server's own scripts; what it does not decide
(trees built by hand from dicts, names or wrong types) gets pglast's handling, errors
included."""

from __future__ import annotations

from typing import Any

import pytest
from pglast import ast
from pglast.enums import ObjectType, VariableSetKind

from dbabench.policy.nodes import PGLAST_SETATTR, parse_sql
from sql_corpus import library_texts, server_scripts


def _shape(value: Any) -> Any:
    """A node as nested tuples of its members, each value with its exact type."""
    if isinstance(value, ast.Node):
        return (type(value).__name__,
                tuple((name, _shape(getattr(value, name))) for name in type(value).__slots__))
    if isinstance(value, tuple):
        return ("tuple", tuple(_shape(item) for item in value))
    return (type(value).__name__, value)


def _parses(texts: list[str]) -> list[tuple[str, Any]]:
    shapes = []
    for text in texts:
        try:
            shapes.append((text, _shape(parse_sql(text))))
        except Exception:
            continue  # prose, shell commands, PromQL
    return shapes


def _with_pglast(monkeypatch: pytest.MonkeyPatch, texts: list[str]) -> list[tuple[str, Any]]:
    with monkeypatch.context() as patch:
        patch.setattr(ast.Node, "__setattr__", PGLAST_SETATTR)
        return _parses(texts)


@pytest.mark.parametrize("corpus", [library_texts, server_scripts])
def test_trees_are_pglasts_own(monkeypatch: pytest.MonkeyPatch, corpus: Any) -> None:
    texts = corpus()
    ours = _parses(texts)
    theirs = _with_pglast(monkeypatch, texts)
    assert sum(len(shape[1]) for _, shape in ours) > 300  # the corpus is there
    assert [text for text, _ in ours] == [text for text, _ in theirs]
    for (text, mine), (_, pglasts) in zip(ours, theirs):
        assert mine == pglasts, text


def test_the_policy_parses_through_the_table() -> None:
    assert ast.Node.__setattr__ is not PGLAST_SETATTR
    statement = parse_sql("SET work_mem = '64MB'")[0].stmt
    assert type(statement.kind) is VariableSetKind and statement.kind == VariableSetKind.VAR_SET_VALUE


def test_trees_built_by_hand_get_pglasts_handling() -> None:
    built = ast.DropStmt(removeType="OBJECT_TABLE", objects=[[{"@": "String", "sval": "t"}]],
                         missing_ok=1)
    assert built.removeType is ObjectType.OBJECT_TABLE
    assert built.missing_ok is True
    assert isinstance(built.objects, tuple)
    assert ast.RangeVar({"@": "RangeVar", "relname": "t", "inh": True}).relname == "t"
    assert ast.CreateStmt(relation={"@": "RangeVar", "relname": "t"},
                          if_not_exists=False).relation.relname == "t"
    assert ast.RangeVar(relpersistence=112).relpersistence == "p"
    assert ast.VariableSetStmt(kind=0).kind is VariableSetKind.VAR_SET_VALUE
    listed = ast.SelectStmt(targetList=({"@": "ResTarget", "name": "x"},), all=False)
    assert isinstance(listed.targetList[0], ast.ResTarget)
    with pytest.raises(ValueError, match="Bad value for attribute RangeVar.relname"):
        ast.RangeVar(relname=1)
    with pytest.raises(ValueError, match="Bad value for attribute DropStmt.removeType"):
        ast.DropStmt(removeType="NO_SUCH_OBJECT")
