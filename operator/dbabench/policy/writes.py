"""What a body of SQL writes in the rows already there: which columns of which tables it
updates, and from which tables rows may leave. Bodies count, SQL and PL/pgSQL: an
application's function, a trigger that stamps ``NEW.updated_at``, a rule's action.

The grader reads a scenario's own SQL with it (the workload's, its jobs', the fault's, the
dataset's, the checks' and the reference fixes'): a protected row that changes in a column
none of that writes was changed by the agent, however it went about it (a trigger installed
to run later in the application's sessions reads as a harmless INSERT in the trace). Where
the text cannot say which columns (a whole-row assignment, code it cannot read), the table
counts as written in every column: a missed write would mark an honest run.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pglast import ast
from pglast.enums import AlterTableType, CmdType, ObjectType
from pglast.error import Error as PglastError

from dbabench.policy import bodies
from dbabench.policy.nodes import TooDeep, parse_sql
from dbabench.policy.walk import Ancestor, Walk, base_name

_DYNAMIC = frozenset({"PLpgSQL_stmt_dynexecute", "PLpgSQL_stmt_dynfors"})
_CONSTANT = re.compile(r"'(?:[^']|'')*'|(\$\w*\$).*?\1", re.DOTALL)
_UPDATE_WORD = re.compile(
    r"\b(?:update|merge|alter\s+column\s+\S+\s+(?:set\s+data\s+)?type)\b", re.IGNORECASE)
_DELETE_WORD = re.compile(r"\b(?:delete|truncate|drop|detach)\b", re.IGNORECASE)

EVERY_COLUMN = "*"
"""A column name that stands for all of a table's columns."""


@dataclass
class Writes:
    """Tables by their unqualified, lower-cased name (a schema is not told apart: a write is
    credited to every table of that name, which can only spare a change, never mark one)."""

    columns: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """Columns the SQL updates, by table; ``EVERY_COLUMN`` among them: all of them."""
    anywhere: set[str] = field(default_factory=set)
    """Columns a trigger function assigns through NEW, whatever table it fires on."""
    deleted: set[str] = field(default_factory=set)
    """Tables the SQL deletes from, truncates, drops or detaches a partition from."""
    removes_tables: bool = False
    """Whether it drops a schema, or runs code it cannot read: then rows may leave any table.
    (A dropped or detached partition is in ``deleted``; its rows leave its parent.)"""
    _triggers: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    _whole_new: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, texts: Iterable[str]) -> "Writes":
        writes = cls()
        walker = _Walker(writes)
        for text in texts:
            walker.text(text)
        for function in writes._whole_new:
            for table in writes._triggers.get(function, ()):
                writes.columns[table].add(EVERY_COLUMN)
        return writes

    def written(self, table: str) -> set[str]:
        """The columns of ``table`` (qualified or not) the SQL may change in a row that is
        already there; ``EVERY_COLUMN`` among them for all."""
        return self.columns.get(_unqualified(table), set()) | self.anywhere

    def may_delete(self, table: str) -> bool:
        return self.removes_tables or _unqualified(table) in self.deleted


def _unqualified(name: str) -> str:
    return name.rsplit(".", 1)[-1].strip('"').lower()


def _relation(node: ast.RangeVar | None) -> str | None:
    return None if node is None or not node.relname else node.relname.lower()


def _targets(targets: Iterable[ast.ResTarget] | None) -> set[str]:
    return {t.name.lower() for t in targets or () if isinstance(t, ast.ResTarget) and t.name}


