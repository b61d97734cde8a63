"""External agents: any process that speaks the tool server's HTTP API (or MCP through
``dbabench tools serve``), started by the run (``external``) or by hand (``listen``).

The process gets three environment variables and nothing else about the run:
``DBABENCH_TOOLS_URL`` (the tool server, on loopback), ``DBABENCH_TOOLS_TOKEN`` (its bearer
token) and ``DBABENCH_TASK_FILE`` (the AgentTask as JSON). It must submit its report through
the server before it exits. It never gets database credentials.

By default it runs sandboxed (env.sandbox): as the unprivileged user ``dbabench-agent``, in a
private mount and pid namespace that shows the system's ``/usr``, the network files of
``/etc``, a private ``/tmp`` (its home and working directory), the task file, its own command
(the executable, its virtualenv, the paths among its arguments), the dbabench package (for
``dbabench.tools.client``) and the paths its user declares; never the checkout's scenarios,
run directories, caches or other runs. Its environment is the three variables, ``PATH``,
``HOME``, ``LANG`` and the names its user allows (a model gateway's key). Every process it
starts ends with it. ``sandbox=False`` runs a trusted script as it is; the run records that.

With a ``gateway`` (``--meter PROVIDER``), the tool server also serves the metering proxy
(tools.meter) and the agent gets two more variables, ``OPENAI_BASE_URL`` (the proxy) and
``OPENAI_API_KEY`` (the run's token): its model calls through them are measured by the harness
and priced as ``PROVIDER:MODEL``, and the gateway's own key is never the agent's. A model call the
agent reports itself (``/v1/events/model``) counts as self-reported; results say which.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import dbabench
from dbabench.model.artifacts import RunArtifact
from dbabench.env import sandbox
from dbabench.errors import BadInput
from dbabench.env.egress import Destination, Egress
from dbabench.env.netns import AgentNetwork
from dbabench.env.processes import die_with_parent
from dbabench.model.task import AgentTask
from dbabench.paths import cache_dir, campaigns_dir, runs_dir
from dbabench.scenario.loader import scenarios_root
from dbabench.tools.gate import ToolGate
from dbabench.env.contract import METER_PATH, METERED_ENV
from dbabench.tools.meter import Gateway
from dbabench.tools.server import CONNECTION_FILE, Connection, serve

STOP_GRACE_SECONDS = 10.0
PACKAGE = Path(dbabench.__file__).resolve().parent
LISTEN_POLL_SECONDS = 0.5




@asynccontextmanager
async def serving(task: AgentTask, gate: ToolGate, gateway: Gateway | None,
                  network: AgentNetwork | None = None) -> AsyncIterator[dict[str, str]]:
    """The run's tool server, its connection and task files in the run directory; yields
    the environment variables an agent is given (three, five with a metering gateway). With
    a ``network`` (the agent's own, env.netns) it is served on that network's first socket
    too, and the addresses given are that one."""
    run_dir = gate.workspace.root
    gate.workspace.write(RunArtifact.TASK_JSON, task)
    token = secrets.token_urlsafe(24)
    # the agent's copy lies where no path names the scenario (the run directory's name does)
    with tempfile.TemporaryDirectory(prefix=f"dbabench-{task.incident}-") as private:
        task_file = Path(private) / RunArtifact.TASK_JSON
        task_file.write_text(task.model_dump_json(indent=1))
        inside = [] if network is None else network.sockets[:1]
        async with serve(gate, task, token, gateway=gateway, sockets=inside) as url:
            Connection(url=url, token=token).write(run_dir)
            if inside:
                url = f"http://127.0.0.1:{inside[0].getsockname()[1]}"
            metered = {} if gateway is None else dict(zip(METERED_ENV, (url + METER_PATH, token)))
            yield {"DBABENCH_TOOLS_URL": url, "DBABENCH_TOOLS_TOKEN": token,
                   "DBABENCH_TASK_FILE": str(task_file), **metered}


class ExternalAgent:
    def __init__(self, argv: list[str], *, sandbox: bool = True, paths: Sequence[Path] = (),
                 env_names: Sequence[str] = (), gateway: Gateway | None = None,
                 egress: Sequence[str] = ()) -> None:
        """``paths``: more files or directories the sandboxed agent may read; ``env_names``:
        variables of our environment it is given (say OPENAI_API_KEY); ``gateway``: where
        the metering proxy forwards its model calls; ``egress``: the ``HOST:PORT``
        destinations its own network may reach besides the tool server (env.egress)."""
        if not argv:
            raise ValueError("an external agent needs a command: dbabench run SCENARIO"
                             " --agent external -- COMMAND [ARGS...]")
        missing = [str(p) for p in paths if not Path(p).exists()]
        if missing:
            raise ValueError(f"--agent-path: no such file or directory: {', '.join(missing)}")
        clash = [name for name in env_names if gateway is not None and name in METERED_ENV]
        if clash:
            raise ValueError(f"--agent-env {', '.join(clash)}: with --meter the agent's"
                             f" {' and '.join(METERED_ENV)} are the metering proxy's; the"
                             " gateway's key stays with the harness")
        unset = [name for name in env_names if name not in os.environ]
        if unset:
            raise ValueError(f"--agent-env: {', '.join(unset)} not set in this environment")
        if egress and not sandbox:
            raise ValueError("--agent-egress limits a sandboxed agent's network; with"
                             " --agent-sandbox off the command has the machine's")
        self.egress = [Destination.parse(d) for d in egress]
        self.argv = argv
        self.gateway = gateway
        self.sandbox = sandbox
        self.paths = [Path(p).resolve() for p in paths]
        self.env_names = list(env_names)
        self.name = "external"
        if sandbox:
            # refused before anything is provisioned (the run's own siblings once it has one)
            self._check_shown(_command_paths([_absolute(arg) for arg in argv]) + self.paths, None)

    @staticmethod
    def _check_shown(shown: list[Path], run_dir: Path | None) -> None:
        answers = [str(p) for p in shown if _shows_answers(p.resolve(), run_dir)]
        if answers:
            raise BadInput(f"the agent would see {', '.join(answers)}, which hold the"
                           " benchmark's manifests, runs, records or snapshots: name other"
                           " paths")

    def command(self, agent_env: dict[str, str],
                run_dir: Path | None = None) -> tuple[list[str], dict[str, str]]:
        """The command line and the whole environment the agent is started with; ``run_dir``
        is the run's, whose siblings are other runs."""
        if not self.sandbox:
            return self.argv, {**os.environ, **agent_env}
        argv = [_absolute(arg) for arg in self.argv]
        shown = _command_paths(argv) + self.paths
        self._check_shown(shown, run_dir)
        task_file = Path(agent_env["DBABENCH_TASK_FILE"])
        agent_user = pwd.getpwnam(sandbox.AGENT_USER)
        for path in (task_file.parent, task_file):
            os.chown(path, agent_user.pw_uid, agent_user.pw_gid)
        view = sandbox.View(readable=shown + [task_file.parent, PACKAGE],
                            etc=sandbox.NETWORK_ETC, proc=True)
        environment = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
                       **{name: os.environ[name] for name in self.env_names}, **agent_env}
        return sandbox.agent(argv, view=view), environment

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        run_dir = gate.workspace.root
        gate.agent_sandboxed = self.sandbox
        if not self.sandbox:
            async with serving(task, gate, self.gateway) as agent_env:
                await self._run(*self.command(agent_env, run_dir), run_dir, gate, None)
            return
        egress = Egress(self.egress)
        # the tool server, then a relay per loopback destination, then the proxy
        ports = [0, *egress.relay_ports, *([0] if egress.needs_proxy else [])]
        with AgentNetwork(ports) as network:
            relays = network.sockets[1:1 + len(egress.relay_ports)]
            proxy = network.sockets[-1] if egress.needs_proxy else None
            async with serving(task, gate, self.gateway, network) as agent_env:
                try:
                    agent_env.update(await egress.start(relays, proxy))
                    argv, environment = self.command(agent_env, run_dir)

                    def enter() -> None:
                        die_with_parent()
                        network.enter()

                    await self._run(argv, environment, run_dir, gate, enter)
                finally:
                    await egress.close()
                    if egress.refused:
                        gate.think("egress refused to the agent: "
                                   + ", ".join(dict.fromkeys(egress.refused)))

    async def _run(self, argv: list[str], environment: dict[str, str], run_dir: Path,
                   gate: ToolGate, preexec: Callable[[], None] | None) -> None:
        with (run_dir / RunArtifact.AGENT_LOG).open("ab") as log:
            proc = await asyncio.create_subprocess_exec(
                *argv, env=environment, stdout=log, stderr=asyncio.subprocess.STDOUT,
                stdin=asyncio.subprocess.DEVNULL, start_new_session=True,
                cwd="/tmp" if self.sandbox else None,
                # the sandbox ends when we do, even killed: its unshare dies with us, and
                # its namespace with its unshare
                preexec_fn=preexec)
        try:
            code = await proc.wait()
            if code != 0:
                gate.think(f"external agent exited with status {code}")
        finally:
            await _stop(proc)


