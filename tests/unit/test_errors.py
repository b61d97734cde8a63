"""The error tree: every harness failure lands in one branch, decided in one place."""

from __future__ import annotations

import pytest

from dbabench.agents.base import AgentFailure
from dbabench.agents.chat import ApiError, ModelConfigError
from dbabench.env.contract import ContractError
from dbabench.env.local import GoldenError
from dbabench.env.monitoring import MonitoringError
from dbabench.env.postgres import PostgresError
from dbabench.env.sandbox import SandboxUnavailable
from dbabench.env.snapshot import SnapshotError
from dbabench.errors import (EXIT_FAILED, EXIT_INFRA, EXIT_USAGE, RETRY_LIMIT, HarnessError,
                             disposition)
from dbabench.faults.steps import FaultError
from dbabench.operator.pods import PodsError
from dbabench.runner.components import ComponentError
from dbabench.runner.rescore import RescoreError
from dbabench.scenario.loader import ScenarioError
from dbabench.tools.knowledge import KnowledgeBaseUnavailable
from dbabench.tools.sql import GrammarMismatch


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
