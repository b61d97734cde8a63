"""The structured report an agent files when it stops (the paper's r_s^a)."""

from __future__ import annotations

from pydantic import Field

from dbabench.model.base import Model


class Evidence(Model):
    tool: str = Field(description="the tool whose observation shows it")
    observation: str = Field(description="what was seen, quoted or summarised")
    trace_seq: int | None = Field(default=None, description="seq of the trace event, if known")


class Action(Model):
    description: str
    tool: str | None = None
    statement: str | None = None


class Report(Model):
    """Scoring reads the structured fields only; ``narrative`` is kept for analysis."""

    # No example label: the schema is what a model is shown, and an example is an answer.
    root_cause_type: str = Field(min_length=1,
                                 description="one short snake_case label for the root cause")
    affected_objects: list[str] = Field(default_factory=list,
                                        description="tables, indexes, roles, settings, sessions")
    causal_factors: list[str] = Field(default_factory=list,
                                      description="links of the causal chain besides the root")
    evidence: list[Evidence] = Field(default_factory=list)
    actions: list[Action] = Field(default_factory=list)
    verification: str = Field(default="", description="how the fix was checked to hold")
    narrative: str = ""
