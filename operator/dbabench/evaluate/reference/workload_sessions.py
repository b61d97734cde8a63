"""The workload's sessions as the engine makes them: ``workload.engine.run_workload`` run with
recording sessions and sentinel values, so each session's login, options and SQL are what the
engine does with a manifest's fields."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from dbabench.env import postgres
from dbabench.evaluate.reference.markdown import PASSWORD
from dbabench.model.artifacts import RunArtifact
from dbabench.model.scenario import DatabaseSpec
from dbabench.model.workload import JobStep, OltpCheckoutWorkload
from dbabench.workload import engine
from dbabench.workload.businesslog import Outcome

SENTINELS: dict[str, object] = {
    "clients": 3, "statementTimeoutMs": 3141, "connectionLifetimeSeconds": 271.0,
}
"""Values of the workload's fields that are found again in what the engine does with them."""
JOB_SENTINELS: dict[str, object] = {
    "name": "sample-job", "operation": "sample-operation", "applicationName": "sample-app",
    "statementTimeoutMs": 2718, "role": "sample_role", "sessions": 2,
    "idleInTransactionSeconds": 31.0, "intervalSeconds": 17.0,
    "statements": ["SELECT 'statement 1'", "SELECT 'statement 2'"],
}
REQUESTS_PER_SESSION = 40


class _Countdown:
    """A session's halt: set after so many requests; a wait is recorded, not waited."""

    def __init__(self, requests: int, events: list[tuple[str, object]]) -> None:
        self.left, self.events = requests, events

    def is_set(self) -> bool:
        return self.left <= 0

    def wait(self, timeout: float | None = None) -> bool:
        self.events.append(("wait", timeout))
        return self.is_set()

    def set(self) -> None:
        self.left = 0


class _Statements:
    rowcount = 1
    """Each write changed the one row it meant to: the application checks it does."""

    def __init__(self, events: list[tuple[str, object]]) -> None:
        self.events = events

    def execute(self, query: Any, params: Any = None) -> "_Statements":
        self.events.append(("execute", query))
        return self


@dataclass
class RecordedSession:
    service: str
    application_name: str
    user: str
    options: str
    lifetime: float | None
    events: list[tuple[str, object]] = field(default_factory=list)

    def requests(self) -> dict[str, tuple[bool, tuple[str, ...]]]:
        """operation -> (in a transaction, its statements)."""
        found: dict[str, tuple[bool, tuple[str, ...]]] = {}
        for i, (kind, value) in enumerate(self.events):
            if kind == "request":
                operation, transaction = value  # type: ignore[misc]
                statements = []
                for later, what in self.events[i + 1:]:
                    if later == "end":
                        break
                    if later == "execute":
                        statements.append(str(what))
                found.setdefault(operation, (transaction, tuple(statements)))
        return found


def record_workload(spec: OltpCheckoutWorkload, jobs: list[JobStep]) -> list[RecordedSession]:
    """Run ``engine.run_workload`` with sessions that record what they would do."""
    recorded: list[RecordedSession] = []

    class Recording(engine.Client):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.session = RecordedSession(
                self.service, self.application_name, str(conninfo_to_dict(self.dsn)["user"]),
                self.options, self.lifetime)
            recorded.append(self.session)
            countdown = _Countdown(REQUESTS_PER_SESSION, self.session.events)
            self.halt = countdown  # type: ignore[assignment]
            self.tried.set()

        def request(self, operation: str, body: Callable[[Any], None], *,
                    transaction: bool = True) -> Outcome | None:
            self.session.events.append(("request", (operation, transaction)))
            body(_Statements(self.session.events))
            self.session.events.append(("end", operation))
            self.halt.left -= 1  # type: ignore[attr-defined]
            return "ok"

        def interrupt(self) -> None:
            return None

        def close(self) -> None:
            return None

    server = types.SimpleNamespace(shutdown=lambda: None, server_close=lambda: None)
    thread = types.SimpleNamespace(join=lambda timeout=None: None)
    log = types.SimpleNamespace(close=lambda: None, write=lambda event: None)
    config = engine.WorkloadConfig(
        # the application's login, as runner.assembly.workload_config gives it
        dsn=make_conninfo(host="primary", dbname=DatabaseSpec.model_fields["name"].default,
                          user=postgres.APP_ROLE, password=PASSWORD),
        spec=spec, jobs=jobs, business_log=Path(RunArtifact.BUSINESS_LOG), metrics_port=0)

    async def run() -> None:
        stop = asyncio.Event()
        stop.set()
        await engine.run_workload(config, stop)

    with ExitStack() as patches:
        patches.enter_context(mock.patch.object(engine, "Client", Recording))
        patches.enter_context(mock.patch.object(engine, "start_http_server",
                                                lambda *a, **k: (server, thread)))
        patches.enter_context(mock.patch.object(engine, "BusinessLogWriter", lambda path: log))
        asyncio.run(run())
    return recorded


BARE_JOB: dict[str, object] = {"name": "bare-job", "applicationName": "bare-app",
                               "statements": ["SELECT 1"]}
"""A job that leaves ``role`` and ``statementTimeoutMs`` unset."""


def sample() -> tuple[OltpCheckoutWorkload, list[JobStep]]:
    """A workload and two jobs (one with ``JOB_SENTINELS``, one ``BARE_JOB``)."""
    spec = OltpCheckoutWorkload.model_validate({"profile": "oltp-checkout", **SENTINELS})
    job = JobStep.model_validate({"action": "job", **JOB_SENTINELS})
    bare = JobStep.model_validate({"action": "job", **BARE_JOB})
    return spec, [job, bare]
