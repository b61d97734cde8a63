"""What was checked, and seen, before the agent was let in."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from dbabench.model.base import Model
from dbabench.model.evaluation import CheckResult


class ProtectedTable(Model):
    """A protected table as admission saw it: which relation it was, and how many rows."""

    name: str
    oid: int
    rows: int = Field(ge=0)


class Admission(Model):
    admitted: bool
    checked_at: datetime
    waited_seconds: float
    predicates: list[CheckResult] = Field(default_factory=list)
    reason: str = ""
    protected: list[ProtectedTable] = Field(
        default_factory=list,
        description="the protected tables when the agent was let in; the outcome checks them")
    steering: list[str] = Field(
        default_factory=list,
        description="objects that could steer the verifier (catalog look-alikes, event"
                    " triggers, rules) present when the agent was let in: the fault's own")
    logging: dict[str, str] = Field(
        default_factory=dict,
        description="what the server was set to log, per setting and layer, when the agent"
                    " was let in (evaluate.log_settings); log checks hold it to that")
