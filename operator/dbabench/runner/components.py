"""The container entrypoints of a run on Kubernetes: ``dbabench component NAME``.

Each is one piece of ``run_scenario`` (runner.run), run in its own container of the pods that
env.kube describes, and configured only by the environment those pods set: ``DBABENCH_ADDR_*``
(host:port of another component), ``DBABENCH_PORT_*`` (where to listen), the passwords from the
run's Secrets, the manifest at ``DBABENCH_SCENARIO_FILE``; env.contract defines them all.
Results go to ConfigMaps (``env.kube.ConfigMapRecords``) that the operator reads.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import os
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from aiohttp import web
from psycopg import sql as pgsql

from dbabench.errors import BadInput, PermanentInfraError
from dbabench.agents import registry
from dbabench.agents.base import AgentFailure
from dbabench.env import contract, kube
from dbabench.env.contract import need
from dbabench.env.local import build_cluster
from dbabench.env.monitoring import (EXPORTER_APPLICATION, EXPORTER_JOBS, GO_RUNTIME,
                                     exporter_argv, exporter_dsn,
                                     prometheus_argv)
from dbabench.env.postgres import (APP_ROLE, GOLDEN_META, HARNESS_APPLICATION, SUPERUSER,
                                   Credentials, PostgresInstance, StartFailed)
from dbabench.env.processes import ProcessTable
from dbabench.env.remote import START_FAILED_STATUS, LogMirror, RemoteInstanceControl
from dbabench.evaluate import evaluator, predicates
from dbabench.faults.steps import apply_steps
from dbabench.model.artifacts import RunArtifact
from dbabench.model.admission import Admission
from dbabench.model.kube import MODEL_KINDS, AgentKind, AgentSpec
from dbabench.model.scenario import ReplicaSpec, Scenario
from dbabench.model.task import AgentTask, new_incident
from dbabench.model.tool import InstanceAction, ShutdownMode
from dbabench.model.trace import AgentOutcome
from dbabench.records.run import RunFiles
from dbabench.runner import assembly
from dbabench.runner.run import admit
from dbabench.scenario.loader import load_file
from dbabench.tools import knowledge
from dbabench.tools.context import ToolContext
from dbabench.tools.client import ToolServerError
from dbabench.tools.remote import RemoteGate
from dbabench.tools.server import serve
from dbabench.workload.engine import run_workload


STANDBY_CATCH_UP_SECONDS = 300.0
"""How long a standby waits for its primary to take this run's passwords, and then for
itself to have replayed them."""


class ComponentError(PermanentInfraError, RuntimeError):
    """A component cannot do its part: a result it needs was never published, a name unknown."""


def _port(component: str) -> int:
    return int(need(f"port_{component}"))


def _address(component: str) -> tuple[str, int]:
    host, _, port = need(f"addr_{component}").rpartition(":")
    return host, int(port)


def _scenario() -> Scenario:
    return load_file(Path(need("scenario_file")))


def _credentials() -> Credentials:
    return Credentials(superuser_password=need("pg_superuser_password"),
                       app_password=contract.get("pg_app_password") or "")


def _server(database: str, component: str = "postgres") -> PostgresInstance:
    """The run's primary (or its standby: component replica), wherever it is, as a connection
    target."""
    host, port = _address(component)
    return PostgresInstance(Path("/nonexistent"), _credentials(), port=port, database=database,
                            host=host)


def _replica(scenario: Scenario) -> PostgresInstance | None:
    """The hot standby, where the scenario has one (its pod spec names it)."""
    if scenario.spec.database.replica is None:
        return None
    return _server(scenario.spec.database.name, "replica")


def _work_dir() -> Path:
    path = Path(need("work_dir"))
    path.mkdir(parents=True, exist_ok=True)
    return path


async def _until_signalled() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def _mirror(scenario: Scenario) -> LogMirror:
    server, replica = _server(scenario.spec.database.name), _replica(scenario)
    host, port = _address("business")
    return LogMirror(server.dsn(application_name=HARNESS_APPLICATION),
                     f"http://{host}:{port}/{RunArtifact.BUSINESS_LOG}", _work_dir(),
                     None if replica is None else replica.dsn(
                         application_name=HARNESS_APPLICATION))


def _probe(scenario: Scenario, mirror: LogMirror) -> predicates.Probe:
    return predicates.Probe.of(_server(scenario.spec.database.name),
                               business_log=mirror.business_log, pg_log_dir=mirror.pg_log_dir,
                               replica=_replica(scenario), refresh=mirror.sync)


def _progress(message: str) -> None:
    print(message, flush=True)


@contextmanager
def _process_table() -> Iterator[ProcessTable]:
    """A table for the pod's own children, in a directory that ends with them."""
    with tempfile.TemporaryDirectory(prefix="dbabench-procs-") as directory:
        yield ProcessTable(Path(directory))


