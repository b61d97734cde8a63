"""evaluate.footprints: what a run shows the agent as it comes in, and which of it is the
harness's footprint rather than the incident's evidence (model.footprint).

Real agents read the answer from what the set-up left behind: the fault program's own
statements, the harness's checks, words that name the harness or the scenario. This scan
looks, right after admission, at every place the five tools reach (pg_stat_statements,
pg_stat_activity, the server log as ``read_log`` serves it, the business log, the stored
settings, the definitions, comments and names of the application database, the cumulative
statistics, Prometheus's labels), matches what each shows against the manifest's statements
(whitespace and case normalised; pg_stat_statements' constants by the parser's fingerprint),
and says of each finding whether a DBA would see the same in a real incident.

The server log is read before any of the scan's own statements run: with ``log_statement``
on, they would be logged too. The scan's statements are the verifier's (not tracked in
pg_stat_statements), and its session is left out of what it reports.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import httpx
import psycopg
from pglast import parse_sql
from pglast.parser import ParseError, fingerprint, split

from dbabench.env.monitoring import EXPORTER_STATEMENTS, PLAIN_HTTP
from dbabench.env.postgres import harness_application
from dbabench.evaluate.predicates import Probe
from dbabench.jsonl import complete_records
from dbabench.model.footprint import Finding, FootprintScan, Kind, Place, PlaceCount, Source
from dbabench.model.scenario import EstimatePredicate, Scenario, SqlPredicate, SqlStep
from dbabench.model.workload import JobStep, Server
from dbabench.scenario.datasets import dataset_of
from dbabench.tools import logs
from dbabench.tools.context import ToolContext
from dbabench.workload import engine

SCAN_TIMEOUT_MS = 30_000
LOCK_TIMEOUT_MS = 1_000
"""A fault may hold a lock on what a definition's deparsing opens: the scan does not queue."""
TEXT_CHARS = 300
MIN_SUBSTRING_CHARS = 16
"""A manifest statement shorter than this (``SELECT 1``) is matched by fingerprint only, as a
whole statement, never as a piece of free text."""

STRONG_WORDS = ("dbabench", "golden", "harness", "verifier")
"""Words that name the harness wherever they appear (a PostgreSQL message never uses them)."""
WEAK_WORDS = ("fault", "faults", "reference")
"""Words that name it in text an author wrote (definitions, comments, names, labels, the
business log), not in the server's own messages ("invalid reference to FROM-clause entry")."""

EVIDENCE_OF_TABLE_STATS = re.compile(
    r"pg_stat_(?:user|all)_tables|n_dead_tup|n_live_tup|n_mod_since_analyze|n_tup_(?:ins|upd|del)"
    r"|last_(?:auto)?(?:vacuum|analyze)|(?:auto)?(?:vacuum|analyze)_count", re.IGNORECASE)
_PASSWORD = re.compile(r"(?i)(password\s*(?:=\s*)?)('(?:[^']|'')*'|\S+)")
_LOG_APP = re.compile(r"^\S+ \S+ \S+ \[\d+\] app=(\S+)")
_TRANSACTION_CONTROL = re.compile(
    r"\s*(?:begin|start\s+transaction|commit|end|rollback|abort|savepoint|release)\b(?!\s+prepared)",
    re.IGNORECASE)
_LOG_STATEMENT = re.compile(r"(?:statement|STATEMENT|execute [^:]*): (.*)$", re.DOTALL)


def normalise(text: str) -> str:
    """Lower case, whitespace collapsed, no trailing semicolon: how texts are compared."""
    return " ".join(text.lower().split()).rstrip(";").strip()


def mask(text: str) -> str:
    """The text with any password in it masked, clipped."""
    masked = _PASSWORD.sub(lambda m: m.group(1) + "'…'", text)
    return masked if len(masked) <= TEXT_CHARS else masked[:TEXT_CHARS - 1] + "…"


def _fingerprint(statement: str) -> str | None:
    try:
        return fingerprint(statement)
    except (ParseError, ValueError):
        return None


def _statements(sql: str) -> list[str]:
    """A step's SQL as the server ran it: one statement at a time."""
    try:
        return [s for s in split(sql) if s.strip()]
    except (ParseError, ValueError):
        return [sql]


