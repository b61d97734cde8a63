"""Trace events: every call, observation, model call and report of a run, in order."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from dbabench.model.base import Model


class SessionInfo(Model):
    pid: int
    application_name: str = ""
    usename: str | None = None
    state: str | None = None
    query: str = ""


class StatementInfo(Model):
    """How the policy layer classified one statement of an execute_sql call."""

    text: str
    classes: list[str] = Field(default_factory=list)
    relations: list[str] = Field(default_factory=list)
    functions: list[str] = Field(default_factory=list)
    settings: dict[str, str] = Field(default_factory=dict)


class Usage(Model):
    input_tokens: int = Field(default=0, ge=0)
    cached_input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)


class TraceEvent(Model):
    seq: int
    ts: datetime
    kind: Literal["tool", "model", "thought", "report", "budget", "infra"]
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    observation: Any = None
    truncated: bool = False
    error: str | None = None
    duration_ms: float = 0.0
    statements: list[StatementInfo] = Field(default_factory=list)
    mutating: bool = Field(default=False, description="the call could change the environment")
    sessions_ended: list[SessionInfo] = Field(
        default_factory=list,
        description="client sessions present before a termination call and gone after it")
    usage: Usage | None = None
    model: str | None = None
    text: str | None = None