# -- the golden volume -----------------------------------------------------------------------------

def golden() -> None:
    """Fill the volume at DBABENCH_PG_HOME with the scenario's golden cluster (once)."""
    scenario = _scenario()
    home = Path(need("pg_home"))
    if (home / GOLDEN_META).exists():
        _progress(f"{home} already holds a golden cluster")
        return
    with _process_table() as procs:
        build_cluster(home, assembly.golden_recipe(scenario), _credentials(), procs=procs)
    _progress(f"golden cluster built in {home}")


# -- the database pod --------------------------------------------------------------------------------

PROCESS_ACTIONS = (InstanceAction.start, InstanceAction.stop, InstanceAction.restart)
"""What the control endpoint does to the server's process (POST /start, /stop, /restart; GET
/status says whether it runs): manage_instance's actions that a SQL session cannot."""

async def postgres() -> None:
    """The run's server on the restored volume (the primary, or with DBABENCH_REPLICA_SPEC its
    hot standby), and manage_instance's control endpoint, which answers the bearer of the
    run's control token only."""
    home = Path(need("pg_home"))
    golden = Credentials(superuser_password=need("pg_golden_superuser_password"),
                         app_password="")
    instance = PostgresInstance(home, golden, database=need("database"))
    expected = f"Bearer {need('control_token')}".encode()
    instance.relocate(_port("postgres"), listen="*")
    with _process_table() as procs:
        standby = contract.get("replica_spec")
        if standby is None:
            await asyncio.to_thread(instance.start, procs)
            # the golden's passwords are every run's of the scenario: this run's own replace them
            # before the pod is ready (its readiness is the control endpoint, which listens after)
            instance.credentials = _credentials()
            await asyncio.to_thread(_set_passwords, golden, instance)
        else:
            await asyncio.to_thread(_follow, instance, ReplicaSpec.model_validate_json(standby),
                                    procs)
        started_at = time.time()
        lock = asyncio.Lock()

        async def act(request: web.Request) -> web.Response:
            nonlocal started_at
            action = InstanceAction(request.match_info["action"])
            try:
                mode = ShutdownMode(request.query.get("mode", ShutdownMode.fast))
            except ValueError:
                return web.json_response(
                    {"error": f"unknown shutdown mode {request.query['mode']!r}"}, status=400)
            async with lock:
                if action in (InstanceAction.stop, InstanceAction.restart):
                    await asyncio.to_thread(instance.stop, procs, mode)
                if action in (InstanceAction.start, InstanceAction.restart) \
                        and not instance.running():
                    try:
                        await asyncio.to_thread(instance.start, procs)
                    except StartFailed as e:
                        # the agent's setting, most likely: its observation (the tool
                        # server's RemoteInstanceControl raises it again), not this pod's end
                        return web.json_response(
                            {"error": str(e), "reason": e.reason, "said": e.said},
                            status=START_FAILED_STATUS)
                    started_at = time.time()
            return await status(request)

        async def status(request: web.Request) -> web.Response:
            running = instance.running()
            return web.json_response({
                "running": running, "pid": instance.pid, "port": instance.port,
                "host": os.environ.get("HOSTNAME", ""), "version": "15",
                "uptime_seconds": round(time.time() - started_at, 1) if running else None})

        @web.middleware
        async def authenticate(request: web.Request,
                               handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                               ) -> web.StreamResponse:
            given = request.headers.get("Authorization", "").encode("utf-8", "replace")
            if not hmac.compare_digest(given, expected):
                return web.json_response({"error": "missing or wrong bearer token"}, status=401)
            return await handler(request)

        app = web.Application(middlewares=[authenticate])
        app.router.add_get(f"/{InstanceAction.status}", status)
        app.router.add_post("/{action:%s}" % "|".join(PROCESS_ACTIONS), act)
        runner = web.AppRunner(app)
        await runner.setup()
        try:
            await web.TCPSite(runner, "0.0.0.0", _port("control")).start()
            await _until_signalled()
        finally:
            await runner.cleanup()
            await asyncio.to_thread(instance.stop, procs, ShutdownMode.fast)


