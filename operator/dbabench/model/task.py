"""The task an evaluated agent receives: all it is told about the run."""

from __future__ import annotations

from pydantic import Field

from dbabench.model.base import Model


class AgentTask(Model):
    """All an evaluated agent is told."""

    scenario: str
    symptom: str
    tools: list[str]
    max_steps: int
    timeout_seconds: float
    instructions: str = Field(
        default="You are the on-call DBA. Investigate and repair the database through the"
                " tools, verify the repair, then submit a structured report.")

    def as_text(self) -> str:
        """The task as an agent's first message: the same words on every surface."""
        return (f"{self.instructions}\n\nAlert: {self.symptom}\n\nBudget: {self.max_steps}"
                f" tool calls, {self.timeout_seconds:.0f} seconds.")
