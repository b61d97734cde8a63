"""The settings that decide what the server logs, layer by layer, so that a check counting log
records cannot be passed by turning the logging down.

A check that passes on few or no records ("no lock waits logged") would pass just as well if
the server no longer wrote them: ``log_lock_waits = off``, a role's ``log_min_messages = panic``.
Admission records, for each setting that makes the server log something, its value at every
layer it is stored in (the server's configuration files, and each role, database or role in a
database of ``pg_db_role_setting``); at grading, such a check also fails if one of the settings
it names (``enabledBy``), or ``log_min_messages``, logs less at some layer than it did. Values
are compared as PostgreSQL reads them (units and spellings normalised by the server itself).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import get_args

import psycopg

from dbabench.evaluate.predicates import Probe
from dbabench.model.scenario import LogEnabler
from dbabench.policy import parse_pg_bool, pg_magnitude

LEVELS = ("debug5", "debug4", "debug3", "debug2", "debug1", "info", "notice", "warning",
          "error", "log", "fatal", "panic")
"""log_min_messages, from the most to the least that is logged."""
STATEMENTS = ("none", "ddl", "mod", "all")


def _threshold(value: str) -> float:
    # -1 logs nothing; otherwise the lower the threshold the more is logged
    number = float(value)
    return float("-inf") if number < 0 else -number


VERBOSITY: dict[str, Callable[[str], float]] = {
    "log_min_messages": lambda v: -LEVELS.index(v),
    "log_lock_waits": lambda v: float(v == "on"),
    "log_checkpoints": lambda v: float(v == "on"),
    "log_temp_files": _threshold,
    "log_autovacuum_min_duration": _threshold,
    "log_min_duration_statement": _threshold,
    # a lock wait is logged once it has lasted deadlock_timeout
    "deadlock_timeout": lambda v: -float(v),
    "log_statement": lambda v: float(STATEMENTS.index(v)),
}
"""How much each setting makes the server log, as a number that grows with it."""
ENABLERS: tuple[str, ...] = get_args(LogEnabler)
"""What a check's ``enabledBy`` may name; ``log_min_messages`` holds for every log check."""
SERVER = "server"

_STORED = """
SELECT 'server', f.name, f.setting FROM pg_catalog.pg_file_settings f
 WHERE f.applied AND f.name = ANY(%(names)s)
UNION ALL
SELECT CASE WHEN s.setrole = 0 AND s.setdatabase = 0 THEN 'all roles'
            WHEN s.setrole = 0 THEN 'database ' || d.datname
            ELSE concat_ws(' ', 'role ' || r.rolname, 'in database ' || d.datname) END,
       split_part(c, '=', 1), substr(c, strpos(c, '=') + 1)
  FROM pg_catalog.pg_db_role_setting s CROSS JOIN LATERAL unnest(s.setconfig) c
  LEFT JOIN pg_catalog.pg_roles r ON r.oid = s.setrole
  LEFT JOIN pg_catalog.pg_database d ON d.oid = s.setdatabase
 WHERE split_part(c, '=', 1) = ANY(%(names)s)
"""


async def stored(conn: psycopg.AsyncConnection,
                 names: Iterable[str]) -> list[tuple[str, str, str]]:
    """(layer, name, value as written) of each stored value of ``names``: the server's
    configuration files (``server``), and each ``role R``, ``database D``, ``role R in
    database D`` or ``all roles`` of pg_db_role_setting."""
    cur = await conn.execute(_STORED, {"names": list(names)})
    return [(layer, name, value) for layer, name, value in await cur.fetchall()]


async def layers(probe: Probe) -> dict[str, str]:
    """``"NAME (LAYER)": value`` for every stored value of the settings of ``VERBOSITY``, with
    the server's default where no file sets one; a value the server cannot read is kept as
    ``"?RAW"``."""
    names = list(VERBOSITY)
    found: dict[str, str] = {}
    async with probe.verifier(probe.dsn, 20_000) as conn:
        cur = await conn.execute("SELECT name, boot_val, vartype, unit FROM pg_catalog.pg_settings"
                                 " WHERE name = ANY(%(names)s)", {"names": names})
        rows = await cur.fetchall()
        kinds = {name: (vartype, unit) for name, _, vartype, unit in rows}
        values = [(SERVER, name, boot) for name, boot, _, _ in rows]
        for layer, name, raw in values + await stored(conn, names):
            found[f"{name} ({layer})"] = normalised(raw, *kinds.get(name, ("string", None)))
    return found


def normalised(raw: str, vartype: str, unit: str | None) -> str:
    """``raw`` as the server reads it: a number in the setting's base unit, a boolean as on or
    off, an enum in lower case; ``?RAW`` when it reads as none of them. Read here, not by
    setting it in a session: most of these settings cannot be set in one (log_checkpoints,
    log_autovacuum_min_duration are the server's), and a refused SET would both leave the
    value unread and write the harness's error into the log the agent reads."""
    text = raw.strip().strip("'")
    if vartype == "bool":
        value = parse_pg_bool(text)
        return f"?{raw}" if value is None else ("on" if value else "off")
    if vartype in ("integer", "real"):
        magnitude, scale = pg_magnitude(text, unit), pg_magnitude("1", unit)
        if magnitude is None or not scale:
            return f"?{raw}"
        number = magnitude / scale
        return str(round(number)) if vartype == "integer" else f"{number:g}"
    return text.lower()


def turned_down(before: Mapping[str, str], now: Mapping[str, str],
                names: Iterable[str]) -> list[str]:
    """Where one of ``names`` (and log_min_messages) now logs less than at admission: at a
    layer that had a value then, or, for a new layer, than the server's value then. A layer
    dropped since falls back to the server's value now, which must log as much as it did."""
    problems = []
    for name in dict.fromkeys(["log_min_messages", *names]):
        rank = VERBOSITY[name]
        server_key = f"{name} ({SERVER})"
        for key in sorted({k for k in (*before, *now) if k.startswith(f"{name} (")}):
            was = before.get(key, before.get(server_key))
            value = now.get(key, now.get(server_key))
            if was is None or value is None or was == value:
                continue
            if _less(rank, value, was):
                problems.append(f"{key} is {value}, was {was}")
    return problems


def _less(rank: Callable[[str], float], value: str, was: str) -> bool:
    """Whether ``value`` logs less than ``was``; a value the server could not read does."""
    try:
        return rank(value) < rank(was) if not was.startswith("?") else False
    except ValueError:
        return True
