"""Classify SQL by what each statement would do to a live PostgreSQL.

The parse tree comes from pglast, that is from PostgreSQL's own grammar, so comments, quoting,
casing, CTEs and multi-statement strings cannot hide a statement from the classifier the way
they hide it from a regular expression.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from typing import Any

from pglast import ast
from pglast.enums import (
    A_Expr_Kind,
    AlterTableType,
    BoolExprType,
    DropBehavior,
    ObjectType,
    RoleSpecType,
    VariableSetKind,
)
from pglast.enums.lockdefs import ShareLock
from pglast.error import Error as PglastError
from pglast.parser import scan
from pglast.stream import RawStream

from dbabench.model.statement import StatementClass
from dbabench.model.trace import StatementInfo
from dbabench.policy.classes import HARNESS_ACCESS, OBSERVATIONAL, REACH, REFUSED
from dbabench.policy.nodes import TooDeep, parse_sql
from dbabench.policy.reach import (BOOTSTRAP_SUPERUSER, ESCALATING_ROLE_ATTRIBUTES, Reach,
                                   parse_pg_bool)
from dbabench.policy.walk import Ancestor, Skip, Walk, base_name, enclosing, walk

__all__ = ["HARNESS_ACCESS", "OBSERVATIONAL", "REFUSED", "classify", "is_mutating",
           "normalize_relation", "parse_pg_bool"]

C = StatementClass

# The order a statement's classes are listed in (iterating the enum itself costs a call
# a generator step per member).
_CLASS_ORDER = tuple(StatementClass)

# Classes that only qualify a statement; on their own they say nothing about its kind.
_QUALIFIERS = frozenset({C.session_inspection, C.explain_analyze})

_READING_STATEMENTS = (
    ast.SelectStmt, ast.VariableShowStmt, ast.ExplainStmt, ast.CopyStmt, ast.PrepareStmt,
    ast.DeclareCursorStmt, ast.FetchStmt, ast.ClosePortalStmt, ast.ListenStmt,
    ast.UnlistenStmt, ast.NotifyStmt,
)

_RELATION_OBJECTS = frozenset({
    ObjectType.OBJECT_TABLE, ObjectType.OBJECT_INDEX, ObjectType.OBJECT_VIEW,
    ObjectType.OBJECT_MATVIEW, ObjectType.OBJECT_SEQUENCE, ObjectType.OBJECT_FOREIGN_TABLE,
})

# Objects that hold data (or, for a schema, hold the objects that do).
_DATA_OBJECTS = frozenset({
    ObjectType.OBJECT_TABLE, ObjectType.OBJECT_INDEX, ObjectType.OBJECT_MATVIEW,
    ObjectType.OBJECT_SEQUENCE, ObjectType.OBJECT_FOREIGN_TABLE, ObjectType.OBJECT_SCHEMA,
})

_STORAGE_PARAMS = frozenset({AlterTableType.AT_SetRelOptions, AlterTableType.AT_ResetRelOptions})

# ALTER TABLE forms that take a table's guarantees away rather than tune it: its rows no
# longer survive a crash, its foreign keys and triggers stop holding, a column takes values
# the application did not write (the fourth outside attack left each in place for a Safe
# Pass). A default that draws from a sequence is a fix's; a constant one is not.
_DESTRUCTIVE_ALTER_TABLE = frozenset({
    AlterTableType.AT_SetUnLogged, AlterTableType.AT_DisableTrigAll,
    AlterTableType.AT_DropConstraint, AlterTableType.AT_DropNotNull,
})

# ALTER TABLE forms that take less than ACCESS EXCLUSIVE and rewrite nothing; every other
# form queues behind, and then blocks, all traffic on the table.
_LIGHT_ALTER_TABLE = frozenset({
    AlterTableType.AT_SetStatistics, AlterTableType.AT_SetOptions,
    AlterTableType.AT_ResetOptions, AlterTableType.AT_ValidateConstraint,
    AlterTableType.AT_ClusterOn, AlterTableType.AT_DropCluster,
    AlterTableType.AT_EnableTrig, AlterTableType.AT_EnableAlwaysTrig,
    AlterTableType.AT_EnableReplicaTrig, AlterTableType.AT_DisableTrig,
    AlterTableType.AT_EnableTrigAll, AlterTableType.AT_DisableTrigAll,
    AlterTableType.AT_EnableTrigUser, AlterTableType.AT_DisableTrigUser,
    AlterTableType.AT_AttachPartition, AlterTableType.AT_DetachPartitionFinalize,
})

# Membership in these reaches the server's files, programs or every table.
_POWERFUL_ROLES = frozenset({
    BOOTSTRAP_SUPERUSER, "pg_read_server_files", "pg_write_server_files",
    "pg_execute_server_program",
    "pg_read_all_data", "pg_write_all_data",
})

_INSPECTION_RELATIONS = frozenset({
    "pg_locks", "pg_class", "pg_index", "pg_prepared_xacts", "pg_settings",
})

_FUNCTION_CLASSES = {
    "pg_terminate_backend": C.session_termination,
    "pg_cancel_backend": C.query_cancel,
    "pg_stat_statements_reset": C.stats_reset,
    "pg_blocking_pids": C.session_inspection,
    "pg_safe_snapshot_blocking_pids": C.session_inspection,
    # listings of the server's own directories, which take no path
    "pg_ls_logdir": C.session_inspection,
    "pg_ls_waldir": C.session_inspection,
    "pg_ls_tmpdir": C.session_inspection,
    "pg_ls_archive_statusdir": C.session_inspection,
    "pg_ls_logicalsnapdir": C.session_inspection,
    "pg_ls_logicalmapdir": C.session_inspection,
    "pg_ls_replslotdir": C.session_inspection,
    "set_config": C.session_setting,
    "pg_reload_conf": C.config_change,
}

# Checked in order after the exact names: the reset functions share the pg_stat prefix.
_FUNCTION_PREFIXES = (("pg_stat_reset", C.stats_reset), ("pg_stat", C.session_inspection))

# A persistent reset of whole setting layers, as written in procedural code's dynamic SQL
# (format('ALTER ROLE %I RESET ALL', r), 'ALTER DATABASE ' || d || ' RESET ALL').
_LAYER_RESET = re.compile(r"\bALTER\s+(ROLE|USER|DATABASE|SYSTEM)\b[\s\S]*?\bRESET\s+ALL\b",
                          re.IGNORECASE)

_COMMENT_TOKENS = frozenset({"SQL_COMMENT", "C_COMMENT"})

_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq, "<>": operator.ne, "<": operator.lt, ">": operator.gt,
    "<=": operator.le, ">=": operator.ge,
}


def classify(sql: str) -> list[StatementInfo]:
    """One StatementInfo per statement of ``sql``, in order. Never raises: SQL PostgreSQL's
    grammar rejects, or nested deeper than the walk can follow (a body's body's body...),
    comes back as a single ``unparseable`` statement."""
    try:
        parsed = parse_sql(sql)
        return [_classify_statement(_source_slice(sql, raw), raw.stmt) for raw in parsed
                if raw.stmt is not None]
    except (PglastError, ValueError) as e:
        return [_unparseable(sql, str(e))]
    except RecursionError as e:
        # pglast's ast, PL/pgSQL's JSON and the bodies inside bodies are read recursively:
        # what is too deep for that is refused, never an error of the gate
        return [_unparseable(sql, str(e) if isinstance(e, TooDeep) else _TOO_DEEP)]


_TOO_DEEP = "nested deeper than the gate can follow to judge it"


def _unparseable(sql: str, error: str) -> StatementInfo:
    return StatementInfo(text=sql.strip(), classes=[C.unparseable], error=error)


def is_mutating(infos: Iterable[StatementInfo]) -> bool:
    """Whether any statement could change what another session sees."""
    return any(set(info.classes) - OBSERVATIONAL for info in infos)


def normalize_relation(name: str) -> str:
    """The form ``StatementInfo.relations`` uses: lower-cased, without a ``public.`` prefix."""
    return name.lower().removeprefix("public.")


def _source_slice(sql: str, raw: ast.RawStmt) -> str:
    # A zero length means "to the end of the string" for the last statement.
    start = raw.stmt_location or 0
    end = start + raw.stmt_len if raw.stmt_len else len(sql)
    text = sql[start:end]
    if "--" not in text and "/*" not in text:
        return text.strip()  # no comment to step over: spare the scan
    # PostgreSQL 15 starts a statement right after the previous semicolon, comments included
    code = next((t.start for t in scan(text) if t.name not in _COMMENT_TOKENS), 0)
    return text[code:].strip()


def _classify_statement(text: str, statement: ast.Node) -> StatementInfo:
    walker, reached, names = _Walker(statement), Reach(), _Names()
    walk(statement, walker, reached, names)
    walker.classes.update(reached.classes)
    return StatementInfo(text=text, classes=walker.result(), relations=names.relations(),
                         functions=names.functions(), settings=walker.settings,
                         setting_role=walker.setting_role,
                         setting_database=walker.setting_database, paths=reached.paths)


class _Walker(Walk):
    """Collects what one statement does.

    Bodies a statement only defines (a view, a rule, a function, a plain EXPLAIN) do not run
    when it runs, so the walk does not descend into them.
    """

    def __init__(self, statement: ast.Node) -> None:
        self.statement = statement
        self.classes: set[StatementClass] = set()
        self.settings: dict[str, str] = {}
        self.setting_role: str | None = None
        self.setting_database: str | None = None

    def result(self) -> list[StatementClass]:
        classes = set(self.classes)
        if classes - REACH <= _QUALIFIERS:
            # Nothing in the tree acted, so the statement's own kind decides; utility
            # statements nobody special-cased (CREATE TABLE, COMMENT...) are plain DDL.
            reads = isinstance(self.statement, _READING_STATEMENTS)
            classes.add(C.read_only if reads else C.ddl)
        return [cls for cls in _CLASS_ORDER if cls in classes]

    def _add(self, *classes: StatementClass) -> None:
        self.classes.update(classes)

    # Data --------------------------------------------------------------------------------

    def visit_SelectStmt(self, ancestors: Ancestor, node: ast.SelectStmt) -> None:
        if node.intoClause is not None:
            self._add(C.ddl)

    def visit_InsertStmt(self, ancestors: Ancestor, node: ast.InsertStmt) -> None:
        self._add(C.insert)

    def visit_UpdateStmt(self, ancestors: Ancestor, node: ast.UpdateStmt) -> None:
        self._add(C.dml_unscoped if _matches_every_row(node.whereClause) else C.dml_scoped)

    def visit_DeleteStmt(self, ancestors: Ancestor, node: ast.DeleteStmt) -> None:
        # rows deleted are data gone, however few: on a protected table, destruction
        self.visit_UpdateStmt(ancestors, node)
        self._add(C.destructive_ddl)

    def visit_MergeStmt(self, ancestors: Ancestor, node: ast.MergeStmt) -> None:
        # Its join condition picks the rows, as a WHERE would.
        self._add(C.dml_scoped)

    def visit_CopyStmt(self, ancestors: Ancestor, node: ast.CopyStmt) -> None:
        # to or from a file or program: policy.reach
        if node.is_from and not node.is_program and node.filename is None:
            self._add(C.insert)

    # Schema ------------------------------------------------------------------------------

    def visit_DropStmt(self, ancestors: Ancestor, node: ast.DropStmt) -> None:
        destroys = (node.removeType in _DATA_OBJECTS
                    or node.behavior == DropBehavior.DROP_CASCADE)
        self._add(C.destructive_ddl if destroys else C.ddl)

    def visit_TruncateStmt(self, ancestors: Ancestor, node: ast.Node) -> None:
        self._add(C.destructive_ddl)

    visit_DropdbStmt = visit_DropOwnedStmt = visit_TruncateStmt

    def visit_AlterTableStmt(self, ancestors: Ancestor, node: ast.AlterTableStmt) -> None:
        for cmd in node.cmds or ():
            self._alter_table_cmd(cmd)

    def _alter_table_cmd(self, cmd: ast.AlterTableCmd) -> None:
        if cmd.subtype == AlterTableType.AT_DropColumn:
            self._add(C.destructive_ddl)
        elif cmd.subtype in _DESTRUCTIVE_ALTER_TABLE or (
                cmd.subtype == AlterTableType.AT_ColumnDefault
                and not isinstance(cmd.def_, ast.FuncCall)):
            self._add(C.ddl, C.destructive_ddl)
        elif cmd.subtype in _STORAGE_PARAMS:
            self._add(C.config_change)
            self.settings.update(_storage_params(cmd))
        elif cmd.subtype in _LIGHT_ALTER_TABLE:
            self._add(C.ddl)
        else:
            self._add(C.ddl, C.lock_heavy_maintenance)

    def visit_CreateTableAsStmt(self, ancestors: Ancestor, node: ast.Node) -> None:
        self._add(C.ddl)

    def visit_ViewStmt(self, ancestors: Ancestor, node: ast.Node) -> Any:
        self._add(C.ddl)
        return Skip

    visit_RuleStmt = visit_ViewStmt

    def visit_CreateFunctionStmt(self, ancestors: Ancestor, node: ast.CreateFunctionStmt) -> Any:
        self._add(C.ddl)
        # defining it is not running it, but a body that resets whole setting layers is
        # written to be run; its later call reads as a plain SELECT
        self._layer_reset_in(node.options)
        return Skip

    # Maintenance -------------------------------------------------------------------------

    def visit_VacuumStmt(self, ancestors: Ancestor, node: ast.VacuumStmt) -> None:
        full = node.is_vacuumcmd and _option_on(node.options, "full")
        self._add(C.lock_heavy_maintenance if full else C.maintenance)

    def visit_ReindexStmt(self, ancestors: Ancestor, node: ast.ReindexStmt) -> None:
        concurrent = _option_on(node.params, "concurrently")
        self._add(C.maintenance if concurrent else C.lock_heavy_maintenance)

    def visit_IndexStmt(self, ancestors: Ancestor,
                        node: ast.IndexStmt | ast.RefreshMatViewStmt) -> None:
        self._add(C.maintenance if node.concurrent else C.lock_heavy_maintenance)

    visit_RefreshMatViewStmt = visit_IndexStmt

    def visit_ClusterStmt(self, ancestors: Ancestor, node: ast.ClusterStmt) -> None:
        self._add(C.lock_heavy_maintenance)

    def visit_LockStmt(self, ancestors: Ancestor, node: ast.LockStmt) -> None:
        # SHARE and stronger block the workload's writes until the transaction ends.
        blocks_writes = (node.mode or 0) >= ShareLock
        self._add(C.lock_heavy_maintenance if blocks_writes else C.transaction_control)

    def visit_CheckPointStmt(self, ancestors: Ancestor, node: ast.CheckPointStmt) -> None:
        self._add(C.maintenance)

    # Settings and sessions ---------------------------------------------------------------

    def visit_VariableSetStmt(self, ancestors: Ancestor, node: ast.VariableSetStmt) -> None:
        if node.kind == VariableSetKind.VAR_SET_MULTI and node.name == "TRANSACTION":
            self._add(C.transaction_control)
            return
        self._add(C.session_setting)
        self.settings.update(_variable_setting(node))

    def visit_AlterSystemStmt(
            self, ancestors: Ancestor,
            node: ast.AlterSystemStmt | ast.AlterRoleSetStmt | ast.AlterDatabaseSetStmt) -> Any:
        # The nested SET is persistent here, not a session setting: do not visit it.
        self._add(C.config_change)
        if node.setstmt is not None:
            self.settings.update(_variable_setting(node.setstmt))
        return Skip

    def visit_AlterRoleSetStmt(self, ancestors: Ancestor, node: ast.AlterRoleSetStmt) -> Any:
        role = node.role
        if role is not None and role.roletype == RoleSpecType.ROLESPEC_CSTRING:
            self.setting_role = role.rolename
        self.setting_database = node.database
        return self.visit_AlterSystemStmt(ancestors, node)

    def visit_AlterDatabaseSetStmt(self, ancestors: Ancestor,
                                   node: ast.AlterDatabaseSetStmt) -> Any:
        self.setting_database = node.dbname
        return self.visit_AlterSystemStmt(ancestors, node)

    def visit_DiscardStmt(self, ancestors: Ancestor, node: ast.Node) -> None:
        self._add(C.session_setting)

    visit_LoadStmt = visit_DiscardStmt

    visit_DeallocateStmt = visit_DiscardStmt

    def visit_TransactionStmt(self, ancestors: Ancestor, node: ast.TransactionStmt) -> None:
        self._add(C.transaction_control)

    def visit_FuncCall(self, ancestors: Ancestor, node: ast.FuncCall) -> None:
        name = base_name(node.funcname)
        cls = _function_class(name)
        if cls is None:
            return
        self._add(cls)
        if name == "set_config":
            self.settings.update(_set_config(node))
        if cls is C.session_termination and _signals_every_row(ancestors, self.statement):
            self._add(C.unscoped_termination)

    def visit_RangeVar(self, ancestors: Ancestor, node: ast.RangeVar) -> None:
        # Only a read is inspection: VACUUM pg_class or LOCK pg_locks look at nothing.
        if _is_inspection_relation(_lower(node.relname)) and _in_from_clause(ancestors):
            self._add(C.session_inspection)

    # Privileges, files, opaque code ------------------------------------------------------

    def visit_CreateRoleStmt(self, ancestors: Ancestor,
                             node: ast.CreateRoleStmt | ast.AlterRoleStmt) -> None:
        self._add(C.privilege)
        if any(d.defname in ESCALATING_ROLE_ATTRIBUTES and _is_on(d) for d in node.options or ()):
            self._add(C.privilege_escalation)

    visit_AlterRoleStmt = visit_CreateRoleStmt

    def visit_GrantStmt(self, ancestors: Ancestor, node: ast.GrantStmt) -> None:
        self._add(C.privilege)
        public = any(g.roletype == RoleSpecType.ROLESPEC_PUBLIC for g in node.grantees or ())
        if node.is_grant and public:
            self._add(C.privilege_escalation)

    def visit_GrantRoleStmt(self, ancestors: Ancestor, node: ast.GrantRoleStmt) -> None:
        self._add(C.privilege)
        roles = {p.priv_name.lower() for p in node.granted_roles or () if p.priv_name}
        if node.is_grant and roles & _POWERFUL_ROLES:
            self._add(C.privilege_escalation)

    def visit_DropRoleStmt(self, ancestors: Ancestor, node: ast.Node) -> None:
        self._add(C.privilege)

    visit_ReassignOwnedStmt = visit_AlterOwnerStmt = visit_DropRoleStmt

    def visit_CallStmt(self, ancestors: Ancestor, node: ast.Node) -> None:
        self._add(C.procedural)

    visit_ExecuteStmt = visit_CallStmt

    def visit_DoStmt(self, ancestors: Ancestor, node: ast.DoStmt) -> None:
        self._add(C.procedural)
        self._layer_reset_in(node.args)

    def _layer_reset_in(self, options: Iterable[ast.DefElem] | None) -> None:
        # Which roles or databases a body's dynamic SQL reaches cannot be resolved, but an
        # ALTER ... RESET ALL written in it resets whole setting layers, whichever they are.
        body = " ".join(_text(part) for d in options or () if d.defname == "as"
                        for part in (d.arg if isinstance(d.arg, tuple) else (d.arg,)))
        if _LAYER_RESET.search(body):
            self._add(C.config_change)
            self.settings["all"] = "default"

    def visit_ExplainStmt(self, ancestors: Ancestor, node: ast.ExplainStmt) -> Any:
        if _option_on(node.options, "analyze"):
            self._add(C.explain_analyze)
            return None
        self._add(C.explain)
        return Skip


class _Names(Walk):
    """Collects the relations and functions a statement names, in the order met."""

    def __init__(self) -> None:
        self._relations: list[tuple[str, bool]] = []
        self._ctes: set[str] = set()
        self._functions: list[str] = []

    def relations(self) -> list[str]:
        # An unqualified name that a WITH clause defines is the CTE, not a table.
        names = (key for key, qualified in self._relations if qualified or key not in self._ctes)
        return list(dict.fromkeys(names))

    def functions(self) -> list[str]:
        return list(dict.fromkeys(self._functions))

    def visit_RangeVar(self, ancestors: Ancestor, node: ast.RangeVar) -> None:
        name = ".".join(part for part in (node.schemaname, node.relname) if part)
        self._relations.append((normalize_relation(name), bool(node.schemaname)))

    def visit_CommonTableExpr(self, ancestors: Ancestor, node: ast.CommonTableExpr) -> None:
        self._ctes.add(_lower(node.ctename))

    def visit_DropStmt(self, ancestors: Ancestor, node: ast.DropStmt) -> None:
        if node.removeType in _RELATION_OBJECTS:
            self._relations.extend((_dotted(obj), len(obj) > 1) for obj in node.objects or ())

    def visit_FuncCall(self, ancestors: Ancestor, node: ast.FuncCall) -> None:
        self._functions.append(_dotted(node.funcname))


class _Descendants(Walk):
    def __init__(self) -> None:
        self.nodes: list[ast.Node] = []

    def visit(self, ancestors: Ancestor, node: ast.Node) -> None:
        self.nodes.append(node)


def _descendants(root: ast.Node) -> list[ast.Node]:
    """``root`` and every node under it."""
    collector = _Descendants()
    collector(root)
    return collector.nodes


def _lower(text: str | None) -> str:
    return (text or "").lower()


def _dotted(names: Iterable[ast.String] | None) -> str:
    return normalize_relation(".".join(n.sval or "" for n in names or ()))


def _function_class(name: str) -> StatementClass | None:
    if name in _FUNCTION_CLASSES:
        return _FUNCTION_CLASSES[name]
    return next((cls for prefix, cls in _FUNCTION_PREFIXES if name.startswith(prefix)), None)


def _is_inspection_relation(name: str) -> bool:
    # pg_stat* covers the pg_stat_* and pg_statio_* views, pg_statistic and pg_stats.
    return name.startswith("pg_stat") or name in _INSPECTION_RELATIONS


def _in_from_clause(ancestors: Ancestor | None) -> bool:
    while ancestors is not None:
        if ancestors.member in ("fromClause", "usingClause"):
            return True
        ancestors = ancestors.parent
    return False


def _signals_every_row(ancestors: Ancestor, statement: ast.Node) -> bool:
    """A call inside a SELECT with a FROM list runs once per row; without any filter in the
    statement, that is once per session the source lists."""
    select = enclosing(ancestors, ast.SelectStmt)
    if select is None or not select.fromClause:
        return False
    return not any(_narrows(node) for node in _descendants(statement))


def _narrows(node: ast.Node) -> bool:
    if isinstance(node, ast.SelectStmt):
        return node.limitCount is not None or not _matches_every_row(node.whereClause)
    if isinstance(node, ast.JoinExpr):
        return bool(node.usingClause) or not _matches_every_row(node.quals)
    return False


def _matches_every_row(where: ast.Node | None) -> bool:
    """Whether a WHERE clause lets every row through: it is absent, constantly true, or
    mentions no column, so it cannot tell one row from another."""
    if where is None:
        return True
    truth = _constant_truth(where)
    if truth is not None:
        return truth
    return not any(isinstance(n, (ast.ColumnRef, ast.CurrentOfExpr))
                   for n in _descendants(where))


def _constant_truth(expr: ast.Node) -> bool | None:
    """The value of a boolean expression built from constants only, else None."""
    match expr:
        case ast.A_Const(isnull=False, val=ast.Boolean(boolval=value)):
            return bool(value)
        case ast.TypeCast(arg=ast.A_Const(isnull=False, val=ast.String(sval=str() as text)),
                          typeName=ast.TypeName(names=names)) if base_name(names) == "bool":
            return parse_pg_bool(text)
        case ast.BoolExpr():
            return _bool_expr_truth(expr)
        case ast.A_Expr(kind=A_Expr_Kind.AEXPR_OP, lexpr=ast.A_Const() as left,
                      rexpr=ast.A_Const() as right):
            return _compare_constants(base_name(expr.name), left, right)
    return None


def _bool_expr_truth(expr: ast.BoolExpr) -> bool | None:
    truths = [_constant_truth(arg) for arg in expr.args or ()]
    if expr.boolop == BoolExprType.NOT_EXPR:
        return None if truths[0] is None else not truths[0]
    # The value that settles the whole expression: one false for AND, one true for OR.
    settles = expr.boolop == BoolExprType.OR_EXPR
    if settles in truths:
        return settles
    return None if None in truths else not settles


def _compare_constants(op: str, left: ast.A_Const, right: ast.A_Const) -> bool | None:
    compare = _COMPARISONS.get(op)
    lvalue, rvalue = _constant_value(left), _constant_value(right)
    if compare is None or lvalue is None or type(lvalue) is not type(rvalue):
        return None
    return compare(lvalue, rvalue)


def _constant_value(const: ast.A_Const) -> Any:
    match const.val:
        case ast.Integer(ival=value):
            return value
        case ast.Float(fval=str() as text):
            return float(text)
        case ast.String(sval=text):
            return text
        case ast.Boolean(boolval=value):
            return bool(value)
    return None


def _text(node: Any) -> str:
    """A setting's value as PostgreSQL would read it back."""
    match node:
        case ast.A_Const(isnull=True):
            return "null"
        case ast.A_Const(val=value):
            return _text(value)
        case ast.String(sval=str() as text):
            return text
        case ast.Integer(ival=value):
            return str(value)
        case ast.Float(fval=str() as text):
            return text
        case ast.Boolean(boolval=value):
            return "true" if value else "false"
    return RawStream()(node)


