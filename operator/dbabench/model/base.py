"""The base model every manifest-facing type derives from."""

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Model(BaseModel):
    """Kubernetes-style camelCase on the wire, snake_case in Python; unknown fields are errors.

    Unknown fields are rejected because a misspelt key in a scenario (``manifestation`` vs
    ``manifestations``) would otherwise silently drop a check.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=False,
    )