# What of a source checkout an agent's command may show: the package (shown anyway, for the
# client), the examples and agent images, and virtualenvs; the rest (manifests, the catalog,
# the tests' corpora of reports) says what each scenario is.
CHECKOUT_SHOWABLE = ("operator", "examples", "agent-images")


def _shows_answers(path: Path, run_dir: Path | None) -> bool:
    """Whether showing ``path`` (resolved) shows any of the benchmark's answers: a path in a
    place that holds them shows part, a path that holds one shows all."""
    places = [cache_dir(), scenarios_root(), runs_dir(), campaigns_dir(),
              *([run_dir.parent] if run_dir is not None else [])]
    for place in (p.resolve() for p in places):
        if path.is_relative_to(place) or place.is_relative_to(path):
            return True
    checkout = PACKAGE.parents[1]
    if (checkout / "scenarios").is_dir() and path.is_relative_to(checkout):
        inside = path.relative_to(checkout)
        if not inside.parts:
            return True
        top = checkout / inside.parts[0]
        return inside.parts[0] not in CHECKOUT_SHOWABLE and not (top / "pyvenv.cfg").exists()
    return False


def _existing(arg: str) -> Path | None:
    """The path an argument names, if it names one that exists (most name none: options,
    code given with -c)."""
    try:
        path = Path(arg)
        return path if path.exists() else None
    except (OSError, ValueError):
        return None