@dataclass(frozen=True)
class Known:
    source: Source
    text: str
    """The statement as the manifest (or the harness) spells it."""
    normal: str
    print: str | None
    shape: str


_CONSTANT = re.compile(r"'(?:[^']|'')*'|\$\d+|\b\d+(?:\.\d+)?\b")


def _shape(normal: str) -> str:
    """A normalised statement with its constants and parameters as ``?``: pg_stat_statements'
    text and the manifest's compare equal only if the statement is the same but for values
    (a fingerprint also takes three VALUES rows for one)."""
    return _CONSTANT.sub("?", normal)


def _numbered(statement: str) -> str:
    """psycopg's ``%s`` placeholders as the server numbers them (``$1``, ``$2``, ...)."""
    count = itertools.count(1)
    return re.sub(r"%s", lambda _: f"${next(count)}", statement)


@dataclass
class Manifest:
    """The statements a run's set-up and checks are made of, by where they come from."""

    name: str
    known: list[Known] = field(default_factory=list)
    words: re.Pattern[str] = field(init=False)
    strong: re.Pattern[str] = field(init=False)
    fault_tables: set[str] = field(default_factory=set)
    """Tables the fault program's SQL updates or deletes from and no later ANALYZE of it
    covers: their modifications since the last ANALYZE are the set-up's (inserts are how any
    table, or a bulk load, is born)."""
    fault_settings: set[str] = field(default_factory=set)
    """Settings the fault program (or database.settings) stores."""
    job_applications: set[str] = field(default_factory=set)
    intended: set[tuple[str, str, str]] = field(default_factory=set)
    """The intended settings' layers and names: (role, database, name), '' for none."""
    evidence: str = ""
    """The text of every statement the scenario's evidence and checks run."""

    def __post_init__(self) -> None:
        spellings = {self.name, self.name.replace("-", "_"), self.name.replace("-", " ")}
        names = "|".join(re.escape(s) for s in sorted(spellings))
        strong = rf"(?:{'|'.join(STRONG_WORDS)})\w*"
        self.strong = re.compile(rf"\b(?:{strong}|{names})\b", re.IGNORECASE)
        self.words = re.compile(rf"\b(?:{strong}|{'|'.join(WEAK_WORDS)}|{names})\b",
                                re.IGNORECASE)

    def add(self, source: Source, sql: str) -> None:
        for statement in _statements(sql):
            if _TRANSACTION_CONTROL.match(statement):
                continue  # every client's BEGIN and COMMIT look alike
            normal = normalise(statement)
            self.known.append(Known(source, statement.strip(), normal,
                                    _fingerprint(statement), _shape(normal)))

    def match(self, text: str, *, whole: bool) -> Known | None:
        """The manifest statement ``text`` shows: as a whole statement (``whole``, compared by
        fingerprint, constants aside, as pg_stat_statements normalises them) or inside free
        text (a log line, a message). The workload's own statements come first: they are the
        incident."""
        normal = normalise(text)
        ordered = sorted(self.known, key=lambda k: k.source != Source.WORKLOAD)
        prints = set()
        if whole:
            shapes = {_shape(normalise(s)) for s in _statements(text)}
            same = next((k for k in ordered if k.shape in shapes), None)
            if same is not None:
                return same
            prints = {p for p in map(_fingerprint, _statements(text)) if p is not None}
        for known in ordered:
            if known.print is not None and known.print in prints:
                return known
            if len(known.normal) >= MIN_SUBSTRING_CHARS and known.normal in normal:
                return known
        return None

    def harness_words(self, text: str, *, authored: bool = True) -> list[str]:
        pattern = self.words if authored else self.strong
        return sorted({m.group(0).lower() for m in pattern.finditer(text)})

    @classmethod
    def of(cls, scenario: Scenario) -> "Manifest":
        spec = scenario.spec
        manifest = cls(scenario.name)
        for statement in engine.CHECKOUT_STATEMENTS:
            manifest.add(Source.WORKLOAD, _numbered(statement))
        for statement in EXPORTER_STATEMENTS:
            manifest.add(Source.WORKLOAD, statement)
        steps = [*spec.fault.persistent, *spec.fault.runtime]
        for step in steps:
            if isinstance(step, JobStep):
                manifest.job_applications.add(step.application_name)
                for statement in step.statements:
                    manifest.add(Source.WORKLOAD, statement)
        sql = [step.sql for step in steps if isinstance(step, SqlStep)]
        for text in sql:
            manifest.add(Source.FAULT, text)
            manifest.fault_settings |= _stored_settings(text)
        manifest.fault_tables = _unanalysed_writes(sql)
        manifest.fault_settings |= {name.lower() for name in spec.database.settings}
        for statement in dataset_of(spec.database).statements:
            manifest.add(Source.SETUP, statement)
        for setting in spec.intended:
            manifest.add(Source.SETUP, setting.statement())
            manifest.intended.add(((setting.role or "").lower(), (setting.database or "").lower(),
                                   setting.name.lower()))
        checks = [*spec.manifestation.predicates, *(c.predicate for c in spec.outcome_checks)]
        texts = []
        for pred in checks:
            if isinstance(pred, SqlPredicate):
                texts.append(pred.sql)
            elif isinstance(pred, EstimatePredicate):
                texts += [pred.explain, pred.actual]
        calls = [h.call for h in spec.reference_path] + spec.verification + [
            s.call for r in (spec.reference, *spec.alternatives, spec.decoy) for s in r.steps]
        texts += [str(c.args["sql"]) for c in calls if isinstance(c.args.get("sql"), str)]
        for text in texts:
            manifest.add(Source.CHECK, text)
        manifest.evidence = "\n".join(texts)
        return manifest

    def reads_table_stats(self) -> bool:
        """Whether the scenario's evidence or checks read the tables' cumulative statistics:
        then what the set-up left in them is part of the incident."""
        return EVIDENCE_OF_TABLE_STATS.search(self.evidence) is not None


