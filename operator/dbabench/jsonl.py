"""JSON-lines files that another process may be appending to while we read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def complete_records(path: Path) -> Iterator[dict[str, Any]]:
    """Each complete line of ``path`` as a dict; a last line still being written is skipped."""
    if not path.exists():
        return
    with path.open(errors="replace") as f:
        for number, line in enumerate(f, 1):
            if not line.endswith("\n"):
                return
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                # a complete line that is not JSON: name it, so that the writer can be found
                raise ValueError(f"{path}: line {number} is not a JSON record ({e.msg}):"
                                 f" {line[:200]!r}") from e
