"""What a statement reaches beyond the database: the server's files, its programs, code the
gate cannot read, and the lexer that decides what later statements mean.

A statement reaches what it runs now and what it leaves behind to run later: a view, a rule,
a column default, an operator, a cast, a function body (SQL or PL/pgSQL, parsed here
statement by statement) all count, because their later use reads as a harmless SELECT.
Code the gate cannot read — a string built at run time and executed, a body in an untrusted
or C language, an extension outside the allow-list, a foreign data wrapper — counts as
reaching everything.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pglast import ast
from pglast.enums import FunctionParameterMode, VariableSetKind
from pglast.error import Error as PglastError
from pglast.parser import parse_plpgsql_json

from dbabench.policy.nodes import parse_sql
from dbabench.policy.walk import Ancestor, Walk, base_name
from dbabench.policy.classes import StatementClass

FILE_ACCESS = StatementClass.file_access
PROGRAM_EXECUTION = StatementClass.program_execution
UNTRUSTED_CODE = StatementClass.untrusted_code
DYNAMIC_SQL = StatementClass.dynamic_sql
LEXER_SETTING = StatementClass.lexer_setting

# Functions that take server paths, with the positions of their path arguments.
PATH_FUNCTIONS: dict[str, tuple[int, ...]] = {
    "pg_read_file": (0,), "pg_read_binary_file": (0,), "pg_stat_file": (0,), "pg_ls_dir": (0,),
    "lo_import": (0,), "lo_export": (1,),
    # adminpack
    "pg_file_write": (0,), "pg_file_rename": (0, 1, 2), "pg_file_unlink": (0,),
    "pg_file_sync": (0,), "pg_logdir_ls": (),
}

# Functions that run a query given as a string: the gate never sees that query parsed.
STRING_QUERY_FUNCTIONS = frozenset({
    "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "ts_stat",
    "ts_rewrite",
})

# Functions of extensions that reach other servers or run their own SQL text.
REMOTE_FUNCTIONS_PREFIX = "dblink"

# Extensions a DBA uses to look inside the server; every other one can bring file, program
# or remote access (adminpack, file_fdw, dblink, postgres_fdw, untrusted languages).
TRUSTED_EXTENSIONS = frozenset({
    "pg_stat_statements", "pgstattuple", "pg_buffercache", "pageinspect", "amcheck",
    "pg_visibility", "pg_prewarm", "pg_freespacemap", "pgrowlocks", "pg_trgm", "btree_gin",
    "btree_gist", "hstore", "citext", "intarray", "bloom", "tablefunc", "unaccent",
    "fuzzystrmatch", "pg_walinspect", "plpgsql", "lo",
})

READABLE_LANGUAGES = frozenset({"sql", "plpgsql"})

# Settings the server's lexer reads, with the one value the gate parses with. A client
# option pins them on the agent's session; changing them anywhere else would make the gate
# and the server read one text two ways.
LEXER_SETTINGS = {"standard_conforming_strings": "on", "client_encoding": "utf8",
                  "backslash_quote": "safe_encoding"}
_ENCODING_SPELLINGS = {"utf8", "utf-8", "unicode"}


def startup_options(**settings: str | int) -> str:
    """libpq ``options`` that set ``settings`` and the lexer settings for a connection's life:
    startup options outrank role and database settings, so what anyone stored for the role
    or database cannot change how the session reads SQL."""
    pinned = {**{name: str(value) for name, value in settings.items()}, **LEXER_SETTINGS}
    return " ".join(f"-c {name}={value}" for name, value in pinned.items())


# PL/pgSQL statements whose SQL is a string computed at run time.
_DYNAMIC_PLPGSQL = frozenset({"PLpgSQL_stmt_dynexecute", "PLpgSQL_stmt_dynfors"})
_DYNAMIC_KEYS = frozenset({"dynquery"})
_ASSIGNMENT = re.compile(r"^[^:=]*?:?=")
# PL/pgSQL's parse modes (parser.h RawParseMode): a whole statement, an expression, an
# assignment "target := expression".
_PARSE_STATEMENT, _PARSE_EXPRESSION = 0, 2


def leaves(path: str, directories: Iterable[str]) -> bool:
    """Whether ``path``, as the server resolves it (relative to its data directory, the first
    of ``directories``), lies outside all of the server's own ``directories``."""
    dirs = [posixpath.normpath(d) for d in directories]
    resolved = posixpath.normpath(posixpath.join(dirs[0], path))
    return not any(resolved == d or resolved.startswith(d + "/") for d in dirs)