def _nodes(sql: str) -> list[Any]:
    try:
        return [raw.stmt for raw in parse_sql(sql)]
    except (ParseError, ValueError):
        return []


def _unanalysed_writes(steps: list[str]) -> set[str]:
    """Tables the steps update or delete from, in a transaction that committed, with no
    ANALYZE of them after it (a prepared transaction's writes are counted when it ends: they
    are the incident's, still open)."""
    done: set[str] = set()
    open_tx: set[str] | None = None
    for node in (n for sql in steps for n in _nodes(sql)):
        kind = type(node).__name__
        if kind == "TransactionStmt":
            name = getattr(node.kind, "name", str(node.kind))
            if name in ("TRANS_STMT_BEGIN", "TRANS_STMT_START"):
                open_tx = set()
            elif open_tx is not None and name == "TRANS_STMT_COMMIT":
                done |= open_tx
                open_tx = None
            elif name in ("TRANS_STMT_ROLLBACK", "TRANS_STMT_PREPARE"):
                open_tx = None
        elif kind in ("UpdateStmt", "DeleteStmt") and node.relation is not None:
            (done if open_tx is None else open_tx).add(node.relation.relname.lower())
        elif kind == "VacuumStmt" and (not node.is_vacuumcmd or any(
                getattr(o, "defname", "") == "analyze" for o in node.options or ())):
            rels = {r.relation.relname.lower() for r in node.rels or () if r.relation}
            done = done - rels if rels else set()
    return done


def _stored_settings(sql: str) -> set[str]:
    """Settings an ALTER SYSTEM / ROLE / DATABASE ... SET of ``sql`` stores."""
    found = set()
    for node in _nodes(sql):
        kind = type(node).__name__
        setstmt = (node.setstmt if kind in ("AlterRoleSetStmt", "AlterDatabaseSetStmt",
                                           "AlterSystemStmt") else None)
        if setstmt is not None and setstmt.name:
            found.add(str(setstmt.name).lower())
    return found


