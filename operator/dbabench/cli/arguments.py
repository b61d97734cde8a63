"""Argument types the commands share: a bad value is argparse's usage error (exit 2), naming the
option and what it takes, before anything starts."""

from __future__ import annotations

import argparse
import math


def positive_int(text: str) -> int:
    """A count of runs: a whole number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of runs, at least 1: {text!r}")
    return value


def usd(text: str) -> float:
    """A cost cap in US dollars: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a cost in USD above 0, such as 0.25: {text!r}")
    return value