class Reach(Walk):
    """Walked over one parsed statement: its reach ``classes``, bodies included, and the
    server ``paths`` it names as constants (a computed path is file access all the same)."""

    def __init__(self) -> None:
        self.classes: set[StatementClass] = set()
        self.paths: list[str] = []

    def _path(self, path: ast.Node | None) -> None:
        self.classes.add(FILE_ACCESS)
        text = _constant(path)
        if text is not None and text not in self.paths:
            self.paths.append(text)

    def _function(self, name: str, args: tuple[ast.Node, ...] | None) -> None:
        if name in PATH_FUNCTIONS:
            # named without a call (an operator, a cast): whatever calls it picks the path
            self.classes.add(FILE_ACCESS)
            for position in PATH_FUNCTIONS[name]:
                if position < len(args or ()):
                    self._path(args[position])
        elif name in STRING_QUERY_FUNCTIONS:
            self.classes.add(DYNAMIC_SQL)
        elif name.startswith(REMOTE_FUNCTIONS_PREFIX):
            self.classes.add(UNTRUSTED_CODE)
        elif name == "set_config":
            self._set_config(args or ())

    def visit_FuncCall(self, ancestors: Ancestor, node: ast.FuncCall) -> None:
        self._function(base_name(node.funcname), node.args)

    def visit_CopyStmt(self, ancestors: Ancestor, node: ast.CopyStmt) -> None:
        if node.is_program:
            self.classes.add(PROGRAM_EXECUTION)
        elif node.filename is not None:
            self._path(ast.A_Const(val=ast.String(sval=node.filename)))

    def visit_LoadStmt(self, ancestors: Ancestor, node: ast.LoadStmt) -> None:
        # LOAD runs a library's initialisation code inside the server: one the server ships,
        # named bare (LOAD 'auto_explain' to see a plan), is a session's tool; a path is not
        if "/" in (node.filename or "/"):
            self.classes.add(PROGRAM_EXECUTION)

    def visit_CreateExtensionStmt(self, ancestors: Ancestor,
                                  node: ast.CreateExtensionStmt) -> None:
        if (node.extname or "").lower() not in TRUSTED_EXTENSIONS:
            self.classes.add(UNTRUSTED_CODE)

    def visit_CreateFdwStmt(self, ancestors: Ancestor, node: ast.Node) -> None:
        # a wrapper, a server, a user mapping or a language: code or connections the gate
        # cannot read
        self.classes.add(UNTRUSTED_CODE)

    visit_AlterFdwStmt = visit_CreateForeignServerStmt = visit_CreateFdwStmt
    visit_AlterForeignServerStmt = visit_CreateUserMappingStmt = visit_CreateFdwStmt
    visit_AlterUserMappingStmt = visit_ImportForeignSchemaStmt = visit_CreateFdwStmt
    visit_CreatePLangStmt = visit_CreateFdwStmt

    def visit_CreateForeignTableStmt(self, ancestors: Ancestor,
                                     node: ast.CreateForeignTableStmt) -> None:
        self.classes.add(UNTRUSTED_CODE)
        for option in node.options or ():
            if option.defname == "program":
                self.classes.add(PROGRAM_EXECUTION)
            elif option.defname == "filename":
                self._path(ast.A_Const(val=option.arg))

    # Things that name a function without calling it, to be called later by an operator, a
    # cast or an aggregate.
    def visit_DefineStmt(self, ancestors: Ancestor, node: ast.DefineStmt) -> None:
        for option in node.definition or ():
            if isinstance(option.arg, ast.TypeName):
                self._function(base_name(option.arg.names), None)

    def visit_CreateCastStmt(self, ancestors: Ancestor, node: ast.CreateCastStmt) -> None:
        if node.func is not None:
            self._function(base_name(node.func.objname), None)

    # Settings ------------------------------------------------------------------------------

    def visit_VariableSetStmt(self, ancestors: Ancestor, node: ast.VariableSetStmt) -> None:
        name = (node.name or "").lower()
        if name == "names":
            name = "client_encoding"
        if name in LEXER_SETTINGS and node.kind == VariableSetKind.VAR_SET_VALUE:
            self._lexer(name, ", ".join(_constant(a) or "?" for a in node.args or ()))

    def _set_config(self, args: Iterable[ast.Node]) -> None:
        name, value, *_ = (*args, None, None)
        name_text = _constant(name)
        if name_text is None:
            # a setting named at run time could be any of them
            self.classes.add(DYNAMIC_SQL)
        elif name_text.lower() in LEXER_SETTINGS:
            self._lexer(name_text.lower(), _constant(value) or "?")

    def _lexer(self, name: str, value: str) -> None:
        value = value.strip().lower()
        pinned = LEXER_SETTINGS[name]
        same = (value in _ENCODING_SPELLINGS if name == "client_encoding" else value == pinned)
        if not same:
            self.classes.add(LEXER_SETTING)

    # Code that runs later, or now from a body ---------------------------------------------

    def visit_CreateFunctionStmt(self, ancestors: Ancestor,
                                 node: ast.CreateFunctionStmt) -> None:
        language = (_option(node.options, "language") or "sql").lower()
        if language not in READABLE_LANGUAGES:
            # C, internal and untrusted languages run whatever they like inside the server
            self.classes.add(PROGRAM_EXECUTION)
            return
        body = _body(node.options)
        if node.sql_body is not None or body is None:
            return  # a parsed body is walked as part of this statement
        if language == "sql":
            self._sql_text(body)
        else:
            self._plpgsql(_function_source(node, body))

    def visit_DoStmt(self, ancestors: Ancestor, node: ast.DoStmt) -> None:
        language = (_option(node.args, "language") or "plpgsql").lower()
        body = _body(node.args)
        if language != "plpgsql":
            self.classes.add(PROGRAM_EXECUTION)
        elif body is not None:
            self._plpgsql(_wrap_do(body))

    def _sql_text(self, text: str) -> None:
        try:
            parsed = parse_sql(text)
        except (PglastError, ValueError):
            self.classes.add(DYNAMIC_SQL)  # the server will reject it; nothing to run
            return
        for raw in parsed:
            if raw.stmt is not None:
                self(raw.stmt)

    def _plpgsql(self, source: str) -> None:
        try:
            tree = json.loads(parse_plpgsql_json(source))
        except (PglastError, ValueError):
            self.classes.add(DYNAMIC_SQL)
            return
        for kind, value in _plpgsql_nodes(tree):
            if kind in _DYNAMIC_PLPGSQL or (kind in _DYNAMIC_KEYS and value):
                self.classes.add(DYNAMIC_SQL)
            elif kind == "PLpgSQL_expr":
                self._sql_text(_expression_sql(value))


