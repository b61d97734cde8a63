"""The base model every manifest-facing type derives from, and the base of their closed sets
of names."""

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler
from pydantic.alias_generators import to_camel
from pydantic_core import core_schema


class Model(BaseModel):
    """Kubernetes-style camelCase on the wire, snake_case in Python; unknown fields are errors.

    Unknown fields are rejected because a misspelt key in a scenario (``manifestation`` vs
    ``manifestations``) would otherwise silently drop a check. No float is infinite or NaN: an
    agent's ``1e400`` for a duration or a count must be refused where it arrives, not raise
    in the arithmetic that grades it.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=False,
        allow_inf_nan=False,
    )


class Record(Model):
    """A record dbabench writes and reads back later, possibly with a newer version of itself
    (evaluation.json, trace.jsonl, an Evaluation resource). Unknown fields are ignored, not
    refused: a record written by a newer version must not make an older reader fail, and an
    older record is brought forward by its model's migration (a ``mode="before"`` validator
    keyed on its ``version``)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore",
                              allow_inf_nan=False)


class NameEnum(StrEnum):
    """A closed set of names (tools, actions, rule ids, statement classes): one definition in
    ``dbabench.model``, members in code, plain strings on the wire.

    In a pydantic model it validates as ``Literal`` of its values does and becomes a member,
    and its JSON schema is that Literal's: an inline ``enum``, no ``$defs`` entry. Tool
    parameters are what a model is told, and CRD schemas may hold no ``$ref``; with a
    ``Literal`` the schema was exactly that, and stays so."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any,
                                     handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            cls, core_schema.literal_schema([member.value for member in cls]),
            serialization=core_schema.plain_serializer_function_ser_schema(
                str, when_used="json"))
