"""The workload process: profile clients and scheduled jobs, each a thread with its own
psycopg session.

Clients reconnect after any connection loss (an agent may terminate sessions or restart the
server), so the workload outlives whatever the agent does; every request is logged with its
outcome, which is how lock waits become visible as business timeouts.

Threads, not asyncio tasks: a synchronous session waits for the server in psycopg's C code with
the GIL released, where an asynchronous one registers and unregisters its socket with the event
loop at every round trip. Measured (benchmarks/README, "threads instead of asyncio tasks"): 0.9
against 1.5 ms of CPU a request in-process, 16% less CPU a run for the workload process in a
battery, where its imports and psycopg's own work are most of what is left.
"""

from __future__ import annotations

import asyncio
import functools
import random
import select
import signal
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from pydantic import Field

from dbabench.model.base import Model
from dbabench.model.workload import WORKER_SERVICE, JobStep, OltpCheckoutWorkload, WorkloadSpec
from dbabench.workload.businesslog import BusinessEvent, BusinessLogWriter, Outcome, utcnow

RECONNECT_DELAY = 0.5
FIRST_CONNECTION_SECONDS = 10.0
"""How long the application's clients wait for the sessions of jobs that connect first."""
STOP_SECONDS = 5.0
"""How long a stop waits for the clients' threads, after cancelling what their sessions run."""


class WorkloadConfig(Model):
    """Everything the workload process needs; written by the runner as JSON."""

    dsn: str = Field(description="libpq conninfo of the application role, without app name")
    replica_dsn: str | None = Field(default=None,
                                    description="the same on the hot standby, where there is one")
    spec: WorkloadSpec
    jobs: list[JobStep] = Field(default_factory=list)
    business_log: Path
    metrics_port: int
    metrics_host: str = Field(default="127.0.0.1",
                              description="0.0.0.0 in a pod, where Prometheus scrapes from afar")
    seed: int = 0


class Metrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter("checkout_requests", "Requests by outcome",
                                ["service", "operation", "outcome"], registry=registry)
        self.latency = Histogram(
            "checkout_request_duration_seconds", "Request latency", ["service", "operation"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30, 60, 300),
            registry=registry)


def classify_error(e: BaseException, *, session_alive: bool = False) -> tuple[Outcome, str | None]:
    """The outcome of a failed request. psycopg files deadlocks, serialization failures and
    other server errors under OperationalError too: while the session survives them they are
    errors of the request, not of the connection."""
    if isinstance(e, psycopg.errors.QueryCanceled):
        text = str(e)
        if "statement timeout" in text:
            return "timeout", e.sqlstate
        return "canceled", e.sqlstate
    if isinstance(e, psycopg.errors.LockNotAvailable):
        return "lock_timeout", e.sqlstate
    if isinstance(e, (psycopg.errors.AdminShutdown, psycopg.errors.CrashShutdown)):
        return "terminated", e.sqlstate
    if isinstance(e, psycopg.OperationalError) and not session_alive:
        return "connection_error", getattr(e, "sqlstate", None)
    return "error", getattr(e, "sqlstate", None)


