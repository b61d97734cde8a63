"""What a model agent is asked for, in every spec that names one (the CLI's options, an AgentRun)."""

from __future__ import annotations

from typing import Literal

Effort = Literal["off", "minimal", "low", "medium", "high"]
"""Reasoning effort; each provider's request says it its own way (agents.chat)."""
EFFORTS: tuple[Effort, ...] = ("off", "minimal", "low", "medium", "high")
