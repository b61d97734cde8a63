"""What the dataset's build makes, read off its parsed statements: tables, columns, row counts,
indexes, sequences, roles and grants; a statement of a form this reading does not know is
refused (``DatasetShapeError``) rather than described wrongly."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pglast import ast
from pglast.enums import ConstrType, ObjectType
from pglast.parser import scan
from pglast.stream import RawStream

from dbabench.env import postgres
from dbabench.evaluate.reference.dataset_build import Statement
from dbabench.evaluate.reference.markdown import PASSWORD, count


class DatasetShapeError(ValueError):
    """A dataset statement this page cannot describe faithfully: teach the page its form."""


@dataclass
class Column:
    name: str
    type: str
    not_null: bool = False
    default: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class Table:
    name: str
    columns: list[Column]
    constraints: list[str] = field(default_factory=list)
    sequences: list[tuple[str, str, str]] = field(default_factory=list)
    """(sequence, type, owned by)"""
    indexes: list[tuple[str, str, str]] = field(default_factory=list)
    """(index, definition, made by)"""
    rows: int = 0
    ranges: list[str] = field(default_factory=list)
    filled: dict[str, str] = field(default_factory=dict)
    """column -> the expression the load fills it with"""


SERIAL = {"smallserial": "smallint", "serial": "integer", "bigserial": "bigint",
          "serial2": "smallint", "serial4": "integer", "serial8": "bigint"}


def _deparse(node: Any) -> str:
    return RawStream()(node)


def _table_of(node: ast.CreateStmt) -> Table:
    table = Table(node.relation.relname, [])
    for element in node.tableElts:
        if not isinstance(element, ast.ColumnDef):
            raise DatasetShapeError(f"table constraint in {table.name}: {_deparse(element)}")
        column = Column(element.colname, _deparse(element.typeName))
        if column.type in SERIAL:
            sequence = f"{table.name}_{column.name}_seq"
            table.sequences.append((sequence, SERIAL[column.type],
                                    f"{table.name}.{column.name}"))
            column.not_null = True
            column.default = f"nextval('{sequence}')"
        for c in element.constraints or ():
            if c.contype == ConstrType.CONSTR_NOTNULL:
                column.not_null = True
            elif c.contype == ConstrType.CONSTR_DEFAULT:
                column.default = _deparse(c.raw_expr)
            elif c.contype == ConstrType.CONSTR_PRIMARY:
                column.not_null = True
                name = c.conname or f"{table.name}_pkey"
                table.constraints.append(f"`{name}` PRIMARY KEY ({column.name})")
                table.indexes.append((name, f"UNIQUE btree ({column.name})", "the primary key"))
            elif c.contype == ConstrType.CONSTR_FOREIGN:
                name = c.conname or f"{table.name}_{column.name}_fkey"
                target = f"{c.pktable.relname}({', '.join(a.sval for a in c.pk_attrs)})"
                table.constraints.append(
                    f"`{name}` FOREIGN KEY ({column.name}) REFERENCES {target} (no index on"
                    f" {table.name}.{column.name} comes with it)")
            else:
                raise DatasetShapeError(f"constraint {_deparse(c)} on {table.name}.{column.name}")
        table.columns.append(column)
    return table


def _index(node: ast.IndexStmt) -> tuple[str, str, str]:
    if node.whereClause is not None or node.indexIncludingParams:
        raise DatasetShapeError(f"index {node.idxname}: partial or covering")
    columns = ", ".join(p.name if p.name else _deparse(p.expr) for p in node.indexParams)
    unique = "UNIQUE " if node.unique else ""
    return node.idxname, f"{unique}{node.accessMethod} ({columns})", "CREATE INDEX"


def _int(node: Any) -> int:
    if isinstance(node, ast.A_Const) and isinstance(node.val, ast.Integer):
        return int(node.val.ival)
    raise DatasetShapeError(f"not an integer literal: {_deparse(node)}")


def _select_list(text: str) -> list[str]:
    """The select list of ``INSERT ... SELECT a, b FROM ...`` as written: split at the commas
    between SELECT and FROM outside parentheses, by PostgreSQL's own scanner."""
    data = text.encode()
    items, depth, start = [], 0, None
    for token in scan(text):
        if start is None:
            if token.name == "SELECT":
                start = token.end + 1
            continue
        if token.name == "ASCII_40":
            depth += 1
        elif token.name == "ASCII_41":
            depth -= 1
        elif depth == 0 and token.name in ("ASCII_44", "FROM"):
            items.append(data[start:token.start].decode().strip())
            start = token.end + 1
            if token.name == "FROM":
                break
    return items


