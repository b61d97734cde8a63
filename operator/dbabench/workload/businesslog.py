"""The business log: one JSON line per request, as the application would log it."""

from __future__ import annotations

import math
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import Field

from dbabench.jsonl import JsonlTail
from dbabench.model.base import Model

Outcome = Literal["ok", "timeout", "lock_timeout", "canceled", "terminated", "connection_error",
                  "error"]
FAILED_BY_TIMEOUT = ("timeout", "lock_timeout")


class BusinessEvent(Model):
    ts: datetime = Field(description="when the request finished (UTC)")
    service: str
    request_id: str
    operation: str
    latency_ms: float
    outcome: Outcome
    sqlstate: str | None = None
    message: str | None = None


class WindowStats(Model):
    requests: int
    timeout_ratio: float
    error_ratio: float
    p99_latency_ms: float
    max_latency_ms: float


class BusinessLogWriter:
    """Shared by the workload's threads: one whole line per request, never two interleaved."""

    def __init__(self, path: Path) -> None:
        self._f: IO[str] = path.open("a", buffering=1)
        self._lock = threading.Lock()

    def write(self, event: BusinessEvent) -> None:
        line = event.model_dump_json(exclude_none=True) + "\n"
        with self._lock:
            if not self._f.closed:
                self._f.write(line)

    def close(self) -> None:
        with self._lock:
            self._f.close()


class BusinessLogReader:
    """A run's business log, read as it grows (``JsonlTail``), each record validated once."""

    def __init__(self, path: Path) -> None:
        self._tail = JsonlTail(path)
        self._source: list[dict[str, Any]] = []
        self._events: list[BusinessEvent] = []

    def events(self, *, start: datetime | None = None, end: datetime | None = None,
               service: str | None = None, operation: str | None = None) -> list[BusinessEvent]:
        records = self._tail.read()
        if records is not self._source:  # read again from the start
            self._source, self._events = records, []
        self._events.extend(BusinessEvent.model_validate(r)
                            for r in records[len(self._events):])
        return [e for e in self._events
                if not (start and e.ts < start or end and e.ts > end
                        or service and e.service != service
                        or operation and e.operation != operation)]


def read_events(path: Path, *, start: datetime | None = None, end: datetime | None = None,
                service: str | None = None, operation: str | None = None) -> list[BusinessEvent]:
    return BusinessLogReader(path).events(start=start, end=end, service=service,
                                          operation=operation)


def window_stats(events: list[BusinessEvent]) -> WindowStats:
    n = len(events)
    if n == 0:
        return WindowStats(requests=0, timeout_ratio=0.0, error_ratio=0.0, p99_latency_ms=0.0,
                           max_latency_ms=0.0)
    latencies = sorted(e.latency_ms for e in events)
    p99 = latencies[min(n - 1, math.ceil(0.99 * n) - 1)]
    return WindowStats(
        requests=n,
        timeout_ratio=sum(e.outcome in FAILED_BY_TIMEOUT for e in events) / n,
        error_ratio=sum(e.outcome != "ok" for e in events) / n,
        p99_latency_ms=p99,
        max_latency_ms=latencies[-1],
    )


def utcnow() -> datetime:
    return datetime.now(timezone.utc)
