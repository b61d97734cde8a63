"""The Kubernetes resources besides Scenario: AgentRun and Evaluation, and the status blocks.

Status follows CloudNativePG and the Kubernetes API conventions: a coarse ``phase`` with a
``phaseReason`` for people, and ``conditions`` in the metav1.Condition shape for machines.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any, Literal, get_args

from pydantic import Field, model_validator

from dbabench.model.agent import Effort
from dbabench.model.base import Model
from dbabench.model.evaluation import CostBasis, EvaluationResult
from dbabench.model.proof import ScriptedAgent
from dbabench.model.scenario import BudgetSpec, Category
from dbabench.model.status import Condition


class AgentKind(str, Enum):
    """Every agent a run, a campaign or an AgentRun takes (a single ``dbabench run`` also
    takes listen and human, which need its terminal)."""

    reference = "reference"
    decoy = "decoy"
    null = "null"
    sweep = "sweep"
    reset = "reset"
    react = "react"
    plan = "plan"
    external = "external"


MODEL_KINDS = frozenset({AgentKind.react, AgentKind.plan})
"""Agents whose every step is a model call the harness makes (and meters)."""
SCRIPTED_KINDS = frozenset(AgentKind(name) for name in get_args(ScriptedAgent))
"""The harness's own agents, which follow the scenario's manifest (model.proof)."""


class SecretKeyRef(Model):
    """A key of a Secret in the AgentRun's namespace (the Kubernetes SecretKeySelector)."""

    name: str = Field(min_length=1)
    key: str = Field(min_length=1)


class AgentSpec(Model):
    kind: AgentKind
    remediation: str | None = Field(default=None,
                                    description="reference only: a named alternative fix")
    image: str | None = Field(default=None, description="external only: the agent's image")
    command: list[str] | None = Field(
        default=None, min_length=1,
        description="external only, run locally (dbabench campaign run): the agent's command"
                    " line, run sandboxed as dbabench run --agent external runs it; on"
                    " Kubernetes an external agent is an image")
    runbook: str | None = Field(
        default=None, min_length=1, max_length=65536,
        description="your team's runbook, given to the agent with its task (a model agent reads"
                    " it in its first message, an external one in its task file)")
    model: str | None = Field(
        default=None, description="react and plan: PROVIDER:MODEL, e.g. openai:gpt-4o-mini"
                                  " (providers: openai, openrouter, selfhosted)")
    base_url: str | None = Field(
        default=None, description="react and plan: the provider's address, where it is not"
                                  " the provider's own (selfhosted always; a gateway)")
    api_key_secret: SecretKeyRef | None = Field(
        default=None, description="react and plan: the Secret key holding the provider's API"
                                  " key; it is read when the run starts and is in no status")
    effort: Effort | None = Field(default=None, description="react and plan: reasoning effort")
    max_reply_tokens: int | None = Field(default=None, gt=0,
                                         description="react and plan: output allowance per call")
    max_model_calls: int | None = Field(
        default=None, gt=0, description="react and plan; default: twice the tool-call budget")
    max_cost_usd: float | None = Field(default=None, gt=0,
                                       description="react and plan: the run's model cost cap")
    rate_limit_wait_seconds: float | None = Field(
        default=None, ge=0, description="react and plan: how long one call may wait out 429s"
                                        " and 5xx before it is an api-error (default 900)")
    meter: str | None = Field(
        default=None, description="external only: the provider (openai, openrouter, selfhosted)"
        " the run's metering proxy forwards the agent's model calls to, at baseUrl with the key"
        " of apiKeySecret; the agent gets OPENAI_BASE_URL (the proxy) and OPENAI_API_KEY (its"
        " tool token), never the key, and its cost is measured (maxCostUsd caps it)")

    @property
    def label(self) -> str:
        """The agent's name in a campaign's tables: its kind, and what tells two of a kind
        apart (the alternative fix, the model and its effort, the image, the command with
        its paths' last parts)."""
        detail = self.remediation or self.model or self.image or (
            None if self.command is None else
            " ".join(word.rsplit("/", 1)[-1] for word in self.command))
        label = f"{self.kind.value}:{detail}" if detail else self.kind.value
        return label + (f"@{self.effort}" if self.effort else "")

    @model_validator(mode="after")
    def _fields_fit_kind(self) -> "AgentSpec":
        if self.kind == AgentKind.external and (self.image is None) == (self.command is None):
            raise ValueError("an external agent needs one of image (on Kubernetes) and command"
                             " (locally)")
        if self.kind != AgentKind.external and (self.image or self.command):
            raise ValueError(f"image and command: for external agents only, not"
                             f" {self.kind.value}")
        if self.remediation and self.kind != AgentKind.reference:
            raise ValueError("remediation applies to the reference agent only")
        if self.kind in MODEL_KINDS and not self.model:
            raise ValueError(f"a {self.kind.value} agent needs model (PROVIDER:MODEL)")
        if self.meter is not None and self.kind != AgentKind.external:
            raise ValueError(f"meter: for external agents only, not {self.kind.value}"
                             " (a model agent's calls are metered anyway)")
        # a metered external agent's calls go to a gateway: where, with which key, how much
        metered = ("base_url", "api_key_secret", "max_cost_usd") if self.meter else ()
        model_fields = [name for name in ("model", "base_url", "api_key_secret", "effort",
                                          "max_reply_tokens", "max_model_calls", "max_cost_usd",
                                          "rate_limit_wait_seconds")
                        if getattr(self, name) is not None and name not in metered]
        if model_fields and self.kind not in MODEL_KINDS:
            raise ValueError(f"{', '.join(model_fields)}: for react and plan agents only,"
                             f" not {self.kind.value}" + (
                                 "" if self.kind != AgentKind.external or self.meter else
                                 " (an external agent takes baseUrl, apiKeySecret and"
                                 " maxCostUsd with meter)"))
        return self


