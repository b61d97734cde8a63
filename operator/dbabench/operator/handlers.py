"""kopf handlers for Scenario and AgentRun.

Scenario: validate the spec, build the golden snapshot once, report it in status.
AgentRun: a daemon per run walks Pending → Provisioning → Admitting → Running → Evaluating →
Succeeded | Failed | InfraError through the same runner the CLI uses, then records the
Evaluation (owned by the AgentRun) and a summary in the AgentRun's status.

Restart safety: an Evaluation is named after its AgentRun and created only if absent. A daemon
that starts for a run that already has one adopts it instead of running again; one that finds a
run in a non-terminal phase without one (the operator died mid-run; the run's processes were
stopped with it or are reaped by the next run) starts the run afresh.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from pathlib import Path
from typing import Any, Literal

import kopf
import yaml
from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from dbabench.agents import registry
from dbabench.env.kube import KubeSettings, campaign_results
from dbabench.errors import RETRY_LIMIT, BadInput, Disposition, disposition
from dbabench.model.crd import GROUP, VERSION
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.kube import (MODEL_KINDS, SCRIPTED_KINDS, AgentKind, AgentRunSpec, AgentSpec,
                                 CampaignSpec, CampaignStatus, Evaluation, EvaluationSpec,
                                 ObjectMeta, Phase, RunSummary, wire)
from dbabench.model.scenario import Scenario
from dbabench.model.status import Condition, ScenarioStatus, SnapshotStatus
from dbabench.operator import status as st
from dbabench.operator.api import KubeApi, owner_reference
from dbabench.operator import campaigns
from dbabench.operator.metrics import OperatorMetrics
from dbabench.operator.pods import PodsExecutor
from dbabench.runner.campaign import CampaignError
from dbabench.runner.campaign import select as campaign_select
from dbabench.runner.run import prepare_golden, run_scenario
from dbabench.scenario import difficulty
from dbabench.scenario.datasets import complete
from dbabench.scenario.loader import format_validation_error, scenarios_root

SCENARIOS = (GROUP, VERSION, "scenarios")
AGENTRUNS = (GROUP, VERSION, "agentruns")
CAMPAIGNS = (GROUP, VERSION, "campaigns")
CAMPAIGN_POLL_SECONDS = 5.0
RUN_KINDS = {"local": SCRIPTED_KINDS | MODEL_KINDS,
             "pods": SCRIPTED_KINDS | MODEL_KINDS | {AgentKind.external}}
"""The agents each executor runs."""


class OperatorConfig(BaseSettings):
    """Read from ``DBABENCH_OPERATOR_*`` environment variables (the chart sets them); ``kube``
    is JSON."""

    model_config = SettingsConfigDict(env_prefix="DBABENCH_OPERATOR_", extra="ignore")

    runs_dir: Path = Field(default=Path("/var/lib/dbabench/runs"),
                           description="where run directories are kept")
    max_concurrent_runs: int = Field(default=1, ge=1,
                                     description="runs executed at once by this operator")
    snapshot_timeout_seconds: float = Field(
        default=900, gt=0, description="an AgentRun waits this long for its Scenario's snapshot")
    metrics_port: int = Field(default=8080, ge=0, description="0 disables the metrics endpoint")
    executor: Literal["local", "pods"] = Field(
        default="local", description="local: runs execute in the operator's pod with env.local;"
                                     " pods: each run gets pods of its own (env.kube)")
    kube: KubeSettings = Field(default_factory=KubeSettings,
                               description="the pods executor's image, storage and snapshot"
                                           " classes, node selector (JSON)")


@kopf.on.startup()
async def startup(settings: kopf.OperatorSettings, memo: kopf.Memo, logger: logging.Logger,
                  **_: Any) -> None:
    try:
        config = OperatorConfig()
    except ValidationError as e:
        raise BadInput(format_validation_error("the operator's settings (DBABENCH_OPERATOR_*)", e)) from None
    config.runs_dir.mkdir(parents=True, exist_ok=True)
    memo.config = config
    memo.api = KubeApi()
    memo.runs = asyncio.Semaphore(config.max_concurrent_runs)
    memo.metrics = OperatorMetrics()
    memo.pods = PodsExecutor(memo.api, config.kube)
    if config.metrics_port:
        memo.metrics.serve(config.metrics_port)
    settings.posting.level = logging.WARNING
    settings.persistence.finalizer = f"{GROUP}/operator"
    logger.info("dbabench operator: runs in %s, %d at once", config.runs_dir,
                config.max_concurrent_runs)


@kopf.on.cleanup()
async def cleanup(memo: kopf.Memo, **_: Any) -> None:
    memo.metrics.stop()


async def _invalid_spec(api: KubeApi, namespace: str, plural: str, name: str,
                        error: ValidationError, generation: int | None,
                        conditions: list[Condition], condition: str,
                        status: type[ScenarioStatus | CampaignStatus]) -> None:
    """Failed, with every bad field path in the condition's message."""
    message = format_validation_error(f"{plural[:-1].capitalize()} {namespace}/{name}", error)
    await api.patch_status(namespace, plural, name, st.patch(status(
        phase="Failed", phase_reason="invalid spec", observed_generation=generation,
        conditions=st.set_condition(conditions, condition, False, "InvalidSpec", message,
                                    generation=generation))))