def _set_passwords(golden: Credentials, instance: PostgresInstance) -> None:
    dsn = psycopg.conninfo.make_conninfo(instance.dsn(database="postgres"),
                                         password=golden.superuser_password)
    with psycopg.connect(dsn, autocommit=True) as conn:
        # the statements carry the passwords: no setting the fault left may log them
        conn.execute("SET log_statement = 'none'")
        conn.execute("SET log_min_duration_statement = -1")
        conn.execute("SET log_min_error_statement = panic")
        for role, password in ((SUPERUSER, instance.credentials.superuser_password),
                               (APP_ROLE, instance.credentials.app_password)):
            conn.execute(pgsql.SQL("ALTER ROLE {} PASSWORD {}").format(
                pgsql.Identifier(role), pgsql.Literal(password)))


def _follow(instance: PostgresInstance, spec: ReplicaSpec, procs: ProcessTable) -> None:
    """Start ``instance`` as the scenario's hot standby of the run's primary.

    Both volumes are the golden's; the standby learns this run's passwords only by replaying
    the primary's change of them, and a standby the scenario keeps from streaming (a wrong
    slot name) would never learn them. So it first streams as a plain standby until it has
    (its start waits for a login with them), then restarts as the scenario has it: the
    scenario's lines are appended after the plain ones, and the later line wins."""
    instance.credentials = _credentials()
    primary = _server(instance.database)
    _until_login(primary)
    instance.follow(primary, slot=None, settings={})
    instance.start(procs, timeout=STANDBY_CATCH_UP_SECONDS)
    instance.stop(procs, ShutdownMode.fast)
    instance.follow(primary, slot=spec.slot, settings=spec.settings)
    instance.start(procs)


def _until_login(server: PostgresInstance) -> None:
    """Wait until ``server`` takes this run's superuser password: the primary's pod has set it."""
    deadline = time.monotonic() + STANDBY_CATCH_UP_SECONDS
    while True:
        try:
            with psycopg.connect(server.dsn(database="postgres"), connect_timeout=5):
                return
        except psycopg.OperationalError as e:
            if time.monotonic() > deadline:
                raise ComponentError(f"the primary at {server.host}:{server.port} did not take"
                                     f" this run's password in {STANDBY_CATCH_UP_SECONDS:.0f}s:"
                                     f" {e}") from e
            time.sleep(0.5)


def _exec(argv: list[str], env: dict[str, str] | None = None) -> None:
    sys.stdout.flush()
    os.execvpe(argv[0], argv, {**os.environ, **(env or {})})


def exporter() -> None:
    host, port = _address("postgres")
    dsn = exporter_dsn(psycopg.conninfo.make_conninfo(
        host=host, port=port, dbname=need("database"), user="postgres",
        password=need("pg_superuser_password"), application_name=EXPORTER_APPLICATION))
    _exec(exporter_argv(f":{_port('exporter')}"), {"DATA_SOURCE_NAME": dsn, **GO_RUNTIME})


