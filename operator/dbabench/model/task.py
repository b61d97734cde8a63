"""The task an evaluated agent receives: all it is told about the run."""

from __future__ import annotations

from pydantic import Field

from dbabench.model.base import Model
from dbabench.model.scenario import Scenario


class AgentTask(Model):
    """All an evaluated agent is told."""

    scenario: str
    symptom: str
    tools: list[str]
    max_steps: int
    timeout_seconds: float
    max_cost_usd: float | None = Field(default=None, gt=0,
                                       description="what model calls may cost, if bounded")
    instructions: str = Field(
        default="You are the on-call DBA. Investigate and repair the database through the"
                " tools, verify the repair, then submit a structured report.")

    @classmethod
    def of(cls, scenario: Scenario, tools: list[str]) -> AgentTask:
        """What an agent is told about ``scenario``: its symptom and budget, nothing else."""
        budget = scenario.spec.budget
        return cls(scenario=scenario.name, symptom=scenario.spec.symptom, tools=tools,
                   max_steps=budget.max_steps, timeout_seconds=budget.timeout_seconds,
                   max_cost_usd=budget.max_cost_usd)

    def as_text(self) -> str:
        """The task as an agent's first message: the same words on every surface."""
        return (f"{self.instructions}\n\nAlert: {self.symptom}\n\nBudget: {self.max_steps}"
                f" tool calls, {self.timeout_seconds:.0f} seconds.")
