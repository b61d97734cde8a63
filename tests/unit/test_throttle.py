"""The battery's throttle: a cap, spacing between starts, and the CPU's pressure as a gate."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from dbabench.runner.throttle import POLL_SECONDS, PressureGauge, Throttle, cpu_stall_seconds

needs_pressure = pytest.mark.skipif(
    cpu_stall_seconds() is None,
    reason="this kernel does not report CPU pressure (/proc/pressure/cpu)")


async def timeline(throttle: Throttle, n: int, hold: float) -> list[tuple[float, float]]:
    t0 = time.monotonic()

    async def one() -> tuple[float, float]:
        async with throttle.slot():
            start = time.monotonic() - t0
            await asyncio.sleep(hold)
            return start, time.monotonic() - t0

    return list(await asyncio.gather(*(one() for _ in range(n))))


@pytest.fixture
def busy_cpus() -> Iterator[None]:
    """Two spinning processes per core: some task always waits for a CPU."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(2 * (os.cpu_count() or 1))]
    try:
        yield
    finally:
        for p in spinners:
            p.kill()
            p.wait()


@needs_pressure
def test_the_gauge_knows_nothing_until_a_window_has_passed() -> None:
    gauge = PressureGauge(window=0.3)
    assert gauge.percent() is None
    time.sleep(0.4)
    pressure = gauge.percent()
    assert pressure is not None and 0.0 <= pressure <= 100.0


@needs_pressure
def test_the_gauge_sees_a_saturated_cpu_within_its_window(busy_cpus: None) -> None:
    gauge = PressureGauge(window=0.5)
    gauge.percent()
    time.sleep(0.6)
    pressure = gauge.percent()
    # twice as many spinners as cores: half the time at least one waits, whatever else runs
    assert pressure is not None and pressure > 50.0
    # readings older than two windows are forgotten: the figure is the last window's
    time.sleep(1.2)
    gauge.percent()
    time.sleep(0.6)
    assert (gauge.percent() or 0.0) > 50.0


async def test_cap_and_spacing() -> None:
    throttle = Throttle(2, max_pressure=100.0, spacing=0.1)
    spans = await timeline(throttle, 3, hold=0.3)
    starts = sorted(s for s, _ in spans)
    assert starts[1] - starts[0] >= 0.1  # spaced
    assert starts[2] >= min(e for _, e in spans) - 0.01  # the third waited for a free slot
    # the second start waited out the spacing; none waited for the CPU
    assert 0.05 <= throttle.waited["spacing"] <= 0.3 and throttle.waited["pressure"] == 0


@needs_pressure
async def test_a_busy_cpu_admits_one_run_at_a_time() -> None:
    # a pressure limit below zero is never met: only the first run of a batch may start
    throttle = Throttle(3, max_pressure=-1.0, spacing=0.0)
    spans = sorted(await timeline(throttle, 3, hold=0.1))
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert start >= end - 0.01
    assert throttle.waited["pressure"] >= 2 * POLL_SECONDS  # each later start polled at least once


@needs_pressure
async def test_a_saturated_cpu_holds_the_next_start_back(busy_cpus: None) -> None:
    throttle = Throttle(2, spacing=0.1, window=0.3)
    spans = sorted(await timeline(throttle, 2, hold=1.0))
    # the second run waited for the first to end: the CPU never had room while it ran
    assert spans[1][0] >= spans[0][1] - 0.01
    assert throttle.waited["pressure"] >= 0.5


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Throttle(0)


async def test_a_free_slot_goes_to_the_first_in_order_then_to_the_earliest_come() -> None:
    throttle = Throttle(1, max_pressure=100.0, spacing=0.0)
    started: list[str] = []
    release = asyncio.Event()

    async def one(name: str, order: int, hold: asyncio.Event | None = None) -> None:
        async with throttle.slot(order):
            started.append(name)
            if hold is not None:
                await hold.wait()

    first = asyncio.ensure_future(one("holder", 9, release))
    await asyncio.sleep(0.01)
    # they queue in this order while the only slot is held
    waiting = [asyncio.ensure_future(one(name, order))
               for name, order in [("late", 5), ("b", 1), ("gone", 0), ("c", 1), ("a", 0)]]
    await asyncio.sleep(0.01)
    waiting[2].cancel()  # a start that stops waiting takes no slot
    await asyncio.sleep(0.01)
    release.set()
    await first
    await asyncio.gather(*waiting, return_exceptions=True)
    assert started == ["holder", "a", "b", "c", "late"]
    # every slot came back: the next start takes one at once
    await asyncio.wait_for(one("after", 0), timeout=1)


async def test_a_slot_handed_over_as_its_wait_is_cancelled_is_passed_on() -> None:
    throttle = Throttle(1, max_pressure=100.0, spacing=0.0)
    async with throttle.slot():
        loser = asyncio.ensure_future(throttle.slot().__aenter__())
        winner = asyncio.ensure_future(throttle.slot().__aenter__())
        await asyncio.sleep(0.01)
    # the slot was handed to the loser; it is cancelled before it could run
    loser.cancel()
    await asyncio.wait_for(winner, timeout=1)
    assert loser.cancelled()
