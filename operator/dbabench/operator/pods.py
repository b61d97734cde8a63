"""The pods executor: a run as pods of its own (env.kube), driven from the operator.

Each phase ensures its objects (create if absent) and then waits for the result its component
publishes in a ConfigMap. Nothing is kept in the operator's memory between phases, so an operator
restarted at any point walks the same steps again: existing objects are left as they are, and a
phase whose result is already published passes at once. The Scenario's golden volume is built the
same way, by a Job on a PVC, then snapshotted with a CSI VolumeSnapshot.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from kubernetes.utils import parse_quantity

from dbabench.model.artifacts import RunArtifact
from dbabench.errors import InfraError
from dbabench.env import kube
from dbabench.env.postgres import Credentials
from dbabench.evaluate import evaluator
from dbabench.model.admission import Admission
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.kube import (MODEL_KINDS, AgentKind, AgentRunSpec, OwnerReference, Phase,
                                 wire)
from dbabench.model.scenario import Scenario
from dbabench.model.status import SnapshotStatus
from dbabench.operator.api import KubeApi
from dbabench.runner.assembly import golden_recipe

POLL_SECONDS = 1.0
# Kinds a run owns, deleted by label when it is graded (owner references cover a deleted run).
RUN_KINDS = (("batch/v1", "Job"), ("v1", "Pod"), ("v1", "Service"),
             ("networking.k8s.io/v1", "NetworkPolicy"), ("v1", "PersistentVolumeClaim"),
             ("v1", "ConfigMap"), ("v1", "Secret"))


class PodsError(InfraError):
    """A run's infrastructure failed: the run ends InfraError with this reason."""


