"""How many runs may share this machine: a cap, and the CPU's own word on whether it has room.

A fault under workload may idle (a held lock) or keep a core busy for the whole run (a bad
plan re-run by a job). A fixed number of runs at once is either too cautious for the first or
too many for the second, and an oversubscribed machine turns healthy requests into timeouts
that fail honest references. So a new run starts only while Linux's pressure-stall figure for
the CPU (the share of time in which a runnable task waited for a core) is low.

The figure is measured over the last few seconds from the kernel's running total, not read from
its 10 s average: that average shows a new run's load only gradually (a run's start is its
busiest moment), so it had to be paired with 5 s between starts, a floor of 5 s a run under
the whole battery.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path

PRESSURE = Path("/proc/pressure/cpu")
MAX_PRESSURE = 25.0
"""Percent of the last ``PRESSURE_WINDOW_SECONDS`` in which some task waited for a CPU, above
which no run starts."""
PRESSURE_WINDOW_SECONDS = 2.0
SPACING_SECONDS = 2.0
"""Between two starts: long enough for the last one's start-up (its server, monitoring and
workload coming up) to show in the window."""
POLL_SECONDS = 0.5


def cpu_stall_seconds() -> float | None:
    """``some total`` of /proc/pressure/cpu: seconds in which some task waited for a CPU since
    boot, or None where the kernel does not report it."""
    try:
        first = PRESSURE.read_text().split("\n", 1)[0]
    except OSError:
        return None
    fields = dict(f.split("=", 1) for f in first.split()[1:])
    return int(fields["total"]) / 1e6


class PressureGauge:
    """The CPU's pressure over the last ``window`` seconds, from readings of its running total."""

    def __init__(self, window: float = PRESSURE_WINDOW_SECONDS) -> None:
        self.window = window
        self._readings: deque[tuple[float, float]] = deque()
        self.supported = cpu_stall_seconds() is not None
        """False where the kernel does not report pressure: the gate is open there."""

    def percent(self) -> float | None:
        """Take a reading; the percentage over the last ``window`` seconds, or None until a
        reading between one and two windows old exists (call again a little later)."""
        stalled = cpu_stall_seconds()
        if stalled is None:
            return None
        now = time.monotonic()
        self._readings.append((now, stalled))
        while self._readings and self._readings[0][0] < now - 2 * self.window:
            self._readings.popleft()
        base = None
        for reading in self._readings:
            if reading[0] > now - self.window:
                break
            base = reading
        if base is None:
            return None
        return 100.0 * (stalled - base[1]) / (now - base[0])


class Throttle:
    """At most ``limit`` runs at once; beyond the first, one starts only while the CPU has room.
    A free slot goes to the waiting start that comes first in ``order``, then to the earliest
    come: the battery's runs queue as their goldens are ready, and their order is what spreads
    one scenario's runs over time."""

    def __init__(self, limit: int, *, max_pressure: float = MAX_PRESSURE,
                 spacing: float = SPACING_SECONDS,
                 window: float = PRESSURE_WINDOW_SECONDS) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self.max_pressure = max_pressure
        self.spacing = spacing
        gauge = PressureGauge(window)
        # 100 % is never exceeded: no start needs to wait for a reading
        self._gauge = gauge if gauge.supported and max_pressure < 100 else None
        self._limit = limit
        self._held = 0
        """Slots taken; below the limit only while nobody waits."""
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()
        self._starting = asyncio.Lock()
        self._active = 0
        self._last_start = float("-inf")
        self.waited = {"spacing": 0.0, "pressure": 0.0}
        """Seconds the next start spent waiting, by reason: what bounds the runs at once."""

    @contextlib.asynccontextmanager
    async def slot(self, order: int = 0) -> AsyncIterator[None]:
        await self._take(order)
        try:
            async with self._starting:
                await self._wait_for_room()
                self._active += 1
                self._last_start = time.monotonic()
            try:
                yield
            finally:
                self._active -= 1
        finally:
            self._give()

    async def _take(self, order: int) -> None:
        if self._held < self._limit:
            self._held += 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (order, next(self._arrivals), granted))
        try:
            await granted  # the slot is handed over counted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self._give()  # handed over as the wait was cancelled: pass it on
            raise

    def _give(self) -> None:
        while self._waiting:
            _, _, granted = heapq.heappop(self._waiting)
            if not granted.done():  # a cancelled wait is dropped here
                granted.set_result(None)
                return
        self._held -= 1

    async def _wait_for_room(self) -> None:
        # the first run always starts, or a machine busy with other work would never prove;
        # readings are taken while the spacing runs out, so the window is known at its end
        while self._active:
            pressure = self._gauge.percent() if self._gauge else 0.0
            wait = self._last_start + self.spacing - time.monotonic()
            reason = "spacing" if wait > 0 else "pressure"
            if wait <= 0:
                if pressure is not None and pressure <= self.max_pressure:
                    return
                wait = POLL_SECONDS
            step = min(wait, POLL_SECONDS)
            await asyncio.sleep(step)
            self.waited[reason] += step
