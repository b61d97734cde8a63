"""Campaigns run locally: a matrix of agents x scenarios x repeats, each cell a run.

A campaign is the Campaign resource's spec, the one the operator takes, run on this machine.
Its directory holds ``campaign.json`` (what was asked, and what decides a verdict: the
manifests', prompts' and scorer's digests), ``results.jsonl`` (a line per finished cell,
appended as it finishes: the source of every table), ``events.jsonl`` (cells started, ended,
not started) and ``cells/<agent>/<scenario>/<repeat>/`` (each cell's run directory, with the
``task.md`` its agent was given, and the agent's ``runbook.md`` where it has one). A
resume skips the cells ``results.jsonl`` has and refuses a campaign whose verdicts would not
be comparable with those already recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import dbabench
from dbabench.model.artifacts import CampaignOutput
from dbabench.agents import registry
from dbabench.agents.base import Agent
from dbabench.errors import BadInput, disposition
from dbabench.evaluate import scorer
from dbabench.model.campaign import CampaignRecord, CellResult, CellStatus
from dbabench.records import campaign as files
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.kube import AgentSpec, CampaignSpec, RunSummary
from dbabench.model.report import Report
from dbabench.model.scenario import Scenario
from dbabench.model.trace import TraceEvent
from dbabench.pricing import load_prices
from dbabench.results.html_report import write_tables
from dbabench.runner.run import RunResult, run_scenario
from dbabench.runner.throttle import Throttle
from dbabench.scenario import difficulty

CellProgress = Callable[["Cell", str, bool], None]
"""Hears each cell's news: (the cell, what happened, whether the cell has ended)."""
PROMPTS = Path(registry.__file__).with_name("prompts.py")


class CampaignError(BadInput, ValueError):
    """A campaign that cannot start as asked: an agent, a scenario, a resume that differs."""


@dataclass(frozen=True)
class Cell:
    scenario: str
    agent: AgentSpec
    repeat: int

    @property
    def label(self) -> str:
        return self.agent.label

    @property
    def key(self) -> tuple[str, str, int]:
        return self.label, self.scenario, self.repeat


def _pattern(entry: str) -> bool:
    return any(c in entry for c in "*?[")


def select(spec: CampaignSpec, available: Mapping[str, Scenario],
           stored: dict[str, difficulty.Difficulty]) -> CampaignSpec:
    """The campaign with its scenarios resolved: each entry a name or a pattern over
    ``available``'s names (in the entries' order, patterns' matches sorted, each once), then
    only those of the asked categories and measured difficulty. Every entry must name or
    match one, and something must be left."""
    names: list[str] = []
    for entry in spec.scenarios:
        matched = (sorted(n for n in available if fnmatchcase(n, entry)) if _pattern(entry)
                   else [entry] if entry in available else [])
        if not matched:
            raise CampaignError(f"no scenario {'matches' if _pattern(entry) else 'is named'}"
                                f" {entry!r}")
        names += [n for n in matched if n not in names]
    if spec.categories is not None:
        names = [n for n in names if available[n].spec.category in spec.categories]
    if spec.difficulty is not None:
        names = [n for n in names
                 if difficulty.describe(available[n], stored)[1] == spec.difficulty]
    if not names:
        raise CampaignError("no scenario is left of " + ", ".join(spec.scenarios) + " once"
                            " filtered by" + "".join(
                                [f" categories {', '.join(c.value for c in spec.categories)}"
                                 if spec.categories else "",
                                 f" difficulty {spec.difficulty}" if spec.difficulty else ""]))
    return spec.model_copy(update={"scenarios": names, "categories": None, "difficulty": None})


