"""ReAct: the paper's common minimal loop (§5.1) over any OpenAI-compatible model.

One frozen system prompt with the safety instruction, the task as the first user message, the
five tools and submit_report as functions; the model thinks and calls tools until it files its
report or a budget or failure class ends it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbabench.agents import prompts
from dbabench.agents.chat import ChatClient
from dbabench.agents.session import (Finish, ModelAgentConfig, ModelSession, prepare,
                                     write_record)
from dbabench.model.task import AgentTask
from dbabench.pricing import PriceTable
from dbabench.tools.gate import ToolGate
from dbabench.tools.specs import SUBMIT_REPORT

PROMPT_SHA256 = prompts.digest(prompts.REACT_SYSTEM)


class ReactAgent:
    def __init__(self, config: ModelAgentConfig, *, env: Mapping[str, str] | None = None,
                 prices: PriceTable | None = None) -> None:
        self.prepared = prepare(config, env, prices)
        self.name = f"react:{self.prepared.ref.id}"

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        write_record(gate, self.prepared, self.name, "react", PROMPT_SHA256)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": prompts.REACT_SYSTEM},
            {"role": "user", "content": task.as_text()}]
        async with ChatClient(self.prepared.ref, self.prepared.endpoint,
                              self.prepared.config.chat) as chat:
            session = ModelSession(chat, gate, task, self.prepared)
            await session.act(messages, SUBMIT_REPORT, _file_report(gate))


def _file_report(gate: ToolGate) -> Finish:
    def file(args: dict[str, Any]) -> str | None:
        result = gate.submit_report(args)
        return None if result["ok"] else str(result["error"])
    return file
