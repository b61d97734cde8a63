"""Instance control over the session-wide PostgreSQL that several test modules share."""

from __future__ import annotations

from dbabench.env.postgres import PostgresInstance


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
