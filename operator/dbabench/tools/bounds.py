"""Output bounds: every observation an agent gets is capped, and says when it was cut."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Bounds:
    max_rows: int = 200
    max_cell_chars: int = 500
    max_lines: int = 500
    max_series: int = 50
    max_points: int = 120
    max_chars: int = 30_000


def clip_text(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"... [{len(text) - limit} more characters]", True


def clip_cell(value: Any, limit: int) -> tuple[Any, bool]:
    if isinstance(value, str):
        return clip_text(value, limit)
    return value, False


def clip_list(items: list[Any], limit: int) -> tuple[list[Any], bool]:
    return (items[:limit], True) if len(items) > limit else (items, False)


def thin_points(points: list[Any], limit: int) -> tuple[list[Any], bool]:
    """Keep ``limit`` evenly spaced points, always including the last one."""
    n = len(points)
    if n <= limit:
        return points, False
    step = n / limit
    kept = [points[int(i * step)] for i in range(limit - 1)] + [points[-1]]
    return kept, True