@dataclass
class _Scan:
    manifest: Manifest
    findings: list[Finding] = field(default_factory=list)
    places: list[PlaceCount] = field(default_factory=list)

    def place(self, place: Place, server: Server, items: Iterable[tuple[str, str, Finding | None]],
              error: str = "") -> None:
        """Count a place's items; each is (item, text, the finding it makes or None for the
        incident's ordinary content)."""
        seen = incident = footprints = 0
        for _, _, finding in items:
            seen += 1
            if finding is None:
                incident += 1
                continue
            finding.server = server
            self.findings.append(finding)
            if finding.kind == Kind.FOOTPRINT:
                footprints += 1
            else:
                incident += 1
        self.places.append(PlaceCount(server=server, place=place, seen=seen, incident=incident,
                                      footprints=footprints, error=error))

    def statement(self, place: Place, item: str, text: str, *, whole: bool,
                  authored: bool = False) -> Finding | None:
        """A statement or free text: the manifest statement it shows, or a harness word."""
        known = self.manifest.match(text, whole=whole)
        if known is not None and known.source == Source.WORKLOAD:
            return None
        if known is not None:
            why = {Source.FAULT: "the fault program's own statement: a real incident shows its"
                                 " effects, not the statement that set it up",
                   Source.SETUP: "the harness's build (dataset, intended settings)",
                   Source.CHECK: "the harness's checks or the manifest's answer"}[known.source]
            return Finding(place=place, item=item, text=mask(text), kind=Kind.FOOTPRINT,
                           source=known.source, matched=mask(known.text), why=why)
        words = self.manifest.harness_words(text, authored=authored)
        if words:
            return Finding(place=place, item=item, text=mask(text), kind=Kind.FOOTPRINT,
                           source=Source.HARNESS, matched=", ".join(words),
                           why="names the harness or the scenario")
        return None


def _harness_session(place: Place, item: str, text: str, application: str) -> Finding:
    return Finding(place=place, item=item, text=mask(text), kind=Kind.FOOTPRINT,
                   source=Source.HARNESS, matched=application,
                   why="a session of the harness (its application_name), no incident's")


# the places ---------------------------------------------------------------------------------

def _server_log(scan: _Scan, ctx: ToolContext, server: Server) -> None:
    access = ctx.server(server)
    lines = logs.served_postgresql_lines(access.pg_log_dir)
    items = []
    for number, line in enumerate(lines, 1):
        item = f"line {number}"
        app = _LOG_APP.match(line)
        if app is not None and harness_application(app.group(1)):
            items.append((item, line, _harness_session(Place.SERVER_LOG, item, line,
                                                       app.group(1))))
            continue
        statement = _LOG_STATEMENT.search(line)
        finding = (scan.statement(Place.SERVER_LOG, item, line, whole=False)
                   or (scan.statement(Place.SERVER_LOG, item, statement.group(1), whole=True)
                       if statement else None))
        if finding is not None:
            finding.text = mask(line)
        items.append((item, line, finding))
    scan.place(Place.SERVER_LOG, server, items)


def _business_log(scan: _Scan, ctx: ToolContext) -> None:
    items = []
    for number, record in enumerate(complete_records(ctx.business_log), 1):
        text = " ".join(f"{k}={v}" for k, v in record.items())
        item = f"line {number}"
        items.append((item, text, scan.statement(Place.BUSINESS_LOG, item, text, whole=False,
                                                 authored=True)))
    scan.place(Place.BUSINESS_LOG, "primary", items)


async def _metrics(scan: _Scan, ctx: ToolContext, incident: str) -> None:
    items: list[tuple[str, str, Finding | None]] = []
    error = ""
    try:
        async with httpx.AsyncClient(base_url=ctx.prometheus_url, timeout=15.0,
                                     verify=PLAIN_HTTP) as client:
            names = (await client.get("/api/v1/labels")).json()["data"]
            for name in names:
                values = (await client.get(f"/api/v1/label/{name}/values")).json()["data"]
                for value in values:
                    item = f"{name}={value}"
                    words = scan.manifest.harness_words(str(value))
                    items.append((item, item, None if not words else Finding(
                        place=Place.METRICS, item=item, text=item, kind=Kind.FOOTPRINT,
                        source=Source.HARNESS, matched=", ".join(words),
                        why="a label value that names the harness or the scenario")))
            config = (await client.get("/api/v1/status/config")).json()["data"]["yaml"]
        run = re.search(r"^\s+run:\s*(\S+)\s*$", config, re.MULTILINE)
        label = run.group(1).strip("'\"") if run else ""
        item = f"external label run={label}"
        items.append((item, item, None if label == incident else Finding(
            place=Place.METRICS, item=item, text=item, kind=Kind.FOOTPRINT,
            source=Source.HARNESS, matched=label,
            why=f"the run's label must be the incident id ({incident})")))
    except (httpx.HTTPError, KeyError, ValueError) as e:
        error = f"Prometheus: {e}"
    scan.place(Place.METRICS, "primary", items, error)


