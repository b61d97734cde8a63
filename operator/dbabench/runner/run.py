"""One run end to end: restore, admit, agent, evaluate, record (the path of the architecture).

The run directory (``records.run``) holds everything needed to re-read or re-score the run
later: its records, the business log, ``logs/postgresql/`` and the monitoring logs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import psycopg

from dbabench.agents.base import Agent, AgentFailure
from dbabench.model.run import RunRecord
from dbabench.model.task import AgentTask, new_incident
from dbabench.env.local import Golden, LocalEnvironment, LocalInstanceControl
from dbabench.env.monitoring import Monitoring
from dbabench.env.processes import free_port, reap_orphans
from dbabench.env.snapshot import SnapshotStore, choose_strategy
from dbabench.evaluate import conduct, evaluator, integrity, log_settings, predicates
from dbabench.faults.steps import apply_steps
from dbabench.model.admission import Admission
from dbabench.model.artifacts import RunArtifact
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.kube import Phase
from dbabench.model.scenario import Scenario
from dbabench.model.report import Report
from dbabench.model.trace import AgentOutcome, TraceEvent
from dbabench.model.workload import JobStep, Server
from dbabench.paths import cache_dir
from dbabench.records.run import RunFiles
from dbabench.runner import assembly
from dbabench.runner.threads import RunThreads, wait_out
from dbabench.scenario.loader import KEY_DIGEST_CHARS
from dbabench.tools import knowledge
from dbabench.tools.context import ServerAccess, ToolContext
from dbabench.tools.errors import BudgetExhausted
from dbabench.tools.gate import ToolGate
from dbabench.workload.forkserver import FORK_SERVER

Progress = Callable[[str], None]
OnPhase = Callable[[Phase], Awaitable[None]]
# a manifestation check is a few cheap queries; the agent should not wait for a poll tick
ADMISSION_POLL_SECONDS = 0.5


async def _no_phase(phase: Phase) -> None:
    return None


@dataclass(frozen=True)
class Admitted:
    """A run as its agent is about to come in: what ``on_admitted`` may look at (the
    footprint scan, evaluate.footprints), before the agent has run anything."""

    incident: str
    admission: Admission
    probe: predicates.Probe
    tools: ToolContext
    """What the agent's tools reach: its servers, logs and Prometheus."""
    run_dir: Path


OnAdmitted = Callable[[Admitted], Awaitable[None]]


@dataclass
class RunResult:
    """What a run knows when it ends, so no caller reads its records back."""

    run_dir: Path
    evaluation: EvaluationResult
    report: Report | None = None
    events: list[TraceEvent] = field(default_factory=list)
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    """What the run's processes (PostgreSQL, workload, monitoring, agent) used, by name."""


@dataclass
class GoldenBuild:
    golden: Golden
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    """What the build's processes (initdb, its PostgreSQL) used, by name; empty when the
    golden was found."""


def build_golden(env: LocalEnvironment, scenario: Scenario) -> Golden:
    return env.ensure_golden(assembly.golden_recipe(scenario),
                             supersedes=f"{scenario.name}-{'?' * KEY_DIGEST_CHARS}")


def _access(env: LocalEnvironment, server: Server) -> ServerAccess:
    instance = env.server(server)
    return assembly.server_access(instance, instance.log_dir, LocalInstanceControl(env, server))


def start_workload(env: LocalEnvironment, scenario: Scenario, jobs: list[JobStep],
                   files: RunFiles) -> int:
    """Start the workload process; return its metrics port."""
    assert env.instance is not None
    port = free_port()
    config = assembly.workload_config(scenario, env.instance, jobs,
                                      files.path(RunArtifact.BUSINESS_LOG), port,
                                      replica=env.replica)
    files.write(RunArtifact.WORKLOAD_CONFIG, config)
    config_path = files.path(RunArtifact.WORKLOAD_CONFIG)
    config_path.chmod(0o600)  # it holds the application's password
    FORK_SERVER.spawn(env.procs, "workload", config_path, files.path(RunArtifact.WORKLOAD_LOG))
    return port


