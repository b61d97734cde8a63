"""One definition per concept (issue 41): the tools' names, manage_instance's actions, the
shutdown modes, the safety rules' ids and the statement classes are each defined once in
``dbabench.model``; every other module of the package uses the definition, and spells none of
their values as a string of its own."""

from __future__ import annotations

import ast
import importlib
import json
from collections.abc import Iterator
from enum import Enum
from pathlib import Path

import pytest

import dbabench
from dbabench.model.base import NameEnum
from dbabench.model.evaluation import EvaluationResult, SafetyResult
from dbabench.model.safety import NOT_GRADED, RuleId
from dbabench.model.statement import StatementClass
from dbabench.model.tool import InstanceAction, ShutdownMode, ToolName
from dbabench.model.trace import StatementInfo, TraceEvent

PACKAGE = Path(dbabench.__file__).resolve().parent
MODEL = PACKAGE / "model"

CONCEPTS: dict[type[Enum], tuple[str, ...]] = {
    ToolName: (),
    InstanceAction: ("action",),
    ShutdownMode: ("mode", "stop", "restart"),
    RuleId: ("rule",),
    StatementClass: ("class",),
}
"""Each concept, and the words near which a value that is a plain word (``status``, ``fast``,
``ddl``) is that concept's. A value with ``_`` or ``-`` in it (``execute_sql``,
``config_set``, ``not-graded``) is the concept's wherever it appears; a plain word is common
English or another vocabulary's (a Kubernetes object's ``status``, Prometheus's ``start``, the
``ddl`` of log_statement), so it counts where the statement it is written in (a compound
statement's header) says what it is, or where it stands beside another value of the same
concept (``("stop", "restart")``, ``mode not in ("smart", "fast", "immediate")``)."""

VALUES: dict[str, type[Enum]] = {
    **{str(member): concept for concept in CONCEPTS for member in concept},
    NOT_GRADED: RuleId,
}

EXCEPTIONS: set[tuple[str, int, str]] = set()
"""(path under the package, line, value) allowed to spell a value; none so far. SQL text and
prose never match, since only a string that *is* a value counts."""


def _modules() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if MODEL not in path.parents:
            yield path


def _context(node: ast.AST, parents: dict[ast.AST, ast.AST], lines: list[str]) -> str:
    """The source that says what a string is: its statement, or a compound statement's
    header (an ``if``'s test, a ``def``'s parameters), never the body below it."""
    while not isinstance(node, (ast.stmt, ast.excepthandler)) and node in parents:
        node = parents[node]
    first = node.lineno
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.AST):
        last = max(first, body[0].lineno - 1)
    else:
        last = getattr(node, "end_lineno", None) or first
    return "\n".join(lines[first - 1:last]).lower()


def _siblings(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> list[ast.expr]:
    parent = parents.get(node)
    if isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
        return [e for e in parent.elts if e is not node]
    if isinstance(parent, ast.Dict):
        return [k for k in parent.keys if k is not None and k is not node]
    if isinstance(parent, ast.Compare):
        return [e for e in (parent.left, *parent.comparators) if e is not node]
    return []


def _spelled(path: Path) -> Iterator[tuple[int, str, type[Enum]]]:
    source = path.read_text()
    tree = ast.parse(source)
    lines = source.splitlines()
    parents = {child: parent for parent in ast.walk(tree)
               for child in ast.iter_child_nodes(parent)}
    prose = {id(n.value) for n in ast.walk(tree)
             if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and node.value in VALUES and id(node) not in prose):
            continue
        concept = VALUES[node.value]
        if "_" in node.value or "-" in node.value:
            yield node.lineno, node.value, concept
            continue
        beside = any(isinstance(s, ast.Constant) and VALUES.get(s.value) is concept
                     for s in _siblings(node, parents))
        context = _context(node, parents, lines)
        if beside or any(word in context for word in CONCEPTS[concept]):
            yield node.lineno, node.value, concept


def test_no_module_outside_model_spells_a_value() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{line}: {value!r} is {concept.__name__}.{value}"
             for path in _modules() for line, value, concept in _spelled(path)
             if (str(path.relative_to(PACKAGE)), line, value) not in EXCEPTIONS]
    assert not found, ("use the definition in dbabench.model instead of the string:\n"
                       + "\n".join(found))


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    """The scan itself: each way a value used to be spelled is found, and the words that are
    another vocabulary's are not."""
    module = tmp_path / "m.py"
    module.write_text('''
"""execute_sql in a docstring is prose."""
TOOLS = ("query_metrics", "execute_sql")
if event.tool == "manage_instance" and event.args.get("action") == "status":
    pass
mode: Literal["smart", "fast", "immediate"] = "fast"
def stop(self, mode="immediate"):
    phase = body.get("status", {}).get("phase")
    params = {"query": q, "start": now}
    log_statement = "ddl"
violation = Violation(rule="not-graded")
''')
    found = sorted((line, value) for line, value, _ in _spelled(module))
    assert found == [(3, "execute_sql"), (3, "query_metrics"), (4, "manage_instance"),
                     (4, "status"), (6, "fast"), (6, "fast"), (6, "immediate"), (6, "smart"),
                     (7, "immediate"), (11, "not-graded")]


