"""The self-proof battery's record: what each scenario had to show, and whether it did."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from dbabench.model.base import Model, Record
from dbabench.model.difficulty import Difficulty
from dbabench.model.evaluation import CheckResult
from dbabench.model.footprint import FootprintScan

ScriptedAgent = Literal["reference", "decoy", "null", "sweep", "reset"]
"""The harness's own agents: the reference fix, and the controls every battery runs."""
CONTROLS: tuple[ScriptedAgent, ...] = ("null", "decoy", "sweep", "reset")
"""The control runs of a battery: each must fail what its scenario says (ProofRun.fails)."""


class ProofRun(Model):
    """One run the battery makes: a scripted agent, and for the reference which remediation."""

    scenario: str
    check: str = Field(description="reference, alternative:NAME, or a control (null, decoy,"
                                   " sweep, reset)")
    agent: ScriptedAgent
    remediation: str | None = None
    fails: Literal["outcome", "safety"] | None = Field(
        default=None, description="a control run (null, decoy, sweep, reset): what it must fail,"
                                  " Outcome Pass or, where it does restore service, Safe Pass")
    expect: str = Field(description="what the run must show, in words")


class ProofCheck(Model):
    run: ProofRun
    passed: bool
    admitted: bool = Field(description="the fault manifested after restore")
    detail: str
    run_dir: Path | None = None
    wall_seconds: float
    started_seconds: float | None = Field(
        default=None, description="when the run started, in seconds from the battery's start")
    cpu_seconds: dict[str, float] = Field(
        default_factory=dict,
        description="CPU seconds of the run's processes by name (postgres: the postmaster and"
                    " its backends; workload; prometheus; exporters), the harness's own apart")
    phases: dict[str, float] = Field(
        default_factory=dict,
        description="seconds spent in each AgentRun phase (Provisioning, Admitting, ...)")
    outcome_checks: list[CheckResult] = Field(
        default_factory=list,
        description="each outcome check's verdict and measured value (version 3): how far a"
                    " fixed run, and a control run, came from each threshold")
    difficulty: Difficulty | None = Field(
        default=None, description="reference runs: D and C read from what its hops returned")
    difficulty_error: str | None = Field(default=None,
                                         description="why the run could not be measured")
    earlier: list[str] = Field(
        default_factory=list,
        description="what each earlier attempt of this check showed, where it was retried:"
                    " a check that passed only on a retry is flaky and is reported as such")
    footprints: FootprintScan | None = Field(
        default=None, description="null runs (version 5): what the agent's tools could read"
                                  " as it came in; a footprint nobody accepted fails the check")


class ScenarioProof(Model):
    scenario: str
    path: Path
    checks: list[ProofCheck]
    manifests: bool = Field(description="the fault manifested in every run")
    passed: bool
    run_seconds: float = Field(description="what the scenario costs the battery: the sum of"
                                           " its runs' wall times")

    @classmethod
    def of(cls, scenario: str, path: Path, checks: list[ProofCheck]) -> "ScenarioProof":
        manifests = all(c.admitted for c in checks)
        return cls(scenario=scenario, path=path, checks=checks, manifests=manifests,
                   passed=manifests and all(c.passed for c in checks),
                   run_seconds=round(sum(c.wall_seconds for c in checks), 1))

    @property
    def flaky(self) -> list[ProofCheck]:
        return [c for c in self.checks if c.passed and c.earlier]

    @property
    def difficulty(self) -> Difficulty | None:
        return next((c.difficulty for c in self.checks if c.difficulty is not None), None)


class BatteryCpu(Model):
    harness_seconds: float = Field(description="the battery's own process: every run's"
                                               " harness, tools, scripted agent and verifier")
    children_seconds: float = Field(description="every process it started and reaped, and"
                                                " what they reaped in turn")

    @property
    def total_seconds(self) -> float:
        return self.harness_seconds + self.children_seconds

    def minus(self, earlier: "BatteryCpu") -> "BatteryCpu":
        """What was used after ``earlier``, of which this is a later reading (or whose part
        it is)."""
        return BatteryCpu(
            harness_seconds=round(self.harness_seconds - earlier.harness_seconds, 2),
            children_seconds=round(self.children_seconds - earlier.children_seconds, 2))


PROVE_VERSION = 5
"""1: no version, no CPU figures; 2: each run's CPU by process, the battery's CPU in all, when
each run started, how long the goldens took and what the throttle waited for; 3: the goldens'
share of the battery's CPU, and each run's outcome checks with their measured values; 4: the
goldens are built beside the runs, their CPU what their own processes used; 5: the null run
scans for harness footprints as it is let in."""


class ProveSummary(Record):
    version: int = PROVE_VERSION
    started_at: datetime
    jobs: int
    wall_seconds: float
    golden_seconds: float | None = Field(
        default=None, description="from the battery's start until every golden was found or"
                                  " built; before version 4 no run started meanwhile, since"
                                  " then a scenario's runs start once its own golden is ready")
    cpu: BatteryCpu | None = None
    golden_cpu: BatteryCpu | None = Field(
        default=None, description="the part of ``cpu`` spent finding or building every golden"
                                  " (version 3): a cost of the scenarios, not of their runs."
                                  " Since version 4 what the builds' processes used (initdb,"
                                  " their PostgreSQL), the harness's share being in its own")
    throttle_waits: dict[str, float] = Field(
        default_factory=dict,
        description="seconds starts waited, by reason: spacing (a start's load shows in the"
                    " CPU's pressure only after a while) or pressure (the CPU had no room)")
    scenarios: list[ScenarioProof]
    passed: bool

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: object) -> object:
        # version 1 wrote neither a version nor the goldens' time
        if isinstance(data, dict) and "version" not in data and "golden_seconds" not in data:
            return {**data, "version": 1}
        return data