async def _rows(conn: psycopg.AsyncConnection, sql: str) -> list[tuple[Any, ...]]:
    cur = await conn.execute(sql.encode())  # bytes: no placeholder parsing of '%'
    return list(await cur.fetchall())


async def _statements_place(scan: _Scan, conn: psycopg.AsyncConnection, server: Server) -> None:
    items: list[tuple[str, str, Finding | None]] = []
    error = ""
    try:
        for user, database, query, calls in await _rows(
                conn, "SELECT r.rolname, d.datname, s.query, s.calls FROM pg_stat_statements s"
                      " LEFT JOIN pg_roles r ON r.oid = s.userid"
                      " LEFT JOIN pg_database d ON d.oid = s.dbid ORDER BY s.calls DESC"):
            item = f"{user}@{database} ({calls} calls)"
            items.append((item, query, scan.statement(Place.STATEMENTS, item, query,
                                                      whole=True)))
    except (psycopg.errors.UndefinedTable, psycopg.errors.ObjectNotInPrerequisiteState) as e:
        error = str(e).strip().splitlines()[0]
    scan.place(Place.STATEMENTS, server, items, error)


async def _activity(scan: _Scan, conn: psycopg.AsyncConnection, server: Server) -> None:
    items: list[tuple[str, str, Finding | None]] = []
    for pid, user, application, backend, state, query in await _rows(
            conn, "SELECT pid, usename, application_name, backend_type, state, query"
                  " FROM pg_stat_activity WHERE pid <> pg_backend_pid() ORDER BY pid"):
        item = f"pid {pid} " + (f"app={application}" if application else str(backend))
        text = f"{user or ''} {state or ''}: {query or ''}".strip()
        if harness_application(application or ""):
            items.append((item, text, _harness_session(Place.ACTIVITY, item, text, application)))
        elif application in scan.manifest.job_applications:
            items.append((item, text, Finding(
                place=Place.ACTIVITY, item=item, text=mask(text), kind=Kind.INCIDENT,
                source=Source.WORKLOAD, matched=application,
                why="a session of the fault's jobs: the incident's own traffic")))
        elif not query or backend != "client backend":
            items.append((item, text, None))  # the server's own processes
        else:
            items.append((item, text, scan.statement(Place.ACTIVITY, item, query, whole=True)))
    scan.place(Place.ACTIVITY, server, items)


async def _settings(scan: _Scan, conn: psycopg.AsyncConnection, server: Server) -> None:
    items: list[tuple[str, str, Finding | None]] = []
    paths: list[str] = []
    files: dict[str, list[str]] = {}
    for name, setting, source, sourcefile in await _rows(
            conn, "SELECT name, setting, source, sourcefile FROM pg_settings"
                  " WHERE source NOT IN ('default', 'client', 'session')"
                  " OR name IN ('data_directory', 'config_file', 'hba_file', 'ident_file',"
                  " 'log_directory') ORDER BY name"):
        item = f"{name} ({source})"
        text = f"{name} = {setting}" + (f" from {sourcefile}" if sourcefile else "")
        finding = None
        if name.lower() in scan.manifest.fault_settings:
            finding = Finding(place=Place.SETTINGS, item=item, text=mask(text),
                              kind=Kind.INCIDENT, source=Source.EFFECT, matched=name,
                              why="a setting the scenario stores: the incident")
        if scan.manifest.harness_words(str(setting), authored=False):
            paths.append(f"{name} = {setting}")
        if sourcefile and scan.manifest.harness_words(sourcefile.rsplit("/", 1)[-1],
                                                      authored=False):
            files.setdefault(sourcefile, []).append(name)
        items.append((item, text, finding))
    if paths:
        text = "; ".join(paths)
        items.append(("paths", text, Finding(
            place=Place.SETTINGS, item="paths", text=mask(text), kind=Kind.FOOTPRINT,
            source=Source.HARNESS, matched=", ".join(scan.manifest.harness_words(
                text, authored=False)), why="the server's paths name the harness",
            accepted="the snapshot store's path names the benchmark, not the scenario (a"
                     " clone is named by the incident id)")))
    for sourcefile, names in files.items():
        item = f"sourcefile {sourcefile.rsplit('/', 1)[-1]}"
        text = f"{len(names)} settings from {sourcefile}: {', '.join(names)}"
        items.append((item, text, Finding(
            place=Place.SETTINGS, item=item, text=mask(text), kind=Kind.FOOTPRINT,
            source=Source.HARNESS, matched=", ".join(scan.manifest.harness_words(
                sourcefile.rsplit("/", 1)[-1], authored=False)),
            why="the configuration file's name names the harness",
            accepted="names the benchmark, not the scenario or its fault; the file is in every"
                     " golden snapshot (renaming it rebuilds all of them)")))
    scan.place(Place.SETTINGS, server, items)


