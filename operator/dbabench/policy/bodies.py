"""Function bodies and DO blocks given as text: where the text is, in which language, and
PL/pgSQL's own tree of it, with the SQL of each of its expressions.

PostgreSQL parses a body only when the code runs. The gate reads it when it is written (code
that runs later reads as a harmless call), and the grader reads the scenario's own bodies to
know what its application writes; both go through here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pglast import ast
from pglast.enums import FunctionParameterMode
from pglast.error import Error as PglastError
from pglast.parser import parse_plpgsql_json

from dbabench.policy.walk import base_name

_ASSIGNMENT = re.compile(r"^[^:=]*?:?=")
# PL/pgSQL's parse modes (parser.h RawParseMode): a whole statement, an expression, an
# assignment "target := expression".
_PARSE_STATEMENT, _PARSE_EXPRESSION = 0, 2


def plpgsql_tree(source: str) -> Any | None:
    """PL/pgSQL's JSON tree of a CREATE FUNCTION ``source``; None if it does not parse."""
    try:
        return json.loads(parse_plpgsql_json(source))
    except (PglastError, ValueError):
        return None


def plpgsql_nodes(tree: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair of PL/pgSQL's JSON tree, depth first."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield key, value
            yield from plpgsql_nodes(value)
    elif isinstance(tree, list):
        for item in tree:
            yield from plpgsql_nodes(item)


def expression_sql(expr: dict[str, Any]) -> str:
    query = str(expr.get("query", ""))
    mode = expr.get("parseMode", _PARSE_STATEMENT)
    if mode == _PARSE_STATEMENT:
        return query
    if mode != _PARSE_EXPRESSION:
        query = _ASSIGNMENT.sub("", query, count=1)
    return f"SELECT {query}"


def dollar_quote(body: str) -> str:
    tag = "body"
    while f"${tag}$" in body:
        tag += "_"
    return f"${tag}${body}${tag}$"


def wrap_do(body: str) -> str:
    return f"CREATE FUNCTION dbabench_do() RETURNS void LANGUAGE plpgsql AS {dollar_quote(body)}"


def function_source(node: ast.CreateFunctionStmt, body: str) -> str:
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
                f" AS {dollar_quote(body)}")
    return (f"CREATE FUNCTION dbabench_fn({params}) RETURNS {returns} LANGUAGE plpgsql"
            f" AS {dollar_quote(body)}")


def option(options: Iterable[ast.DefElem] | None, name: str) -> str | None:
    for option in options or ():
        if option.defname == name and isinstance(option.arg, ast.String):
            return option.arg.sval
    return None


def body(options: Iterable[ast.DefElem] | None) -> str | None:
    for option in options or ():
        if option.defname != "as":
            continue
        parts = option.arg if isinstance(option.arg, tuple) else (option.arg,)
        # AS 'obj_file', 'link_symbol' is C; for SQL and PL/pgSQL the body is the one part
        return "".join(p.sval or "" for p in parts[:1] if isinstance(p, ast.String))
    return None


