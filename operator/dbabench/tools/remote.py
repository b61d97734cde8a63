"""The gate's interface over the tool server, for in-harness agents running in another
process (the scripted agents in an agent pod): they see exactly what an external agent sees."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

from dbabench.tools.client import ToolClient, ToolServerError


class RemoteGate:
    def __init__(self, url: str, token: str) -> None:
        self.client = ToolClient(url, token)

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

    def submit_report(self, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.client.report(payload)
        except ToolServerError as e:
            if e.status != 422:
                raise
            return {"ok": False, "error": e.message}
