"""What dead runs and campaigns left behind, found and stopped: ``dbabench reap``.

A run killed without a chance to clean up (SIGKILL, power loss) leaves its processes running
(PostgreSQL, the workload, Prometheus, the exporters) and its clone in the snapshot store. A
later run reaps what it finds in its own runs directory and the store; this does it for every
runs and campaign directory at once, or only says what it would do.
"""

from __future__ import annotations

from pathlib import Path

from dbabench.env.processes import orphans, reap_orphans
from dbabench.runner.run import open_store


def leftovers(roots: list[Path]) -> list[str]:
    """What ``reap`` would stop and remove."""
    found = [f"{record.name} pid {record.pid} of {pid_file.parent}"
             for root in roots for pid_file, records in orphans(root, nested=True)
             for record in records]
    found += [f"abandoned clone {clone.name}" for clone in open_store().abandoned_clones()]
    return found


def reap(roots: list[Path]) -> list[str]:
    """Stop every leftover process of a dead run under ``roots``, then the abandoned clones."""
    done = [note for root in roots for note in reap_orphans(root, nested=True)]
    store = open_store()
    done += store.acquire()  # which reaps the clones of dead runs, mounting the store if need be
    store.release()
    return done
