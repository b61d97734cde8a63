"""Instance control over the session-wide PostgreSQL that several test modules share."""

from __future__ import annotations

from pathlib import Path

from dbabench.env.postgres import PostgresInstance
from dbabench.env.processes import free_port
from dbabench.tools.context import ServerAccess, ToolContext


class SharedInstanceControl:
    """Status of the session-wide server; other test modules need it up, so no process control."""

    def __init__(self, instance: PostgresInstance) -> None:
        self.instance = instance

    def status(self) -> dict[str, object]:
        return {"running": self.instance.running(), "pid": self.instance.pid,
                "port": self.instance.port}

    def start(self) -> None:
        raise AssertionError("the shared instance is not these tests' to start")

    def stop(self, mode: str) -> None:
        raise AssertionError("the shared instance is not these tests' to stop")

    def restart(self, mode: str) -> None:
        raise AssertionError("the shared instance is not these tests' to restart")


def tool_context(postgres: PostgresInstance, tmp_path: Path) -> ToolContext:
    """The five tools' context on the shared server; no Prometheus listens at its address, so
    query_metrics turns that into an observation."""
    return ToolContext(
        primary=ServerAccess(
            dsn=postgres.dsn(database="app"),
            observer_dsn=postgres.dsn(database="app", application_name="dbabench-observer"),
            pg_log_dir=postgres.log_dir, control=SharedInstanceControl(postgres)),
        business_log=tmp_path / "business.jsonl",
        prometheus_url=f"http://127.0.0.1:{free_port()}",
    )
