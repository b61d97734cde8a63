"""The self-proof battery: a scenario grades agents only if it shows that it is honest.

For each scenario: the fault manifests after restore (every run checks that before its agent
starts); the reference fix reaches Outcome Pass and Safe Pass; every alternative reaches
Outcome Pass; doing nothing does not, and leaves the agent's tools nothing of the harness's
set-up to read (runner.footprints scans the null run as it is let in); the decoy does not (or, where the scenario says the
decoy is unsafe, it does not reach Safe Pass); the generic sweep and the targeted reset do not
(or, where one of their steps is the real fix, they do not reach Safe Pass). Runs are independent, each on its own clone
and its own PostgreSQL, so they run side by side: up to ``jobs`` at a time, fewer while the
CPU is busy (see runner.throttle).
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from dbabench.errors import disposition
from dbabench.agents.scripted import scripted_agent
from dbabench.evaluate import complexity
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.kube import Phase
from dbabench.model.proof import (
    BatteryCpu,
    ProofCheck,
    ProofRun,
    ProveSummary,
    ScenarioProof,
    ScriptedAgent,
)
from dbabench.model.scenario import Scenario
from dbabench.runner.footprints import scanner
from dbabench.runner.run import GoldenBuild, prepare_golden, run_scenario
from dbabench.runner.throttle import MAX_PRESSURE, Throttle
from dbabench.workload.forkserver import FORK_SERVER

Progress = Callable[[str], None]
Planner = Callable[[Scenario], list[ProofRun]]


def default_jobs() -> int:
    """The cap on runs at once; the throttle starts fewer while the CPU is busy. Most of a
    run is waiting (settle, verification window), so two per core fit when faults idle."""
    return 2 * (os.cpu_count() or 1)


def plan(scenario: Scenario) -> list[ProofRun]:
    spec = scenario.spec
    name = scenario.name

    def control(agent: ScriptedAgent, fails: Literal["outcome", "safety"]) -> ProofRun:
        return ProofRun(scenario=name, check=agent, agent=agent, fails=fails,
                        expect="not Outcome Pass" if fails == "outcome" else "not Safe Pass")

    return [
        ProofRun(scenario=name, check="reference", agent="reference",
                 expect="Outcome Pass and Safe Pass"),
        *(ProofRun(scenario=name, check=f"alternative:{alt.name}", agent="reference",
                   remediation=alt.name, expect="Outcome Pass") for alt in spec.alternatives),
        control("null", "outcome"),
        control("decoy", spec.decoy_fails),
        control("sweep", "outcome" if spec.sweep_fixes is None else "safety"),
        control("reset", "outcome" if spec.reset_fixes is None else "safety"),
    ]


def _cpu_used(since: BatteryCpu | None = None) -> BatteryCpu:
    """This process's CPU and its reaped children's (every run's processes, and what those
    reaped: a postmaster's backends), since ``since``."""
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                          resource.RUSAGE_CHILDREN))
    used = BatteryCpu(harness_seconds=round(own.ru_utime + own.ru_stime, 2),
                      children_seconds=round(children.ru_utime + children.ru_stime, 2))
    return used if since is None else used.minus(since)


def retriable(check: ProofCheck) -> bool:
    """A failed check worth another attempt: a fix that did not hold, or a fault that did not
    manifest, may be the busy machine's doing. A control run that passed is never
    retried: a verifier that lets a non-fix through even once is what the battery exists to
    catch. A footprint scan that could not finish is tried again, unless the run let the
    non-fix through as well."""
    scan_failed = (check.footprints is not None and bool(check.footprints.error)
                   and not all(c.passed for c in check.outcome_checks))
    return not check.passed and (not check.admitted or check.run.agent == "reference"
                                 or scan_failed)


def judge(run: ProofRun, evaluation: EvaluationResult) -> tuple[bool, str]:
    """Did the run show what it had to? Returns the verdict and the reason in words."""
    if evaluation.status == "infra_error":
        return False, evaluation.infra_reason or "infrastructure error"
    outcome, safety = evaluation.outcome, evaluation.safety
    assert outcome is not None and safety is not None
    failed = ", ".join(c.name for c in outcome.checks if not c.passed) or "none"
    violations = ", ".join(v.rule for v in safety.violations) or "none"
    seen = f"F={outcome.f:.2f} (failed checks: {failed}); S={safety.penalty:g} ({violations})"
    if not evaluation.report_valid and run.agent != "null":
        seen += f"; report: {evaluation.report_error}"
    if run.fails == "outcome":
        passed = not evaluation.outcome_pass
    elif run.fails == "safety":
        passed = not evaluation.safe_pass
    elif run.remediation is None:
        passed = evaluation.outcome_pass and evaluation.safe_pass
    else:
        passed = evaluation.outcome_pass
    return passed, seen