def _manifest(scenario: Scenario) -> str:
    return yaml.safe_dump(scenario.model_dump(mode="json", by_alias=True, exclude_none=True),
                          sort_keys=False)


def _scenario(body: kopf.Body) -> Scenario:
    return complete(Scenario.model_validate({"apiVersion": body["apiVersion"], "kind": body["kind"],
                                    "metadata": {"name": body["metadata"]["name"]},
                                    "spec": dict(body["spec"])}))


@kopf.on.resume(*SCENARIOS)
@kopf.on.create(*SCENARIOS)
@kopf.on.update(*SCENARIOS, field="spec")
async def reconcile_scenario(body: kopf.Body, name: str, namespace: str, memo: kopf.Memo,
                             logger: logging.Logger, retry: int, **_: Any) -> None:
    memo.metrics.reconciles.labels("scenario").inc()
    generation = body["metadata"].get("generation")
    conditions = st.conditions_of(body)
    try:
        scenario = _scenario(body)
    except ValidationError as e:
        await _invalid_spec(memo.api, namespace, "scenarios", name, e, generation, conditions,
                            "Valid", ScenarioStatus)
        return
    conditions = st.set_condition(conditions, "Valid", True, "Validated", generation=generation)
    await memo.api.patch_status(namespace, "scenarios", name, st.patch(ScenarioStatus(
        phase="Building", phase_reason="building the golden snapshot",
        observed_generation=generation, conditions=conditions)))
    try:
        if memo.config.executor == "pods":
            snapshot = await memo.pods.build_golden(scenario, _manifest(scenario), namespace,
                                                   owner_reference(body))
        else:
            golden = (await prepare_golden(scenario, memo.config.runs_dir)).golden
            snapshot = SnapshotStatus(name=golden.key, ready=True, size_bytes=golden.size_bytes,
                                      built_at=golden.built_at, method="local-store")
    except Exception as e:
        memo.metrics.errors.labels("scenario").inc()
        logger.exception("golden snapshot of %s failed", name)
        failed = disposition(e)
        delay = failed.retry_delay(retry)
        if delay is not None:
            await memo.api.patch_status(namespace, "scenarios", name, st.patch(ScenarioStatus(
                phase_reason=_retrying(failed, retry, delay))))
            raise kopf.TemporaryError(failed.reason, delay=delay) from e
        await memo.api.patch_status(namespace, "scenarios", name, st.patch(ScenarioStatus(
            phase="Failed", phase_reason=f"snapshot build failed: {failed.reason}"[:1000],
            conditions=st.set_condition(conditions, "SnapshotReady", False, "BuildFailed",
                                        failed.reason, generation=generation))))
        return
    await memo.api.patch_status(namespace, "scenarios", name, st.patch(ScenarioStatus(
        phase="Ready", phase_reason="golden snapshot ready", snapshot=snapshot,
        conditions=st.set_condition(conditions, "SnapshotReady", True, "Built",
                                    f"snapshot {snapshot.name}", generation=generation))))


