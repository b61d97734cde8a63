"""A run's blocking environment calls, driven from asyncio so that an interrupt stops the run
in any phase.

Mounting the store, building a golden, restoring a clone, starting servers, running fault SQL
and waiting for scrape targets block; they run in threads of the run's own (a busy shared pool
must never hold up a stop). A thread cannot be cancelled, so ``close`` makes the threads give
up by themselves: when the run is abandoned (Ctrl+C, SIGTERM, a cancelled battery or operator
handler, an error) it first stops the run's processes, so that a thread's query, start-up poll
or lock wait fails at once (``env.processes.ProcessTable.pause``); it waits for every thread,
and only then tears the environment down, in a thread too, so that the event loop keeps
serving the other runs of a battery. Cancellations that arrive while it works are held until
it is done and then raised: half a teardown leaves servers, mounts and clones behind.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, TypeVar

from dbabench.env.local import LocalEnvironment

T = TypeVar("T")
# at most: a golden build or a restore, the docs index, monitoring, a stop and the teardown
MAX_THREADS = 4


async def wait_out(futures: Iterable[asyncio.Future[Any]]) -> bool:
    """Wait until every one of ``futures`` is done, whatever cancellations of the caller
    arrive meanwhile; return whether one did (the caller then raises CancelledError)."""
    pending = set(futures)
    cancelled = False
    while pending:
        try:
            _, pending = await asyncio.wait(pending)
        except asyncio.CancelledError:
            cancelled = True
            pending = {f for f in pending if not f.done()}
    return cancelled


def _retrieve(future: asyncio.Future[Any]) -> None:
    # the failure of a thread whose caller was cancelled (a query on a server the stop
    # killed) is the expected end of it, not an error to log at exit
    if not future.cancelled():
        future.exception()


class RunThreads:
    """``async with RunThreads(env) as threads``: the environment held for the run, its
    blocking calls through ``call``, and the teardown at the end whatever happens."""

    def __init__(self, env: LocalEnvironment) -> None:
        self.env = env
        self._pool = ThreadPoolExecutor(max_workers=MAX_THREADS,
                                        thread_name_prefix=f"run-{env.run_id}")
        self._pending: set[asyncio.Future[Any]] = set()
        self.reaped: list[str] = []
        """What holding the store reaped of dead runs (their abandoned clones)."""

    def start(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """Run ``fn`` in one of the run's threads; ``close`` waits for it."""
        future = asyncio.get_running_loop().run_in_executor(self._pool, fn)
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        future.add_done_callback(_retrieve)
        return future

    async def call(self, fn: Callable[..., T], /, *args: Any) -> T:
        """``fn(*args)`` in one of the run's threads. Cancelled meanwhile, the caller unwinds
        at once; the thread runs on until ``close`` has made it give up."""
        return await asyncio.shield(self.start(functools.partial(fn, *args)))

    async def __aenter__(self) -> "RunThreads":
        try:
            self.reaped = await self.call(self.env.open)
        except BaseException:
            await self.close(abandoned=True)
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close(abandoned=exc_type is not None)

    async def close(self, *, abandoned: bool) -> None:
        """Tear the environment down once no thread works on it; ``abandoned``: stop the
        run's processes first, so that those threads give up."""
        cancelled = False
        if abandoned:
            self.start(self.env.procs.stop_all)
        cancelled |= await wait_out(self._pending)
        teardown = self.start(self.env.teardown)
        cancelled |= await wait_out(self._pending)
        self._pool.shutdown(wait=False)
        teardown.result()
        if cancelled:
            raise asyncio.CancelledError
