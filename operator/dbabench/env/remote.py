"""A run's server and logs as seen from another pod: what env.local has as files and pids.

The tools and the predicates read the server's jsonlog and the application's business log as
files. On Kubernetes those live in other pods, so a ``LogMirror`` copies them, incrementally,
into this pod: the server's log over SQL (``pg_ls_logdir`` / ``pg_read_binary_file``, the
superuser's right), the business log over the workload's HTTP endpoint. Tools and predicates
then run unchanged. ``RemoteInstanceControl`` is manage_instance's start/stop/restart, asked of
``dbabench component postgres`` in the database pod.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import httpx
import psycopg

from dbabench.env.monitoring import PLAIN_HTTP
from dbabench.env.postgres import HARNESS_APPLICATION, StartFailed
from dbabench.model.artifacts import RunArtifact
from dbabench.model.tool import InstanceAction, ShutdownMode

MIRROR_INTERVAL_SECONDS = 1.0
CHUNK_BYTES = 4 << 20


class LogMirror:
    """``dsn``: the primary's; ``replica_dsn``: the hot standby's, where there is one, whose
    log is mirrored into ``replica_log_dir``."""

    def __init__(self, dsn: str, business_url: str, into: Path,
                 replica_dsn: str | None = None) -> None:
        self.business_url = business_url
        self.pg_log_dir = into / "pglog"
        self.replica_log_dir = into / "replica-pglog"
        self.business_log = into / RunArtifact.BUSINESS_LOG
        self.servers = {self.pg_log_dir: dsn}
        if replica_dsn is not None:
            self.servers[self.replica_log_dir] = replica_dsn
        for directory in self.servers:
            directory.mkdir(parents=True, exist_ok=True)
        self.business_log.touch()
        self._lock = asyncio.Lock()

    async def sync(self) -> None:
        """Bring every copy up to date; a source that is down is retried on the next sync."""
        async with self._lock:
            for directory, dsn in self.servers.items():
                with contextlib.suppress(psycopg.OperationalError):
                    await self._sync_server_log(dsn, directory)
            with contextlib.suppress(httpx.TransportError):
                await self._sync_business_log()

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.sync()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), MIRROR_INTERVAL_SECONDS)

    async def _sync_server_log(self, dsn: str, into: Path) -> None:
        async with await psycopg.AsyncConnection.connect(
                dsn, autocommit=True, application_name=HARNESS_APPLICATION) as conn:
            cur = await conn.execute(
                "SELECT current_setting('log_directory'), name, size FROM pg_ls_logdir()"
                " WHERE name LIKE '%.json' ORDER BY name")
            for directory, name, size in await cur.fetchall():
                local = into / name
                have = local.stat().st_size if local.exists() else 0
                while have < size:
                    cur = await conn.execute("SELECT pg_read_binary_file(%s, %s, %s)",
                                             (f"{directory}/{name}", have,
                                              min(CHUNK_BYTES, size - have)))
                    row = await cur.fetchone()
                    chunk = bytes(row[0]) if row and row[0] else b""
                    if not chunk:
                        break
                    with local.open("ab") as f:
                        f.write(chunk)
                    have += len(chunk)

    async def _sync_business_log(self) -> None:
        have = self.business_log.stat().st_size
        async with httpx.AsyncClient(timeout=10, verify=PLAIN_HTTP) as client:
            r = await client.get(self.business_url, params={"offset": have})
            r.raise_for_status()
        if r.content:
            with self.business_log.open("ab") as f:
                f.write(r.content)


START_FAILED_STATUS = 409
"""The control endpoint's answer to a start or restart after which the server is not up:
``{"error", "reason", "said"}`` of ``StartFailed``."""


class RemoteInstanceControl:
    """manage_instance's process control, over the database pod's control endpoint, with its
    bearer token, which only the harness's pods hold."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"}

    def _ask(self, method: str, path: str, **params: str) -> dict[str, Any]:
        r = httpx.request(method, f"{self.url}{path}", params=params, timeout=120,
                          headers=self.headers)
        if r.status_code == START_FAILED_STATUS:
            # the server did not come up: StartFailed, as a local start raises it
            failed = r.json()
            raise StartFailed(str(failed["reason"]), str(failed.get("said", "")))
        r.raise_for_status()
        body: dict[str, Any] = r.json()
        return body

    def status(self) -> dict[str, object]:
        return self._ask("GET", f"/{InstanceAction.status}")

    def start(self) -> None:
        self._ask("POST", f"/{InstanceAction.start}")

    def stop(self, mode: ShutdownMode) -> None:
        self._ask("POST", f"/{InstanceAction.stop}", mode=mode)

    def restart(self, mode: ShutdownMode) -> None:
        self._ask("POST", f"/{InstanceAction.restart}", mode=mode)