class Run:
    """Status writes of one AgentRun; every phase change goes through here."""

    def __init__(self, body: kopf.Body, memo: kopf.Memo) -> None:
        self.body = body
        self.api: KubeApi = memo.api
        self.metrics: OperatorMetrics = memo.metrics
        self.name = body["metadata"]["name"]
        self.namespace = body["metadata"]["namespace"]
        self.generation = body["metadata"].get("generation")
        self.conditions = st.conditions_of(body)

    async def enter(self, phase: Phase, reason: str, **fields: Any) -> None:
        """Into ``phase``; ``fields``: more of AgentRunStatus (started_at, evaluation, summary)."""
        status = st.phase_status(phase, reason, self.conditions, self.generation, **fields)
        self.conditions = status.conditions
        await self.api.patch_status(self.namespace, "agentruns", self.name, st.patch(status))
        self.metrics.transitions.labels(phase.value).inc()

    async def record(self, evaluation: EvaluationResult) -> None:
        labels = {f"{GROUP}/agentrun": self.name}
        campaign = (self.body["metadata"].get("labels") or {}).get(campaigns.CAMPAIGN_LABEL)
        if campaign:  # the campaign lists its runs' Evaluations by it
            labels[campaigns.CAMPAIGN_LABEL] = campaign
        resource = Evaluation(
            api_version=f"{GROUP}/{VERSION}", kind="Evaluation",
            metadata=ObjectMeta(name=self.name, namespace=self.namespace, labels=labels,
                                owner_references=[owner_reference(self.body)]),
            spec=EvaluationSpec(agent_run=self.name, result=evaluation))
        stored = await self.api.create_once(self.namespace, "evaluations", wire(resource))
        await self.finish(EvaluationResult.model_validate(stored["spec"]["result"]))

    async def finish(self, evaluation: EvaluationResult) -> None:
        phase, reason = st.finished(evaluation)
        fields: dict[str, Any] = {"evaluation": self.name}
        if evaluation.status == "scored":
            fields["summary"] = RunSummary.of(evaluation)
        await self.enter(phase, reason, **fields)


# No ``when`` filter on the phase: kopf would cancel the daemon the moment its own final status
# write lands, racing the bookkeeping after it. A finished run's daemon returns at once.
@kopf.daemon(*AGENTRUNS, cancellation_timeout=120)
async def drive_agentrun(body: kopf.Body, spec: kopf.Spec, status: kopf.Status, name: str,
                         namespace: str, memo: kopf.Memo, logger: logging.Logger, retry: int,
                         **_: Any) -> None:
    if Phase(status.get("phase", Phase.pending.value)) in st.TERMINAL:
        return
    memo.metrics.reconciles.labels("agentrun").inc()
    run = Run(body, memo)
    try:
        await _drive(run, spec, name, namespace, memo, logger)
    except Exception as e:
        memo.metrics.errors.labels("agentrun").inc()
        await _end_or_retry(run, e, retry, logger)


async def _end_or_retry(run: Run, error: Exception, retry: int, logger: logging.Logger) -> None:
    """End the run as the error's branch says (errors.disposition), or have kopf run it afresh
    after a backoff: a retryable infrastructure error, up to RETRY_LIMIT times (counted by
    this operator process: a restarted operator starts the count again)."""
    failed = disposition(error)
    if failed.kind == "bug":
        logger.exception("AgentRun %s: %s", run.name, failed.reason)
    delay = failed.retry_delay(retry)
    if delay is not None:
        await run.enter(Phase.pending, _retrying(failed, retry, delay))
        raise kopf.TemporaryError(failed.reason, delay=delay) from error
    attempts = f" (after {retry} retries)" if retry else ""
    await run.enter(Phase.failed if failed.kind == "bad-input" else Phase.infra_error,
                    f"{failed.reason}{attempts}"[:1000])


def _retrying(failed: Disposition, retry: int, delay: float) -> str:
    return f"retrying in {delay:.0f}s (retry {retry + 1} of {RETRY_LIMIT}): {failed.reason}"[:1000]


