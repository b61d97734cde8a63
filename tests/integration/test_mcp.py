"""MCP: the SDK's own client lists and calls a live run's tools and files the report, over
stdio and streamable HTTP, through ``dbabench tools serve`` in front of a real gate."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from dbabench.errors import EXIT_INTERRUPTED
from dbabench.agents.external import ListenAgent
from dbabench.env.postgres import PostgresInstance
from dbabench.env.processes import free_port, stop_pid
from dbabench.model.task import AgentTask
from dbabench.model.tool import ToolName
from dbabench.tools.gate import Budget, ToolGate
from dbabench.tools.server import Connection, serve
from dbabench.records.run import RunFiles

from shared_instance import tool_context

pytestmark = pytest.mark.integration

TOKEN = "mcp-test-token-7d1e"
TASK = AgentTask(incident="INC-MCP", symptom="checkouts time out", tools=list(ToolName),
                 max_steps=3, timeout_seconds=300)
SERVE = [sys.executable, "-m", "dbabench.cli.main", "tools", "serve"]


def new_gate(postgres: PostgresInstance, tmp_path: Path) -> ToolGate:
    return ToolGate(tool_context(postgres, tmp_path), RunFiles(tmp_path),
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
    assert set(tools) == {*ToolName, "submit_report"}
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
async def http_bridge(run_dir: Path, **popen: Any,
                      ) -> AsyncIterator[tuple[str, subprocess.Popen[bytes]]]:
    """``tools serve --transport http`` as a process; the wait is async, since the run's tool
    server it asks for the task lives on this test's event loop."""
    port = free_port()
    proc = subprocess.Popen([*SERVE, "--run", str(run_dir), "--transport", "http",
                             "--port", str(port)], **popen)
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
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        stop_pid(proc.pid)
        proc.wait()


async def test_streamable_http(postgres: PostgresInstance, tmp_path: Path) -> None:
    async with live_run(postgres, tmp_path) as gate:
        async with http_bridge(tmp_path) as (url, _):
            async with httpx.AsyncClient() as plain:
                response = await plain.post(url, json={})
                assert response.status_code == 401
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx2.AsyncClient(headers=headers) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    await work_through(client, gate)


async def test_ctrl_c_stops_the_bridge_and_says_the_run_goes_on(postgres: PostgresInstance,
                                                               tmp_path: Path) -> None:
    async with live_run(postgres, tmp_path) as gate:
        async with http_bridge(tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE) as (_, proc):
            proc.send_signal(signal.SIGINT)
            _, err = await asyncio.to_thread(proc.communicate, timeout=30)
        assert proc.returncode == EXIT_INTERRUPTED
        said = " ".join(err.decode().split())
        assert "stopped serving MCP; the run goes on" in said and "no verdict" not in said
        assert gate.report is None  # the run itself was not touched


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


def call_error(result: object) -> str:
    assert getattr(result, "is_error"), result
    return str(getattr(result, "structured_content")["error"])


async def test_a_call_after_the_run_ended_says_so_and_where_its_verdict_is(
        postgres: PostgresInstance, tmp_path: Path) -> None:
    """stdio: the client owns the bridge's life, so it stays, and tells the agent why nothing
    works any more instead of "the tool server is unreachable"."""
    async with AsyncExitStack() as run:
        await run.enter_async_context(live_run(postgres, tmp_path))
        params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], "--run", str(tmp_path)])
        async with Client(params) as client:
            assert not (await client.call_tool("execute_sql", {"sql": "SELECT 1"})).is_error
            await run.aclose()  # the run ends: its tool server stops
            for _ in range(2):  # noticed by the call that failed, then known
                error = call_error(await client.call_tool("execute_sql", {"sql": "SELECT 1"}))
                assert "the run has ended" in error and "unreachable" not in error
                assert f"its verdict is written to {tmp_path / 'evaluation.json'}" in error
            with pytest.raises(MCPError, match="the run has ended"):
                await client.read_resource("dbabench://budget")


async def test_over_http_the_bridge_stops_when_its_run_ends(postgres: PostgresInstance,
                                                            tmp_path: Path) -> None:
    async with AsyncExitStack() as run:
        await run.enter_async_context(live_run(postgres, tmp_path))
        async with http_bridge(tmp_path, stderr=subprocess.PIPE) as (url, proc):
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx2.AsyncClient(headers=headers) as http:
                # a client still connected does not keep it up
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    assert not (await client.call_tool("execute_sql",
                                                       {"sql": "SELECT 1"})).is_error
                    await run.aclose()
                    _, stderr = await asyncio.to_thread(proc.communicate, timeout=30)
            assert proc.returncode == 0
            said = " ".join(stderr.decode().split())
            assert "the run has ended" in said
            assert f"its verdict is written to {tmp_path / 'evaluation.json'}" in said


def test_serving_a_run_that_has_ended_is_a_clear_error(tmp_path: Path) -> None:
    Connection(url=f"http://127.0.0.1:{free_port()}", token=TOKEN).write(tmp_path)
    (tmp_path / "evaluation.json").write_text("{}")
    done = subprocess.run([*SERVE, "--run", str(tmp_path)], capture_output=True, text=True,
                          timeout=60)
    said = " ".join(done.stderr.split())
    assert done.returncode == 2 and "the run has ended" in said, said
    assert str(tmp_path / "evaluation.json") in said and "Traceback" not in said
