"""What was checked, and seen, before the agent was let in."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from dbabench.model.base import Model
from dbabench.model.evaluation import CheckResult


class Admission(Model):
    admitted: bool
    checked_at: datetime
    waited_seconds: float
    predicates: list[CheckResult] = Field(default_factory=list)
    reason: str = ""