async def _role_settings(scan: _Scan, conn: psycopg.AsyncConnection, server: Server) -> None:
    items: list[tuple[str, str, Finding | None]] = []
    for role, database, config in await _rows(
            conn, "SELECT coalesce(r.rolname, ''), coalesce(d.datname, ''), c"
                  " FROM pg_db_role_setting s LEFT JOIN pg_roles r ON r.oid = s.setrole"
                  " LEFT JOIN pg_database d ON d.oid = s.setdatabase, unnest(s.setconfig) c"
                  " ORDER BY 1, 2, 3"):
        name = config.split("=", 1)[0].lower()
        layer = " in ".join(p for p in (f"role {role}" if role else "",
                                        f"database {database}" if database else "") if p)
        item, text = layer, f"{layer}: {config}"
        if (role.lower(), database.lower(), name) in scan.manifest.intended:
            finding = Finding(place=Place.ROLE_SETTINGS, item=item, text=mask(text),
                              kind=Kind.INCIDENT, source=Source.SETUP, matched=name,
                              why="an intended setting: the estate the manifest declares")
        elif name in scan.manifest.fault_settings:
            finding = Finding(place=Place.ROLE_SETTINGS, item=item, text=mask(text),
                              kind=Kind.INCIDENT, source=Source.EFFECT, matched=name,
                              why="a setting the fault stores: the incident")
        else:
            finding = Finding(place=Place.ROLE_SETTINGS, item=item, text=mask(text),
                              kind=Kind.FOOTPRINT, source=Source.SETUP,
                              why="neither the fault's nor an intended setting: who stored it?")
        items.append((item, text, finding))
    scan.place(Place.ROLE_SETTINGS, server, items)


_DEFINITIONS = """
SELECT 'function ' || p.oid::regprocedure, coalesce(p.prosrc, '')
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
UNION ALL
SELECT 'policy ' || polname || ' on ' || polrelid::regclass,
       concat_ws(' ', pg_get_expr(polqual, polrelid), pg_get_expr(polwithcheck, polrelid))
  FROM pg_policy
UNION ALL
SELECT 'trigger ' || tgname || ' on ' || tgrelid::regclass, pg_get_triggerdef(oid)
  FROM pg_trigger WHERE NOT tgisinternal
UNION ALL
SELECT 'view ' || c.oid::regclass, pg_get_viewdef(c.oid)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('v', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT 'rule ' || rulename || ' on ' || schemaname || '.' || tablename, definition
  FROM pg_rules WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT 'event trigger ' || evtname, evtevent || ' ' || evtfoid::regproc FROM pg_event_trigger
UNION ALL
SELECT 'constraint ' || conname || ' on ' || conrelid::regclass, pg_get_constraintdef(oid)
  FROM pg_constraint WHERE conrelid <> 0 AND connamespace NOT IN
       ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
UNION ALL
SELECT 'default ' || adrelid::regclass || '.' || attname, pg_get_expr(adbin, adrelid)
  FROM pg_attrdef JOIN pg_attribute ON attrelid = adrelid AND attnum = adnum
UNION ALL
SELECT 'comment on ' || classoid::regclass || ' ' || objoid, description FROM pg_description
 WHERE objoid >= 16384
UNION ALL
SELECT 'comment on ' || classoid::regclass || ' ' || objoid, description FROM pg_shdescription
 WHERE objoid >= 16384
"""

