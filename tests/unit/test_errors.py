"""The error tree: every harness failure lands in one branch, decided in one place."""

from __future__ import annotations

import asyncio
import errno
from pathlib import Path

import psycopg
import pytest

from dbabench.agents.base import AgentFailure
from dbabench.agents.chat import ApiError, ModelConfigError
from dbabench.env.contract import ContractError
from dbabench.env.local import GoldenError
from dbabench.env.monitoring import MonitoringError
from dbabench.env.postgres import PostgresError
from dbabench.env.processes import free_port
from dbabench.env.sandbox import SandboxUnavailable
from dbabench.env.snapshot import SnapshotError
from dbabench.errors import (EXIT_FAILED, EXIT_INFRA, EXIT_USAGE, RETRY_LIMIT, HarnessError,
                             disposition)
from dbabench.faults.steps import FaultError
from dbabench.model.kube import CampaignSpec
from dbabench.operator.pods import PodsError
from dbabench.runner import campaign
from dbabench.runner.components import ComponentError
from dbabench.results.rescore import RescoreError
from dbabench.scenario.loader import ScenarioError, parse
from dbabench.tools.knowledge import KnowledgeBaseUnavailable
from dbabench.tools.sql import GrammarMismatch

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("error,kind,exit_code,retryable", [
    (ScenarioError("scenarios/x.yaml: spec.fault: field required"), "bad-input", EXIT_USAGE,
     False),
    (ModelConfigError("unknown provider 'azure'"), "bad-input", EXIT_USAGE, False),
    (RescoreError("trace.jsonl: line 3 is not JSON"), "bad-input", EXIT_USAGE, False),
    # the scenario's program fails the same way every time: leave it out, do not retry
    (FaultError("fault SQL failed: 42601 syntax error"), "infra", EXIT_INFRA, False),
    (SandboxUnavailable("cannot sandbox: no unshare"), "infra", EXIT_INFRA, False),
    (GrammarMismatch("the server is PostgreSQL 16"), "infra", EXIT_INFRA, False),
    (KnowledgeBaseUnavailable("no docs"), "infra", EXIT_INFRA, False),
    (ComponentError("ConfigMap r1-trace holds no outcome"), "infra", EXIT_INFRA, False),
    (ContractError("DBABENCH_RUN is not set"), "infra", EXIT_INFRA, False),
    # a server, a store, a cluster or a gateway that failed this once
    (PostgresError("postgres did not accept connections in 30s"), "infra", EXIT_INFRA, True),
    (MonitoringError("Prometheus did not see targets up"), "infra", EXIT_INFRA, True),
    (GoldenError("the golden cluster did not shut down cleanly"), "infra", EXIT_INFRA, True),
    (SnapshotError("clone exists"), "infra", EXIT_INFRA, True),
    (PodsError("timed out waiting for pod"), "infra", EXIT_INFRA, True),
    (ApiError("502 from the gateway"), "infra", EXIT_INFRA, True),
    (AgentFailure("context-overflow", "the prompt outgrew the window"), "agent", EXIT_FAILED,
     False),
])
def test_each_error_has_its_branch(error: HarnessError, kind: str, exit_code: int,
                                   retryable: bool) -> None:
    failed = disposition(error)
    assert (failed.kind, failed.exit_code, failed.retryable) == (kind, exit_code, retryable)
    assert failed.reason == str(error)


def test_anything_else_is_a_harness_bug_named_and_not_retried() -> None:
    failed = disposition(KeyError("spec"))
    assert (failed.kind, failed.exit_code, failed.retryable) == ("bug", EXIT_INFRA, False)
    assert failed.reason == "harness bug, please report it: KeyError: 'spec'"


def test_retries_back_off_up_to_the_limit() -> None:
    transient, permanent = disposition(PostgresError("down")), disposition(FaultError("bad"))
    delays = [transient.retry_delay(n) for n in range(RETRY_LIMIT + 1)]
    assert delays[-1] is None and all(d is not None for d in delays[:-1])
    assert delays[:-1] == sorted(delays[:-1])  # type: ignore[type-var]
    assert permanent.retry_delay(0) is None


def test_a_lost_postgres_and_an_exhausted_machine_are_infrastructure() -> None:
    port = free_port()  # nothing listens there: a real connection failure
    with pytest.raises(psycopg.OperationalError) as refused:
        psycopg.connect(f"host=127.0.0.1 port={port} user=x dbname=x connect_timeout=2")
    lost = disposition(refused.value)
    assert (lost.kind, lost.exit_code, lost.retryable, lost.unscored) == (
        "infra", EXIT_INFRA, True, "infra_error")
    assert lost.reason.startswith("PostgreSQL: ")
    full = disposition(OSError(errno.ENOSPC, "No space left on device"))
    assert (full.kind, full.retryable, full.unscored) == ("infra", False, "infra_error")
    # other OS errors and other SQL errors stay bugs to report
    assert disposition(OSError(errno.EBADF, "Bad file descriptor")).unscored == "harness_error"
    assert disposition(psycopg.errors.SyntaxError("42601")).kind == "bug"


def test_a_campaign_cell_ends_as_dbabench_run_would(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    scenario_path = REPO / "scenarios" / "business-change" / "audit-trigger-hot-summary-row.yaml"
    scenario = parse(scenario_path.read_text(), str(scenario_path))
    spec = CampaignSpec.model_validate({"scenarios": [scenario.name], "repeats": 2,
                                        "agents": [{"kind": "null"}]})
    now = campaign.record("boundary", spec, {scenario.name: scenario},
                          {scenario.name: "0" * 64}, jobs=1, max_cost_usd=None,
                          command=["dbabench"], cwd=str(tmp_path))
    raised = iter([psycopg.OperationalError("server closed the connection unexpectedly"),
                   KeyError("spec")])

    async def failing_run(*args: object, **kwargs: object) -> None:
        raise next(raised)

    monkeypatch.setattr(campaign, "run_scenario", failing_run)
    results = asyncio.run(campaign.run_campaign(
        now, tmp_path / "out", {scenario.name: (scenario_path, scenario)}, {}))
    assert [(r.status, r.reason) for r in sorted(results, key=lambda r: r.repeat)] == [
        ("infra_error", "PostgreSQL: server closed the connection unexpectedly"),
        ("harness_error", "harness bug, please report it: KeyError: 'spec'")]
