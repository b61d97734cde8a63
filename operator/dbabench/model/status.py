"""Status blocks shared by the custom resources (metav1.Condition and friends)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from dbabench.model.base import Model


class Condition(Model):
    """metav1.Condition."""

    type: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9]*$", max_length=316)
    status: Literal["True", "False", "Unknown"]
    observed_generation: int | None = Field(default=None, ge=0)
    last_transition_time: datetime
    reason: str = Field(pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$", max_length=1024)
    message: str = Field(default="", max_length=32768)


class SnapshotStatus(Model):
    name: str | None = None
    ready: bool = False
    size_bytes: int | None = Field(default=None, ge=0)
    built_at: datetime | None = None
    method: str | None = Field(default=None,
                               description="VolumeSnapshot, or the fallback used (pvc-clone)")


class ScenarioStatus(Model):
    phase: Literal["Pending", "Building", "Ready", "Failed"] = "Pending"
    phase_reason: str = ""
    observed_generation: int | None = None
    snapshot: SnapshotStatus = Field(default_factory=SnapshotStatus)
    manifestation: list[str] = Field(default_factory=list,
                                     description="evidence seen when the snapshot was built")
    conditions: list[Condition] = Field(default_factory=list)
