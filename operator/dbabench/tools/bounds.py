"""Output bounds: every observation an agent gets is capped, and says when it was cut."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Bounds:
    max_rows: int = 200
    max_cell_chars: int = 500
    max_series: int = 50
    max_points: int = 120
    max_chars: int = 30_000


def clip_text(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"... [{len(text) - limit} more characters]", True


def clip_cell(value: Any, limit: int) -> tuple[Any, bool]:
    """Strings are cut; an array or JSON value longer than ``limit`` as text becomes its
    cut text, since half an array would read as a complete one."""
    if isinstance(value, str):
        return clip_text(value, limit)
    if isinstance(value, (list, dict)):
        text = json.dumps(value, default=str)
        if len(text) > limit:
            return clip_text(text, limit)
    return value, False


def clip_list(items: list[Any], limit: int) -> tuple[list[Any], bool]:
    return (items[:limit], True) if len(items) > limit else (items, False)


def thin_points(points: list[Any], limit: int) -> tuple[list[Any], bool]:
    """Keep ``limit`` evenly spaced points, the first and the newest among them."""
    n = len(points)
    if n <= limit:
        return points, False
    if limit == 1:
        return [points[-1]], True
    return [points[round(i * (n - 1) / (limit - 1))] for i in range(limit)], True


def _longest_list(node: Any) -> list[Any] | None:
    best: list[Any] | None = None
    stack = [node]
    while stack:
        item = stack.pop()
        children = item if isinstance(item, list) else (
            list(item.values()) if isinstance(item, dict) else [])
        if isinstance(item, list) and len(item) > 1 and (best is None or len(item) > len(best)):
            best = item
        stack.extend(c for c in children if isinstance(c, (list, dict)))
    return best


def fit(observation: Any, max_chars: int) -> tuple[Any, bool]:
    """Halve the longest list in ``observation`` until its JSON fits in ``max_chars``.

    Keeps the structure valid (an agent parses it), unlike cutting the text.
    """
    if len(json.dumps(observation, default=str)) <= max_chars:
        return observation, False
    observation = json.loads(json.dumps(observation, default=str))
    while len(json.dumps(observation)) > max_chars:
        longest = _longest_list(observation)
        if longest is None:
            text, _ = clip_text(json.dumps(observation), max_chars)
            return {"clipped": text}, True
        del longest[(len(longest) + 1) // 2:]
    return observation, True
