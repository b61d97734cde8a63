"""The environment a run's pods give their components: one definition of every variable.

env.kube writes these variables into the pod specs, naming each through ``variable()``;
runner.components reads them through ``ComponentEnv`` (pydantic-settings), and an agent image
reads the three of the external-agent contract (tools URL, token, task file). A component reads
only the variables its container is given; ``need`` names a missing one and who sets it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from dbabench.errors import PermanentInfraError

PREFIX = "DBABENCH_"
METER_PATH = "/openai/v1"
"""Where a run's tool server serves its metering proxy (tools.meter), under its own URL."""
METERED_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
"""What a metered external agent gets beside the contract's three variables: the proxy's
address and its key (the run's tool token), the names every OpenAI client reads."""


class ComponentEnv(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore")

    run: str | None = None
    """The AgentRun's name: labels, the Prometheus job, the result ConfigMaps' owner."""
    namespace: str | None = None
    owner: str | None = None
    """The AgentRun's owner reference (JSON), set on the ConfigMaps that carry results."""
    agent: str | None = None
    database: str | None = None
    scenario_file: Path | None = None
    pg_home: Path | None = None
    work_dir: Path | None = None
    task_file: Path | None = None
    tools_url: str | None = None
    agent_spec: str | None = None
    """The harness's own agent (scripted or model) as its AgentSpec, JSON: the agent container
    runs it; the tool server meters a model agent's calls and takes its account of a failure."""
    replica_spec: str | None = None
    """The scenario's hot standby (its ReplicaSpec, JSON): set in the standby's database pod,
    which has no manifest, and only there."""

    pg_superuser_password: SecretStr | None = None
    pg_app_password: SecretStr | None = None
    pg_golden_superuser_password: SecretStr | None = None
    control_token: SecretStr | None = None
    tools_token: SecretStr | None = None
    model_api_key: SecretStr | None = None
    """A model agent's provider key, from the Secret its spec names: the tool server's alone."""

    result_configmap: str | None = None
    task_configmap: str | None = None
    """Where the tool server publishes the task, which the agent's pod mounts."""
    trace_configmap: str | None = None
    admission_configmap: str | None = None

    # where the other components are (host:port) and where this one listens
    addr_postgres: str | None = None
    """The primary; the standby follows it."""
    addr_replica: str | None = None
    """The hot standby, where the scenario has one."""
    addr_control: str | None = None
    addr_replica_control: str | None = None
    addr_exporter: str | None = None
    addr_replica_exporter: str | None = None
    addr_prometheus: str | None = None
    addr_workload: str | None = None
    addr_business: str | None = None
    port_postgres: int | None = None
    port_control: int | None = None
    port_exporter: int | None = None
    port_prometheus: int | None = None
    port_workload: int | None = None
    port_business: int | None = None
    port_tools: int | None = None


class ContractError(PermanentInfraError, RuntimeError):
    """A component's environment lacks a variable its pod spec should have set."""


def variable(field: str) -> str:
    """The environment variable of ``field``; a field the contract does not have is a bug."""
    if field not in ComponentEnv.model_fields:
        raise KeyError(f"{field!r} is not a variable of the run pods' contract")
    return PREFIX + field.upper()


def get(field: str) -> str | None:
    """``field``'s value in this process's environment, as text; None where this container
    is not given it."""
    variable(field)
    value = getattr(ComponentEnv(), field)
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return None if value is None else str(value)


def need(field: str) -> str:
    """``field``'s value; its absence is named, with who should have set it."""
    value = get(field)
    if value is None:
        raise ContractError(f"{variable(field)} is not set; the run's pod spec (env.kube) sets it")
    return value
