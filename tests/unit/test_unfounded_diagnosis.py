"""A diagnosis that names only what the agent changed, having looked at nothing first, is no
diagnosis (issue 39): the reset control's own runs (tests/data/reset-control, one per scenario
where it changed something, recorded 2026-12-07) must fail Diagnosis, even where the matcher
alone would pass them; the same report from an agent that looked at the symptom first, or one
that names where the fault bites, is judged on its contents."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from dbabench.evaluate import evidence
from dbabench.evaluate.diagnosis import evaluate_diagnosis
from dbabench.evaluate.evaluator import judge_records
from dbabench.model.report import ObjectRef, Report
from dbabench.model.trace import TraceEvent
from dbabench.scenario.loader import resolve

RUNS = Path(__file__).parents[1] / "data" / "reset-control"
NAMES = sorted(p.name for p in RUNS.iterdir())
# where the matcher alone passes the reset's report: the ones it got right by guessing
MATCHED = {"commit-delay-blamed-on-row-locks", "deadlock-timeout-raised-to-quiet-lock-logs",
           "max-wal-size-shrunk-checkpoint-storm", "preload-library-dropped-by-alter-system",
           "track-counts-off-autovacuum-blind", "vacuum-defer-cleanup-age-hidden-holdback"}


@functools.cache
def recorded(name: str) -> tuple[list[TraceEvent], Report]:
    events = [TraceEvent.model_validate_json(line) for line in
              (RUNS / name / "trace.jsonl").read_text().splitlines() if line.strip()]
    return events, Report.model_validate_json((RUNS / name / "report.json").read_text())


def judged(name: str, events: list[TraceEvent], report: Report) -> tuple[bool, str | None]:
    diagnosis, _, _ = judge_records(resolve(name)[1].spec, events, report, unpriced_models=[],
                                    steering=[], agent_sandboxed=True)
    return diagnosis.passed, diagnosis.unfounded


def test_the_recorded_runs_are_the_ones_that_changed_something() -> None:
    assert len(NAMES) == 10 and MATCHED <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_reset_only_report_fails_diagnosis(name: str) -> None:
    events, report = recorded(name)
    matched = evaluate_diagnosis(report, resolve(name)[1].spec.diagnosis).passed
    assert matched == (name in MATCHED)
    passed, unfounded = judged(name, events, report)
    assert not passed and unfounded and "names only what the agent changed" in unfounded


def looked_first(events: list[TraceEvent]) -> list[TraceEvent]:
    log = TraceEvent(seq=0, ts=events[0].ts, kind="tool", tool="read_log",
                     args={"lines": 200}, observation={"lines": []})
    return [log, *events]


@pytest.mark.parametrize("name", sorted(MATCHED))
def test_the_same_report_after_a_look_at_the_symptom_is_judged_on_its_contents(
        name: str) -> None:
    events, report = recorded(name)
    assert evidence.unfounded(report, looked_first(events)) is None
    assert judged(name, looked_first(events), report) == (True, None)


@pytest.mark.parametrize("name", sorted(MATCHED))
def test_a_report_that_names_where_the_fault_bites_is_judged_on_its_contents(
        name: str) -> None:
    events, report = recorded(name)
    named = report.model_copy(update={"affected_objects": [
        *report.affected_objects, ObjectRef(kind="session", name="checkout-worker")]})
    assert evidence.unfounded(named, events) is None


def test_a_report_naming_a_setting_it_did_not_touch_is_not_only_its_own_changes() -> None:
    events, report = recorded("track-counts-off-autovacuum-blind")
    other = report.model_copy(update={"affected_objects": [ObjectRef(kind="setting",
                                                                     name="autovacuum")]})
    assert evidence.unfounded(other, events) is None


def test_a_run_that_changed_nothing_has_nothing_to_found() -> None:
    events, report = recorded("track-counts-off-autovacuum-blind")
    unchanged = [e for e in events if not evidence.configures(e)]
    assert evidence.unfounded(report, unchanged) is None
