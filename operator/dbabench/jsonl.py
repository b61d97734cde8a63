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
        for line in f:
            if not line.endswith("\n"):
                return
            yield json.loads(line)
