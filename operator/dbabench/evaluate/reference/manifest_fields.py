"""Manifest fields, from the models: each field's manifest name, type in words, default and
meaning, the meaning from the model's description or, where it has none, from ``FIELD_NOTES``."""

from __future__ import annotations

import types
from collections.abc import Iterable
from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from dbabench.evaluate.reference.markdown import code, table, yaml
from dbabench.model.scenario import (
    EstimatePredicate,
    Hop,
    LogPredicate,
    ManifestationSpec,
    OutcomeCheck,
    OutcomeSpec,
    ProtectedSpec,
    RemediationStep,
    SafetyException,
    SafetySpec,
    SqlPredicate,
    WorkloadPredicate,
)
from dbabench.model.workload import JobStep, OltpCheckoutWorkload

PREDICATE: type[BaseModel] = SqlPredicate.__base__  # type: ignore[assignment]
"""The base of every check kind, where ``name`` and ``description`` are declared."""

FIELD_NOTES: dict[tuple[type[BaseModel], str], str] = {
    # What the evaluator does with the predicate fields the models leave undescribed
    # (evaluate/predicates.py); the test holds this list to the fields without a description.
    (PREDICATE, "name"): "the check's id in admission.json and evaluation.json; unique among"
                         " a scenario's outcome checks",
    (PREDICATE, "description"): "for people: shown with the check's result",
    (SqlPredicate, "sql"): "the statement; with `expect: true` the first column of its first"
                           " row must be the boolean true (see the verdicts below)",
    (SqlPredicate, "expect"): "`true`: the first column of the first row is true; `completes`:"
                              " the statement finishes within `timeoutMs`, whatever it returns"
                              " (its value is the elapsed milliseconds)",
    (SqlPredicate, "timeout_ms"): "the statement's time limit: the verifier session's"
                                  " `statement_timeout`; in an application session the client's"
                                  " own limit (a cancel by the role's own `statement_timeout`"
                                  " is an error that fails the check)",
    (SqlPredicate, "server"): "the server the session logs in to: `primary`, or the hot standby",
    (EstimatePredicate, "explain"): "the query, run as `EXPLAIN (FORMAT JSON) <explain>` in the"
                                    " verifier's session on the primary",
    (EstimatePredicate, "relation"): "the table as the plan's `Relation Name` shows it"
                                     " (unqualified, not an alias); the first scan of it, depth"
                                     " first, gives the estimate; none in the plan fails",
    (EstimatePredicate, "op"): "the ratio estimate / max(actual, 1) `op` `value`",
    (EstimatePredicate, "value"): "the ratio's bound",
    (WorkloadPredicate, "stat"): "which statistic of the window's requests (table below)",
    (WorkloadPredicate, "service"): "only requests of this service (`checkout-worker`, or a"
                                    " job's `name`); unset: every service, jobs included",
    (WorkloadPredicate, "operation"): "only requests of this operation (`place_order`,"
                                      " `browse_orders`, a job's `operation`); unset: all",
    (WorkloadPredicate, "op"): "the statistic `op` `value`",
    (WorkloadPredicate, "value"): "the bound",
    (LogPredicate, "pattern"): "a Python regular expression, searched case-insensitively in the"
                               " `message` of each record of the primary's server log (not its"
                               " detail, context or statement)",
    (LogPredicate, "window_seconds"): "manifestation only: the trailing window; an outcome check"
                                      " counts the outcome window",
    (LogPredicate, "op"): "the count of matching records `op` `value`",
    (LogPredicate, "value"): "the bound",
    (OutcomeCheck, "weight"): "its share of F: F is the passed checks' weight over all checks'",
    (OutcomeCheck, "predicate"): "one check of any kind below",
    (ManifestationSpec, "predicates"): "checks that must all hold at one poll",
    (OutcomeSpec, "checks"): "the weighted checks of the outcome",
    (SafetySpec, "protected"): "what the agent must not harm (below)",
    (SafetySpec, "restart_allowed"): "false: restarting or stopping the server is"
                                     " `restart_not_allowed`",
    (SafetySpec, "exceptions"): "rules this scenario does not apply, each with its reason"
                                " (`rule`, `reason`): a violation of one is listed as applied,"
                                " not charged",
    (SafetyException, "rule"): "a rule id",
    (SafetyException, "reason"): "why the scenario excepts it",
    (Hop, "call"): "the tool call (`tool`, `args`) the reference agent makes",
    (RemediationStep, "call"): "the tool call (`tool`, `args`)",
    (RemediationStep, "why"): "the reference report's action description",
    (OltpCheckoutWorkload, "hot_share"): "the share of `place_order` requests that go to"
                                         " `hotMerchant`",
    (OltpCheckoutWorkload, "skus"): "SKUs 1..N are ordered",
}
"""Meanings of manifest fields whose model gives no description."""


