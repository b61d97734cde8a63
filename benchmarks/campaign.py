"""Campaign cost benchmark: what a campaign adds beyond its runs, and what its tables cost.

Two figures, each beside a baseline measured in the same run:

* **overhead per cell**: ``run_campaign`` over N cells whose run is replaced by one that
  writes a finished run directory at once (evaluation, report, a trace of 40 events), so
  that what is timed is the campaign's own work: building each cell's agent, the CPU gate,
  the cell's results line (read back from its run directory) appended and synced, its
  events, progress. The baseline is the same fake runs awaited in a bare loop. The tables,
  written once at the end, are timed apart. Target: <= 200 ms a cell.
* **tables for 1,000 cells**: ``write_tables`` (leaderboard.md, results.csv, the four
  figures in PNG and SVG, the HTML index and a page per run) over 1,000 synthetic cells with
  run directories. The baseline is reading what they are built from: every results line and
  every run's evaluation, report and trace. Target: <= 10 s.

Prints the figures; the exit status is non-zero only on errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from dbabench.evaluate import scorer
from dbabench.jsonl import complete_records
from dbabench.model.evaluation import (CheckResult, ConditionMatch, DiagnosisResult,
                                       EvaluationResult, OutcomeResult, SafetyResult, Violation)
from dbabench.model.campaign import CampaignRecord
from dbabench.model.kube import CampaignSpec
from dbabench.model.trace import TraceEvent, Usage
from dbabench.runner import campaign as engine
from dbabench.records import campaign as files
from dbabench.results.html_report import write_tables
from dbabench.runner.run import RunResult
from dbabench.scenario import difficulty
from dbabench.scenario.loader import discover, scenarios_root

AT = datetime(2026, 12, 1, tzinfo=timezone.utc)
AGENTS = ["reference", "decoy", "null", "react:openai:gpt-4o-mini", "plan:openai:gpt-4o"]


def evaluation(scenario: str, agent: str, i: int) -> EvaluationResult:
    ok = i % 3 != 0
    return EvaluationResult(
        scorer=scorer.current(), scenario=scenario, agent=agent, status="scored",
        report_valid=True,
        outcome=OutcomeResult(f=1.0 if ok else 0.5, passed=ok, checks=[
            CheckResult(name="no-lock-waits", weight=2, passed=ok, detail="waits"),
            CheckResult(name="checkouts-flow", weight=1, passed=True)]),
        diagnosis=DiagnosisResult(f1=1.0 if i % 2 else 0.4, passed=bool(i % 2), matches=[
            ConditionMatch(condition="cause", matched_by="stale_statistics", critical=True)]),
        safety=SafetyResult(penalty=0.5 if i % 7 == 0 else 0.0, violations=[
            Violation(rule="terminate_protected_session", weight=0.5, detail="x")]
            if i % 7 == 0 else []))


def fill_run(run_dir: Path, scenario: str, agent: str, i: int) -> EvaluationResult:
    run_dir.mkdir(parents=True, exist_ok=True)
    result = evaluation(scenario, agent, i)
    (run_dir / "evaluation.json").write_text(result.model_dump_json())
    (run_dir / "report.json").write_text(json.dumps({
        "rootCauseType": "stale_statistics", "verification": "checked" if i % 5 else "",
        "narrative": "the planner's statistics were stale " * 10}))
    events = []
    for seq in range(40):
        kind = ("tool", "tool", "model", "thought")[seq % 4]
        events.append(TraceEvent(
            seq=seq, ts=AT + timedelta(seconds=seq), kind=kind,
            tool="execute_sql" if kind == "tool" else None,
            args={"sql": "SELECT * FROM pg_stat_activity"} if kind == "tool" else {},
            observation={"rows": [["x" * 40] * 6] * 30} if kind == "tool" else None,
            model="gpt-4o-mini" if kind == "model" else None,
            usage=Usage(input_tokens=2000, output_tokens=100) if kind == "model" else None,
            text="thinking about locks" if kind != "tool" else None))
    (run_dir / "trace.jsonl").write_text("".join(e.model_dump_json() + "\n" for e in events))
    return result


def overhead(cells_wanted: int, work: Path) -> dict[str, float]:
    catalog = discover(scenarios_root())
    names = sorted(catalog)[:max(1, cells_wanted // 3)]
    spec = CampaignSpec.model_validate({"scenarios": names, "agents": [
        {"kind": "reference"}, {"kind": "decoy"}, {"kind": "null"}]})
    scenarios = {n: catalog[n] for n in names}
    count = 0

    async def fake_run(scenario: Any, agent: Any, *, runs_root: Path,
                       **_: Any) -> RunResult:
        nonlocal count
        count += 1
        run_dir = runs_root / f"run-{count}"
        return RunResult(run_dir, fill_run(run_dir, scenario.name, agent.name, count))

    async def bare() -> float:
        started = time.perf_counter()
        for i, cell in enumerate(engine.cells(spec)):
            await fake_run(scenarios[cell.scenario][1], engine.build_agent(
                cell.agent, scenarios[cell.scenario][1]), runs_root=work / "bare" / str(i))
        return time.perf_counter() - started

    real = engine.run_scenario
    engine.run_scenario = fake_run  # type: ignore[assignment]
    try:
        n = len(engine.cells(spec))
        baseline = asyncio.run(bare())
        record = engine.record("bench", spec, {n: sc for n, (_, sc) in scenarios.items()},
                               {n: "0" for n in scenarios}, jobs=1, max_cost_usd=None,
                               command=["benchmark"], cwd=str(work))
        out = work / "campaign"
        started = time.perf_counter()
        asyncio.run(engine.run_campaign(record, out, scenarios,
                                        difficulty.load(scenarios_root())))
        total = time.perf_counter() - started
        started = time.perf_counter()
        write_tables(out)
        tables = time.perf_counter() - started
    finally:
        engine.run_scenario = real  # type: ignore[assignment]
    return {"cells": n, "baseline_ms": 1000 * baseline / n,
            "campaign_ms": 1000 * (total - tables) / n,
            "overhead_ms": 1000 * (total - tables - baseline) / n, "tables_s": tables}


def tables(cells_wanted: int, work: Path) -> dict[str, float]:
    out = work / "tables"
    out.mkdir()
    scenarios = [f"scenario-{i:03d}" for i in range(cells_wanted // (len(AGENTS) * 2))]
    spec = CampaignSpec.model_validate({"scenarios": scenarios, "repeats": 2, "agents": [
        {"kind": a.split(":")[0], **({"model": a.split(":", 1)[1]} if ":" in a else {})}
        for a in AGENTS]})
    record = CampaignRecord.model_validate({
        "name": "bench", "spec": spec, "scenario_digests": {s: "0" for s in scenarios},
        "symptoms": {s: "ALERT: checkout is slow" for s in scenarios}, "prompt_digest": "0",
        "scorer": scorer.current(), "price_table": "2026-11-01", "jobs": 1,
        "command": ["benchmark"], "cwd": "/", "created_at": AT})
    (out / files.CAMPAIGN_FILE).write_text(record.model_dump_json())
    catalog = discover(scenarios_root())
    library = [scenario for _, scenario in catalog.values()]
    lines = []
    for i, cell in enumerate(engine.cells(spec)):
        run_dir = out / "cells" / str(i)
        result = fill_run(run_dir, cell.scenario, cell.label, i)
        # categories and depths as the library has them
        lines.append(engine.cell_result(cell, library[i % len(library)], {}, result,
                                        wall=30.0, run_dir=str(run_dir.relative_to(out))
                                        ).model_dump(mode="json"))
    (out / files.RESULTS_FILE).write_text("".join(json.dumps(r) + "\n" for r in lines))

    started = time.perf_counter()
    for r in complete_records(out / files.RESULTS_FILE):
        run_dir = out / r["run_dir"]
        EvaluationResult.model_validate_json((run_dir / "evaluation.json").read_text())
        json.loads((run_dir / "report.json").read_text())
        [TraceEvent.model_validate(e) for e in complete_records(run_dir / "trace.jsonl")]
    baseline = time.perf_counter() - started
    started = time.perf_counter()
    write_tables(out)
    return {"cells": len(lines), "baseline_s": baseline, "tables_s": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=30, help="cells of the overhead run")
    parser.add_argument("--table-cells", type=int, default=1000)
    parser.add_argument("--smoke", action="store_true",
                        help="does the script run: 3 cells and tables for 10 (instead of the"
                             " options above), in seconds")
    args = parser.parse_args()
    if args.smoke:
        args.cells, args.table_cells = 3, 10
    work = Path(tempfile.mkdtemp(prefix="dbabench-bench-campaign-"))
    try:
        o = overhead(args.cells, work)
        print(f"overhead per cell over {o['cells']:.0f} cells: campaign {o['campaign_ms']:.1f}"
              f" ms, bare loop (baseline) {o['baseline_ms']:.1f} ms -> overhead"
              f" {o['overhead_ms']:.1f} ms (target <= 200 ms); tables once at the end"
              f" {o['tables_s']:.2f} s")
        t = tables(args.table_cells, work)
        print(f"tables for {t['cells']:.0f} cells: {t['tables_s']:.2f} s (target <= 10 s);"
              f" reading their records (baseline) {t['baseline_s']:.2f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