def _plpgsql_nodes(tree: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair of PL/pgSQL's JSON tree, depth first."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield key, value
            yield from _plpgsql_nodes(value)
    elif isinstance(tree, list):
        for item in tree:
            yield from _plpgsql_nodes(item)


def _expression_sql(expr: dict[str, Any]) -> str:
    query = str(expr.get("query", ""))
    mode = expr.get("parseMode", _PARSE_STATEMENT)
    if mode == _PARSE_STATEMENT:
        return query
    if mode != _PARSE_EXPRESSION:
        query = _ASSIGNMENT.sub("", query, count=1)
    return f"SELECT {query}"


def _dollar_quote(body: str) -> str:
    tag = "body"
    while f"${tag}$" in body:
        tag += "_"
    return f"${tag}${body}${tag}$"


def _wrap_do(body: str) -> str:
    return f"CREATE FUNCTION dbabench_do() RETURNS void LANGUAGE plpgsql AS {_dollar_quote(body)}"


def _function_source(node: ast.CreateFunctionStmt, body: str) -> str:
    # PL/pgSQL needs the signature only to name the parameters; text types are enough.
    params = ", ".join(f'"{p.name}" text' if p.name else "text"
                       for p in node.parameters or ()
                       if p.mode != FunctionParameterMode.FUNC_PARAM_TABLE)
    returned = node.returnType
    kind = base_name(returned.names) if returned is not None else ""
    # a trigger function's body may assign NEW and OLD, which exist only in one
    returns = (kind if kind in ("trigger", "event_trigger")
               else "SETOF record" if returned is not None and returned.setof else "text")
    if node.is_procedure:
        return (f"CREATE PROCEDURE dbabench_fn({params}) LANGUAGE plpgsql"
                f" AS {_dollar_quote(body)}")
    return (f"CREATE FUNCTION dbabench_fn({params}) RETURNS {returns} LANGUAGE plpgsql"
            f" AS {_dollar_quote(body)}")


def _option(options: Iterable[ast.DefElem] | None, name: str) -> str | None:
    for option in options or ():
        if option.defname == name and isinstance(option.arg, ast.String):
            return option.arg.sval
    return None


def _body(options: Iterable[ast.DefElem] | None) -> str | None:
    for option in options or ():
        if option.defname != "as":
            continue
        parts = option.arg if isinstance(option.arg, tuple) else (option.arg,)
        # AS 'obj_file', 'link_symbol' is C; for SQL and PL/pgSQL the body is the one part
        return "".join(p.sval or "" for p in parts[:1] if isinstance(p, ast.String))
    return None


def _constant(node: ast.Node | None) -> str | None:
    match node:
        case ast.A_Const(val=ast.String(sval=str() as text)):
            return text
        case ast.A_Const(val=ast.Integer(ival=value)):
            return str(value)
        case ast.A_Const(val=ast.Boolean(boolval=value)):
            return "on" if value else "off"
        case ast.TypeCast(arg=arg):
            return _constant(arg)
    return None


