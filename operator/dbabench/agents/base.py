"""The agent plug-in point: one async method."""

from __future__ import annotations

from typing import Protocol

from dbabench.model.task import AgentTask
from dbabench.tools.gate import ToolGate


class Agent(Protocol):
    name: str

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        """Work the task through ``gate``; file the report with ``gate.submit_report``."""