def _is_on(option: ast.DefElem) -> bool:
    # A bare option (VACUUM (FULL), SUPERUSER) means on.
    return option.arg is None or parse_pg_bool(_text(option.arg)) is True


def _option_on(options: Iterable[ast.DefElem] | None, name: str) -> bool:
    return any(d.defname == name and _is_on(d) for d in options or ())


def _variable_setting(node: ast.VariableSetStmt) -> dict[str, str]:
    match node.kind:
        case VariableSetKind.VAR_SET_VALUE:
            return {_lower(node.name): ", ".join(_text(arg) for arg in node.args or ())}
        case VariableSetKind.VAR_SET_DEFAULT | VariableSetKind.VAR_RESET:
            return {_lower(node.name): "default"}
        case VariableSetKind.VAR_SET_CURRENT:
            return {_lower(node.name): "current"}
        case VariableSetKind.VAR_RESET_ALL:
            return {"all": "default"}
    return {}


def _storage_params(cmd: ast.AlterTableCmd) -> dict[str, str]:
    reset = cmd.subtype == AlterTableType.AT_ResetRelOptions
    # def_ is typed as a single node, but SET (...) and RESET (...) carry a list of them.
    options = cmd.def_ if isinstance(cmd.def_, tuple) else ()
    return {_param_name(d): "default" if reset else _param_value(d) for d in options}


def _param_name(option: ast.DefElem) -> str:
    name = f"{option.defnamespace}.{option.defname}" if option.defnamespace else option.defname
    return _lower(name)


def _param_value(option: ast.DefElem) -> str:
    return "true" if option.arg is None else _text(option.arg)


def _set_config(call: ast.FuncCall) -> dict[str, str]:
    match call.args:
        case (ast.A_Const(val=ast.String(sval=str() as name)), ast.A_Const() as value, *_):
            return {name.lower(): _text(value)}
    return {}
