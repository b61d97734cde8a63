"""The base model every manifest-facing type derives from."""

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


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
