"""The agent plug-in point: one async method, and the one way an agent gives up."""

from __future__ import annotations

from typing import Protocol

from dbabench.errors import AgentError
from dbabench.model.task import AgentTask
from dbabench.model.trace import FailureClass
from dbabench.tools.gate import ToolGate


class Agent(Protocol):
    name: str

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        """Work the task through ``gate``; file the report with ``gate.submit_report``."""


class AgentFailure(AgentError):
    """The agent stopped before filing a report, for a reason of one class.

    The runner records it in the trace; ``api-error`` makes the run an infrastructure error
    (a gateway's bad minute is not a benchmark result), every other class is scored.
    """

    def __init__(self, failure: FailureClass, message: str) -> None:
        super().__init__(f"{failure}: {message}")
        self.failure: FailureClass = failure
        self.message = message
