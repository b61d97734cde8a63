"""The dataset's build: the statements ``faults.steps.create_database`` runs, recorded by running
it against a recording connection, each parsed with PostgreSQL's own parser (pglast)."""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any
from unittest import mock

import psycopg
from pglast import parse_sql
from pglast.stream import RawStream
from psycopg import sql as pgsql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from dbabench.env import postgres
from dbabench.evaluate.reference.markdown import PASSWORD
from dbabench.faults import steps
from dbabench.model.scenario import DatabaseSpec
from dbabench.scenario.datasets import Dataset


@dataclass
class Statement:
    database: str
    application_name: str
    text: str
    node: Any = None


class _RecordingConnection:
    def __init__(self, log: list[Statement], database: str, application_name: str) -> None:
        self.log, self.database, self.application_name = log, database, application_name

    def __enter__(self) -> "_RecordingConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, query: Any, params: Any = None) -> None:
        if isinstance(query, bytes):
            text = query.decode()
        elif isinstance(query, pgsql.Composable):
            text = query.as_string(None)
        else:
            text = str(query)
        self.log.append(Statement(self.database, self.application_name, text))


def build_statements(dataset: Dataset) -> list[Statement]:
    """What ``faults.steps.create_database`` runs for ``dataset``, in order, each parsed."""
    log: list[Statement] = []
    database = DatabaseSpec.model_fields["name"].default

    def dsn(*, database: str | None = None, user: str = postgres.SUPERUSER,
            application_name: str = "dbabench") -> str:
        return make_conninfo(dbname=database or instance.database, user=user,
                             application_name=application_name)

    def connect(conninfo: str, **_: object) -> _RecordingConnection:
        params = conninfo_to_dict(conninfo)
        return _RecordingConnection(log, str(params["dbname"]), str(params["application_name"]))

    instance = types.SimpleNamespace(
        database=database, dsn=dsn,
        credentials=types.SimpleNamespace(app_password=PASSWORD, superuser_password=PASSWORD))
    fake = types.SimpleNamespace(connect=connect, Error=psycopg.Error)
    with mock.patch.object(steps, "psycopg", fake):
        steps.create_database(instance, dataset)  # type: ignore[arg-type]
    parsed = []
    for statement in log:
        nodes = [raw.stmt for raw in parse_sql(statement.text)]
        for node in nodes:
            parsed.append(Statement(statement.database, statement.application_name,
                                    statement.text if len(nodes) == 1 else RawStream()(node),
                                    node))
    return parsed
