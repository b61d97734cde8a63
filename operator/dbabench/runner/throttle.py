"""How many runs may share this machine: a cap, and the CPU's own word on whether it has room.

A fault under workload may idle (a held lock) or keep a core busy for the whole run (a bad
plan re-run by a job). A fixed number of runs at once is either too cautious for the first or
too many for the second, and an oversubscribed machine turns healthy requests into timeouts
that fail honest references. So a new run starts only while Linux's pressure-stall figure for
the CPU (the share of the last 10 s in which a runnable task waited for a core) is low.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

PRESSURE = Path("/proc/pressure/cpu")
MAX_PRESSURE = 25.0
"""Percent of the last 10 s in which some task waited for a CPU, above which no run starts."""
SPACING_SECONDS = 5.0
"""Between two starts: a run's own load shows in the 10 s pressure average only after a while."""
POLL_SECONDS = 1.0


def cpu_pressure() -> float | None:
    """``some avg10`` of /proc/pressure/cpu, or None where the kernel does not report it."""
    try:
        first = PRESSURE.read_text().split("\n", 1)[0]
    except OSError:
        return None
    fields = dict(f.split("=", 1) for f in first.split()[1:])
    return float(fields["avg10"])


class Throttle:
    """At most ``limit`` runs at once; beyond the first, one starts only while the CPU has room."""

    def __init__(self, limit: int, *, max_pressure: float = MAX_PRESSURE,
                 spacing: float = SPACING_SECONDS) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self.max_pressure = max_pressure
        self.spacing = spacing
        self._slots = asyncio.Semaphore(limit)
        self._starting = asyncio.Lock()
        self._active = 0
        self._last_start = float("-inf")
        self.waited = {"spacing": 0.0, "pressure": 0.0}
        """Seconds the next start spent waiting, by reason: what bounds the runs at once."""

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._slots:
            async with self._starting:
                await self._wait_for_room()
                self._active += 1
                self._last_start = time.monotonic()
            try:
                yield
            finally:
                self._active -= 1

    async def _wait_for_room(self) -> None:
        # the first run always starts, or a machine busy with other work would never prove
        while self._active:
            wait = self._last_start + self.spacing - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                self.waited["spacing"] += wait
                continue
            pressure = cpu_pressure()
            if pressure is None or pressure <= self.max_pressure:
                return
            await asyncio.sleep(POLL_SECONDS)
            self.waited["pressure"] += POLL_SECONDS
