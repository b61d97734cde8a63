"""The agents an AgentSpec names, built in one place for every shell that runs one."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dbabench.agents.base import Agent
from dbabench.agents.chat import (PROVIDERS, ChatSettings, metering_gateway, parse_model,
                                  parse_provider)
from dbabench.agents.external import ExternalAgent
from dbabench.agents.plan import PlanAgent
from dbabench.agents.react import ReactAgent
from dbabench.agents.scripted import scripted_agent
from dbabench.agents.session import ModelAgentConfig
from dbabench.errors import BadInput
from dbabench.model.kube import MODEL_KINDS, AgentKind, AgentSpec
from dbabench.model.scenario import Scenario
from dbabench.tools.meter import Gateway

MODEL_AGENTS: dict[str, Callable[..., Agent]] = {"react": ReactAgent, "plan": PlanAgent}


def model_config(spec: AgentSpec) -> ModelAgentConfig:
    """A model agent's settings as its spec gives them; the rest are the CLI's defaults."""
    assert spec.model is not None
    given = {"max_reply_tokens": spec.max_reply_tokens,
             "rate_limit_wait_seconds": spec.rate_limit_wait_seconds}
    chat = ChatSettings(effort=spec.effort,
                        **{name: value for name, value in given.items() if value is not None})
    return ModelAgentConfig(model=spec.model, chat=chat, max_model_calls=spec.max_model_calls,
                            max_cost_usd=spec.max_cost_usd)


def metered_provider(spec: AgentSpec) -> str | None:
    """The provider a run of ``spec`` sends model calls to: a model agent's, or the one an
    external agent's calls are metered to; None: no model calls the harness sees."""
    if spec.kind in MODEL_KINDS:
        assert spec.model is not None
        return parse_model(spec.model).provider
    return None if spec.meter is None else parse_provider(spec.meter)


def model_environment(spec: AgentSpec, api_key: str | None) -> dict[str, str]:
    """The only environment a model agent of ``spec`` (or the meter of a metered external
    agent) reads its provider's address and key from: the spec's, never the shell's that runs
    it."""
    name = metered_provider(spec)
    assert name is not None
    provider = PROVIDERS[name]
    env = {} if spec.base_url is None else {provider.base_url_env: spec.base_url}
    if api_key is not None:
        env[provider.key_env] = api_key
    return env


def metered_environment(spec: AgentSpec, meter_url: str, token: str) -> dict[str, str]:
    """What a model agent of ``spec`` reads where a meter stands between it and its provider
    (a run's tools pod): the meter's address, and the run's tool token as its key,
    under the names its provider's client reads."""
    name = metered_provider(spec)
    assert name is not None
    provider = PROVIDERS[name]
    return {provider.base_url_env: meter_url, provider.key_env: token}


def gateway(spec: AgentSpec, api_key: str | None) -> Gateway | None:
    """Where the run's tool server meters the model calls of ``spec``'s agent when they do
    not run in the harness's process (a run's tools pod); checked like a model agent's (bad
    input: ModelConfigError)."""
    provider = metered_provider(spec)
    if provider is None:
        return None
    return metering_gateway(provider, model_environment(spec, api_key), spec.max_cost_usd)


def build(spec: AgentSpec, scenario: Scenario | None, *, api_key: str | None = None,
          env: Mapping[str, str] | None = None) -> Agent:
    """The agent ``spec`` names, checked before any run starts (bad input: BadInput).

    A model agent's address and key (or those a metered external command's calls are
    forwarded with) come from ``env`` where given (the CLI's environment, the meter of a run's
    tools pod), else from the spec (``baseUrl``) and ``api_key`` (read from its
    Secret); it works blind, without ``scenario``, which the scripted agents (the scenario's
    oracles) need. An external command runs sandboxed."""
    if spec.kind in MODEL_KINDS:
        return MODEL_AGENTS[spec.kind.value](
            model_config(spec), env=model_environment(spec, api_key) if env is None else env)
    if spec.kind == AgentKind.external:
        if spec.command is None:
            raise BadInput("an external agent's image runs on the operator's pods executor;"
                           " here an external agent is a command (agent.command)")
        provider = metered_provider(spec)
        meter = None if provider is None else metering_gateway(
            provider, model_environment(spec, api_key) if env is None else env,
            spec.max_cost_usd)
        return ExternalAgent(spec.command, gateway=meter)
    if scenario is None:
        raise BadInput(f"the {spec.kind.value} agent follows the scenario's manifest: it needs one")
    return scripted_agent(spec.kind.value, scenario, spec.remediation)
