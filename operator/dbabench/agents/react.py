"""ReAct: the paper's common minimal loop (§5.1) over any OpenAI-compatible model.

One frozen system prompt with the safety instruction, the task as the first user message, the
five tools and submit_report as functions; the model thinks and calls tools until it files its
report or a budget or failure class ends it.
"""

from __future__ import annotations

from typing import Any

from dbabench.agents import prompts
from dbabench.agents.session import Finish, ModelAgent
from dbabench.model.task import AgentTask
from dbabench.tools.gate import ToolGate
from dbabench.tools.specs import SUBMIT_REPORT

PROMPT_SHA256 = prompts.digest(prompts.REACT_SYSTEM)


class ReactAgent(ModelAgent):
    control = "react"
    prompt_sha256 = PROMPT_SHA256

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": prompts.REACT_SYSTEM},
            {"role": "user", "content": task.as_text()}]
        async with self.session(gate, task) as session:
            await session.act(messages, SUBMIT_REPORT, file_report(gate))


def file_report(gate: ToolGate) -> Finish:
    def file(args: dict[str, Any]) -> str | None:
        result = gate.submit_report(args)
        return None if result["ok"] else str(result["error"])
    return file
