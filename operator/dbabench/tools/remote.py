"""The gate's interface over the tool server, for in-harness agents running in another
process (the scripted and model agents in an agent pod): they see exactly what an external
agent sees. A model agent there talks to its model through the tool server's meter, which
records each call, usage and cost itself."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

from dbabench.model.base import Model
from dbabench.model.trace import FailureClass, Usage
from dbabench.tools.client import ToolClient, ToolServerError
from dbabench.tools.gate import BudgetStatus


class _Budget:
    def __init__(self, client: ToolClient) -> None:
        self.client = client

    def status(self) -> BudgetStatus:
        return BudgetStatus.model_validate(self.client.budget())


class RemoteGate:
    def __init__(self, url: str, token: str) -> None:
        self.client = ToolClient(url, token)
        self.budget = _Budget(self.client)

    async def __aenter__(self) -> RemoteGate:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.client.close()

    async def task(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.client.task)

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(self.client.call, tool, **args)

    def think(self, text: str) -> None:
        self.client.think(text)

    def keep(self, name: str, record: Model) -> None:
        """Nothing: a run in pods has no directory beside its trace; the AgentRun's spec is
        the agent's record."""

    def model_call(self, model: str, usage: Usage | None, text: str | None = None, *,
                   metered: bool, rejected: str | None = None) -> None:
        """Nothing: the tool server's meter has recorded the call (a reply the agent then
        discarded is recorded as used)."""

    def fail(self, failure: FailureClass, message: str) -> None:
        self.client.fail(failure, message)

    def submit_report(self, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.client.report(payload)
        except ToolServerError as e:
            if e.status != 422:
                raise
            return {"ok": False, "error": e.message}