def _load(statement: Statement, tables: dict[str, Table]) -> None:
    node: ast.InsertStmt = statement.node
    table = tables[node.relation.relname]
    select = node.selectStmt
    if not isinstance(select, ast.SelectStmt) or select.valuesLists:
        raise DatasetShapeError(f"{table.name} is loaded by something other than INSERT ... SELECT")
    for clause in ("whereClause", "groupClause", "havingClause", "limitCount",
                   "distinctClause", "withClause", "sortClause"):
        if getattr(select, clause):
            raise DatasetShapeError(f"the load of {table.name} has a {clause}: count its rows")
    rows, ranges = 1, []
    for item in select.fromClause or ():
        calls = item.functions if isinstance(item, ast.RangeFunction) else ()
        call = calls[0][0] if len(calls) == 1 else None
        if call is None or call.funcname[-1].sval != "generate_series" or item.alias is None:
            raise DatasetShapeError(f"the load of {table.name} reads {_deparse(item)}")
        low, high, *step = (_int(a) for a in call.args)
        rows *= max(0, (high - low) // (step[0] if step else 1) + 1)
        ranges.append(f"`{item.alias.aliasname}` = {count(low)}..{count(high)}")
    columns = ([c.name for c in node.cols] if node.cols else [c.name for c in table.columns])
    written = _select_list(statement.text)
    if len(written) != len(select.targetList) or len(columns) != len(written):
        raise DatasetShapeError(f"the select list of the load of {table.name} does not split"
                                " into its columns")
    table.rows += rows
    table.ranges += ranges
    table.filled.update(zip(columns, written))


@dataclass
class Role:
    name: str
    made_by: str
    attributes: str
    grants: list[str] = field(default_factory=list)


ROLE_OPTIONS = {"canlogin": ("LOGIN", "NOLOGIN"), "superuser": ("SUPERUSER", "NOSUPERUSER"),
                "createdb": ("CREATEDB", "NOCREATEDB"),
                "createrole": ("CREATEROLE", "NOCREATEROLE"),
                "inherit": ("INHERIT", "NOINHERIT"),
                "isreplication": ("REPLICATION", "NOREPLICATION"),
                "bypassrls": ("BYPASSRLS", "NOBYPASSRLS")}
ROLE_DEFAULTS = "NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT NOREPLICATION NOBYPASSRLS"


def _role(node: ast.CreateRoleStmt) -> Role:
    said = []
    for option in node.options or ():
        if option.defname == "password":
            said.append(f"PASSWORD ({PASSWORD})")
        elif option.defname in ROLE_OPTIONS:
            said.append(ROLE_OPTIONS[option.defname][0 if option.arg.boolval else 1])
        elif option.defname == "connectionlimit":
            said.append(f"CONNECTION LIMIT {option.arg.ival}")
        else:
            raise DatasetShapeError(f"role option {option.defname} of {node.role}")
    return Role(node.role, "CREATE ROLE", " ".join(said))


def _grant(node: ast.GrantStmt, roles: dict[str, Role]) -> None:
    if not node.is_grant or node.objtype not in (ObjectType.OBJECT_TABLE,
                                                 ObjectType.OBJECT_SEQUENCE):
        raise DatasetShapeError(f"privilege statement {_deparse(node)}")
    kind = "sequence " if node.objtype == ObjectType.OBJECT_SEQUENCE else ""
    privileges = ", ".join(p.priv_name.upper() for p in node.privileges) if node.privileges \
        else "ALL"
    on = ", ".join(f"`{o.relname}`" for o in node.objects)
    for grantee in node.grantees:
        roles[grantee.rolename].grants.append(f"{privileges} on {kind}{on}")


@dataclass
class DatasetShape:
    tables: dict[str, Table]
    roles: dict[str, Role]
    databases: list[str]
    last: list[str]


def dataset_shape(build: list[Statement]) -> DatasetShape:
    tables: dict[str, Table] = {}
    roles = {postgres.SUPERUSER: Role(postgres.SUPERUSER, "initdb (`-U`)",
                                      "the bootstrap superuser: every attribute")}
    databases, last = [], []
    for statement in build:
        node = statement.node
        if isinstance(node, ast.CreateStmt):
            table = _table_of(node)
            tables[table.name] = table
        elif isinstance(node, ast.InsertStmt):
            _load(statement, tables)
        elif isinstance(node, ast.IndexStmt):
            tables[node.relation.relname].indexes.append(_index(node))
        elif isinstance(node, ast.CreateRoleStmt):
            role = _role(node)
            roles[role.name] = role
        elif isinstance(node, ast.GrantStmt):
            _grant(node, roles)
        elif isinstance(node, ast.CreatedbStmt):
            databases.append(node.dbname)
        elif isinstance(node, ast.VacuumStmt):
            last.append(statement.text)
        elif not isinstance(node, ast.CreateExtensionStmt):
            raise DatasetShapeError(f"dataset statement {statement.text[:80]}")
    sequences = {s for t in tables.values() for s, _, _ in t.sequences}
    for role in roles.values():
        for grant in role.grants:
            for name in re.findall(r"`([^`]+)`", grant.split(" on sequence ", 1)[-1]) \
                    if " on sequence " in grant else ():
                if name not in sequences:
                    raise DatasetShapeError(f"{role.name} is granted {name}, which no column makes")
    return DatasetShape(tables, roles, databases, last)