async def admit(scenario: Scenario, probe: predicates.Probe, progress: Progress) -> Admission:
    """Poll the manifestation predicates until all hold at once, or the deadline passes."""
    spec = scenario.spec.manifestation
    started = time.monotonic()
    progress(f"checking manifestation ({len(spec.predicates)} predicates,"
             f" up to {spec.within_seconds:.0f}s)")
    async with probe.keeping_sessions():
        while True:
            results = await predicates.check_all(spec.predicates, probe)
            waited = time.monotonic() - started
            if all(r.passed for r in results) or waited >= spec.within_seconds:
                break
            await asyncio.sleep(ADMISSION_POLL_SECONDS)
        failed = [r.name for r in results if not r.passed]
        protected = ([] if failed else
                     await integrity.take(probe, scenario.spec.safety.protected.tables,
                                          integrity.writes_of(scenario)))
        steering = [] if failed else await conduct.steering_objects(probe)
        logging = {} if failed else await _logging(probe)
    if not failed:
        await probe.forget_statements()
    return Admission(
        admitted=not failed, checked_at=datetime.now(timezone.utc),
        waited_seconds=round(waited, 1), predicates=results, protected=protected,
        steering=steering, logging=logging,
        reason="" if not failed else f"fault did not manifest: {', '.join(failed)}")


async def _logging(probe: predicates.Probe) -> dict[str, str]:
    """What the server logs as the agent comes in; a server that cannot be read gives no
    baseline, and its log checks stand as they are (its SQL checks fail on it)."""
    try:
        return await log_settings.layers(probe)
    except psycopg.Error:
        return {}


async def drive_agent(agent: Agent, task: AgentTask, gate: ToolGate) -> AgentOutcome:
    """The agent's turn under its budget; the gate is closed when it ends."""
    started = time.monotonic()
    exhausted: str | None = None
    try:
        # asyncio.timeout, not wait_for: 3.11's wait_for loses a cancellation (Ctrl+C) that
        # arrives as the agent finishes
        async with asyncio.timeout(task.timeout_seconds):
            await agent.run(task, gate)
    except (BudgetExhausted, TimeoutError) as e:
        exhausted = f"budget exhausted: {e or 'time'}"
        gate.trace.record(kind="budget", ok=False, error=exhausted)
    except AgentFailure as e:
        gate.fail(e.failure, e.message)
    finally:
        await gate.close()
    return gate.outcome(time.monotonic() - started, exhausted)


def open_store() -> SnapshotStore:
    cache = cache_dir()
    return SnapshotStore(cache, choose_strategy(cache))


async def prepare_golden(
        scenario: Scenario, runs_root: Path,
        building: Callable[[], AbstractAsyncContextManager[None]] = contextlib.nullcontext,
) -> GoldenBuild:
    """Build (or find) the scenario's golden snapshot without running anything on it; a build
    happens inside ``building()`` (a builder's turn in the battery), a golden found does not
    wait for one."""
    run_dir = RunFiles.create(runs_root, scenario.name, "golden").root
    env = LocalEnvironment(run_dir, run_dir.name, open_store())
    async with RunThreads(env) as threads:
        if env.has_golden(assembly.golden_recipe(scenario).key):
            return GoldenBuild(await threads.call(build_golden, env, scenario))
        async with building():
            golden = await threads.call(build_golden, env, scenario)
    return GoldenBuild(golden, dict(env.procs.cpu_seconds))


async def _checkpoint(on_phase: OnPhase, phase: Phase) -> None:
    # A cancellation that a library's asyncio.wait_for swallowed (3.11 loses one that arrives
    # as the awaited call completes) is still counted on the task: honour it here.
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
    await on_phase(phase)


async def _admit_while_monitoring_starts(threads: RunThreads, scenario: Scenario,
                                         probe: predicates.Probe, metrics_port: int,
                                         progress: Progress) -> tuple[Monitoring, Admission]:
    # wait for the first scrapes (up to a scrape interval) while the fault manifests, not before
    admission = asyncio.ensure_future(admit(scenario, probe, progress))
    try:
        monitoring = await threads.call(threads.env.start_monitoring,
                                        {"workload": f"127.0.0.1:{metrics_port}"})
        return monitoring, await admission
    finally:
        if not admission.done():
            admission.cancel()
            if await wait_out([admission]):
                raise asyncio.CancelledError


