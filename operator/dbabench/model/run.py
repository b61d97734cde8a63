"""``run.json``: what a run was, written first, before anything can fail."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from dbabench.model.base import Model

RUN_RECORD_VERSION = 1


class RunRecord(Model):
    """Which scenario and agent a run directory holds, and the incident id the agent knew it
    by (the clone, its data directory and Prometheus' run label carry that id, never the
    scenario's name)."""

    version: Literal[1] = RUN_RECORD_VERSION
    scenario: str
    agent: str
    incident: str = Field(description="the opaque id in the task, the clone and the labels")
    started_at: datetime