async def _drive(run: Run, spec: kopf.Spec, name: str, namespace: str, memo: kopf.Memo,
                 logger: logging.Logger) -> None:
    existing = await memo.api.get(namespace, "evaluations", name)
    if existing is not None:
        await run.finish(EvaluationResult.model_validate(existing["spec"]["result"]))
        return
    try:
        run_spec = AgentRunSpec.model_validate(dict(spec))
    except ValidationError as e:
        await run.enter(Phase.failed, format_validation_error(f"AgentRun {name}", e))
        return
    if run_spec.agent.command is not None:
        await run.enter(Phase.failed, "agent.command runs an external agent on the machine of"
                                      " dbabench campaign run; on Kubernetes an external agent"
                                      " is an image (agent.image)")
        return
    runs = RUN_KINDS[memo.config.executor]
    if run_spec.agent.kind not in runs:
        await run.enter(Phase.failed, f"agent kind {run_spec.agent.kind.value} is not run by"
                                      f" the {memo.config.executor} executor of this operator"
                                      f" version; it runs {', '.join(k.value for k in runs)}")
        return
    scenario_body = await _wait_for_scenario(run, run_spec.scenario,
                                             memo.config.snapshot_timeout_seconds)
    if scenario_body is None:
        return
    scenario = _scenario(scenario_body)
    if run_spec.budget is not None:
        scenario.spec.budget = run_spec.budget
    started = time.monotonic()
    # built (or, for a metered external agent, its gateway) before anything starts, on either
    # executor: a model without a price or a key Secret that is missing ends the run Failed
    # here (on pods the key goes no further: the run's tools pod reads it from the Secret)
    api_key = await _api_key(memo.api, namespace, run_spec.agent)
    if run_spec.agent.kind == AgentKind.external:
        agent = None
        registry.gateway(run_spec.agent, api_key)
    else:
        agent = registry.build(run_spec.agent, scenario, api_key=api_key)
    if memo.config.executor == "pods":
        async with memo.runs:
            evaluation = await memo.pods.run(
                name, namespace, run_spec, "external" if agent is None else agent.name,
                scenario, _manifest(scenario), scenario_body["status"]["snapshot"]["name"],
                owner_reference(run.body), lambda phase, reason: run.enter(phase, reason))
        memo.metrics.durations.observe(time.monotonic() - started)
        await run.record(evaluation)
        return
    assert agent is not None
    async with memo.runs:
        await run.enter(Phase.provisioning, "restoring the golden snapshot",
                        started_at=st.now())
        result = await run_scenario(
            scenario, agent, runs_root=memo.config.runs_dir,
            manifest_text=_manifest(scenario),
            progress=lambda message: logger.info(message),
            on_phase=lambda phase: run.enter(phase, phase.value.lower()),
            runbook=run_spec.agent.runbook)
    memo.metrics.durations.observe(time.monotonic() - started)
    await run.record(result.evaluation)


async def _api_key(api: KubeApi, namespace: str, agent: AgentSpec) -> str | None:
    """The model agent's API key, from the Secret its spec names; never written anywhere."""
    ref = agent.api_key_secret
    if ref is None:
        return None
    secret = await api.read(namespace, "v1", "Secret", ref.name)
    if secret is None:
        raise BadInput(f"Secret {ref.name} (agent.apiKeySecret) not found in namespace"
                       f" {namespace}: create it, or grant the operator get on it (the chart's"
                       " modelSecrets)")
    data = secret.get("data") or {}
    if ref.key not in data:
        raise BadInput(f"Secret {ref.name} has no key {ref.key!r} (agent.apiKeySecret.key);"
                       f" its keys: {', '.join(sorted(data)) or 'none'}")
    return base64.b64decode(data[ref.key]).decode().strip()


async def _wait_for_scenario(run: Run, scenario: str, timeout: float) -> kopf.Body | None:
    """The Scenario once its snapshot is ready; None (and InfraError) if it never is."""
    deadline = time.monotonic() + timeout
    reason = reported = ""
    while time.monotonic() < deadline:
        body = await run.api.get(run.namespace, "scenarios", scenario)
        if body is None:
            reason = f"Scenario {scenario} not found"
        else:
            phase = body.get("status", {}).get("phase", "Pending")
            if phase == "Ready":
                return body
            reason = f"Scenario {scenario} is {phase}"
            if phase == "Failed":
                break
        if reason != reported:
            await run.enter(Phase.pending, f"waiting: {reason}")
            reported = reason
        await asyncio.sleep(2)
    await run.enter(Phase.infra_error, f"SnapshotNotReady: {reason}")
    return None


