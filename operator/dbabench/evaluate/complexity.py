"""Environmental complexity C from what the reference path's calls actually returned.

Units (paper §4.2): one row of each SQL statement, one log line, one knowledge-base hit, one
point of a time series. A hop's ``signal`` says which of them support the causal path.
Observations are read back through the tools' own result models, so a change in what a tool
returns cannot silently change what is counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from dbabench.model.difficulty import Difficulty, HopUnits, label
from dbabench.model.scenario import Hop, Scenario, Signal
from dbabench.model.tool import ToolName
from dbabench.model.trace import TraceEvent
from dbabench.scenario.difficulty import evidence_digest
from dbabench.tools.knowledge import KnowledgeResult
from dbabench.tools.logs import ReadLogResult
from dbabench.tools.metrics import QueryMetricsResult
from dbabench.tools.sql import ExecuteSqlResult


class UnmeasurableError(ValueError):
    """The scenario or the run does not allow a measurement; the message says why."""


@dataclass(frozen=True)
class Unit:
    text: str
    value: float | None = None  # a time-series point's value


def units(tool: ToolName, observation: Any) -> list[Unit]:
    if observation is None:
        return []
    if tool == ToolName.execute_sql:
        result = ExecuteSqlResult.model_validate(observation)
        return [Unit(" | ".join("" if c is None else str(c) for c in row))
                for statement in result.results for row in statement.rows]
    if tool == ToolName.read_log:
        return [Unit(line) for line in ReadLogResult.model_validate(observation).lines]
    if tool == ToolName.query_knowledge_base:
        return [Unit(f"{hit.title} {hit.snippet}")
                for hit in KnowledgeResult.model_validate(observation).hits]
    if tool == ToolName.query_metrics:
        found = []
        for series in QueryMetricsResult.model_validate(observation).series:
            labels = ", ".join(f"{k}={v}" for k, v in sorted(series.labels.items()))
            points = series.values if series.values is not None else [series.value or []]
            found += [Unit(labels, float(p[1])) for p in points if len(p) == 2]
        return found
    # manage_instance: a flat mapping, one unit per field
    return [Unit(f"{k}={v}") for k, v in dict(observation).items()]


def is_signal(unit: Unit, signal: Signal) -> bool:
    if not re.search(signal.match, unit.text, re.IGNORECASE):
        return False
    if signal.op is None or unit.value is None:
        return True
    assert signal.value is not None
    return signal.op.holds(unit.value, signal.value)


def hop_units(hop: Hop, event: TraceEvent) -> HopUnits:
    assert hop.signal is not None
    found = units(hop.call.tool, event.observation if event.ok else None)
    return HopUnits(tool=hop.call.tool, total=len(found),
                    signal=sum(is_signal(u, hop.signal) for u in found))


def unsignalled(scenario: Scenario) -> list[str]:
    return [f"referencePath[{i}] ({hop.state})"
            for i, hop in enumerate(scenario.spec.reference_path) if hop.signal is None]


def measure(scenario: Scenario, events: list[TraceEvent]) -> Difficulty:
    """D and C of a reference run: its first tool calls are the reference path's hops."""
    missing = unsignalled(scenario)
    if missing:
        raise UnmeasurableError(f"{scenario.name}: no signal declared for {', '.join(missing)}"
                                " (see docs/scenarios-authoring.md)")
    path = scenario.spec.reference_path
    calls = [e for e in events if e.kind == "tool"][:len(path)]
    if len(calls) < len(path) or any(e.tool != h.call.tool for e, h in zip(calls, path)):
        raise UnmeasurableError(f"{scenario.name}: the run's first tool calls are not its"
                                " reference path; measure a reference run")
    hops = [hop_units(h, e) for h, e in zip(path, calls)]
    total = sum(h.total for h in hops)
    if total == 0:
        raise UnmeasurableError(f"{scenario.name}: the reference path returned nothing")
    depth = len(path)
    complexity = round(1 - sum(h.signal for h in hops) / total, 3)
    return Difficulty(digest=evidence_digest(scenario), category=scenario.spec.category.value,
                      depth=depth, complexity=complexity, label=label(depth, complexity),
                      hops=hops, measured_at=datetime.now(timezone.utc).replace(microsecond=0))