async def _prove_run(run: ProofRun, path: Path, scenario: Scenario, runs_root: Path,
                     progress: Progress, origin: float) -> ProofCheck:
    marks: list[tuple[str, float]] = []

    async def on_phase(phase: Phase) -> None:
        marks.append((phase.value, time.monotonic()))

    started = time.monotonic()
    offset = round(started - origin, 1)  # when it started, in the battery's time
    # each run in a directory named by its scenario and check, where a reader looks for it
    root = runs_root / scenario.name / run.check.replace(":", "-")
    root.mkdir(parents=True, exist_ok=True)
    # the null run changes nothing: what its agent would see is what every agent sees
    look, scans = scanner(scenario) if run.agent == "null" else (None, [])
    try:
        agent = scripted_agent(run.agent, scenario, run.remediation)
        result = await run_scenario(scenario, agent, runs_root=root,
                                    manifest_text=path.read_text(), on_phase=on_phase,
                                    on_admitted=look)
    except Exception as e:
        # a failure in one run fails that check, as dbabench run would name it; the battery
        # goes on
        failed = disposition(e)
        wall = round(time.monotonic() - started, 1)
        progress(f"{scenario.name} {run.check}: ERROR {failed.reason}")
        return ProofCheck(run=run, passed=False, admitted=False, wall_seconds=wall,
                          started_seconds=offset, detail=failed.reason)
    now = time.monotonic()
    phases = {name: round(until - since, 2)
              for (name, since), (_, until) in zip(marks, [*marks[1:], ("end", now)])}
    wall = round(now - started, 1)
    passed, detail = judge(run, result.evaluation)
    footprints = scans[0] if scans else None
    if footprints is not None and (footprints.error or footprints.open_footprints):
        passed = False
        detail += "; " + (footprints.error or "harness footprints the agent can read: " + "; ".join(
            f"{f.place.value} {f.item}: {f.text[:80]}" for f in footprints.open_footprints[:3]))
    progress(f"{scenario.name} {run.check}: {'ok' if passed else 'FAILED'} in {wall:.0f}s")
    check = ProofCheck(run=run, passed=passed, detail=detail, run_dir=result.run_dir,
                       admitted=result.evaluation.status != "infra_error",
                       wall_seconds=wall, started_seconds=offset, phases=phases,
                       cpu_seconds=result.cpu_seconds,
                       outcome_checks=(result.evaluation.outcome.checks
                                       if result.evaluation.outcome else []),
                       footprints=footprints)
    if run.check == "reference" and check.admitted:
        try:
            check.difficulty = complexity.measure(scenario, result.events)
        except complexity.UnmeasurableError as e:
            check.difficulty_error = str(e)
    return check


async def _all_ready(goldens: Iterable[asyncio.Future[GoldenBuild]], since: float) -> float:
    """Seconds from ``since`` until every golden is found, built or failed."""
    await asyncio.gather(*goldens, return_exceptions=True)
    return round(time.monotonic() - since, 1)


async def prove(selected: list[tuple[Path, Scenario]], *, jobs: int, runs_root: Path,
                progress: Progress = lambda _: None, planner: Planner = plan,
                max_pressure: float = MAX_PRESSURE, retries: int = 0) -> ProveSummary:
    """Run every scenario's battery (``planner`` says which runs), up to ``jobs`` runs at a
    time while the CPU's pressure stays at most ``max_pressure`` percent, and judge each run;
    reference runs also measure the scenario's difficulty. A ``retriable`` failure is run
    again up to ``retries`` times, and a pass on a retry keeps the failures before it."""
    started_at, started = datetime.now(timezone.utc), time.monotonic()
    cpu_before = _cpu_used()
    throttle = Throttle(jobs, max_pressure=max_pressure)
    by_name = {scenario.name: (path, scenario) for path, scenario in selected}

    # Goldens are built beside the runs, a builder per core and outside the runs' slots, in
    # the scenarios' order; a scenario's runs queue once its own is ready. Runs mostly wait
    # out their windows, so the builds use cores the runs leave idle (one after another
    # before the runs, they were 221 s of a 1205 s battery with every golden built).
    builders = asyncio.Semaphore(os.cpu_count() or 1)
    goldens = {name: asyncio.ensure_future(
                   prepare_golden(scenario, runs_root / name, lambda: builders))
               for name, (_, scenario) in by_name.items()}
    goldens_ready = asyncio.ensure_future(_all_ready(goldens.values(), started))

    plans = {name: planner(scenario) for name, (_, scenario) in by_name.items()}
    # round robin over scenarios: runs side by side belong to different scenarios, so one
    # scenario's CPU-hungry fault is not running in every slot at once; a free slot goes to
    # the ready run that comes first in this order
    order = [runs[i] for i in range(max(map(len, plans.values()), default=0))
             for runs in plans.values() if i < len(runs)]

    async def one(index: int, run: ProofRun) -> ProofCheck:
        path, scenario = by_name[run.scenario]
        try:
            await asyncio.shield(goldens[run.scenario])
        except Exception as e:
            # a fault program that cannot be built fails every check of its scenario
            return ProofCheck(run=run, passed=False, admitted=False, wall_seconds=0.0,
                              detail=f"golden snapshot not built: {disposition(e).reason}")
        earlier: list[str] = []
        while True:
            async with throttle.slot(index):
                check = await _prove_run(run, path, scenario, runs_root, progress, started)
            if len(earlier) >= retries or not retriable(check):
                check.earlier = earlier
                return check
            earlier.append(check.detail)
            progress(f"{run.scenario} {run.check}: retrying ({len(earlier)} of {retries})")

    try:
        checks = await asyncio.gather(*(one(i, run) for i, run in enumerate(order)))
        golden_seconds = await goldens_ready
    finally:
        for task in [*goldens.values(), goldens_ready]:
            task.cancel()
    # every run's workload was forked by it: reaped now, they and their server are counted
    FORK_SERVER.close()
    golden_cpu = BatteryCpu(harness_seconds=0.0, children_seconds=round(sum(
        sum(g.result().cpu_seconds.values()) for g in goldens.values() if not g.exception()), 2))
    proofs = [ScenarioProof.of(name, path, [c for c in checks if c.run.scenario == name])
              for name, (path, _) in by_name.items()]
    return ProveSummary(started_at=started_at, jobs=jobs, scenarios=proofs,
                        passed=all(p.passed for p in proofs),
                        wall_seconds=round(time.monotonic() - started, 1),
                        golden_seconds=golden_seconds, cpu=_cpu_used(since=cpu_before),
                        golden_cpu=golden_cpu,
                        throttle_waits={k: round(v, 1) for k, v in throttle.waited.items()})
