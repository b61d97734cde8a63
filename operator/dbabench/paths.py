"""Where dbabench keeps what outlives a run: golden snapshots, the docs index, the XFS store."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$DBABENCH_CACHE``, else ``/var/cache/dbabench`` for root, else ``~/.cache/dbabench``.

    Root's home is closed to the ``postgres`` user that must read the snapshots kept here.
    """
    default = Path("/var/cache/dbabench") if os.geteuid() == 0 else Path.home() / ".cache" / "dbabench"
    root = Path(os.environ.get("DBABENCH_CACHE") or default)
    root.mkdir(parents=True, exist_ok=True)
    return root


def runs_dir() -> Path:
    """``$DBABENCH_RUNS`` or ``./.dbabench/runs``: one directory per run."""
    root = Path(os.environ.get("DBABENCH_RUNS") or Path.cwd() / ".dbabench" / "runs")
    root.mkdir(parents=True, exist_ok=True)
    return root


def campaigns_dir() -> Path:
    """``$DBABENCH_CAMPAIGNS`` or ``./.dbabench/campaigns``: one directory per campaign."""
    return Path(os.environ.get("DBABENCH_CAMPAIGNS") or Path.cwd() / ".dbabench" / "campaigns")
