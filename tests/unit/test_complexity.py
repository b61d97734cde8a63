"""Units, signal and C as paper §4.2 defines them; the stored measurements and their drift."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from dbabench.cli.main import main, parser
from dbabench.cli.scenarios import difficulty_dir
from dbabench.evaluate.complexity import UnmeasurableError, Unit, is_signal, measure, units
from dbabench.model.difficulty import label
from dbabench.model.scenario import Comparison, Signal
from dbabench.model.trace import TraceEvent
from dbabench.scenario import difficulty
from dbabench.scenario.loader import resolve, scenarios_root
from dbabench.tools.logs import ReadLogResult
from dbabench.tools.metrics import QueryMetricsResult, Series
from dbabench.tools.sql import ExecuteSqlResult, StatementResult


def sql(*statements: list[list[Any]]) -> dict[str, Any]:
    return ExecuteSqlResult(results=[StatementResult(statement="q", rows=rows)
                                     for rows in statements]).model_dump(mode="json",
                                                                         exclude_none=True)


def event(seq: int, tool: str, observation: Any, ok: bool = True) -> TraceEvent:
    return TraceEvent(seq=seq, ts=datetime.now(timezone.utc), kind="tool", tool=tool,
                      ok=ok, observation=observation)


def test_units_of_each_tool() -> None:
    assert [u.text for u in units("execute_sql", sql([[1, "checkout-worker", None]], [[2]]))] \
        == ["1 | checkout-worker | ", "2"]
    log = ReadLogResult(source="postgresql", lines=["a", "b", "c"], matched=3, truncated=False)
    assert len(units("read_log", log.model_dump(mode="json"))) == 3
    series = QueryMetricsResult(result_type="matrix", total_series=2, series=[
        Series(labels={"job": "workload", "outcome": "timeout"}, values=[[1, "0"], [2, "3.5"]]),
        Series(labels={"job": "node"}, value=[3, "7"])])
    found = units("query_metrics", series.model_dump(mode="json", exclude_none=True))
    assert found == [Unit("job=workload, outcome=timeout", 0.0),
                     Unit("job=workload, outcome=timeout", 3.5), Unit("job=node", 7.0)]
    assert units("manage_instance", {"name": "work_mem", "setting": "4MB"}) == [
        Unit("name=work_mem"), Unit("setting=4MB")]
    assert units("execute_sql", None) == []


def test_signal_is_a_regex_and_for_points_a_value_test() -> None:
    assert is_signal(Unit("7 | Checkout-Worker"), Signal(match="checkout-worker"))
    assert not is_signal(Unit("8 | order-api"), Signal(match="checkout-worker"))
    timeouts = Signal(match="outcome=timeout", op=Comparison.gt, value=0)
    assert is_signal(Unit("outcome=timeout", 3.5), timeouts)
    assert not is_signal(Unit("outcome=timeout", 0.0), timeouts)
    with pytest.raises(ValueError, match="op and value go together"):
        Signal(match="x", op=Comparison.gt)


def test_label_boundaries() -> None:
    assert label(3, 0.5) == "Hard"
    assert label(2, 0.99) == "Easy"
    assert label(4, 0.49) == "Easy"


def signalled(match: str = "checkout-worker"):  # type: ignore[no-untyped-def]
    _, scenario = resolve("stale-stats-lock-chain")
    for hop in scenario.spec.reference_path:
        hop.signal = Signal(match=match)
    return scenario


def test_measure_counts_the_reference_hops_only() -> None:
    scenario = signalled()
    hops = scenario.spec.reference_path
    events = [event(i + 1, "execute_sql", sql([[1, "checkout-worker"], [2, "order-api"],
                                                [3, "vacuum"], [4, "report"]]))
              for i in range(len(hops))]
    # calls after the path (remediation, verification) are not evidence of the path
    events.append(event(99, "execute_sql", sql([[0, "checkout-worker"]] * 50)))
    d = measure(scenario, events)
    assert d.depth == len(hops) == 4
    assert [(h.signal, h.total) for h in d.hops] == [(1, 4)] * 4
    assert d.complexity == 0.75 and d.label == "Hard"
    assert d.digest == difficulty.evidence_digest(scenario)


def test_a_failed_hop_returns_no_units() -> None:
    scenario = signalled()
    n = len(scenario.spec.reference_path)
    events = [event(1, "execute_sql", None, ok=False),
              *(event(i + 2, "execute_sql", sql([[1, "checkout-worker"]])) for i in range(n - 1))]
    d = measure(scenario, events)
    assert d.hops[0].total == 0 and d.complexity == 0.0


def test_unmeasurable_scenarios_say_why() -> None:
    scenario = signalled()
    scenario.spec.reference_path[1].signal = None
    with pytest.raises(UnmeasurableError, match=r"no signal declared for referencePath\[1\] \("):
        measure(scenario, [])
    with pytest.raises(UnmeasurableError, match="not its reference path"):
        measure(signalled(), [event(1, "read_log", None)])


def test_store_round_trip_and_staleness(tmp_path: Path) -> None:
    scenario = signalled()
    n = len(scenario.spec.reference_path)
    d = measure(scenario, [event(i + 1, "execute_sql", sql([[1, "checkout-worker"], [2, "x"]]))
                           for i in range(n)])
    assert difficulty.describe(scenario, {}) == ("unmeasured", "?")
    difficulty.save(tmp_path, {scenario.name: d})
    stored = difficulty.load(tmp_path)
    assert difficulty.current(scenario, stored) == d
    assert difficulty.describe(scenario, stored) == ("0.50", "Hard")
    scenario.spec.fault.persistent = []
    assert difficulty.current(scenario, stored) is None
    assert difficulty.describe(scenario, stored) == ("stale", "?")
    scenario.spec.reference_path = scenario.spec.reference_path[:2]
    assert difficulty.describe(scenario, stored) == ("stale", "Easy")


def test_a_broken_store_is_named(tmp_path: Path) -> None:
    (tmp_path / difficulty.FILE_NAME).write_text('{"x": {"depth": "deep"}}')
    with pytest.raises(ValueError, match="not a difficulty file"):
        difficulty.load(tmp_path)


def test_list_shows_the_stored_difficulty(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = resolve("stale-stats-lock-chain")
    (tmp_path / path.name).write_text(path.read_text())
    scenario = resolve(str(tmp_path / path.name))[1]
    assert main(["--root", str(tmp_path), "scenarios", "list"]) == 0
    assert "unmeasured" in capsys.readouterr().out
    evidence = "checkout-worker order-api Nested Loop autovacuum_enabled=false"
    n = len(scenario.spec.reference_path)
    difficulty.save(tmp_path, {scenario.name: measure(scenario, [
        event(i + 1, "execute_sql", sql([[evidence], ["noise"]])) for i in range(n)])})
    assert main(["--root", str(tmp_path), "scenarios", "list"]) == 0
    assert "0.50" in (listed := capsys.readouterr().out) and "Hard" in listed


def test_measure_writes_beside_the_manifests_unless_told_where(tmp_path: Path) -> None:
    assert difficulty_dir(parser().parse_args(["scenarios", "measure"])) == scenarios_root()
    assert difficulty_dir(parser().parse_args(
        ["--root", str(tmp_path), "scenarios", "measure", "x"])) == tmp_path
    out = tmp_path / "not" / "yet"
    assert difficulty_dir(parser().parse_args(
        ["scenarios", "measure", "--out", str(out), "x"])) == out and out.is_dir()