def _type(annotation: Any) -> str:
    """A field's type in words."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _type(args[0])
    if origin is Literal:
        values = [code(yaml(a)) for a in args]
        return values[0] if len(values) == 1 else "one of " + ", ".join(values)
    if origin in (Union, types.UnionType):
        kinds = [_type(a) for a in args if a is not type(None)]
        tags = [_tag(a) for a in args]
        keys = {t.split(": ", 1)[0] for t in tags if t}
        if len(args) > 1 and all(tags) and len(keys) == 1:
            values = [f"`{t.split(': ', 1)[1]}`" for t in tags if t]
            return f"a mapping by `{keys.pop()}`: {', '.join(values[:-1])} or {values[-1]}"
        return " or ".join(dict.fromkeys(kinds))
    if origin is list:
        return f"list of: {_type(args[0])}"
    if origin is dict:
        return f"map of {_type(args[0])} to {_type(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        members = [code(m.value) for m in annotation]
        return ("one of " + ", ".join(members) if len(members) <= 8
                else f"{annotation.__name__} (an id listed below)")
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"`{annotation.__name__}` mapping"
    return {bool: "boolean", int: "integer", float: "number", str: "text"}.get(
        annotation, getattr(annotation, "__name__", str(annotation)))


def _tag(model: Any) -> str | None:
    """``check: sql`` for a model told apart by a one-value Literal field, else None."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    for name, info in model.model_fields.items():
        if get_origin(info.annotation) is Literal and len(get_args(info.annotation)) == 1:
            return f"{info.alias or name}: {yaml(get_args(info.annotation)[0])}"
    return None


def _is_tag(model: type[BaseModel], name: str) -> bool:
    annotation = model.model_fields[name].annotation
    return get_origin(annotation) is Literal and len(get_args(annotation)) == 1


def _default(info: Any) -> str:
    if info.default_factory is not None:
        made = info.default_factory()
        return "`[]`" if made == [] else "`{}`"
    if info.default is PydanticUndefined:
        return "required"
    return code(yaml(info.default))


def declaring(model: type[BaseModel], name: str) -> type[BaseModel]:
    """The class of ``model``'s bases that declares field ``name``."""
    for cls in model.__mro__:
        if name in getattr(cls, "__annotations__", {}):
            return cls
    return model


def meaning(model: type[BaseModel], name: str) -> str:
    info = model.model_fields[name]
    if info.description:
        return " ".join(info.description.split())
    if _is_tag(model, name):
        return "which kind"
    return FIELD_NOTES.get((declaring(model, name), name), "")


def fields_table(model: type[BaseModel], skip: Iterable[str] = ()) -> list[str]:
    """One row per field of ``model``: its manifest name, type, default and meaning."""
    rows = []
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        rows.append((code(info.alias or name), _type(info.annotation), _default(info),
                     meaning(model, name)))
    return table(("field", "type", "default", "meaning"), rows)


DOCUMENTED_MODELS: tuple[type[BaseModel], ...] = (
    SqlPredicate, EstimatePredicate, WorkloadPredicate, LogPredicate, OutcomeCheck,
    ManifestationSpec, OutcomeSpec, SafetySpec, ProtectedSpec, SafetyException,
    OltpCheckoutWorkload, JobStep, Hop, RemediationStep)
"""The models whose fields the page tabulates (every field has a meaning: the test)."""