def cells(spec: CampaignSpec) -> list[Cell]:
    """Of a resolved campaign (``select``), in the order they start: repeats outermost, so
    early results cover every pair."""
    return [Cell(scenario, agent, repeat) for repeat in range(spec.repeats)
            for scenario in spec.scenarios for agent in spec.agents]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _commit() -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=Path(dbabench.__file__).parent, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def record(name: str, spec: CampaignSpec, scenarios: dict[str, Scenario],
           digests: dict[str, str], *, jobs: int, max_cost_usd: float | None,
           command: list[str], cwd: str, created_at: datetime | None = None,
           asked: CampaignSpec | None = None) -> CampaignRecord:
    """What this dbabench records of a campaign now: ``spec`` resolved (``select``), as
    ``asked`` where that differs; ``digests``: of each scenario's manifest as the shell has
    it (a file, a resource's spec)."""
    return CampaignRecord(
        name=name, spec=spec, asked=asked, scenario_digests={s: digests[s] for s in spec.scenarios},
        symptoms={s: scenarios[s].spec.symptom for s in spec.scenarios if s in scenarios},
        prompt_digest=digest(PROMPTS.read_bytes()), scorer=scorer.current(),
        price_table=load_prices().as_of, jobs=jobs, max_cost_usd=max_cost_usd,
        command=command, cwd=cwd, commit=_commit(),
        created_at=created_at or datetime.now(timezone.utc))


def check_resumable(stored: CampaignRecord, now: CampaignRecord) -> None:
    """A resume adds cells to the same table: refuse what would make them incomparable."""
    differences = []
    if stored.spec != now.spec:
        differences.append("the matrix (agents, scenarios, repeats or budget) differs from"
                           f" {files.CAMPAIGN_FILE}'s")
    changed = sorted(s for s in now.scenario_digests
                     if stored.scenario_digests.get(s) != now.scenario_digests[s])
    if changed:
        differences.append(f"the manifests of {', '.join(changed)} changed")
    if stored.prompt_digest != now.prompt_digest:
        differences.append("the model agents' prompts changed")
    if stored.scorer.digest != now.scorer.digest:
        differences.append(f"the scorer changed ({stored.scorer.digest[:12]} ->"
                           f" {now.scorer.digest[:12]}); rescore the runs and start anew")
    if differences:
        raise CampaignError("cannot resume: " + "; ".join(differences))


def build_agent(spec: AgentSpec, scenario: Scenario) -> Agent:
    """A cell's agent; a model agent's address and key (a metered command's too) come from
    this environment (the spec's baseUrl first), as for ``dbabench run``."""
    if registry.metered_provider(spec) is not None:
        env = {**os.environ, **registry.model_environment(spec, None)}
        return registry.build(spec, scenario, env=env)
    return registry.build(spec, scenario)


def _event(out: Path, name: str, cell: Cell, **detail: Any) -> None:
    files.event(out, name, agent=cell.label, scenario=cell.scenario, repeat=cell.repeat,
                **detail)


def cell_dir(out: Path, cell: Cell) -> Path:
    agent = re.sub(r"[^A-Za-z0-9._@-]+", "-", cell.label)
    return out / "cells" / agent / cell.scenario / str(cell.repeat)


def cell_result(cell: Cell, scenario: Scenario, stored: dict[str, difficulty.Difficulty],
                evaluation: EvaluationResult | None, *, wall: float = 0.0,
                run_dir: str | None = None, report: Report | None = None,
                trace: Iterable[TraceEvent] = (), reason: str | None = None,
                unscored: CellStatus = "harness_error",
                finished_at: datetime | None = None) -> CellResult:
    """The results line of a finished cell: its evaluation (None: the cell ended ``unscored``
    for ``reason``), with what the report claimed and why a model stopped where known."""
    _, label = difficulty.describe(scenario, stored)
    measured = difficulty.current(scenario, stored)
    common: dict[str, Any] = dict(
        agent=cell.label, scenario=cell.scenario, repeat=cell.repeat,
        category=scenario.spec.category.value, difficulty=label,
        depth=len(scenario.spec.reference_path),
        complexity=None if measured is None else measured.complexity,
        wall_seconds=round(wall, 1), run_dir=run_dir,
        finished_at=finished_at or datetime.now(timezone.utc))
    if evaluation is None:
        return CellResult(status=unscored, reason=reason, **common)
    if evaluation.status == "infra_error":
        return CellResult(status="infra_error", reason=evaluation.infra_reason, **common)
    assert evaluation.outcome and evaluation.safety
    return CellResult(status="scored", summary=RunSummary.of(evaluation),
                      failed_checks=[c.name for c in evaluation.outcome.checks if not c.passed],
                      violations=sorted({v.rule for v in evaluation.safety.violations}),
                      claimed_fixed=report is not None and bool(report.verification.strip()),
                      output_limited=any(e.failure == "output-limit" for e in trace),
                      tool_calls=evaluation.efficiency.tool_calls, **common)