class Client:
    """One session of one service, used by one thread: connects lazily, logs every request,
    survives failures. ``halt`` is the workload's stop: a request that ends after it is not
    logged, since the stop, not the database, cut it short."""

    def __init__(self, *, dsn: str, service: str, log: BusinessLogWriter, metrics: Metrics,
                 halt: threading.Event | None = None, options: str = "",
                 lifetime: float | None = None, application_name: str | None = None,
                 validates: bool = True) -> None:
        self.dsn = dsn
        self.service = service
        self.application_name = application_name or service
        self.log = log
        self.metrics = metrics
        self.halt = halt or threading.Event()
        self.options = options
        self.lifetime = lifetime
        self.validates = validates
        """As a pool that validates what it hands out: a connection the server ended while it
        sat idle is replaced before the request, not failed on (PgBouncer, HikariCP). Off:
        a pool that hands it out as it is, and the request fails on it."""
        self.conn: psycopg.Connection | None = None
        self.connected_at = 0.0
        self.tried = threading.Event()
        """Set once the session's first connection has been tried, whatever came of it."""

    def request(self, operation: str, body: Callable[[psycopg.Connection], None], *,
                transaction: bool = True) -> Outcome | None:
        """``body`` in a transaction of its own, or, for a request of one statement, as that
        statement alone: BEGIN and COMMIT would be two more round trips for a read. None: the
        workload stopped during the request."""
        started = time.perf_counter()
        outcome: Outcome = "ok"
        sqlstate = message = None
        try:
            conn = self._connection()
            if transaction:
                with conn.transaction():
                    body(conn)
            else:
                body(conn)
        except (psycopg.Error, OSError, NotStored) as e:
            alive = self.conn is not None and not self.conn.closed and not self.conn.broken
            outcome, sqlstate = classify_error(e, session_alive=alive)
            message = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
            if self.conn is not None and (self.conn.closed or outcome in ("terminated",
                                                                         "connection_error")):
                self._drop()
            elif self.conn is not None and (self.conn.info.transaction_status
                                            != psycopg.pq.TransactionStatus.IDLE):
                # A statement timeout that fires as a statement ends can reach the client
                # with the COMMIT after it: the transaction is left aborted, and every later
                # request would fail inside it. A pool resets such a session; so do we.
                self._reset()
        if self.halt.is_set():
            return None
        latency = time.perf_counter() - started
        self.metrics.requests.labels(self.service, operation, outcome).inc()
        self.metrics.latency.labels(self.service, operation).observe(latency)
        self.log.write(BusinessEvent(ts=utcnow(), service=self.service,
                                     request_id=uuid.uuid4().hex[:16], operation=operation,
                                     latency_ms=round(latency * 1000, 2), outcome=outcome,
                                     sqlstate=sqlstate, message=message))
        if outcome == "connection_error":
            self.halt.wait(RECONNECT_DELAY)
        return outcome

    def interrupt(self) -> None:
        """From another thread: cancel what the session is running, so that its thread sees
        the stop now rather than after a lock wait or a long statement. An idle session's
        thread waits on ``halt`` and needs none (a cancel request is a connection and a
        process on the server)."""
        conn = self.conn
        if (conn is not None and not conn.closed
                and conn.info.transaction_status == psycopg.pq.TransactionStatus.ACTIVE):
            try:
                conn.cancel_safe(timeout=2.0)
            except psycopg.Error:
                pass

    def _connection(self) -> psycopg.Connection:
        if (self.conn is not None and self.lifetime is not None
                and time.monotonic() - self.connected_at > self.lifetime):
            self._drop()
        if self.validates and self.conn is not None and self._ended_while_idle():
            self._drop()
        if self.conn is None or self.conn.closed:
            try:
                # autocommit: a transaction is what ``request`` opens, never one left open
                self.conn = psycopg.Connection.connect(
                    self.dsn, application_name=self.application_name, options=self.options,
                    autocommit=True)
            finally:
                self.tried.set()
            self.connected_at = time.monotonic()
        return self.conn

    def _ended_while_idle(self) -> bool:
        """Whether the server has said something to a connection that sent it nothing: its
        FATAL (terminated, an idle timeout) or the end of the socket. At worst a reconnect."""
        conn = self.conn
        if conn is None or conn.closed:
            return False
        try:
            readable, _, _ = select.select([conn.fileno()], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def _reset(self) -> None:
        assert self.conn is not None
        try:
            self.conn.rollback()
        except psycopg.Error:
            self._drop()

    def _drop(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except psycopg.Error:
                pass
            self.conn = None

    def close(self) -> None:
        self._drop()


BROWSE_ORDERS = ("SELECT id, sku, qty, status FROM orders WHERE merchant_id = %s"
                 " ORDER BY id DESC LIMIT 20")
PLACE_ORDER = "INSERT INTO orders(merchant_id, sku, qty) VALUES (%s, %s, %s)"
COUNT_ORDER = ("UPDATE merchants SET order_count = order_count + 1, updated_at = now()"
               " WHERE id = %s")
CHECKOUT_STATEMENTS = (BROWSE_ORDERS, PLACE_ORDER, COUNT_ORDER)
"""Every statement the checkout profile's own clients run (a scan of what an agent sees knows
them as the application's: evaluate.footprints)."""


class NotStored(Exception):
    """A write the server took without error that changed no row: the application checks
    its writes' row counts, and fails the request (its transaction rolls back)."""


def stored(cursor: psycopg.Cursor[Any], what: str) -> None:
    if cursor.rowcount != 1:
        raise NotStored(f"{what} changed {cursor.rowcount} rows, expected 1")


def checkout_worker(client: Client, spec: OltpCheckoutWorkload, rng: random.Random) -> None:
    """Place an order (insert + bump the merchant's counter row), or browse recent orders."""
    while not client.halt.is_set():
        started = time.monotonic()
        if rng.random() < spec.browse_share:
            merchant = rng.randint(1, spec.merchants)

            def browse(conn: psycopg.Connection) -> None:
                conn.execute(BROWSE_ORDERS, (merchant,))

            client.request("browse_orders", browse, transaction=False)
        else:
            hot = spec.hot_merchant is not None and rng.random() < spec.hot_share
            merchant = spec.hot_merchant if hot else rng.randint(1, spec.merchants)
            sku, qty = rng.randint(1, spec.skus), rng.randint(1, 5)

            def place(conn: psycopg.Connection) -> None:
                stored(conn.execute(PLACE_ORDER, (merchant, sku, qty)), "INSERT INTO orders")
                stored(conn.execute(COUNT_ORDER, (merchant,)), "UPDATE merchants")

            client.request("place_order", place)
        client.halt.wait(_pause(spec, rng, started))


def _pause(spec: OltpCheckoutWorkload, rng: random.Random, started: float) -> float:
    """Seconds from now to a client's next request, which started its last at ``started``.
    An interval is drawn around its mean (half to one and a half of it), so clients that
    started together do not stay in step and meet on the hot rows all at once."""
    if spec.think_time_ms is not None:
        return spec.think_time_ms / 1000
    assert spec.request_interval_ms is not None  # the model sets exactly one
    interval = spec.request_interval_ms / 1000 * rng.uniform(0.5, 1.5)
    return max(0.0, started + interval - time.monotonic())


def scheduled_job(client: Client, job: JobStep) -> None:
    """Run the job's statements in one transaction; whatever happens, run it again later."""
    def run(conn: psycopg.Connection) -> None:
        for statement in job.statements:
            conn.execute(statement)  # type: ignore[arg-type]
        client.halt.wait(job.idle_in_transaction_seconds)

    if job.staggered:
        client.halt.wait(random.uniform(0, job.interval_seconds))
    while not client.halt.is_set():
        client.request(job.operation, run)
        client.halt.wait(job.interval_seconds)


def _session(client: Client, loop: Callable[[], None]) -> None:
    try:
        loop()
    finally:
        client.close()


async def run_workload(config: WorkloadConfig, stop: asyncio.Event) -> None:
    registry = CollectorRegistry()
    metrics = Metrics(registry)
    server, thread = start_http_server(config.metrics_port, addr=config.metrics_host,
                                       registry=registry)
    log = BusinessLogWriter(config.business_log)
    halt = threading.Event()
    sessions: list[tuple[Client, Callable[[], None], str]] = []
    early: list[Client] = []
    spec = config.spec
    timeout = f"-c statement_timeout={spec.statement_timeout_ms}"
    lifetime = spec.connection_lifetime_seconds
    for i in range(spec.clients):
        client = Client(dsn=config.dsn, service=WORKER_SERVICE, log=log, metrics=metrics,
                        halt=halt, options=timeout, lifetime=lifetime)
        rng = random.Random(config.seed * 1000 + i)
        sessions.append((client, functools.partial(checkout_worker, client, spec, rng),
                         f"{WORKER_SERVICE}-{i}"))
    for job in config.jobs:
        dsn = config.dsn if job.server == "primary" else config.replica_dsn
        if dsn is None:
            raise ValueError(f"job {job.name} runs on the replica, but there is none")
        if job.role is not None:
            dsn = make_conninfo(dsn, user=job.role)
        for i in range(job.sessions):
            # no option at 0: the job inherits what the server, database and role set
            options = (f"-c statement_timeout={job.statement_timeout_ms}"
                       if job.statement_timeout_ms else "")
            client = Client(dsn=dsn, service=job.name, log=log, metrics=metrics, halt=halt,
                            validates=job.pool_validates,
                            options=options, lifetime=lifetime,
                            application_name=job.application_name)
            sessions.append((client, functools.partial(scheduled_job, client, job),
                             f"job-{job.name}-{i}"))
            if job.connect_first:
                early.append(client)
    threads = {client: threading.Thread(target=_session, args=(client, loop), name=name,
                                        daemon=True)
               for client, loop, name in sessions}
    try:
        for client in early:
            threads[client].start()
        await asyncio.to_thread(_await_first_connections, early, stop.is_set)
        for client, t in threads.items():
            if client not in early:
                t.start()
        await stop.wait()
    finally:
        halt.set()
        await asyncio.to_thread(_stop_sessions, list(threads), list(threads.values()))
        log.close()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _await_first_connections(clients: list[Client], stopped: Callable[[], bool]) -> None:
    """Until every one of ``clients`` has tried its first connection (bounded: a server that
    does not answer must not hold the application back for ever)."""
    deadline = time.monotonic() + FIRST_CONNECTION_SECONDS
    for client in clients:
        while not client.tried.wait(0.05):
            if stopped() or time.monotonic() > deadline:
                return


def _stop_sessions(clients: list[Client], threads: list[threading.Thread]) -> None:
    for client in clients:
        client.interrupt()
    deadline = time.monotonic() + STOP_SECONDS
    for t in threads:
        if t.is_alive():
            t.join(timeout=max(0.0, deadline - time.monotonic()))


def main(config_path: Path) -> None:
    config = WorkloadConfig.model_validate_json(config_path.read_text())

    async def _main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await run_workload(config, stop)

    asyncio.run(_main())
