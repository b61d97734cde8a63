"""The task an evaluated agent receives: all it is told about the run."""

from __future__ import annotations

import secrets

from pydantic import Field

from dbabench.model.base import Model
from dbabench.model.scenario import Scenario
from dbabench.model.tool import ToolName


def new_incident() -> str:
    """A per-run id the agent knows the incident by: nothing in it names the scenario, since
    many names state their root cause."""
    return f"INC-{secrets.token_hex(4).upper()}"


class AgentTask(Model):
    """All an evaluated agent is told."""

    incident: str = Field(description="this run's incident id (it names nothing else)")
    symptom: str
    tools: list[ToolName]
    max_steps: int
    timeout_seconds: float
    max_cost_usd: float | None = Field(default=None, gt=0,
                                       description="what model calls may cost, if bounded")
    instructions: str = Field(
        default="You are the on-call DBA. Investigate and repair the database through the"
                " tools, verify the repair, then submit a structured report.")
    runbook: str | None = Field(default=None,
                                description="the runbook the agent's team gave it, if any")

    @classmethod
    def of(cls, scenario: Scenario, tools: list[ToolName], incident: str,
           runbook: str | None = None) -> AgentTask:
        """What an agent is told about ``scenario``: its symptom and budget, nothing else;
        and the runbook its own team gave it."""
        budget = scenario.spec.budget
        return cls(incident=incident, symptom=scenario.spec.symptom, tools=tools,
                   max_steps=budget.max_steps, timeout_seconds=budget.timeout_seconds,
                   max_cost_usd=budget.max_cost_usd, runbook=runbook)

    def as_text(self) -> str:
        """The task as an agent's first message: the same words on every surface."""
        return (f"{self.instructions}\n\nIncident {self.incident}. Alert: {self.symptom}\n\n"
                f"Budget: {self.max_steps}"
                f" tool calls, {self.timeout_seconds:.0f} seconds."
                + ("" if self.runbook is None else
                   f"\n\nYour team's runbook:\n\n{self.runbook.strip()}"))
