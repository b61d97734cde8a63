"""MCP: the SDK's own client lists and calls a live run's tools and files the report, over
stdio and streamable HTTP, through ``dbabench tools serve`` in front of a real gate."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from dbabench.agents.external import ListenAgent
from dbabench.env.postgres import PostgresInstance
from dbabench.env.processes import free_port, stop_pid
from dbabench.model.task import AgentTask
from dbabench.tools.gate import TOOL_NAMES, Budget, ToolGate, TraceWriter
from dbabench.tools.server import Connection, serve

from shared_instance import tool_context

pytestmark = pytest.mark.integration

TOKEN = "mcp-test-token-7d1e"
TASK = AgentTask(incident="INC-MCP", symptom="checkouts time out", tools=list(TOOL_NAMES),
                 max_steps=3, timeout_seconds=300)
SERVE = [sys.executable, "-m", "dbabench.cli.main", "tools", "serve"]


def new_gate(postgres: PostgresInstance, tmp_path: Path) -> ToolGate:
    return ToolGate(tool_context(postgres, tmp_path), TraceWriter(tmp_path / "trace.jsonl"),
                    Budget(max_steps=TASK.max_steps, timeout_seconds=TASK.timeout_seconds))


@asynccontextmanager
async def live_run(postgres: PostgresInstance, tmp_path: Path) -> AsyncIterator[ToolGate]:
    """What a run with a tool server leaves for ``tools serve``: a gate behind the HTTP tool
    server, and its connection in the run directory."""
    gate = new_gate(postgres, tmp_path)
    try:
        async with serve(gate, TASK, TOKEN) as url:
            Connection(url=url, token=TOKEN).write(tmp_path)
            yield gate
    finally:
        await gate.close()


async def work_through(client: Client, gate: ToolGate) -> None:
    assert "checkouts time out" in (client.instructions or "")
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {*TOOL_NAMES, "submit_report"}
    assert tools["execute_sql"].input_schema["required"] == ["sql"]
    assert "root_cause_type" in tools["submit_report"].input_schema["properties"]

    out = await client.call_tool("execute_sql", {"sql": "SELECT 41 + 1 AS answer"})
    assert not out.is_error and out.structured_content is not None
    assert out.structured_content["observation"]["results"][0]["rows"] == [[42]]
    bad = await client.call_tool("execute_sql", {"max_rows": 3})
    assert bad.is_error and "sql" in bad.structured_content["error"]

    # the gate's step budget holds for MCP clients too: 2 calls made, 1 left
    budget = await client.read_resource("dbabench://budget")
    assert json.loads(budget.contents[0].text)["steps_left"] == 1
    await client.call_tool("manage_instance", {"action": "status"})
    spent = await client.call_tool("manage_instance", {"action": "status"})
    assert spent.is_error and "budget exhausted" in spent.structured_content["error"]

    # the report is still taken once the budget is spent; after it, no tool runs
    refused = await client.call_tool("submit_report", {"affected_objects": [{"kind": "table", "name": "orders"}]})
    assert refused.is_error and "root_cause_type" in refused.structured_content["error"]
    filed = await client.call_tool("submit_report", {"root_cause_type": "lock_contention",
                                                     "affected_objects": [{"kind": "table", "name": "orders"}]})
    assert not filed.is_error and gate.report is not None
    after = await client.call_tool("execute_sql", {"sql": "SELECT 1"})
    assert after.is_error and "the report is filed" in after.structured_content["error"]
    assert [e.kind for e in gate.trace.events] == ["tool", "tool", "tool", "budget", "report",
                                                   "report", "tool"]


async def test_stdio_as_an_external_agent_command_starts_it(postgres: PostgresInstance,
                                                             tmp_path: Path) -> None:
    """No --run: the address and token come from the environment --agent external gives."""
    async with live_run(postgres, tmp_path) as gate:
        connection = Connection.read(tmp_path)
        env = {**os.environ, "DBABENCH_TOOLS_URL": connection.url,
               "DBABENCH_TOOLS_TOKEN": connection.token}
        async with Client(StdioServerParameters(command=SERVE[0], args=SERVE[1:],
                                                env=env)) as client:
            await work_through(client, gate)


@asynccontextmanager
async def http_bridge(run_dir: Path) -> AsyncIterator[str]:
    """``tools serve --transport http`` as a process; the wait is async, since the run's tool
    server it asks for the task lives on this test's event loop."""
    port = free_port()
    proc = subprocess.Popen([*SERVE, "--run", str(run_dir), "--transport", "http",
                             "--port", str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, "tools serve exited"
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                assert time.monotonic() < deadline, "tools serve did not listen"
                await asyncio.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_pid(proc.pid)
        proc.wait()


async def test_streamable_http(postgres: PostgresInstance, tmp_path: Path) -> None:
    async with live_run(postgres, tmp_path) as gate:
        async with http_bridge(tmp_path) as url:
            async with httpx.AsyncClient() as plain:
                response = await plain.post(url, json={})
                assert response.status_code == 401
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx2.AsyncClient(headers=headers) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    await work_through(client, gate)


def test_a_directory_without_a_live_run_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run([*SERVE, "--run", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2 and "is not a live run" in " ".join(done.stderr.split())


async def test_a_listening_run_ends_when_an_mcp_client_files_the_report(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    gate = new_gate(postgres, tmp_path)
    listening = asyncio.create_task(ListenAgent().run(TASK, gate))
    try:
        while not (tmp_path / "tools.json").exists():
            await asyncio.sleep(0.05)
        assert (tmp_path / "tools.json").stat().st_mode & 0o077 == 0
        params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], "--run", str(tmp_path)])
        async with Client(params) as client:
            assert not listening.done()
            await client.call_tool("submit_report", {"root_cause_type": "lock_contention"})
        await asyncio.wait_for(listening, 5)
        assert gate.report is not None
    finally:
        listening.cancel()
        await gate.close()