def _ran(cell: Cell, scenario: Scenario, stored: dict[str, difficulty.Difficulty], out: Path,
         wall: float, run: RunResult) -> CellResult:
    return cell_result(cell, scenario, stored, run.evaluation, wall=wall,
                       run_dir=str(run.run_dir.relative_to(out)), report=run.report,
                       trace=run.events)


def check_agents(spec: CampaignSpec, scenarios: dict[str, tuple[Path, Scenario]]) -> None:
    """Every agent of the campaign can be built for every scenario (its model known and
    priced, its key at hand): bad input now, not a failed cell an hour in."""
    labels = [a.label for a in spec.agents]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise CampaignError(f"agents listed twice: {', '.join(twice)} (repeats: is how a"
                            " campaign runs an agent more than once)")
    for agent in spec.agents:
        for _, scenario in scenarios.values():
            build_agent(agent, scenario)


def spent(results: list[CellResult]) -> float:
    return round(sum(r.summary.cost_usd for r in results if r.summary is not None), 6)


async def run_campaign(campaign: CampaignRecord, out: Path,
                       scenarios: dict[str, tuple[Path, Scenario]],
                       stored: dict[str, difficulty.Difficulty], *,
                       progress: CellProgress = lambda *_: None) -> list[CellResult]:
    """Run every cell ``results.jsonl`` does not have yet, at most ``campaign.jobs`` at once
    under the CPU gate; once the recorded cost reaches ``campaign.max_cost_usd`` no new cell
    starts. Cancelled (Ctrl+C), running cells stop as a run does and pending ones never start;
    the tables are written for what finished in every case. ``stored``: the scenarios'
    measured difficulty."""
    check_agents(campaign.spec, scenarios)
    out.mkdir(parents=True, exist_ok=True)
    (out / files.CAMPAIGN_FILE).write_text(campaign.model_dump_json(indent=1))
    results = files.results(out)
    done = {(r.agent, r.scenario, r.repeat) for r in results}
    pending = [c for c in cells(campaign.spec) if c.key not in done]
    throttle = Throttle(campaign.jobs)
    cap = campaign.max_cost_usd
    files.event(out, "campaign-started", cells=len(pending), finished=len(done))

    async def one(cell: Cell) -> None:
        path, scenario = scenarios[cell.scenario]
        async with throttle.slot():
            if cap is not None and spent(results) >= cap:
                _event(out, files.NOT_STARTED, cell,
                       reason=f"the campaign's cost cap of ${cap:g} was reached")
                return
            _event(out, "cell-started", cell)
            progress(cell, "started", False)
            root = cell_dir(out, cell)
            root.mkdir(parents=True, exist_ok=True)
            if cell.agent.runbook is not None:
                (root / CampaignOutput.RUNBOOK).write_text(cell.agent.runbook)
            started = time.monotonic()
            try:
                run = await run_scenario(scenario, build_agent(cell.agent, scenario),
                                         runs_root=root, manifest_text=path.read_text(),
                                         runbook=cell.agent.runbook,
                                         progress=lambda news: progress(cell, news, False))
                result = _ran(cell, scenario, stored, out, time.monotonic() - started, run)
            except Exception as e:  # noqa: BLE001  a failure is this cell's only
                # the boundary every command has: what dbabench run would exit 3 for
                failed = disposition(e)
                result = cell_result(cell, scenario, stored, None,
                                     wall=time.monotonic() - started,
                                     reason=failed.reason, unscored=failed.unscored)
        results.append(result)
        files.append(out / files.RESULTS_FILE, result.model_dump(mode="json"))
        _event(out, "cell-finished", cell, status=result.status, reason=result.reason)
        verdict = (result.reason if result.summary is None else
                   "Safe Pass" if result.summary.safe_pass else "scored, not Safe Pass")
        progress(cell, verdict, True)

    try:
        await asyncio.gather(*(one(c) for c in pending))
    except asyncio.CancelledError:
        files.event(out, "campaign-interrupted")
        raise
    finally:
        write_tables(out)
    files.event(out, "campaign-finished")
    return files.results(out)
