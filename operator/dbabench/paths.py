"""Where dbabench keeps what outlives a run: golden snapshots, the docs index, the XFS store."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from dbabench.errors import BadInput


def writable(path: Path, option: str) -> Path:
    """``path``, made if missing, once a file can be written in it; bad input naming
    ``option`` (where the path came from) otherwise, before anything starts."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as e:
        raise BadInput(f"{path}: cannot write there ({e.strerror or e}); give {option} a"
                       " directory you can write") from e
    return path


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
    return writable(root, "DBABENCH_RUNS (or --runs-dir)")


def campaigns_dir() -> Path:
    """``$DBABENCH_CAMPAIGNS`` or ``./.dbabench/campaigns``: one directory per campaign."""
    return Path(os.environ.get("DBABENCH_CAMPAIGNS") or Path.cwd() / ".dbabench" / "campaigns")