_NAMES = """
SELECT 'role', rolname FROM pg_roles WHERE rolname NOT LIKE 'pg\\_%'
UNION ALL SELECT 'database', datname FROM pg_database
UNION ALL SELECT 'schema', nspname FROM pg_namespace
 WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
UNION ALL SELECT 'relation', c.oid::regclass::text FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
UNION ALL SELECT 'column', a.attrelid::regclass || '.' || a.attname FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE a.attnum > 0 AND NOT a.attisdropped AND n.nspname NOT LIKE 'pg\\_%'
   AND n.nspname <> 'information_schema'
UNION ALL SELECT 'tablespace', spcname FROM pg_tablespace
UNION ALL SELECT 'replication slot', slot_name FROM pg_replication_slots
UNION ALL SELECT 'prepared transaction', gid FROM pg_prepared_xacts
UNION ALL SELECT 'publication', pubname FROM pg_publication
UNION ALL SELECT 'subscription', subname FROM pg_subscription
UNION ALL SELECT 'extension', extname FROM pg_extension
UNION ALL SELECT 'type', t.oid::regtype::text FROM pg_type t
  JOIN pg_namespace n ON n.oid = t.typnamespace
 WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' AND t.typrelid = 0
"""


async def _authored(scan: _Scan, conn: psycopg.AsyncConnection, place: Place, sql: str) -> None:
    items: list[tuple[str, str, Finding | None]] = []
    error = ""
    try:
        for what, text in await _rows(conn, sql):
            text = str(text or "")
            words = scan.manifest.harness_words(f"{what} {text}")
            items.append((what, text, None if not words else Finding(
                place=place, item=str(what), text=mask(text), kind=Kind.FOOTPRINT,
                source=Source.HARNESS, matched=", ".join(words),
                why="an object the agent reads whose text names the harness or the scenario")))
    except psycopg.Error as e:
        error = f"{e.sqlstate}: {str(e).strip().splitlines()[0]}"
    scan.place(place, "primary", items, error)


_TABLE_STATS = """
SELECT relid::regclass::text, relname, n_tup_ins, n_tup_upd, n_tup_del, n_live_tup, n_dead_tup,
       n_mod_since_analyze, last_vacuum, last_autovacuum, last_analyze, last_autoanalyze
  FROM pg_stat_user_tables ORDER BY 1
"""
_STAMPS = ("last_vacuum", "last_autovacuum", "last_analyze", "last_autoanalyze")


async def _table_stats(scan: _Scan, conn: psycopg.AsyncConnection, started: datetime) -> None:
    evidence = scan.manifest.reads_table_stats()
    items: list[tuple[str, str, Finding | None]] = []
    for row in await _rows(conn, _TABLE_STATS):
        table, relname = row[0], row[1]
        ins, upd, dele, live, dead, modified = row[2:8]
        stamps = dict(zip(_STAMPS, row[8:12]))
        before = {k: v for k, v in stamps.items() if v is not None and v < started}
        text = (f"n_tup_ins={ins} n_tup_upd={upd} n_tup_del={dele} n_live_tup={live}"
                f" n_dead_tup={dead} n_mod_since_analyze={modified}"
                + "".join(f" {k}={v:%Y-%m-%d %H:%M:%S}" for k, v in before.items()))
        if not before and not ins and not upd and not dele:
            items.append((table, text, None))
            continue
        if evidence:
            finding = Finding(place=Place.TABLE_STATS, item=table, text=text, kind=Kind.INCIDENT,
                              source=Source.EFFECT, why="the scenario's evidence or checks read"
                              " the tables' statistics: what the set-up left there is the"
                              " incident's history")
        elif relname.lower() in scan.manifest.fault_tables and (modified or dead):
            finding = Finding(
                place=Place.TABLE_STATS, item=table, text=text, kind=Kind.FOOTPRINT,
                source=Source.FAULT, matched=f"the fault's DML on {relname}",
                why="the fault program's DML shows as modifications since the last ANALYZE (or"
                    " dead tuples) that nothing in the scenario's evidence reads: ANALYZE (or"
                    " VACUUM) after the set-up's DML, or make it evidence")
        else:
            finding = Finding(
                place=Place.TABLE_STATS, item=table, text=text, kind=Kind.FOOTPRINT,
                source=Source.SETUP,
                why="the golden build's loads, and its VACUUM and ANALYZE times (before the"
                    " server started)" if before else "the golden build's loads",
                accepted="pg_stat_reset() would zero n_live_tup and n_dead_tup and the vacuum"
                         " and analyze history too, which autovacuum and a DBA read and which"
                         " other scenarios' evidence is; a real server's counters carry its"
                         " history as well")
        items.append((table, text, finding))
    scan.place(Place.TABLE_STATS, "primary", items)


