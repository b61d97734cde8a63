"""The agent plug-in point: one async method."""

from __future__ import annotations

from typing import Protocol

from pydantic import Field

from dbabench.model.base import Model
from dbabench.tools.gate import ToolGate


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


class Agent(Protocol):
    name: str

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        """Work the task through ``gate``; file the report with ``gate.submit_report``."""
