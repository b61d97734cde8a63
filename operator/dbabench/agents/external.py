"""External agents: any process that speaks the tool server's HTTP API.

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

from dbabench.model.task import AgentTask
from dbabench.tools.gate import ToolGate
from dbabench.tools.server import serve

STOP_GRACE_SECONDS = 10.0


class ExternalAgent:
    def __init__(self, argv: list[str]) -> None:
        if not argv:
            raise ValueError("an external agent needs a command: dbabench run SCENARIO"
                             " --agent external -- COMMAND [ARGS...]")
        self.argv = argv
        self.name = "external"

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        run_dir = gate.trace.path.parent
        task_file = run_dir / "task.json"
        task_file.write_text(task.model_dump_json(indent=1))
        token = secrets.token_urlsafe(24)
        async with serve(gate, task, token) as url:
            env = {**os.environ, "DBABENCH_TOOLS_URL": url, "DBABENCH_TOOLS_TOKEN": token,
                   "DBABENCH_TASK_FILE": str(task_file)}
            with (run_dir / "agent.log").open("ab") as log:
                proc = await asyncio.create_subprocess_exec(
                    *self.argv, env=env, stdout=log, stderr=asyncio.subprocess.STDOUT,
                    stdin=asyncio.subprocess.DEVNULL, start_new_session=True)
            try:
                code = await proc.wait()
                if code != 0:
                    gate.think(f"external agent exited with status {code}")
            finally:
                await _stop(proc)


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
            await asyncio.wait_for(proc.wait(), wait)
            return
        except TimeoutError:
            continue
