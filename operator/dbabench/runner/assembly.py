"""A run's parts, built in one place for both executors.

The local run (``runner.run``: the CLI, the battery, the operator's local executor) and the
pods components (``runner.components``) run the same pieces in different places. Each piece is
built here from the scenario and what the executor knows of where the others are, so the two
differ only in where a piece runs and how it reaches the rest: the golden's recipe, the
workload's configuration, the agent's and the harness's access to a server, and the agent's
turn (the gate with its budget and trace, and the task).
"""

from __future__ import annotations

from pathlib import Path

from psycopg.conninfo import make_conninfo

from dbabench.env.local import GoldenRecipe
from dbabench.env.postgres import (AGENT_APPLICATION, APP_ROLE, BASELINE_SETTINGS,
                                   HARNESS_APPLICATION, PostgresInstance)
from dbabench.faults.steps import populate_base, populate_golden
from dbabench.model.scenario import Scenario
from dbabench.model.task import AgentTask
from dbabench.model.tool import ToolName
from dbabench.model.workload import JobStep
from dbabench.policy.reach import startup_options
from dbabench.records.run import RunFiles
from dbabench.scenario.datasets import dataset_of
from dbabench.scenario.loader import base_key, golden_key
from dbabench.tools.context import InstanceControl, ServerAccess, ToolContext
from dbabench.tools.gate import Budget, ToolGate
from dbabench.workload.engine import WorkloadConfig

def golden_recipe(scenario: Scenario) -> GoldenRecipe:
    """The scenario's golden; on a shared dataset (the estate), a clone of its own snapshot."""
    spec = scenario.spec
    dataset = dataset_of(spec.database)
    base = None
    if dataset.shared:
        base = GoldenRecipe(key=base_key(dataset, spec.database.name, BASELINE_SETTINGS),
                            database=spec.database.name, settings={},
                            populate=lambda instance: populate_base(instance, dataset))
    return GoldenRecipe(key=golden_key(scenario, BASELINE_SETTINGS), database=spec.database.name,
                        settings=spec.database.settings,
                        populate=lambda instance: populate_golden(instance, spec,
                                                                  on_base=base is not None),
                        base=base)


def workload_config(scenario: Scenario, primary: PostgresInstance, jobs: list[JobStep],
                    business_log: Path, metrics_port: int, *,
                    replica: PostgresInstance | None = None,
                    metrics_host: str = "127.0.0.1") -> WorkloadConfig:
    """The application: the scenario's workload and the fault's jobs, as the application's
    role (no application_name: the application's sessions are the workload's own)."""
    return WorkloadConfig(
        dsn=primary.dsn(user=APP_ROLE, application_name=""),
        replica_dsn=None if replica is None else replica.dsn(user=APP_ROLE, application_name=""),
        spec=scenario.spec.workload, jobs=jobs, business_log=business_log,
        metrics_port=metrics_port, metrics_host=metrics_host)


def server_access(instance: PostgresInstance, pg_log_dir: Path,
                  control: InstanceControl) -> ServerAccess:
    """What the agent's tools reach of one server, wherever it runs. The gate's bookkeeping
    (who a termination ended) is not tracked in pg_stat_statements, where the agent would read
    how it is watched."""
    observer = make_conninfo(instance.dsn(application_name=HARNESS_APPLICATION),
                             options=startup_options(**{"pg_stat_statements.track": "none"}))
    return ServerAccess(dsn=instance.dsn(application_name=AGENT_APPLICATION),
                        observer_dsn=observer, pg_log_dir=pg_log_dir, control=control)


def agent_turn(scenario: Scenario, ctx: ToolContext, workspace: RunFiles, incident: str,
               runbook: str | None = None) -> tuple[ToolGate, AgentTask]:
    """The gate the agent works through, under the scenario's budget, keeping its records in
    ``workspace``, and what it is told (with its team's ``runbook``, if it has one)."""
    budget = scenario.spec.budget
    gate = ToolGate(ctx, workspace,
                    Budget(max_steps=budget.max_steps, timeout_seconds=budget.timeout_seconds))
    return gate, AgentTask.of(scenario, list(ToolName), incident, runbook)