def prometheus() -> None:
    targets = {EXPORTER_JOBS["primary"]: "{}:{}".format(*_address("exporter")),
               "workload": "{}:{}".format(*_address("workload"))}
    if contract.get("addr_replica_exporter") is not None:
        targets[EXPORTER_JOBS["replica"]] = "{}:{}".format(*_address("replica_exporter"))
    _exec(prometheus_argv(_work_dir(), need("run"), targets, f":{_port('prometheus')}"),
          GO_RUNTIME)


# -- the workload pod --------------------------------------------------------------------------------

async def workload() -> None:
    """The runtime fault, then the application; its business log is served for the mirrors."""
    scenario = _scenario()
    server, replica = _server(scenario.spec.database.name), _replica(scenario)
    jobs = await asyncio.to_thread(functools.partial(
        apply_steps, server, scenario.spec.fault.runtime, replica=replica))
    business = Path(contract.get("work_dir") or "/tmp") / RunArtifact.BUSINESS_LOG
    business.touch()
    config = assembly.workload_config(scenario, server, jobs, business, _port("workload"),
                                      replica=replica, metrics_host="0.0.0.0")

    async def business_log(request: web.Request) -> web.Response:
        offset = int(request.query.get("offset", "0"))
        with business.open("rb") as f:
            f.seek(offset)
            return web.Response(body=f.read(), content_type="application/x-ndjson")

    app = web.Application()
    app.router.add_get(f"/{RunArtifact.BUSINESS_LOG}", business_log)
    runner = web.AppRunner(app)
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await web.TCPSite(runner, "0.0.0.0", _port("business")).start()
        await run_workload(config, stop)
    finally:
        await runner.cleanup()


# -- admission, agent, evaluation --------------------------------------------------------------------

async def _with_mirror(scenario: Scenario,
                       body: Callable[[LogMirror], Awaitable[None]]) -> None:
    mirror = _mirror(scenario)
    stop = asyncio.Event()
    task = asyncio.create_task(mirror.run(stop))
    try:
        await body(mirror)
    finally:
        stop.set()
        await task


async def admission() -> None:
    scenario = _scenario()

    async def body(mirror: LogMirror) -> None:
        result = await admit(scenario, _probe(scenario, mirror), _progress)
        kube.ConfigMapRecords(need("result_configmap"), need("run")).write(
            RunArtifact.ADMISSION, result)

    await _with_mirror(scenario, body)


def _agent_spec() -> AgentSpec:
    return AgentSpec.model_validate_json(need("agent_spec"))


async def tools() -> None:
    """The run's tool server, a pod of its own: the gate, the trace, the only credentials; for
    a model agent or a metered external one also the meter its model calls go through, with
    the provider's key (of the Secret the spec names: this container's alone). It publishes
    the task for the agent's pod to mount, and the trace when it is stopped."""
    scenario = _scenario()
    spec = _agent_spec()
    gateway = registry.gateway(spec, contract.get("model_api_key"))
    server, replica = _server(scenario.spec.database.name), _replica(scenario)
    budget = scenario.spec.budget
    host, port = _address("prometheus")

    def control(component: str) -> RemoteInstanceControl:
        return RemoteInstanceControl("http://{}:{}".format(*_address(component)),
                                     need("control_token"))

    async def body(mirror: LogMirror) -> None:
        index = await asyncio.to_thread(knowledge.ensure_index, knowledge.default_index_path())
        primary = assembly.server_access(server, mirror.pg_log_dir, control("control"))
        standby = None if replica is None else assembly.server_access(
            replica, mirror.replica_log_dir, control("replica_control"))
        ctx = ToolContext(primary=primary, replica=standby, business_log=mirror.business_log,
                          prometheus_url=f"http://{host}:{port}", knowledge_index=index)
        gate, task = assembly.agent_turn(scenario, ctx, RunFiles(_work_dir()), new_incident(),
                                         spec.runbook)
        started = time.monotonic()
        async with serve(gate, task, need("tools_token"), "0.0.0.0", _port("tools"),
                         gateway=gateway, own_agent=spec.kind != AgentKind.external):
            # serving first: the operator starts the agent's pod once the task is there
            await asyncio.to_thread(kube.ConfigMapRecords(need("task_configmap"), need("run")).write,
                                    RunArtifact.TASK_JSON, task, plain=True)
            # The operator stops this pod when the agent's has ended (or its budget has): the
            # trace is handed over on the way out.
            await _until_signalled()
        await gate.close()
        wall = time.monotonic() - started
        late = (f"budget exhausted: time budget of {budget.timeout_seconds:.0f}s is spent"
                if wall > budget.timeout_seconds and gate.report is None else None)
        outcome = gate.outcome(wall, late)
        kube.ConfigMapRecords(need("result_configmap"), need("run")).write(
            RunArtifact.OUTCOME, outcome)

    await _with_mirror(scenario, body)


