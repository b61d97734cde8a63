"""A synchronous client of the tool server (``dbabench.tools.server``) for external agents.

    client = ToolClient(url, token)
    task = client.task()
    out = client.call("execute_sql", sql="SELECT 1")   # {"ok", "observation" | "error", ...}
    client.report({"root_cause_type": "...", ...})

A tool result with ``ok`` False is an observation to reason about, returned like any other.
Everything else that goes wrong (no server, bad token, spent budget, an invalid report) raises
``ToolServerError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

import httpx

# Generous: a call may wait behind another, and a restart or a slow statement takes a while.
DEFAULT_TIMEOUT_SECONDS = 120.0
HEALTH_TIMEOUT_SECONDS = 5.0


class ToolServerError(Exception):
    """The server refused a request or could not be reached (``status`` None)."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}" if status is not None else message)
        self.status = status
        self.message = message


class ToolClient:
    def __init__(self, url: str, token: str, *,
                 timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self._http = httpx.Client(base_url=url, timeout=timeout,
                                  headers={"Authorization": f"Bearer {token}"})

    def __enter__(self) -> ToolClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def task(self) -> dict[str, Any]:
        """What the agent is told: scenario, symptom, tools, budget, instructions."""
        return self._request("GET", "/v1/task")

    def tools(self) -> list[dict[str, Any]]:
        """Each tool's name, description and JSON schema of its arguments (``parameters``)."""
        tools: list[dict[str, Any]] = self._request("GET", "/v1/tools")["tools"]
        return tools

    def report_schema(self) -> dict[str, Any]:
        """The report's name, description, JSON schema (``parameters``) and endpoint."""
        report: dict[str, Any] = self._request("GET", "/v1/tools")["report"]
        return report

    def budget(self) -> dict[str, Any]:
        """Tool calls and seconds left, and why calls stopped, if they did."""
        return self._request("GET", "/v1/budget")

    # ``tool`` is positional-only: manage_instance has an argument called ``name``.
    def call(self, tool: str, /, **args: Any) -> dict[str, Any]:
        return self._request("POST", f"/v1/tools/{tool}", args)

    def report(self, report: Mapping[str, Any]) -> dict[str, Any]:
        return self._request("POST", "/v1/report", dict(report))

    def think(self, text: str) -> None:
        self._request("POST", "/v1/events/thought", {"text": text})

    def fail(self, failure: str, message: str) -> None:
        """Why the agent stops early (a model agent's failure class); taken from the
        harness's own agents only."""
        self._request("POST", "/v1/events/failure", {"failure": failure, "message": message})

    def model_call(self, model: str, usage: Mapping[str, int], text: str | None = None) -> None:
        """Record one model call's token usage (input_tokens, cached_input_tokens,
        output_tokens): the efficiency score is computed from these."""
        self._request("POST", "/v1/events/model",
                      {"model": model, "usage": dict(usage), "text": text})

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            response = self._http.request(method, path, json=body)
        except httpx.HTTPError as e:
            raise ToolServerError(None, f"the tool server is unreachable: {e}") from e
        return _payload(response)


class AsyncToolClient:
    """The same client for asyncio callers (the MCP bridge): ``call``, ``report``, ``task``,
    ``tools`` with the same results and errors."""

    def __init__(self, url: str, token: str, *,
                 timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self._http = httpx.AsyncClient(base_url=url, timeout=timeout,
                                       headers={"Authorization": f"Bearer {token}"})

    async def aclose(self) -> None:
        await self._http.aclose()

    async def task(self) -> dict[str, Any]:
        return await self._request("GET", "/v1/task")

    async def tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = (await self._request("GET", "/v1/tools"))["tools"]
        return tools

    async def report_schema(self) -> dict[str, Any]:
        report: dict[str, Any] = (await self._request("GET", "/v1/tools"))["report"]
        return report

    async def budget(self) -> dict[str, Any]:
        return await self._request("GET", "/v1/budget")

    async def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        return await self._request("POST", f"/v1/tools/{tool}", dict(args))

    async def report(self, report: Mapping[str, Any]) -> dict[str, Any]:
        return await self._request("POST", "/v1/report", dict(report))

    async def reachable(self) -> bool:
        """False once nothing takes a connection at the server's address, which a run's tool
        server stops doing only when the agent's part of the run is over; a slow or refusing
        answer is still an answer."""
        try:
            await self._http.get("/healthz", timeout=HEALTH_TIMEOUT_SECONDS)
        except httpx.ConnectError:
            return False
        except httpx.HTTPError:
            pass
        return True

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            response = await self._http.request(method, path, json=body)
        except httpx.HTTPError as e:
            raise ToolServerError(None, f"the tool server is unreachable: {e}") from e
        return _payload(response)


def _payload(response: httpx.Response) -> Any:
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if response.status_code != 200:
        message = payload.get("error") if isinstance(payload, dict) else None
        raise ToolServerError(response.status_code,
                              str(message or response.text or response.reason_phrase))
    if payload is None:
        raise ToolServerError(response.status_code, "the tool server's answer is not JSON")
    return payload
