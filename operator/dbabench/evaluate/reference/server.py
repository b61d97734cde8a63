"""The server: initdb's command line and the ``dbabench.conf`` the harness writes, by running
``PostgresInstance.write_config`` and ``follow`` on a scratch directory."""

from __future__ import annotations

import inspect
import re
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import get_args
from unittest import mock

from pglast import ast
from psycopg.conninfo import conninfo_to_dict

from dbabench.env import postgres
from dbabench.evaluate.reference.dataset_build import Statement
from dbabench.evaluate.reference.markdown import PASSWORD, code, table, yaml
from dbabench.model.scenario import DatabaseSpec


def initdb_command() -> str:
    """initdb's command line as ``PostgresInstance.initdb`` builds it, paths elided."""
    source = inspect.getsource(postgres.PostgresInstance.initdb)
    start = source.index('"initdb", [') + len('"initdb", ')
    depth, end = 0, start
    for end, ch in enumerate(source[start:], start):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if depth == 0:
            break
    words = []
    for item in _list_items(source[start + 1:end]):
        literal = re.fullmatch(r'"([^"]*)"', item)
        formatted = re.fullmatch(r'f"([^"{]*)\{[^}]*\}"', item)
        if literal:
            words.append(literal.group(1))
        elif formatted:
            words.append(formatted.group(1) + "…")
        elif item == "SUPERUSER":
            words.append(postgres.SUPERUSER)
        elif "PG_BIN" in item and re.search(r'"([^"]+)"', item):
            words.append(re.search(r'"([^"]+)"', item).group(1))  # type: ignore[union-attr]
        else:
            words.append("…")
    return " ".join(words)


def _list_items(text: str) -> list[str]:
    items, depth, current = [], 0, ""
    for ch in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        items.append(current.strip())
    return items


EXAMPLE_SETTINGS: dict[str, bool | int | float | str] = {
    "max_connections": 20, "deadlock_timeout": "2s", "hot_standby_feedback": True}
"""A ``database.settings`` shown as the harness writes it."""


def _scratch_conf(write: Callable[[Path], None]) -> list[str]:
    """The lines of ``dbabench.conf`` that ``write(pgdata)`` leaves in a scratch data
    directory (files there are given to the server's user only when running as root)."""
    with tempfile.TemporaryDirectory() as scratch, \
            mock.patch.object(postgres, "chown_for_postgres", lambda *a, **k: None):
        pgdata = Path(scratch)
        (pgdata / "postgresql.conf").write_text("# initdb's\n")
        write(pgdata)
        return (pgdata / "dbabench.conf").read_text().splitlines()[1:]


def conf_lines(settings: dict[str, bool | int | float | str]) -> list[str]:
    """dbabench.conf as ``PostgresInstance.write_config`` writes it, per-instance values
    elided."""
    instance = postgres.PostgresInstance(Path("/instance"), postgres.Credentials("", ""))

    def write(pgdata: Path) -> None:
        with mock.patch.object(postgres.PostgresInstance, "pgdata", pgdata):
            instance.write_config(settings)

    return [_elide_instance(line) for line in _scratch_conf(write)]


def _elide_instance(line: str) -> str:
    name = line.split(" = ", 1)[0]
    return (f"{name} = …" if name in ("port", "unix_socket_directories", "log_directory")
            else line)


def standby_lines() -> list[str]:
    """What ``PostgresInstance.follow`` adds to a standby's dbabench.conf."""
    primary = types.SimpleNamespace(
        host="primary", port=5432, socket_dir=None,
        credentials=types.SimpleNamespace(superuser_password=PASSWORD))

    def write(pgdata: Path) -> None:
        (pgdata / "dbabench.conf").write_text("# header\n")
        standby = types.SimpleNamespace(pgdata=pgdata, home=pgdata)
        postgres.PostgresInstance.follow(standby, primary,  # type: ignore[arg-type]
                                         slot="replica1", settings={"hot_standby_feedback": True})

    lines = []
    for line in _scratch_conf(write):
        name, value = line.split(" = ", 1)
        if name == "primary_conninfo":
            conninfo = conninfo_to_dict(value.strip("'").replace("''", "'"))
            value = (f"'… user={conninfo.get('user')} application_name="
                     f"{conninfo.get('application_name')}'")
        lines.append(f"{name} = {value}")
    return lines


def section(build: list[Statement]) -> list[str]:
    baseline = postgres.BASELINE_SETTINGS
    extensions = [s.node.extname for s in build if isinstance(s.node, ast.CreateExtensionStmt)]
    example = conf_lines(EXAMPLE_SETTINGS)
    lines = [
        "## The server",
        "",
        f"PostgreSQL {get_args(DatabaseSpec.model_fields['version'].annotation)[0]}"
        " (`database.version`), one cluster per run, a clone of the scenario's golden"
        " snapshot. The cluster is made by",
        "",
        "```",
        initdb_command(),
        "```",
        "",
        "and initdb's `postgresql.conf` gets one line, `include = 'dbabench.conf'`. The harness"
        f" writes `dbabench.conf` (env/postgres.py `BASELINE_SETTINGS`, {len(baseline)}"
        " settings; the rest are PostgreSQL 15's defaults):",
        "",
        *table(("setting", "value"), ((code(k), code(v)) for k, v in baseline.items())),
        "",
        "`database.settings` are written into the same file: a baseline setting is replaced in"
        " its place, any other is added after the baseline; booleans become `on`/`off`,"
        " numbers stay bare, text is quoted. Then come the instance's own lines: `port`"
        f" ({postgres.LOCAL_PORT}), `listen_addresses = ''` and `unix_socket_directories`"
        " (no TCP: the server listens on a Unix socket in a directory of its own, and runs"
        " in a network namespace with no interface up, so nothing it runs reaches a port of"
        " the machine; in a pod it listens on TCP too) and `log_directory`. With"
        " `settings: " + ", ".join(f"{{{k}: {yaml(v)}}}" for k, v in EXAMPLE_SETTINGS.items())
        .replace("}, {", ", ") + "` the file reads:",
        "",
        "```",
        *example,
        "```",
        "",
        "A restored clone keeps this file; the instance's own lines are rewritten for the"
        " run. With `database.replica`, the standby is another clone of the"
        " same golden, started after the primary with `standby.signal` and these lines added"
        " (here with `slot: replica1` and `settings: {hot_standby_feedback: true}`):",
        "",
        "```",
        *standby_lines(),
        "```",
        "",
        "Extensions created in the application database: "
        + ", ".join(code(e) + (" (preloaded: `shared_preload_libraries`)"
                               if e in baseline.get("shared_preload_libraries", "") else "")
                    for e in extensions)
        + ". The server's log is jsonlog, one record a line, in UTC: what `read_log` and"
        " `check: log` read (`read_log` leaves out the records of the harness's own sessions,"
        " whose application_name starts with `dbabench`: the fault program's, the"
        " verifier's, the gate's bookkeeping).",
    ]
    return lines