class AgentRunSpec(Model):
    scenario: str = Field(description="name of a Scenario in the same namespace")
    agent: AgentSpec
    budget: BudgetSpec | None = Field(default=None, description="overrides the scenario's")


class Phase(str, Enum):
    pending = "Pending"
    provisioning = "Provisioning"
    admitting = "Admitting"
    running = "Running"
    evaluating = "Evaluating"
    succeeded = "Succeeded"
    failed = "Failed"
    infra_error = "InfraError"


class RunSummary(Model):
    outcome_pass: bool
    diagnosis_pass: bool
    safe_pass: bool
    integrity_violated: bool = False
    f: float
    f1: float
    penalty: float
    cost_usd: float
    cost_basis: CostBasis = Field(default="none", description="metered, self-reported, mixed,"
                                  " or none: no model call")

    @classmethod
    def of(cls, evaluation: EvaluationResult) -> "RunSummary":
        """A scored evaluation's verdicts and cost."""
        assert evaluation.outcome and evaluation.diagnosis and evaluation.safety
        return cls(outcome_pass=evaluation.outcome_pass,
                   diagnosis_pass=evaluation.diagnosis_pass, safe_pass=evaluation.safe_pass,
                   integrity_violated=evaluation.integrity.violated,
                   f=evaluation.outcome.f, f1=evaluation.diagnosis.f1,
                   penalty=evaluation.safety.penalty, cost_usd=evaluation.efficiency.cost_usd,
                   cost_basis=evaluation.efficiency.cost_basis)


class AgentRunStatus(Model):
    phase: Phase = Phase.pending
    phase_reason: str = ""
    observed_generation: int | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    evaluation: str | None = Field(default=None, description="name of the owned Evaluation")
    summary: RunSummary | None = None
    conditions: list[Condition] = Field(default_factory=list)


class OwnerReference(Model):
    """metav1.OwnerReference: the owner is garbage-collected with what it owns."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = True
    block_owner_deletion: bool = True


class ObjectMeta(Model):
    """What the operator writes of metav1.ObjectMeta on the resources it creates."""

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)
    namespace: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    owner_references: list[OwnerReference] = Field(default_factory=list)


def wire(resource: Model) -> dict[str, Any]:
    """A resource, or a part of one, as the API server takes it."""
    return resource.model_dump(mode="json", by_alias=True, exclude_none=True)


class AgentRun(Model):
    api_version: Literal["dbabench.io/v1alpha1"]
    kind: Literal["AgentRun"]
    metadata: ObjectMeta
    spec: AgentRunSpec
    status: AgentRunStatus | None = None


class EvaluationSpec(Model):
    agent_run: str
    result: EvaluationResult


class Evaluation(Model):
    api_version: Literal["dbabench.io/v1alpha1"]
    kind: Literal["Evaluation"]
    metadata: ObjectMeta
    spec: EvaluationSpec


class CampaignSpec(Model):
    """Every scenario with every agent, ``repeats`` times: the AgentRuns of one comparison."""

    scenarios: list[str] = Field(
        min_length=1, description="Scenarios in the same namespace: names, or shell-style"
                                  " patterns matched against their names (index-*, *)")
    categories: list[Category] | None = Field(
        default=None, min_length=1, description="only the scenarios of these categories")
    difficulty: Literal["Easy", "Hard"] | None = Field(
        default=None, description="only the scenarios of this measured difficulty")
    agents: list[AgentSpec] = Field(min_length=1)
    repeats: int = Field(default=1, ge=1, le=100)
    budget: BudgetSpec | None = Field(default=None, description="overrides every scenario's")
    max_parallel: int = Field(default=1, ge=1, le=100,
                              description="AgentRuns of this campaign in flight at once")
    max_cost_usd: float | None = Field(
        default=None, gt=0, description="campaign-wide: once its runs' recorded cost reaches"
                                        " it, no new run starts (running ones finish)")


class AgentTally(Model):
    """One agent's results so far; rates are over scored runs (infra errors are not scores)."""

    agent: str
    runs: int = 0
    finished: int = 0
    scored: int = 0
    infra_errors: int = 0
    integrity_violated: int = Field(default=0, description="scored runs that went for the"
                                                           " judge: they pass nothing")
    outcome_pass: int = 0
    diagnosis_pass: int = 0
    safe_pass: int = 0
    safe_pass_rate: float | None = None
    cost_usd: float = 0.0
    cost_basis: CostBasis = Field(default="none", description="of its runs' costs together")


class CampaignStatus(Model):
    phase: Literal["Pending", "Running", "Succeeded", "Capped", "Failed"] = Field(
        default="Pending", description="Capped: the cost cap stopped it before every run")
    phase_reason: str = ""
    observed_generation: int | None = None
    scenarios: list[str] | None = Field(
        default=None, description="the scenarios the campaign runs, its patterns and filters"
                                  " resolved when it started (kept: a Scenario added later"
                                  " does not change the plan)")
    runs: int = 0
    finished: int = 0
    not_started: int = Field(default=0, description="runs the cost cap kept from starting")
    cost_usd: float = 0.0
    agents: list[AgentTally] = Field(default_factory=list)
    leaderboard: str | None = Field(
        default=None, description="leaderboard.md of the finished runs, as `dbabench campaign`"
                                  " writes it for the same matrix")
    conditions: list[Condition] = Field(default_factory=list)


class Campaign(Model):
    api_version: Literal["dbabench.io/v1alpha1"]
    kind: Literal["Campaign"]
    metadata: ObjectMeta
    spec: CampaignSpec
    status: CampaignStatus | None = None
