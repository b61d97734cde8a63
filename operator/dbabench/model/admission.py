"""What was checked, and seen, before the agent was let in."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from dbabench.model.base import Model
from dbabench.model.evaluation import CheckResult


class ProtectedTable(Model):
    """A protected table as admission saw it: which relation it was, how many rows, and what
    a sample of its rows held in the columns the scenario's own SQL never writes."""

    name: str
    oid: int
    rows: int = Field(ge=0)
    key: list[str] = Field(
        default_factory=list,
        description="the primary key's columns; none: the table's content was not sampled")
    columns: list[str] = Field(
        default_factory=list,
        description="the columns compared: those no statement of the workload, its jobs, the"
                    " fault, the dataset or the scenario's fixes writes (bodies included)")
    may_lose_rows: bool = Field(
        default=False,
        description="whether that SQL deletes from the table (or cascades, or drops"
                    " partitions): then a sampled row may be gone at the end")
    sample: list[list[str]] = Field(
        default_factory=list,
        description="sampled rows: the key's values as text, then the digest of the compared"
                    " columns")
    unsampled: str = Field(default="", description="why the content was not sampled")


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
