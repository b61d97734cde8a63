"""What the commands print is never cut at the console's width: off a terminal rich would wrap
at 80 columns, and a narrow terminal would squeeze a scenario's name to "abandoned-slot…",
which no command takes back (issue 41)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from dbabench.scenario.loader import discover, scenarios_root

DBABENCH = str(Path(sys.executable).with_name("dbabench"))
NAMES = sorted(discover(scenarios_root()))


def on_a_terminal(argv: list[str], columns: int) -> str:
    """What ``argv`` prints on a pseudo-terminal ``columns`` wide."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower,
                            env={**os.environ, "NO_COLOR": "1"})
    os.close(follower)
    seen = b""
    try:
        while chunk := os.read(leader, 65536):
            seen += chunk
    except OSError:  # EIO: the command closed the terminal
        pass
    finally:
        os.close(leader)
    assert proc.wait(timeout=60) == 0, seen[-2000:]
    return re.sub(r"\x1b\[[0-9;]*m", "", seen.decode())  # NO_COLOR keeps bold and italics


def whole_names(listing: str) -> list[str]:
    return [name for name in NAMES if f"│ {name} " in listing]


def test_the_list_off_a_terminal_holds_every_name_whole() -> None:
    done = subprocess.run([DBABENCH, "scenarios", "list"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "COLUMNS": "60"})
    assert done.returncode == 0, done.stderr
    assert whole_names(done.stdout) == NAMES


@pytest.mark.parametrize("columns", [60, 80])
def test_the_list_on_a_narrow_terminal_holds_every_name_whole(columns: int) -> None:
    listing = on_a_terminal([DBABENCH, "scenarios", "list"], columns)
    assert whole_names(listing) == NAMES
    # and the columns after the names, not cropped at the terminal's edge
    assert "┃ difficulty ┃ symptom" in listing
