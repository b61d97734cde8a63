"""The battery's throttle: a cap, spacing between starts, and the CPU's pressure as a gate."""

from __future__ import annotations

import asyncio
import time

import pytest

from dbabench.runner.throttle import Throttle, cpu_pressure


async def timeline(throttle: Throttle, n: int, hold: float) -> list[tuple[float, float]]:
    t0 = time.monotonic()

    async def one() -> tuple[float, float]:
        async with throttle.slot():
            start = time.monotonic() - t0
            await asyncio.sleep(hold)
            return start, time.monotonic() - t0

    return list(await asyncio.gather(*(one() for _ in range(n))))


def test_pressure_is_a_percentage_where_the_kernel_reports_it() -> None:
    pressure = cpu_pressure()
    assert pressure is None or 0.0 <= pressure <= 100.0


async def test_cap_and_spacing() -> None:
    throttle = Throttle(2, max_pressure=100.0, spacing=0.1)
    spans = await timeline(throttle, 3, hold=0.3)
    starts = sorted(s for s, _ in spans)
    assert starts[1] - starts[0] >= 0.1  # spaced
    assert starts[2] >= min(e for _, e in spans) - 0.01  # the third waited for a free slot
    # the second start waited out the spacing; none waited for the CPU
    assert 0.05 <= throttle.waited["spacing"] <= 0.3 and throttle.waited["pressure"] == 0


async def test_a_busy_cpu_admits_one_run_at_a_time() -> None:
    if cpu_pressure() is None:
        pytest.skip("this kernel does not report CPU pressure (/proc/pressure/cpu)")
    # a pressure limit below zero is never met: only the first run of a batch may start
    throttle = Throttle(3, max_pressure=-1.0, spacing=0.0)
    spans = sorted(await timeline(throttle, 3, hold=0.1))
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert start >= end - 0.01
    assert throttle.waited["pressure"] >= 1.0  # each later start polled at least once


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Throttle(0)
