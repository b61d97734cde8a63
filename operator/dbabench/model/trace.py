"""Trace events: every call, observation, model call and report of a run, in order."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, model_validator

from dbabench.model.base import Record
from dbabench.model.report import Report
from dbabench.model.statement import RETIRED_CLASSES, StatementClass


def _current_classes(data: Any, field: str) -> Any:
    """A stored record's ``field`` without the classes retired since it was written."""
    if isinstance(data, dict) and isinstance(data.get(field), list):
        return {**data, field: [c for c in data[field] if c not in RETIRED_CLASSES]}
    return data


class SessionInfo(Record):
    pid: int
    application_name: str = ""
    usename: str | None = None
    state: str | None = None
    query: str = ""
    in_transaction: bool | None = Field(
        default=None, description="it had a transaction open (None: not recorded)")
    locks: int | None = Field(
        default=None, description="locks it held, its own transaction's ids aside (None: not"
                                  " recorded)")


class StatementInfo(Record):
    """How the policy layer classified one statement of an execute_sql call."""

    text: str
    classes: list[StatementClass] = Field(default_factory=list)
    relations: list[str] = Field(default_factory=list)
    functions: list[str] = Field(default_factory=list)
    settings: dict[str, str] = Field(default_factory=dict)
    setting_role: str | None = Field(
        default=None, description="ALTER ROLE r SET: the one role r whose new sessions get it")
    setting_database: str | None = Field(
        default=None, description="ALTER DATABASE d SET, ALTER ROLE r IN DATABASE d SET: the"
                                  " one database d whose new sessions get it")
    error: str | None = Field(default=None,
                              description="why PostgreSQL 15's grammar rejects it (unparseable)")
    paths: list[str] = Field(default_factory=list,
                             description="server paths it names as constants (file_access)")

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return _current_classes(data, "classes")


MAX_TOKENS_PER_CALL = 10**9
"""The most tokens of one kind a single model call may claim. The largest context windows on
offer are ~10**7 tokens, so no honest call comes within a hundredfold of it; and at it, a call
at the table's dearest prices ($15 and $75 per million) costs ~$10**5, so even 10**6 such calls
sum to ~10**11 USD, far inside a float. An agent's (or a gateway's) number past it is not a
measurement: before the bound, ``input_tokens = 10**400`` overflowed the cost arithmetic at
grading and the run, heading for a fail, got no verdict."""


class Usage(Record):
    # the numbers come from agents (POST /v1/events/model) and from gateways' replies: both
    # are input (no model takes NaN or infinity: model.base)
    input_tokens: int = Field(default=0, ge=0, le=MAX_TOKENS_PER_CALL)
    cached_input_tokens: int = Field(default=0, ge=0, le=MAX_TOKENS_PER_CALL,
                                     description="part of input_tokens")
    output_tokens: int = Field(default=0, ge=0, le=MAX_TOKENS_PER_CALL)

    @model_validator(mode="after")
    def _cached_within_input(self) -> "Usage":
        # priced below the input rate, more cached than input tokens would be a negative cost
        if self.cached_input_tokens > self.input_tokens:
            raise ValueError(f"cached_input_tokens ({self.cached_input_tokens}) cannot exceed"
                             f" input_tokens ({self.input_tokens}): cached tokens are part of"
                             " the input")
        return self

    @classmethod
    def from_openai(cls, usage: dict[str, Any]) -> Usage:
        """From a chat-completions reply's ``usage`` (OpenAI's names, which every compatible
        server uses). Raises ValidationError (a ValueError) for counts that are no counts:
        negative, fractional, not numbers, past MAX_TOKENS_PER_CALL."""
        details = usage.get("prompt_tokens_details")
        details = details if isinstance(details, dict) else {}
        return cls(input_tokens=usage.get("prompt_tokens") or 0,
                   cached_input_tokens=details.get("cached_tokens") or 0,
                   output_tokens=usage.get("completion_tokens") or 0)

    @classmethod
    def reported(cls, usage: Any) -> Usage | None:
        """What a gateway's reply says was used, or None where it says nothing a count could
        be read from (absent, malformed, out of bounds): such a call is unmeasured, never a
        crash of the meter, since a broken or hostile gateway is input like an agent."""
        if not isinstance(usage, dict):
            return None
        try:
            return cls.from_openai(usage)
        except ValueError:  # pydantic's ValidationError among them
            return None


FailureClass = Literal["api-error", "output-limit", "empty-response", "invalid-step",
                       "budget-exhausted"]
"""Why a model-driven agent stopped without a report (dba-runner's classes). ``api-error`` is
the gateway's fault, an infrastructure outcome; the others are the model's."""


TRACE_VERSION = 1


class TraceEvent(Record):
    version: int = TRACE_VERSION
    seq: int
    ts: datetime
    kind: Literal["tool", "model", "thought", "report", "budget", "infra", "failure"]
    tool: str | None = Field(
        default=None, description="the name the agent called: one of ToolName where the gate"
                                  " ran it, whatever it was where it refused an unknown one")
    args: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    observation: Any = None
    truncated: bool = False
    error: str | None = None
    duration_ms: float = 0.0
    statements: list[StatementInfo] = Field(default_factory=list)
    mutating: bool = Field(default=False, description="the call could change the environment")
    refused: list[StatementClass] = Field(
        default_factory=list,
        description="statement classes the policy refused before execution: nothing ran")
    harness_access: bool = Field(
        default=False, description="the refused call went for the harness: a program, the"
                                   " lexer, a path outside the server's own directories")
    sessions_ended: list[SessionInfo] = Field(
        default_factory=list,
        description="client sessions present before a termination call and gone after it")
    usage: Usage | None = Field(default=None, description="a model call's tokens; None: the"
                                " gateway's reply said nothing of them")
    metered: bool = Field(default=False, description="a model call the harness made or"
                          " forwarded and measured itself; False: as the agent reported it")
    model: str | None = None
    text: str | None = None
    failure: FailureClass | None = None

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return _current_classes(data, "refused")


class AgentOutcome(Record):
    """What an agent's turn left for grading: handed from the tool gate to the evaluator,
    in one process (env.local) or from the run's tools pod to the evaluator Job."""

    events: list[TraceEvent] = Field(default_factory=list)
    report: Report | None = Field(default=None, description="None when no valid one was filed")
    report_error: str | None = None
    exhausted: str | None = Field(default=None, description="why the budget ran out, if it did")
    failure: FailureClass | None = Field(
        default=None, description="why a model-driven agent stopped early (then report_error"
        " says more); api-error makes the run an infrastructure error")
    wall_seconds: float = Field(default=0.0, ge=0)
    agent_sandboxed: bool | None = Field(
        default=None, description="an external agent ran in its sandbox (False: trusted by its"
                                  " user, run as it was); None: no agent process of its own")