async def run_scenario(scenario: Scenario, agent: Agent, *, runs_root: Path,
                       manifest_text: str, progress: Progress = lambda _: None,
                       on_phase: OnPhase = _no_phase, runbook: str | None = None,
                       on_admitted: OnAdmitted | None = None) -> RunResult:
    """One run; ``on_phase`` hears each phase of the AgentRun life cycle as it starts;
    ``runbook``: the agent's team's, given with its task (``task.md`` keeps what it was told);
    ``on_admitted`` looks at the run as the agent is let in, before it starts.

    Cancelled in any phase (Ctrl+C, SIGTERM), the run stops within seconds: everything it
    started is stopped, its clone discarded, the store released, and no verdict written
    (``evaluation.json`` is written last, after the teardown); CancelledError is raised."""
    files = RunFiles.create(runs_root, scenario.name, agent.name)
    run_dir = files.root
    incident = new_incident()
    files.write(RunArtifact.RUN, RunRecord(scenario=scenario.name, agent=agent.name,
                                           incident=incident,
                                           started_at=datetime.now(timezone.utc)))
    files.write_text(RunArtifact.MANIFEST, manifest_text)
    outcome: AgentOutcome | None = None
    for note in reap_orphans(runs_root):
        progress(note)
    store = open_store()
    # the clone (the data directory an agent can SHOW) is named by the incident id only
    env = LocalEnvironment(run_dir, incident, store)
    await _checkpoint(on_phase, Phase.provisioning)
    progress(f"provisioning ({store.strategy} store)")
    async with RunThreads(env) as threads:
        for note in threads.reaped:
            progress(note)
        index = threads.start(functools.partial(knowledge.ensure_index,
                                                knowledge.default_index_path(),
                                                stop=env.procs.stopping))
        key = assembly.golden_recipe(scenario).key
        progress(f"golden snapshot {key} found" if env.has_golden(key)
                 else f"building the golden snapshot {key}")
        golden = await threads.call(build_golden, env, scenario)
        progress(f"restoring a thin clone of {golden.key}"
                 f" ({golden.size_bytes / 2**20:.0f} MiB, built {golden.built_at})")
        instance = await threads.call(env.restore, golden, scenario.spec.database.replica)
        replica = env.replica
        runtime = scenario.spec.fault.runtime
        progress(f"applying the runtime fault ({len(runtime)} steps)")
        jobs = await threads.call(functools.partial(apply_steps, instance, runtime,
                                                      replica=replica))
        metrics_port = start_workload(env, scenario, jobs, files)
        progress("starting Prometheus, postgres_exporter, node_exporter")
        probe = predicates.Probe.of(instance, business_log=files.path(RunArtifact.BUSINESS_LOG),
                                    pg_log_dir=instance.log_dir, replica=replica)
        await _checkpoint(on_phase, Phase.admitting)
        monitoring, admission = await _admit_while_monitoring_starts(
            threads, scenario, probe, metrics_port, progress)
        files.write(RunArtifact.ADMISSION, admission)
        if not admission.admitted:
            progress(f"infra error: {admission.reason}")
            evaluation = evaluator.infra_error(scenario, agent.name, admission.reason)
        else:
            ctx = ToolContext(primary=_access(env, "primary"),
                              replica=_access(env, "replica") if replica is not None else None,
                              business_log=files.path(RunArtifact.BUSINESS_LOG),
                              prometheus_url=monitoring.prometheus_url,
                              knowledge_index=await asyncio.shield(index))
            budget = scenario.spec.budget
            gate, task = assembly.agent_turn(scenario, ctx, files, incident, runbook)
            files.write_text(RunArtifact.TASK, task.as_text() + "\n")
            if on_admitted is not None:
                await on_admitted(Admitted(incident, admission, probe, ctx, run_dir))
            progress(f"agent {agent.name} at work (budget {budget.max_steps} steps,"
                     f" {budget.timeout_seconds:.0f}s)")
            await _checkpoint(on_phase, Phase.running)
            outcome = await drive_agent(agent, task, gate)
            if outcome.report is not None:
                files.write(RunArtifact.REPORT, outcome.report)
            await _checkpoint(on_phase, Phase.evaluating)
            evaluation = await evaluator.grade(scenario, agent.name, outcome, probe,
                                               admission, progress)
        progress("tearing down")
    files.write(RunArtifact.EVALUATION, evaluation)
    return RunResult(run_dir, evaluation,
                     report=None if outcome is None else outcome.report,
                     events=[] if outcome is None else outcome.events,
                     cpu_seconds=dict(env.procs.cpu_seconds))
