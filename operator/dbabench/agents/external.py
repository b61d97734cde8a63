"""External agents: any process that speaks the tool server's HTTP API (or MCP through
``dbabench tools serve``), started by the run (``external``) or by hand (``listen``).

The process gets three environment variables and nothing else about the run:
``DBABENCH_TOOLS_URL`` (the tool server, on loopback), ``DBABENCH_TOOLS_TOKEN`` (its bearer
token) and ``DBABENCH_TASK_FILE`` (the AgentTask as JSON). It must submit its report through
the server before it exits. It never gets database credentials.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from dbabench.model.task import AgentTask
from dbabench.tools.gate import ToolGate
from dbabench.tools.server import CONNECTION_FILE, Connection, serve

STOP_GRACE_SECONDS = 10.0
LISTEN_POLL_SECONDS = 0.5


@asynccontextmanager
async def serving(task: AgentTask, gate: ToolGate) -> AsyncIterator[dict[str, str]]:
    """The run's tool server, its connection and task files in the run directory; yields
    the three environment variables an agent is given."""
    run_dir = gate.trace.path.parent
    (run_dir / "task.json").write_text(task.model_dump_json(indent=1))
    token = secrets.token_urlsafe(24)
    # the agent's copy lies where no path names the scenario (the run directory's name does)
    with tempfile.TemporaryDirectory(prefix=f"dbabench-{task.incident}-") as private:
        task_file = Path(private) / "task.json"
        task_file.write_text(task.model_dump_json(indent=1))
        async with serve(gate, task, token) as url:
            Connection(url=url, token=token).write(run_dir)
            yield {"DBABENCH_TOOLS_URL": url, "DBABENCH_TOOLS_TOKEN": token,
                   "DBABENCH_TASK_FILE": str(task_file)}


class ExternalAgent:
    def __init__(self, argv: list[str]) -> None:
        if not argv:
            raise ValueError("an external agent needs a command: dbabench run SCENARIO"
                             " --agent external -- COMMAND [ARGS...]")
        self.argv = argv
        self.name = "external"

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        run_dir = gate.trace.path.parent
        async with serving(task, gate) as agent_env:
            with (run_dir / "agent.log").open("ab") as log:
                proc = await asyncio.create_subprocess_exec(
                    *self.argv, env={**os.environ, **agent_env}, stdout=log,
                    stderr=asyncio.subprocess.STDOUT, stdin=asyncio.subprocess.DEVNULL,
                    start_new_session=True)
            try:
                code = await proc.wait()
                if code != 0:
                    gate.think(f"external agent exited with status {code}")
            finally:
                await _stop(proc)


class ListenAgent:
    """No process of ours: the tools are served and the run waits for an agent started by
    hand (an MCP client through ``dbabench tools serve --run RUN_DIR``, a script with
    ``ToolClient``) until it files its report or the budget is spent."""

    name = "listen"

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        run_dir = gate.trace.path.parent
        async with serving(task, gate) as agent_env:
            print(f"tools at {agent_env['DBABENCH_TOOLS_URL']} (token and address in"
                  f" {run_dir / CONNECTION_FILE}); for MCP: dbabench tools serve --run"
                  f" {run_dir} [--transport http]", file=sys.stderr, flush=True)
            while gate.report is None and gate.exhausted is None:
                await asyncio.sleep(LISTEN_POLL_SECONDS)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """Stop the agent's whole process group (it may have children), by pid."""
    if proc.returncode is not None:
        return
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_SECONDS), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            async with asyncio.timeout(wait):
                await proc.wait()
            return
        except TimeoutError:
            continue
