"""A scenario's measured difficulty (paper §4.2): depth D, complexity C and the label."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, RootModel

from dbabench.model.base import Model

DEPTH_BOUNDARY = 2  # D0: deeper than this is deep diagnosis
COMPLEXITY_BOUNDARY = 0.5  # C0: at least this is high complexity

Label = Literal["Hard", "Easy"]


def label(depth: int, complexity: float) -> Label:
    return "Hard" if depth > DEPTH_BOUNDARY and complexity >= COMPLEXITY_BOUNDARY else "Easy"


class HopUnits(Model):
    tool: str
    signal: int = Field(ge=0, description="units that support the causal path")
    total: int = Field(ge=0, description="all units the call returned")


class Difficulty(Model):
    digest: str = Field(description="of the manifest parts the evidence depends on; a"
                                    " measurement of another digest is stale")
    category: str
    depth: int = Field(ge=1, description="D: hops in the reference path")
    complexity: float = Field(ge=0, le=1, description="C = 1 - signal units / all units")
    label: Label
    hops: list[HopUnits]
    measured_at: datetime


class DifficultyFile(RootModel[dict[str, Difficulty]]):
    """``difficulty.json`` beside the manifests: scenario name -> its measured difficulty."""
