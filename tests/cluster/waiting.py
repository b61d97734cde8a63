"""Polling for the cluster tests: controllers converge, they do not answer."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(probe: Callable[[], T | None], what: str, timeout: float = 30,
               interval: float = 0.3) -> T:
    """``probe()`` once it returns something truthy; AssertionError naming ``what`` if it
    does not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)
