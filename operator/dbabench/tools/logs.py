"""read_log: the PostgreSQL server log (jsonlog) and the application's business log."""

from __future__ import annotations

import json
from collections import deque
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Literal

from pydantic import Field

from dbabench.env.postgres import HARNESS_APPLICATION_PREFIX, harness_application
from dbabench.jsonl import JsonlTail, complete_records
from dbabench.model.base import Model
from dbabench.model.workload import Server
from dbabench.tools.bounds import clip_text
from dbabench.tools.context import ToolContext
from dbabench.tools.errors import ToolError
from dbabench.tools.patterns import MAX_PATTERN_CHARS, AgentPattern

SEVERITIES = ["DEBUG5", "DEBUG4", "DEBUG3", "DEBUG2", "DEBUG1", "LOG", "INFO", "NOTICE",
              "WARNING", "ERROR", "FATAL", "PANIC"]


class ReadLogArgs(Model):
    source: Literal["postgresql", "business"] = Field(
        description="required: postgresql (the database server's log) or business (the"
                    " application's log of its requests)")
    tail: int = Field(default=50, ge=1, le=500, description="return the last N matching lines")
    # a run lasts minutes; a month bounds it far from timedelta's overflow
    since_seconds: float | None = Field(default=None, gt=0, le=30 * 86_400,
                                        description="only records of the last N seconds")
    min_level: str | None = Field(default=None, description="postgresql: e.g. WARNING")
    pattern: str | None = Field(default=None, max_length=MAX_PATTERN_CHARS,
                                description="case-insensitive regular expression on the line,"
                                            " in RE2 syntax (no backreferences or lookaround)")
    server: Server = Field(default="primary",
                           description="postgresql: primary, or replica where the system has"
                                       " a hot standby")


class ReadLogResult(Model):
    source: str
    lines: list[str]
    matched: int
    truncated: bool


def record_time(record: dict[str, object]) -> datetime:
    """The record's time; dbabench's servers log in UTC (``log_timezone``)."""
    stamp = str(record["timestamp"])
    if not stamp.endswith(" UTC"):
        raise ToolError(f"log timestamp {stamp!r} is not in UTC: set log_timezone = 'UTC'")
    return datetime.strptime(stamp[:-4], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)


def _pg_line(record: dict[str, object]) -> str:
    parts = [f"{record.get('timestamp')} [{record.get('pid')}]"]
    if record.get("application_name"):
        parts.append(f"app={record['application_name']}")
    parts.append(f"{record.get('error_severity')}:")
    if record.get("state_code") and record.get("state_code") != "00000":
        parts.append(f"{record['state_code']}")
    parts.append(str(record.get("message", "")))
    for key in ("detail", "hint", "context"):
        if record.get(key):
            parts.append(f"{key.upper()}: {record[key]}")
    if record.get("statement"):
        parts.append(f"STATEMENT: {record['statement']}")
    return " ".join(parts)


class PgLogReader:
    """The server's jsonlog files, each read as it grows (``JsonlTail``); rotation adds files."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._tails: dict[Path, JsonlTail] = {}

    def records(self) -> list[dict[str, object]]:
        """All records, oldest first."""
        return [r for path in sorted(self.log_dir.glob("*.json"))
                for r in self._tails.setdefault(path, JsonlTail(path)).read()]


def pg_records(log_dir: Path) -> list[dict[str, object]]:
    """All records of the server's jsonlog files, oldest first."""
    return PgLogReader(log_dir).records()


def read_log(ctx: ToolContext, args: ReadLogArgs) -> ReadLogResult:
    # RE2, not re: the agent's pattern must match in linear time (tools.patterns)
    regex = AgentPattern(args.pattern, ignore_case=True) if args.pattern else None
    since = (datetime.now(timezone.utc) - timedelta(seconds=args.since_seconds)
             if args.since_seconds else None)
    if args.source == "postgresql":
        lines = _postgresql_lines(ctx.server(args.server).pg_log_dir, since, args.min_level)
    else:
        lines = _business_lines(ctx.business_log, since)
    matched: deque[str] = deque(maxlen=args.tail)
    count = 0
    for line in lines:
        if regex is None or regex.search(line):
            count += 1
            matched.append(line)
    out, truncated = [], count > len(matched)
    for line in matched:
        clipped, cut = clip_text(line, ctx.bounds.max_cell_chars * 4)
        truncated |= cut
        out.append(clipped)
    return ReadLogResult(source=args.source, lines=out, matched=count, truncated=truncated)


def harness_record(record: dict[str, object]) -> bool:
    """A record of one of the harness's own sessions (the golden's build, the fault program,
    the readiness probe, the verifier's checks and scans, the gate's bookkeeping): no
    incident's, and ``read_log`` does not serve it. Where the server logs what sessions run
    (``log_statement``, a slow statement, a failing runtime step) it would show the agent the
    fault's statements and the checks that judge it. A connection's authorization line names
    its application only in its message (``log_connections``)."""
    if harness_application(str(record.get("application_name") or "")):
        return True
    message = str(record.get("message", ""))
    return (message.startswith("connection authorized")
            and f"application_name={HARNESS_APPLICATION_PREFIX}" in message)


def _postgresql_lines(log_dir: Path, since: datetime | None, min_level: str | None) -> list[str]:
    if min_level is not None and min_level.upper() not in SEVERITIES:
        raise ToolError(f"min_level {min_level!r} is not a PostgreSQL severity: "
                        f"{', '.join(SEVERITIES)}")
    floor = SEVERITIES.index(min_level.upper()) if min_level else 0
    lines = []
    for record in pg_records(log_dir):
        severity = str(record.get("error_severity", "LOG"))
        if severity in SEVERITIES and SEVERITIES.index(severity) < floor:
            continue
        if since and record_time(record) < since:
            continue
        if harness_record(record):
            continue
        lines.append(_pg_line(record))
    return lines


def served_postgresql_lines(log_dir: Path) -> list[str]:
    """Every line ``read_log`` can serve of the server log in ``log_dir``, as it serves them
    (evaluate.footprints reads what an agent could)."""
    return _postgresql_lines(log_dir, None, None)


def _business_lines(path: Path, since: datetime | None) -> list[str]:
    return [json.dumps(r, separators=(",", ":")) for r in complete_records(path)
            if not since or datetime.fromisoformat(r["ts"]) >= since]
