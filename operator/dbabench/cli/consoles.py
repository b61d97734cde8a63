"""The command line's consoles. Off a terminal (a pipe, a file, a CI log) rich would wrap at
80 columns, cutting tables, paths and names where grep and a copy cannot find them whole."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

OFF_TERMINAL_WIDTH = 200


def pair() -> tuple[Console, Console]:
    """stdout's and stderr's."""
    return (Console(width=None if sys.stdout.isatty() else OFF_TERMINAL_WIDTH),
            Console(stderr=True, width=None if sys.stderr.isatty() else OFF_TERMINAL_WIDTH))


def print_whole(console: Console, table: Table) -> None:
    """``table`` no narrower than its columns' least widths: a terminal narrower than that
    wraps its lines, as it does any long line, instead of rich cropping what they hold."""
    # measured unbounded: rich caps a measurement at the width it is given
    least = Measurement.get(console, console.options.update_width(sys.maxsize), table).minimum
    if least <= console.width:
        console.print(table)
    else:
        Console(file=console.file, width=least).print(table)
