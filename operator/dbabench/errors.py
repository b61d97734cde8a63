"""The errors dbabench raises on purpose, in three branches, and what each means for a run.

- ``BadInput``: what the user handed over cannot be run (a manifest, an option, a spec).
  Exit 2; on Kubernetes the resource ends Failed with the reason, and is never retried.
- ``InfraError``: the harness or the machine failed, not the agent: the run is no result and
  is left out. Exit 3; phase InfraError. ``retryable`` says whether trying again can help (a
  server that did not start, an API server's bad minute) or not (a scenario's fault program
  that fails, a server of the wrong major version); the operator retries the first kind with
  backoff, up to a limit.
- ``AgentError``: the agent's own failure, which is scored like any other end of its turn.

A lost PostgreSQL connection and a machine out of space or descriptors are infrastructure
errors too, whoever raised them. Anything else that escapes a run is a harness bug: an
infrastructure error, not retried, its type named so that it can be reported.
``disposition`` is the one place that decides, for ``dbabench run``, a campaign's cells, a
battery's checks and the operator alike.
"""

from __future__ import annotations

import errno
import sys
from dataclasses import dataclass
from typing import ClassVar, Literal

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INFRA, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
"""0: Safe Pass (or the command did what was asked); 1: scored, not Safe Pass; 2: bad input;
3: infrastructure error, no verdict; 130: interrupted."""

_MACHINE_EXHAUSTED = {errno.ENOSPC, errno.EDQUOT, errno.ENOMEM, errno.EMFILE, errno.ENFILE}

RETRY_LIMIT = 3
"""Attempts after the first that the operator makes of a retryable infrastructure error."""
RETRY_BACKOFF_SECONDS = (10.0, 30.0, 90.0)


class HarnessError(Exception):
    """The base of every error dbabench raises on purpose."""

    kind: ClassVar[Literal["bad-input", "infra", "agent"]]


class BadInput(HarnessError):
    kind = "bad-input"


class InfraError(HarnessError):
    kind = "infra"
    retryable: ClassVar[bool] = True


class PermanentInfraError(InfraError):
    """An infrastructure error that trying again cannot mend."""

    retryable = False


class AgentError(HarnessError):
    kind = "agent"


@dataclass(frozen=True)
class Disposition:
    """What a failure means: its branch, the exit code, whether to retry, and why in words."""

    kind: Literal["bad-input", "infra", "agent", "bug"]
    exit_code: int
    retryable: bool
    reason: str

    @property
    def unscored(self) -> Literal["infra_error", "harness_error"]:
        """A campaign cell's status when its run ended this way (exit 3 either way)."""
        return "infra_error" if self.kind == "infra" else "harness_error"

    def retry_delay(self, retries: int) -> float | None:
        """Seconds to wait before trying again after ``retries`` retries; None: do not."""
        if not self.retryable or retries >= RETRY_LIMIT:
            return None
        return RETRY_BACKOFF_SECONDS[min(retries, len(RETRY_BACKOFF_SECONDS) - 1)]


def disposition(error: BaseException) -> Disposition:
    """How the CLI and the operator end a command or a resource that raised ``error``."""
    text = str(error).strip() or type(error).__name__
    if isinstance(error, BadInput):
        return Disposition("bad-input", EXIT_USAGE, False, text)
    if isinstance(error, InfraError):
        return Disposition("infra", EXIT_INFRA, error.retryable, text)
    if isinstance(error, AgentError):
        return Disposition("agent", EXIT_FAILED, False, text)
    psycopg = sys.modules.get("psycopg")  # an error of psycopg's means it was imported
    if psycopg is not None and isinstance(error, psycopg.OperationalError):
        return Disposition("infra", EXIT_INFRA, True, f"PostgreSQL: {text}")
    if isinstance(error, OSError) and error.errno in _MACHINE_EXHAUSTED:
        return Disposition("infra", EXIT_INFRA, False, f"the machine: {text}")
    return Disposition("bug", EXIT_INFRA, False,
                       f"harness bug, please report it: {type(error).__name__}: {text}")