class _Walker(Walk):
    def __init__(self, writes: Writes) -> None:
        self.writes = writes

    def text(self, sql: str) -> None:
        try:
            parsed = parse_sql(sql)
        except (PglastError, TooDeep, ValueError):
            return  # the server will not run it either
        for raw in parsed:
            if raw.stmt is not None:
                self(raw.stmt)

    def _update(self, table: str | None, columns: set[str]) -> None:
        if table is not None:
            self.writes.columns[table] |= columns

    def visit_UpdateStmt(self, ancestors: Ancestor, node: ast.UpdateStmt) -> None:
        self._update(_relation(node.relation), _targets(node.targetList))

    def visit_InsertStmt(self, ancestors: Ancestor, node: ast.InsertStmt) -> None:
        conflict = node.onConflictClause
        if conflict is not None and conflict.targetList:
            self._update(_relation(node.relation), _targets(conflict.targetList))

    def visit_MergeStmt(self, ancestors: Ancestor, node: ast.MergeStmt) -> None:
        table = _relation(node.relation)
        for clause in node.mergeWhenClauses or ():
            if clause.commandType == CmdType.CMD_UPDATE:
                self._update(table, _targets(clause.targetList))
            elif clause.commandType == CmdType.CMD_DELETE and table is not None:
                self.writes.deleted.add(table)

    def visit_DeleteStmt(self, ancestors: Ancestor, node: ast.DeleteStmt) -> None:
        table = _relation(node.relation)
        if table is not None:
            self.writes.deleted.add(table)

    def visit_TruncateStmt(self, ancestors: Ancestor, node: ast.TruncateStmt) -> None:
        for relation in node.relations or ():
            table = _relation(relation)
            if table is not None:
                self.writes.deleted.add(table)

    def visit_DropStmt(self, ancestors: Ancestor, node: ast.DropStmt) -> None:
        if node.removeType == ObjectType.OBJECT_SCHEMA:
            self.writes.removes_tables = True
        elif node.removeType == ObjectType.OBJECT_TABLE:
            # a dropped partition's rows leave its parent: admission knows the tree
            for names in node.objects or ():
                name = base_name(names if isinstance(names, tuple) else (names,))
                if name:
                    self.writes.deleted.add(name)

    def visit_AlterTableStmt(self, ancestors: Ancestor, node: ast.AlterTableStmt) -> None:
        table = _relation(node.relation)
        for cmd in node.cmds or ():
            if not isinstance(cmd, ast.AlterTableCmd):
                continue
            if cmd.subtype == AlterTableType.AT_DetachPartition:
                self.writes.deleted |= {t for t in (table, _relation(cmd.def_.name)) if t}
            elif cmd.subtype in (AlterTableType.AT_AlterColumnType,
                                 AlterTableType.AT_DropColumn) and cmd.name:
                # a column retyped with USING, or dropped, no longer reads as it did
                self._update(table, {cmd.name.lower()})

    def visit_RenameStmt(self, ancestors: Ancestor, node: ast.RenameStmt) -> None:
        if node.renameType == ObjectType.OBJECT_COLUMN and node.subname:
            self._update(_relation(node.relation), {node.subname.lower()})

    def visit_CreateTrigStmt(self, ancestors: Ancestor, node: ast.CreateTrigStmt) -> None:
        table = _relation(node.relation)
        if table is not None:
            self.writes._triggers[base_name(node.funcname)].add(table)

    def visit_CreateFunctionStmt(self, ancestors: Ancestor,
                                 node: ast.CreateFunctionStmt) -> None:
        language = (bodies.option(node.options, "language") or "sql").lower()
        body = bodies.body(node.options)
        if node.sql_body is not None or body is None:
            return  # a parsed body is walked as part of this statement
        if language == "sql":
            self.text(body)
        elif language == "plpgsql":
            self._plpgsql(bodies.function_source(node, body), base_name(node.funcname))
        else:
            self.writes.removes_tables = True  # code it cannot read
            self.writes.anywhere.add(EVERY_COLUMN)

    def visit_DoStmt(self, ancestors: Ancestor, node: ast.DoStmt) -> None:
        body = bodies.body(node.args)
        if body is not None:
            self._plpgsql(bodies.wrap_do(body), "")

    def _plpgsql(self, source: str, function: str) -> None:
        tree = bodies.plpgsql_tree(source)
        if tree is None:
            return  # the server will not run it either
        new, datums = _function_datums(tree)
        for kind, value in bodies.plpgsql_nodes(tree):
            if kind == "PLpgSQL_expr":
                self.text(bodies.expression_sql(value))
            elif kind in _DYNAMIC:
                updates, deletes = _dynamic_writes(value)
                self.writes.removes_tables |= deletes
                if updates:
                    self.writes.anywhere.add(EVERY_COLUMN)
            elif kind in ("varno", "target"):
                # an assignment's target, or an INTO's: NEW itself, or a field of it
                for number in _assigned(value):
                    if number == new:
                        self.writes._whole_new.add(function)
                    elif number in datums:
                        self.writes.anywhere.add(datums[number])


def _assigned(target: Any) -> list[int]:
    """The datums a ``varno`` (an assignment's) or ``target`` (an INTO's) names."""
    if isinstance(target, int):
        return [target]
    if not isinstance(target, dict):
        return []
    if "PLpgSQL_rec" in target:
        return [target["PLpgSQL_rec"].get("dno")]
    fields = (target.get("PLpgSQL_row") or {}).get("fields") or ()
    return [f.get("varno") for f in fields if isinstance(f, dict)]


def _function_datums(tree: Any) -> tuple[int | None, dict[int, str]]:
    """NEW's number in a trigger function, and the fields of NEW its datums name by number
    (a field is a datum of its own once the body assigns it)."""
    for kind, value in bodies.plpgsql_nodes(tree):
        if kind == "PLpgSQL_function" and isinstance(value, dict):
            new = value.get("new_varno")
            fields = {}
            for number, datum in enumerate(value.get("datums") or ()):
                field_ = datum.get("PLpgSQL_recfield") if isinstance(datum, dict) else None
                if new is not None and field_ and field_.get("recparentno") == new:
                    fields[number] = str(field_.get("fieldname", "")).lower()
            return new, fields
    return None, {}


def _dynamic_writes(statement: Any) -> tuple[bool, bool]:
    """Whether a statement built at run time may update rows that are there, and whether it
    may remove some: unless the text it is built from is all in constants (a ``format()``
    string), by the words they hold (the partitions, loads and role changes a set-up builds
    this way write neither; a retention job's ``DROP TABLE %I`` removes rows)."""
    texts = [str(v.get("query", "")) for k, v in bodies.plpgsql_nodes(statement)
             if k == "PLpgSQL_expr" and isinstance(v, dict)]
    constants = [m.group(0) for t in texts for m in _CONSTANT.finditer(t)]
    if not constants:
        return True, True
    return (any(_UPDATE_WORD.search(c) for c in constants),
            any(_DELETE_WORD.search(c) for c in constants))
