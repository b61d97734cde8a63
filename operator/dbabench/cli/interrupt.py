"""Ctrl+C and SIGTERM for the commands that drive runs: they cancel the command's task, so
that every run unwinds through its own teardown (runner.threads), and then end the command
as an interrupt (exit 130)."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM)


async def _cancelled_by_signals(main: Coroutine[Any, Any, T]) -> T:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()

    def interrupt() -> None:
        if task.cancelling():
            print("still stopping: waiting for the run to stop what it started",
                  file=sys.stderr, flush=True)
        task.cancel()

    # Installed whatever the dispositions we inherited: a background job of a script starts
    # with SIGINT ignored, and a SIGINT sent to it on purpose must still stop the run.
    for sig in SIGNALS:
        loop.add_signal_handler(sig, interrupt)
    try:
        return await main
    finally:
        for sig in SIGNALS:
            loop.remove_signal_handler(sig)


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``; SIGINT or SIGTERM cancel it, and once it has unwound raise
    KeyboardInterrupt (the command's exit 130)."""
    try:
        return asyncio.run(_cancelled_by_signals(main))
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None