async def _tables(api: KubeApi, namespace: str, name: str, spec: CampaignSpec,
                  body: kopf.Body, planned: list[campaigns.PlannedRun],
                  existing: dict[str, dict[str, Any]]) -> campaigns.Tables:
    bodies = {s: found for s in spec.scenarios
              if (found := await api.get(namespace, "scenarios", s)) is not None}
    scenarios = {s: _scenario(b) for s, b in bodies.items()}
    evaluations = {e["metadata"]["name"]: EvaluationResult.model_validate(e["spec"]["result"])
                   for e in await api.list(namespace, "evaluations",
                                           f"{campaigns.CAMPAIGN_LABEL}={name}")}
    found = campaigns.finished_cells(planned, existing, evaluations, scenarios,
                                     difficulty.load(scenarios_root()))
    return campaigns.tables(name, spec, body["metadata"].get("creationTimestamp"), bodies,
                            scenarios, found, campaigns.not_started(planned, existing, spec))


async def _resolve(api: KubeApi, namespace: str, name: str, spec: CampaignSpec,
                   stopped: kopf.DaemonStopped) -> CampaignSpec | None:
    """The campaign's scenarios resolved against the namespace's Scenarios, as a local
    campaign resolves them against its catalog, and pinned in the status (the plan names its
    runs by place: it must not change). Until every name exists and every pattern matches,
    the campaign waits (a Campaign applied with its Scenarios may come first)."""
    reported = None
    while not stopped:
        available = {}
        for found in await api.list(namespace, "scenarios", ""):
            try:
                available[found["metadata"]["name"]] = _scenario(found)
            except ValidationError:
                continue  # its own status says why; a campaign cannot run it
        try:
            resolved = campaign_select(spec, available, difficulty.load(scenarios_root()))
        except CampaignError as e:
            if str(e) != reported:
                await api.patch_status(namespace, "campaigns", name, CampaignStatus(
                    phase="Pending", phase_reason=f"waiting: {e}").model_dump(
                        mode="json", by_alias=True, exclude_none=True))
                reported = str(e)
            await stopped.wait(CAMPAIGN_POLL_SECONDS)
            continue
        await api.patch_status(namespace, "campaigns", name,
                               {"scenarios": resolved.scenarios})
        return resolved
    return None


@kopf.daemon(*CAMPAIGNS, cancellation_timeout=10)
async def drive_campaign(body: kopf.Body, spec: kopf.Spec, name: str, namespace: str,
                         memo: kopf.Memo, stopped: kopf.DaemonStopped, **_: Any) -> None:
    generation = body["metadata"].get("generation")
    conditions = st.conditions_of(body)
    try:
        campaign = CampaignSpec.model_validate(dict(spec))
    except ValidationError as e:
        await _invalid_spec(memo.api, namespace, "campaigns", name, e, generation, conditions,
                            "Ready", CampaignStatus)
        return
    pinned = (body.get("status") or {}).get("scenarios")
    if pinned:
        campaign = campaign.model_copy(update={"scenarios": pinned, "categories": None,
                                               "difficulty": None})
    else:
        resolved = await _resolve(memo.api, namespace, name, campaign, stopped)
        if resolved is None:
            return
        campaign = resolved
    planned = campaigns.plan(name, campaign)
    owner = owner_reference(body)
    tabled = None  # how many finished runs the published leaderboard holds
    while not stopped:
        memo.metrics.reconciles.labels("campaign").inc()
        existing = {r["metadata"]["name"]: r for r in await memo.api.list(
            namespace, "agentruns", f"{campaigns.CAMPAIGN_LABEL}={name}")}
        for run in campaigns.to_start(planned, existing, campaign):
            existing[run.name] = await memo.api.create_once(
                namespace, "agentruns", campaigns.agentrun_body(run, name, campaign, owner))
        status = campaigns.tally(planned, existing, campaign)
        status.scenarios = campaign.scenarios
        if status.finished != tabled:
            made = await _tables(memo.api, namespace, name, campaign, body, planned, existing)
            for results in campaign_results(name, wire(owner), made.records):
                await memo.api.apply(namespace, results)
            status.leaderboard = made.leaderboard
            tabled = status.finished
        done = status.phase in ("Succeeded", "Capped")
        status.observed_generation = generation
        status.conditions = st.set_condition(
            conditions, "Ready", True if done else None,
            {"Succeeded": "Finished", "Capped": "CostCapReached"}.get(status.phase, "Running"),
            status.phase_reason, generation=generation)
        await memo.api.patch_status(namespace, "campaigns", name,
                                    status.model_dump(mode="json", by_alias=True,
                                                      exclude_none=True))
        if done:
            return
        await stopped.wait(CAMPAIGN_POLL_SECONDS)
