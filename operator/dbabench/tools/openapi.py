"""The tool server's OpenAPI 3.1 document, generated from the same pydantic models the server
validates with and the same tool specs every other surface offers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field
from pydantic.json_schema import models_json_schema

from dbabench.model.base import Model
from dbabench.model.report import Report
from dbabench.model.task import AgentTask
from dbabench.tools.gate import BudgetStatus
from dbabench.tools.specs import ToolSpec


class ToolResult(Model):
    """What every tool call answers; ok False is an observation (bad arguments, an SQL
    error, a refusal), not a failure of the request."""

    ok: bool
    seq: int = Field(description="the call's event in the trace; cite it as evidence")
    truncated: bool = Field(default=False, description="the observation was cut to its bounds")
    observation: Any = Field(default=None, description="the tool's result, when ok")
    error: str | None = Field(default=None, description="what went wrong, when not ok")


class Failure(Model):
    ok: bool = False
    error: str


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def document(offered: Iterable[ToolSpec], events: Iterable[type[BaseModel]]) -> dict[str, Any]:
    tools, events = list(offered), list(events)
    models = [t.args for t in tools] + [Report, AgentTask, BudgetStatus, ToolResult, Failure,
                                        *events]
    _, defs = models_json_schema([(m, "validation") for m in models], by_alias=False,
                                 ref_template="#/components/schemas/{model}")
    refused = {code: _json(_ref(Failure), why) for code, why in (
        ("400", "the body is not a JSON object"), ("401", "missing or wrong bearer token"),
        ("429", "the budget is spent: no further calls are accepted"))}
    paths: dict[str, Any] = {
        "/v1/task": {"get": {"summary": "what the agent is told",
                             "responses": {"200": _json(_ref(AgentTask), "the task")}}},
        "/v1/budget": {"get": {"summary": "tool calls and seconds left",
                               "responses": {"200": _json(_ref(BudgetStatus), "the budget")}}},
        "/v1/tools": {"get": {
            "summary": "each offered tool's name, description and JSON schema, and the"
                       " report's (how it is filed, what is scored)",
            "responses": {"200": _json({"type": "object", "properties": {
                "tools": {"type": "array", "items": {"type": "object"}},
                "report": {"type": "object"}}}, "the tools and the report")}}},
        "/v1/report": {"post": {
            "summary": "file the structured report",
            "requestBody": _json(_ref(Report), "the report"),
            "responses": {"200": _json(_ref(Failure), "filed ({ok: true})"),
                          "422": _json(_ref(Failure), "invalid: what is wrong"), **refused}}},
    }
    for spec in tools:
        paths[f"/v1/tools/{spec.name}"] = {"post": {
            "summary": spec.name, "description": spec.description,
            "requestBody": _json(_ref(spec.args), "the tool's arguments"),
            "responses": {"200": _json(_ref(ToolResult), "the gate's result"), **refused}}}
    for event in events:
        name = event.__name__.removesuffix("Event").lower()
        paths[f"/v1/events/{name}"] = {"post": {
            "summary": f"record a {name} event in the trace",
            "requestBody": _json(_ref(event), "the event"),
            "responses": {"200": _json(_ref(Failure), "recorded ({ok: true})"),
                          "422": _json(_ref(Failure), "invalid: what is wrong")}}}
    return {"openapi": "3.1.0",
            "info": {"title": "dbabench tool server", "version": "1"},
            "security": [{"bearer": []}],
            "components": {"schemas": defs["$defs"],
                           "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
            "paths": paths}