@pytest.mark.parametrize("concept", list(CONCEPTS), ids=lambda c: c.__name__)
def test_each_concept_is_defined_once_in_model(concept: type[Enum]) -> None:
    assert concept.__module__.startswith("dbabench.model.")
    assert issubclass(concept, NameEnum) and concept.__doc__
    assert all(member.name == member.value for member in concept)
    # no other module defines it again, nor re-exports it
    for path in _modules():
        tree = ast.parse(path.read_text())
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        assert concept.__name__ not in defined, f"{path} defines {concept.__name__} again"
        exported = {e.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
                    and isinstance(n.value, (ast.List, ast.Tuple))
                    for e in n.value.elts if isinstance(e, ast.Constant)}
        assert concept.__name__ not in exported, f"{path} re-exports {concept.__name__}"


def test_statement_class_has_no_shim_left() -> None:
    assert not hasattr(importlib.import_module("dbabench.policy"), "StatementClass")


def test_schemas_inline_the_values() -> None:
    """A NameEnum's JSON schema is the Literal's it replaced: what a model is told of a tool's
    parameters, and a CRD, carry the values inline."""
    from dbabench.tools.instance import ManageInstanceArgs

    schema = ManageInstanceArgs.model_json_schema()
    assert "$defs" not in schema
    assert schema["properties"]["action"] == {
        "enum": [str(a) for a in InstanceAction], "title": "Action", "type": "string"}
    assert schema["properties"]["mode"]["enum"] == ["smart", "fast", "immediate"]


def test_values_validate_as_members_and_dump_as_strings() -> None:
    result = SafetyResult.model_validate_json(
        '{"penalty": 3, "violations": [{"rule": "blanket_reset", "weight": 3, "detail": "x"},'
        ' {"rule": "not-graded", "weight": 1, "detail": "y"}],'
        ' "exceptionsApplied": ["unsafe_global_setting"]}')
    assert result.violations[0].rule is RuleId.blanket_reset
    assert result.violations[1].rule == NOT_GRADED
    assert result.exceptions_applied == [RuleId.unsafe_global_setting]
    assert json.loads(result.model_dump_json())["violations"][0]["rule"] == "blanket_reset"
    with pytest.raises(ValueError, match="blanket_reset"):
        SafetyResult.model_validate({"penalty": 1, "violations": [
            {"rule": "blanket-reset", "weight": 1, "detail": "a misspelt id"}]})


def test_a_trace_of_a_retired_class_still_loads() -> None:
    """``outside_path`` (retired 2026-12-01) came beside ``file_access``; a trace that has it
    loads without it."""
    event = TraceEvent.model_validate_json(json.dumps({
        "seq": 1, "ts": "2026-11-30T12:00:00Z", "kind": "tool", "tool": "execute_sql",
        "ok": False, "refused": ["file_access", "outside_path"],
        "statements": [{"text": "SELECT pg_read_file('/etc/passwd')",
                        "classes": ["read_only", "file_access", "outside_path"]}]}))
    assert event.refused == [StatementClass.file_access]
    assert event.statements[0].classes == [StatementClass.read_only,
                                           StatementClass.file_access]
    assert StatementInfo(text="SELECT 1", classes=["read_only"]).classes == ["read_only"]


def test_stored_evaluations_name_known_rules() -> None:
    """Every evaluation.json kept under tests/data validates, rule ids and all."""
    stored = sorted((Path(__file__).parents[1] / "data").rglob("evaluation.json"))
    assert stored
    for path in stored:
        EvaluationResult.model_validate_json(path.read_text())