async def agent() -> None:
    """The harness's own agent in the agent container, through the tool server like any other
    agent: a scripted one with the scenario, a model agent without it, its model calls sent
    to the tool server's meter with the tool token (it never has the provider's key)."""
    spec = _agent_spec()
    if spec.kind == AgentKind.external:
        raise ComponentError("the agent container runs the harness's own agents; an external"
                             " agent is its own image")
    if spec.kind in MODEL_KINDS:
        chosen = registry.build(spec, None, env=registry.metered_environment(
            spec, need("tools_url") + contract.METER_PATH, need("tools_token")))
    else:
        chosen = registry.build(spec, _scenario())
    async with RemoteGate(need("tools_url"), need("tools_token")) as gate:
        task = AgentTask.model_validate(await gate.task())
        try:
            await chosen.run(task, gate)  # type: ignore[arg-type]
        except ToolServerError as e:
            if e.status != 429:
                raise
            _progress(f"stopped: {e.message}")
        except AgentFailure as e:
            gate.fail(e.failure, e.message)
            _progress(f"stopped: {e}")


async def evaluation() -> None:
    scenario = _scenario()
    raw = kube.ConfigMapRecords(need("trace_configmap")).read(RunArtifact.OUTCOME)
    if raw is None:
        raise ComponentError(f"ConfigMap {need('trace_configmap')} holds no outcome:"
                             " the tool server has not handed over the trace")
    outcome = AgentOutcome.model_validate_json(raw)
    seen = kube.ConfigMapRecords(need("admission_configmap")).read(RunArtifact.ADMISSION)
    if seen is None:
        raise ComponentError(f"ConfigMap {need('admission_configmap')} holds no"
                             " admission: the protected tables were never seen")
    admission = Admission.model_validate_json(seen)

    async def body(mirror: LogMirror) -> None:
        result = await evaluator.grade(scenario, need("agent"), outcome,
                                       _probe(scenario, mirror), admission, _progress)
        kube.ConfigMapRecords(need("result_configmap"), need("run")).write(
            RunArtifact.EVALUATION, result)

    await _with_mirror(scenario, body)


COMPONENTS = ("golden", "postgres", "exporter", "prometheus", "workload", "admit", "tools",
              "agent", "evaluate")


def run_component(name: str) -> None:
    if name == "golden":
        golden()
    elif name == "exporter":
        exporter()
    elif name == "prometheus":
        prometheus()
    else:
        coroutine = {"postgres": postgres, "workload": workload, "admit": admission,
                     "tools": tools, "agent": agent, "evaluate": evaluation}.get(name)
        if coroutine is not None:
            asyncio.run(coroutine())
        else:
            raise BadInput(f"unknown component {name!r}: one of {', '.join(COMPONENTS)}")
