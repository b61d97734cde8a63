"""What the tools act on: connection details, log locations, Prometheus, instance control.

The same tools serve env.local and env.kube; only the ``InstanceControl`` behind them differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from dbabench.model.tool import ShutdownMode
from dbabench.model.workload import Server
from dbabench.tools.bounds import Bounds
from dbabench.tools.errors import ToolError


class InstanceControl(Protocol):
    """Process control of the database server, provided by the environment backend. ``start``
    and ``restart`` raise ``env.postgres.StartFailed`` when the server does not come up (the
    agent's observation); anything else they raise is the harness's failure."""

    def status(self) -> dict[str, object]: ...

    def start(self) -> None: ...

    def stop(self, mode: ShutdownMode) -> None: ...

    def restart(self, mode: ShutdownMode) -> None: ...


@dataclass
class ServerAccess:
    """What the tools reach of one PostgreSQL server."""

    dsn: str = field(repr=False)
    """Superuser conninfo of the application database: what a DBA's psql would use."""
    observer_dsn: str = field(repr=False)
    """The harness's own connection, for trace bookkeeping the agent never sees."""
    pg_log_dir: Path
    control: InstanceControl


@dataclass
class ToolContext:
    primary: ServerAccess
    business_log: Path
    prometheus_url: str
    replica: ServerAccess | None = None
    """The primary's hot standby, in scenarios that have one."""
    knowledge_index: Path | None = None
    bounds: Bounds = field(default_factory=Bounds)
    sql_timeout_seconds: float = 30.0

    def server(self, name: Server) -> ServerAccess:
        if name == "primary":
            return self.primary
        if self.replica is None:
            raise ToolError("this system has no replica: address server primary")
        return self.replica