async def _until(what: str, timeout: float,
                 probe: Callable[[], Awaitable[Any]]) -> Any:
    """Poll ``probe`` until it returns something, or raise PodsError naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await probe()
        if found is not None:
            return found
        await asyncio.sleep(POLL_SECONDS)
    raise PodsError(f"timed out after {timeout:.0f}s waiting for {what}")


def _decoded(secret: dict[str, Any]) -> dict[str, str]:
    return {k: base64.b64decode(v).decode() for k, v in (secret.get("data") or {}).items()}


class PodsExecutor:
    def __init__(self, api: KubeApi, settings: kube.KubeSettings, *,
                 phase_timeout: float = 600.0) -> None:
        self.api = api
        self.settings = settings
        self.phase_timeout = phase_timeout

    # -- shared waits ---------------------------------------------------------------------------

    async def _result(self, namespace: str, configmap: str, key: str,
                      failed_job: str | None = None) -> bytes | None:
        """A published result; PodsError if the Job that should publish it has failed."""
        cm = await self.api.read(namespace, "v1", "ConfigMap", configmap)
        if cm is not None and key in (cm.get("binaryData") or {}):
            return kube.unpack(cm["binaryData"][key])
        if failed_job is not None:
            job = await self.api.read(namespace, "batch/v1", "Job", failed_job)
            if job is not None and (job.get("status") or {}).get("failed"):
                raise PodsError(f"Job {failed_job} failed; see its pod's log")
        return None

    async def _pod_ready(self, namespace: str, name: str) -> bool | None:
        pod = await self.api.read(namespace, "v1", "Pod", name)
        status = (pod or {}).get("status") or {}
        if status.get("phase") in ("Failed", "Succeeded"):
            raise PodsError(f"Pod {name} ended ({status['phase']}) before the run did")
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in status.get("conditions") or [])
        return True if ready else None

    async def _plain(self, namespace: str, configmap: str) -> bool | None:
        cm = await self.api.read(namespace, "v1", "ConfigMap", configmap)
        return True if cm is not None and cm.get("data") else None

    async def _agent_ended(self, namespace: str, pod: str,
                           trace: Callable[[], Awaitable[bytes | None]]) -> bool | None:
        """The agent's pod has ended, or the tool server has handed the trace over already
        (stopped by a deletion, say)."""
        body = await self.api.read(namespace, "v1", "Pod", pod)
        if ((body or {}).get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return True
        return True if await trace() is not None else None

    async def _stop(self, namespace: str, run: str, component: str) -> None:
        await self.api.delete_labelled(namespace, "v1", "Pod", f"{kube.RUN_LABEL}={run},"
                                       f"{kube.COMPONENT_LABEL}={component}")

    # -- the golden snapshot ----------------------------------------------------------------------

    async def build_golden(self, scenario: Scenario, manifest: str, namespace: str,
                           owner: OwnerReference) -> SnapshotStatus:
        """Build (or find) the Scenario's golden VolumeSnapshot; its status block."""
        key = golden_recipe(scenario).key
        name = kube.golden_name(key)
        credentials = Credentials.generate()
        passwords = {"superuser-password": credentials.superuser_password,
                     "app-password": credentials.app_password}
        for body in kube.golden_objects(key, manifest, passwords, self.settings, wire(owner)):
            await self.api.ensure(namespace, body)

        async def built() -> bool | None:
            job = await self.api.read(namespace, "batch/v1", "Job", name)
            status = (job or {}).get("status") or {}
            if status.get("failed"):
                raise PodsError(f"golden build Job {name} failed; see its pod's log")
            return True if status.get("succeeded") else None

        await _until(f"the golden build Job {name}", self.phase_timeout, built)
        if self.settings.clone_from == "pvc":
            claim = await self.api.read(namespace, "v1", "PersistentVolumeClaim", name) or {}
            job = await self.api.read(namespace, "batch/v1", "Job", name) or {}
            return SnapshotStatus(
                name=name, ready=True, method="pvc-clone",
                size_bytes=_quantity(((claim.get("status") or {}).get("capacity") or {})
                                     .get("storage")),
                built_at=(job.get("status") or {}).get("completionTime"))
        await self.api.ensure(namespace, kube.golden_snapshot(key, self.settings, wire(owner)))

        async def ready() -> dict[str, Any] | None:
            snap = await self.api.read(namespace, kube.SNAPSHOT_API, "VolumeSnapshot", name)
            status = (snap or {}).get("status") or {}
            if (status.get("error") or {}).get("message"):
                raise PodsError(f"VolumeSnapshot {name}: {status['error']['message']}")
            return status if status.get("readyToUse") else None

        status = await _until(f"VolumeSnapshot {name} to be ready", self.phase_timeout, ready)
        return SnapshotStatus(name=name, ready=True, size_bytes=_quantity(status.get("restoreSize")),
                              built_at=status.get("creationTime"), method="volume-snapshot")

    # -- one run --------------------------------------------------------------------------------------

    async def run(self, name: str, namespace: str, spec: AgentRunSpec, agent_name: str,
                  scenario: Scenario, manifest: str, snapshot: str, owner: OwnerReference,
                  enter: Callable[[Phase, str], Awaitable[None]]) -> EvaluationResult:
        """One run; ``agent_name``: what its evaluation calls the agent."""
        try:
            return await self._run(name, namespace, _agent_container(spec, agent_name),
                                   spec, scenario, manifest, snapshot, owner, enter)
        except PodsError as e:
            return evaluator.infra_error(scenario, agent_name, str(e))
        finally:
            await self.cleanup(name, namespace)

    async def _run(self, name: str, namespace: str, agent: kube.AgentContainer,
                   spec: AgentRunSpec, scenario: Scenario, manifest: str, snapshot: str,
                   owner: OwnerReference,
                   enter: Callable[[Phase, str], Awaitable[None]]) -> EvaluationResult:
        golden_secret = await self.api.read(namespace, "v1", "Secret", snapshot)
        if golden_secret is None:
            raise PodsError(f"Secret {snapshot} (the golden volume's passwords) is missing")
        own = Credentials.generate()
        objects = kube.run_objects(
            name, namespace, snapshot, manifest, scenario.spec.database.name,
            {"superuser-password": own.superuser_password, "app-password": own.app_password},
            _decoded(golden_secret)["superuser-password"], secrets.token_urlsafe(24),
            secrets.token_urlsafe(24), agent, self.settings, wire(owner),
            scenario.spec.database.replica)
        servers = [f"{name}-postgres"] + (
            [f"{name}-replica"] if scenario.spec.database.replica is not None else [])

        await enter(Phase.provisioning, "restoring the golden snapshot into "
                    + ("a volume" if len(servers) == 1 else "a volume per server"))
        for body in objects["provisioning"]:
            await self.api.ensure(namespace, body)
        for pod in servers:
            await _until(f"Pod {pod} to be ready", self.phase_timeout,
                         functools.partial(self._pod_ready, namespace, pod))

        await enter(Phase.admitting, "workload and runtime fault; checking manifestation")
        for body in objects["admitting"]:
            await self.api.ensure(namespace, body)
        raw = await _until("the admission result", self.phase_timeout, lambda: self._result(
            namespace, f"{name}-admission", RunArtifact.ADMISSION, f"{name}-admit"))
        admission = Admission.model_validate_json(raw)
        if not admission.admitted:
            return evaluator.infra_error(scenario, agent.name, admission.reason)

        await enter(Phase.running, f"agent {agent.name} at work")
        for body in objects["serving"]:
            await self.api.ensure(namespace, body)
        # the agent's pod mounts the task the tool server publishes once it serves
        await _until("the tool server's task", self.phase_timeout, lambda: self._plain(
            namespace, f"{name}-task"))
        for body in objects["running"]:
            await self.api.ensure(namespace, body)
        budget = (spec.budget or scenario.spec.budget).timeout_seconds
        trace = functools.partial(self._result, namespace, f"{name}-trace", RunArtifact.OUTCOME)
        try:
            await _until("the agent's end", budget + 60, lambda: self._agent_ended(
                namespace, f"{name}-agent", trace))
        except PodsError:
            # over budget: the agent is stopped with everything it started
            await self._stop(namespace, name, "agent")
        # Stopping the tool server hands the trace over.
        await self._stop(namespace, name, "tools")
        await _until("the agent's trace after stopping the tool server", 120, trace)

        await enter(Phase.evaluating, "verifying the post-fix state under the workload")
        for body in objects["evaluating"]:
            await self.api.ensure(namespace, body)
        raw = await _until("the evaluation", self.phase_timeout, lambda: self._result(
            namespace, f"{name}-evaluation", RunArtifact.EVALUATION, f"{name}-evaluate"))
        return EvaluationResult.model_validate_json(raw)

    async def cleanup(self, name: str, namespace: str) -> None:
        for api_version, kind in RUN_KINDS:
            await self.api.delete_labelled(namespace, api_version, kind, f"{kube.RUN_LABEL}={name}")


def _agent_container(spec: AgentRunSpec, name: str) -> kube.AgentContainer:
    # the scripted agents are the scenario's own oracles; every other agent works blind
    return kube.AgentContainer(name=name, spec=spec.agent, sees_scenario=spec.agent.kind not in (
        *MODEL_KINDS, AgentKind.external))


def _quantity(text: str | int | None) -> int | None:
    """A Kubernetes quantity (``restoreSize``, a PVC's capacity) in bytes."""
    return None if text is None else int(parse_quantity(text))
