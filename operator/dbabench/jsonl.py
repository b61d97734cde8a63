"""JSON-lines files that another process may be appending to while we read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HEAD_BYTES = 64
"""How much of a file's start a tail remembers, to tell a file that grew from one rewritten."""


class JsonlTail:
    """A JSON-lines file read as it grows: each read parses only the lines added since the
    last, so polling a busy run's log (admission's predicates, a verdict's several checks)
    costs what was appended, not the whole file again. A file that was truncated or rewritten
    (its first bytes differ, or it is shorter than what was read) is read again from the start.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        self._offset = 0
        self._lines = 0
        self._head = b""

    def read(self) -> list[dict[str, Any]]:
        """Every complete record so far; a last line still being written waits for the next
        read. The list is replaced, not emptied, when the file is read again from the start."""
        if not self.path.exists():
            return self.records
        with self.path.open("rb") as f:
            head = f.read(HEAD_BYTES)
            if head[:len(self._head)] != self._head or f.seek(0, 2) < self._offset:
                self.records, self._offset, self._lines = [], 0, 0
            self._head = head
            f.seek(self._offset)
            for raw in f:
                if not raw.endswith(b"\n"):
                    break
                line = raw.decode(errors="replace")
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    # a complete line that is not JSON: name it, so that the writer can be found
                    raise ValueError(f"{self.path}: line {self._lines + 1} is not a JSON record"
                                     f" ({e.msg}): {line[:200]!r}") from e
                self.records.append(record)
                self._lines += 1
                self._offset += len(raw)
        return self.records


def complete_records(path: Path) -> Iterator[dict[str, Any]]:
    """Each complete line of ``path`` as a dict; a last line still being written is skipped."""
    yield from JsonlTail(path).read()