def _absolute(arg: str) -> str:
    """An argument naming an existing path, made absolute: the sandbox's working directory is
    its own /tmp."""
    path = _existing(arg)
    return str(path.resolve()) if path is not None and not path.is_absolute() else arg


def _command_paths(argv: list[str]) -> list[Path]:
    """What running ``argv`` reads beyond /usr: its executable (where its symlinks lead too),
    the virtualenv it is part of with that virtualenv's base interpreter, and the existing
    paths among its arguments."""
    found = shutil.which(argv[0])
    paths = [Path(found), Path(found).resolve()] if found else []
    for executable in paths[:1]:
        venv = executable.parent.parent
        config = venv / "pyvenv.cfg"
        if config.exists():
            paths.append(venv)
            home = next((line.split("=", 1)[1].strip() for line in config.read_text().splitlines()
                         if line.split("=", 1)[0].strip() == "home"), None)
            if home:
                paths.append(Path(home).parent)  # the base installation: stdlib and all
    paths += [p for p in map(_existing, argv[1:]) if p is not None and p.is_absolute()]
    return [p for p in dict.fromkeys(paths) if not p.resolve().is_relative_to("/usr")]


class ListenAgent:
    """No process of ours: the tools are served and the run waits for an agent started by
    hand (an MCP client through ``dbabench tools serve --run RUN_DIR``, a script with
    ``ToolClient``) until it files its report or the budget is spent."""

    name = "listen"

    def __init__(self, gateway: Gateway | None = None) -> None:
        self.gateway = gateway

    async def run(self, task: AgentTask, gate: ToolGate) -> None:
        run_dir = gate.workspace.root
        async with serving(task, gate, self.gateway) as agent_env:
            print(f"tools at {agent_env['DBABENCH_TOOLS_URL']} (token and address in"
                  f" {run_dir / CONNECTION_FILE}); for MCP: dbabench tools serve --run"
                  f" {run_dir} [--transport http]", file=sys.stderr, flush=True)
            if self.gateway is not None:
                print(f"metered model calls: OPENAI_BASE_URL={agent_env['OPENAI_BASE_URL']},"
                      " OPENAI_API_KEY the token", file=sys.stderr, flush=True)
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