async def _server_stats(scan: _Scan, conn: psycopg.AsyncConnection, server: Server,
                        scanned: datetime) -> datetime:
    items: list[tuple[str, str, Finding | None]] = []
    [(started, reset_stats)] = await _rows(
        conn, "SELECT pg_postmaster_start_time(), (SELECT stats_reset FROM pg_stat_bgwriter)")
    age = (scanned - started).total_seconds()
    text = f"the server started {age:.0f} s before the agent came in ({started:%H:%M:%S} UTC)"
    items.append(("pg_postmaster_start_time()", text, Finding(
        place=Place.SERVER_STATS, item="pg_postmaster_start_time()", text=text,
        kind=Kind.FOOTPRINT, source=Source.SETUP, why="every run starts a clone of the golden"
        " snapshot: a restart just before the alert (manage_instance status shows it too)",
        accepted="a run must start its server; the log's first lines say the same")))
    if reset_stats is not None:
        text = f"pg_stat_bgwriter.stats_reset = {reset_stats:%Y-%m-%d %H:%M:%S} (its initdb)"
        items.append(("pg_stat_bgwriter.stats_reset", text, None))
    try:
        [(reset,)] = await _rows(conn, "SELECT stats_reset FROM pg_stat_statements_info")
        text = f"pg_stat_statements_info.stats_reset = {reset:%H:%M:%S} UTC"
        items.append(("pg_stat_statements_info.stats_reset", text, Finding(
            place=Place.SERVER_STATS, item="pg_stat_statements_info.stats_reset", text=text,
            kind=Kind.FOOTPRINT, source=Source.SETUP,
            why="emptied as the agent came in (Probe.forget_statements)",
            accepted="what it emptied (the fault's statements, the checks) is the worse"
                     " footprint")))
    except (psycopg.errors.UndefinedTable, psycopg.errors.ObjectNotInPrerequisiteState):
        pass
    scan.place(Place.SERVER_STATS, server, items)
    return started


async def scan(scenario: Scenario, probe: Probe, ctx: ToolContext, *, incident: str,
               run_dir: str = "") -> FootprintScan:
    """What the run shows the agent now, place by place (see the module's docstring)."""
    scanned = datetime.now(timezone.utc)
    state = _Scan(Manifest.of(scenario))
    servers: list[tuple[Server, str]] = [("primary", probe.dsn)]
    if probe.replica_dsn is not None and ctx.replica is not None:
        servers.append(("replica", probe.replica_dsn))
    # the logs first: with log_statement on, the scan's own statements would be logged
    for server, _ in servers:
        _server_log(state, ctx, server)
    _business_log(state, ctx)
    await _metrics(state, ctx, incident)
    started: datetime | None = None
    for server, dsn in servers:
        async with probe.verifier(dsn, SCAN_TIMEOUT_MS, lock_timeout=LOCK_TIMEOUT_MS) as conn:
            await _statements_place(state, conn, server)
            await _activity(state, conn, server)
            await _settings(state, conn, server)
            if server == "primary":
                await _role_settings(state, conn, server)
                await _authored(state, conn, Place.DEFINITIONS, _DEFINITIONS)
                await _authored(state, conn, Place.NAMES, _NAMES)
                started = await _server_stats(state, conn, server, scanned)
                await _table_stats(state, conn, started)
            else:
                await _server_stats(state, conn, server, scanned)
    return FootprintScan(scenario=scenario.name, incident=incident, run_dir=run_dir,
                         scanned_at=scanned, server_started_at=started, places=state.places,
                         findings=state.findings)
