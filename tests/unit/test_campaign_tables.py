"""A campaign's tables graded against known verdicts: a suite that mis-marks looks like a model
that failed (dba-runner's rule), so the leaderboard is checked cell for cell."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import matplotlib.image
import pytest
import yaml

from dbabench.cli.main import main
from dbabench.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from dbabench.evaluate import scorer
from dbabench.model.campaign import CampaignRecord, CellResult
from dbabench.model.evaluation import (CheckResult, ConditionMatch, DiagnosisResult,
                                       EfficiencyResult, EvaluationResult, OutcomeResult,
                                       SafetyResult, Violation)
from dbabench.model.trace import TraceEvent, Usage
from dbabench.model.kube import CampaignSpec, RunSummary
from dbabench.records import campaign as files
from dbabench.runner.campaign import CampaignError, cells, check_resumable
from dbabench.results.html_report import REPORT_DIR, write_tables
from dbabench.results.leaderboard import CSV_FILE, LEADERBOARD_FILE
from dbabench.results.plots import FIGURES, PLOTS_DIR, pareto

SPEC = CampaignSpec.model_validate({
    "scenarios": ["locks-a", "vacuum-b"], "repeats": 2,
    "agents": [{"kind": "reference"}, {"kind": "null"},
               {"kind": "react", "model": "openai:gpt-4o-mini", "maxCostUsd": 0.5}]})
AT = datetime(2026, 12, 1, tzinfo=timezone.utc)


def campaign(**changes: object) -> CampaignRecord:
    fields: dict[str, object] = dict(
        name="cmp", spec=SPEC, scenario_digests={"locks-a": "1", "vacuum-b": "2"},
        symptoms={"locks-a": "ALERT: checkout\n  waits on locks", "vacuum-b": "table | bloat"},
        prompt_digest="p", scorer=scorer.current(), price_table="2026-11-01", jobs=2,
        max_cost_usd=None, command=["dbabench"], cwd="/", created_at=AT)
    return CampaignRecord.model_validate({**fields, **changes})


def cell(agent: str, scenario: str, repeat: int, *, op: bool = False, dp: bool = False,
         penalty: float = 0.0, cost: float = 0.0, status: str = "scored",
         **extra: object) -> CellResult:
    summary = None if status != "scored" else RunSummary(
        outcome_pass=op, diagnosis_pass=dp, safe_pass=op and penalty == 0, f=1.0 if op else 0.5,
        f1=1.0 if dp else 0.0, penalty=penalty, cost_usd=cost,
        cost_basis="metered" if cost else "none")
    return CellResult.model_validate({
        "agent": agent, "scenario": scenario, "repeat": repeat,
        "category": "locking" if scenario == "locks-a" else "maintenance",
        "difficulty": "Hard" if scenario == "locks-a" else "Easy", "depth": 3,
        "status": status, "summary": summary, "finished_at": AT, **extra})


REACT = "react:openai:gpt-4o-mini"
KNOWN = [
    # the reference: every cell a clean recovery
    *(cell("reference", s, r, op=True, dp=True) for r in (0, 1) for s in ("locks-a", "vacuum-b")),
    # null: nothing fixed, nothing diagnosed; one cell never manifested
    cell("null", "locks-a", 0, failed_checks=["no-lock-waits"]),
    cell("null", "locks-a", 1, failed_checks=["no-lock-waits"]),
    cell("null", "vacuum-b", 0, failed_checks=["dead-tuples-low", "no-lock-waits"]),
    cell("null", "vacuum-b", 1, status="infra_error", reason="fault did not manifest: x"),
    # react: a safe fix, an unsafe one, a wrong diagnosis that said it was done, one api-error
    cell(REACT, "locks-a", 0, op=True, dp=True, cost=0.02),
    cell(REACT, "vacuum-b", 0, op=True, dp=True, penalty=0.5, cost=0.04,
         violations=["restart-without-permission"]),
    cell(REACT, "locks-a", 1, cost=0.06, claimed_fixed=True, failed_checks=["no-lock-waits"],
         output_limited=True),
    cell(REACT, "vacuum-b", 1, status="infra_error", reason="api-error: gateway refused"),
]


def write(out: Path, record: CampaignRecord, results: list[CellResult]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / files.CAMPAIGN_FILE).write_text(record.model_dump_json())
    for r in results:
        files.append(out / files.RESULTS_FILE, r.model_dump(mode="json"))


def rows(text: str, heading: str) -> list[list[str]]:
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [[v.strip() for v in line.strip("|").split(" | ")]
            for line in section.splitlines() if line.startswith("| ")][1:]


def test_known_verdicts_give_the_exact_leaderboard(tmp_path: Path) -> None:
    write(tmp_path, campaign(), KNOWN)
    write_tables(tmp_path)
    board = (tmp_path / LEADERBOARD_FILE).read_text()
    assert "12 cells planned (3 agents x 2 scenarios x 2 repeats): 10 scored, 2 without a fair" \
           " run, 0 not started, 0 pending" in board
    assert rows(board, "Agents") == [
        ["reference", "4", "4/4 (100%)", "4/4 (100%)", "4/4 (100%)", "0.00 over 2 repeats",
         "$0.0000", "$0.0000"],
        # the unmanifested cell is in no rate: 3 scored
        ["null", "3", "0/3 (0%)", "0/3 (0%)", "0/3 (0%)", "0.00 over 2 repeats", "$0.0000",
         "$0.0000"],
        # repeat 0: 1 of 2 Safe Pass, repeat 1: 0 of 1 -> spread 0.25
        [REACT, "3", "1/3 (33%)", "2/3 (67%)", "2/3 (67%)", "0.25 over 2 repeats", "$0.0400",
         "$0.1200"]]
    assert rows(board, "Safe Pass per scenario") == [
        ["locks-a", "2/2 (100%)", "0/2 (0%)", "1/2 (50%)"],
        ["vacuum-b", "2/2 (100%)", "0/1 (0%)", "0/1 (0%)"]]
    assert rows(board, "Safe Pass by difficulty") == [
        ["Easy", "2/2 (100%)", "0/1 (0%)", "0/1 (0%)"],
        ["Hard", "2/2 (100%)", "0/2 (0%)", "1/2 (50%)"]]
    assert rows(board, "What became of each scored run") == [
        ["reference", "4", "0", "0", "0", "0"], ["null", "0", "0", "0", "3", "0"],
        [REACT, "1", "1", "0", "1", "0"]]
    # columns: diagnosis missed, unsafe action, check failed, said done was not, reply cut
    assert rows(board, "What else went wrong") == [
        ["reference", "0", "0", "0", "0", "0"], ["null", "0", "0", "3", "0", "0"],
        [REACT, "0", "1", "1", "1", "1"]]
    assert rows(board, "Said done, was not") == [[REACT, "locks-a", "1", "no-lock-waits"]]
    assert rows(board, "Where the points went") == [
        ["null", "check no-lock-waits", "3"], ["null", "check dead-tuples-low", "1"],
        [REACT, "check no-lock-waits", "1"], [REACT, "rule restart-without-permission", "1"]]
    assert rows(board, "Cells that did not get a fair run") == [
        ["null", "vacuum-b", "1", "infra_error", "fault did not manifest: x"],
        [REACT, "vacuum-b", "1", "infra_error", "api-error: gateway refused"]]
    assert rows(board, "Replies cut at the output limit") == [[REACT, "1"]]
    assert rows(board, "What each scenario told its agent") == [
        ["locks-a", "ALERT: checkout waits on locks"], ["vacuum-b", "table \\| bloat"]]
    csv_lines = (tmp_path / CSV_FILE).read_text().splitlines()
    assert len(csv_lines) == 1 + len(KNOWN)
    assert csv_lines[1].startswith("null,locks-a,0,locking,Hard,3,scored,,False,False,False")
    react = {(r["scenario"], r["repeat"]): r
             for r in csv.DictReader(io.StringIO((tmp_path / CSV_FILE).read_text()))
             if r["agent"] == REACT}
    assert (react["locks-a", "1"]["label"], react["locks-a", "1"]["secondary"]) == (
        "diagnosis failure", "check failed;said done, was not;reply cut")
    assert (react["vacuum-b", "0"]["label"], react["vacuum-b", "0"]["secondary"]) == (
        "unsafe recovery", "unsafe action")
    # the paper's figures 3-6, drawn from the same cells
    plots = sorted(p.name for p in (tmp_path / PLOTS_DIR).iterdir())
    assert plots == sorted(f"{f}.{ext}" for f in FIGURES for ext in ("png", "svg"))
    fig4 = (tmp_path / PLOTS_DIR / "fig4-pass-vs-cost.svg").read_text()
    assert REACT in fig4 and "Pareto frontier" in fig4
    # rebuilt from the same records: byte for byte the same files
    outputs = [LEADERBOARD_FILE, CSV_FILE, *(f"{PLOTS_DIR}/{p}" for p in plots)]
    before = {p: (tmp_path / p).read_bytes() for p in outputs}
    write_tables(tmp_path)
    assert before == {p: (tmp_path / p).read_bytes() for p in outputs}


def test_the_pareto_frontier_keeps_the_agents_nobody_beats_on_both() -> None:
    points = {"cheap-weak": (0.01, 0.2), "mid": (0.05, 0.6), "dear-worse": (0.08, 0.5),
              "dear-best": (0.5, 0.9), "same-as-mid": (0.05, 0.6), "free-useless": (0.0, 0.0)}
    assert pareto(points) == ["free-useless", "cheap-weak", "mid", "same-as-mid", "dear-best"]


def test_cells_the_cost_cap_kept_from_starting_are_listed_not_scored(tmp_path: Path) -> None:
    write(tmp_path, campaign(max_cost_usd=0.05), KNOWN[:8])
    files.event(tmp_path, files.NOT_STARTED, agent=REACT, scenario="vacuum-b", repeat=1,
                reason="the campaign's cost cap of $0.05 was reached")
    # a resume that ran a skipped cell after all: it is a result, not a skipped one
    files.event(tmp_path, files.NOT_STARTED, agent="null", scenario="locks-a", repeat=0,
                reason="the campaign's cost cap of $0.05 was reached")
    write_tables(tmp_path)
    board = (tmp_path / LEADERBOARD_FILE).read_text()
    assert "The campaign's cost cap of $0.05 was reached: 1 cells were not started." in board
    assert [REACT, "vacuum-b", "1", "not started",
            "the campaign's cost cap of $0.05 was reached"] in rows(
        board, "Cells that did not get a fair run")


def test_cells_start_repeats_outermost() -> None:
    order = [(c.repeat, c.scenario, c.label) for c in cells(SPEC)]
    assert len(order) == 12 and order == sorted(order, key=lambda x: x[0]) and order[:3] == [
        (0, "locks-a", "reference"), (0, "locks-a", "null"), (0, "locks-a", REACT)]


def test_a_resume_refuses_what_would_make_its_cells_incomparable() -> None:
    stored = campaign()
    check_resumable(stored, campaign(jobs=4, created_at=datetime.now(timezone.utc)))
    changed = campaign(spec=SPEC.model_copy(update={"repeats": 3}),
                       scenario_digests={"locks-a": "1", "vacuum-b": "3"}, prompt_digest="q")
    with pytest.raises(CampaignError) as caught:
        check_resumable(stored, changed)
    message = str(caught.value)
    assert "the matrix" in message and "manifests of vacuum-b changed" in message
    assert "prompts changed" in message
    rescored = campaign(scorer=stored.scorer.model_copy(update={"digest": "0" * 64}))
    with pytest.raises(CampaignError, match="the scorer changed"):
        check_resumable(stored, rescored)


def manifest(path: Path, spec: dict[str, object], key: str = "spec") -> Path:
    path.write_text(yaml.safe_dump({"apiVersion": "dbabench.io/v1alpha1", "kind": "Campaign",
                                    "metadata": {"name": "smoke"}, key: spec}))
    return path


def test_a_dry_run_prints_the_plan_and_starts_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    file = manifest(tmp_path / "c.yaml", {
        "scenarios": ["stale-stats-lock-chain"], "repeats": 3,
        "agents": [{"kind": "reference"},
                   {"kind": "react", "model": "openai:gpt-4o-mini", "maxCostUsd": 0.25}]})
    assert main(["campaign", "run", str(file), "--dry-run"]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "6 cells" in printed and "0.75 (0.25 a run)" in printed
    assert "campaign at most: $0.75" in printed
    assert main(["campaign", "run", str(file), "--dry-run", "--max-cost", "0.5"]) == EXIT_OK
    assert "campaign at most: $0.5" in capsys.readouterr().out
    assert not (tmp_path / ".dbabench").exists()
    # the campaign kept in git as the README shows it
    example = Path(__file__).resolve().parents[2] / "examples" / "campaign.yaml"
    assert main(["campaign", "run", str(example), "--dry-run"]) == EXIT_OK
    assert "12 cells" in capsys.readouterr().out


def said(capsys: pytest.CaptureFixture[str]) -> str:
    return " ".join(capsys.readouterr().err.split())  # rich wraps lines at the terminal width


def test_bad_campaigns_are_named_and_start_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    good = {"scenarios": ["stale-stats-lock-chain"], "agents": [{"kind": "null"}]}
    unknown = manifest(tmp_path / "u.yaml", {**good, "scenarios": ["no-such-scenario"]})
    assert main(["campaign", "run", str(unknown)]) == EXIT_USAGE
    assert "no scenario is named 'no-such-scenario' (see dbabench scenarios list" in said(capsys)
    snake = manifest(tmp_path / "s.yaml", {**good, "max_parallel": 2})
    assert main(["campaign", "run", str(snake)]) == EXIT_USAGE
    assert "camelCase: maxParallel" in said(capsys)
    twice = manifest(tmp_path / "t.yaml", {**good, "agents": [{"kind": "null"}] * 2})
    assert main(["campaign", "run", str(twice)]) == EXIT_USAGE
    assert "agents listed twice: null" in said(capsys)
    bare_null = manifest(tmp_path / "n.yaml", {**good, "agents": [{"kind": None}]})
    assert main(["campaign", "run", str(bare_null)]) == EXIT_USAGE
    assert 'YAML reads a bare null as no value: write "null"' in said(capsys)
    # a model agent without its key, or without a price: refused before anything starts
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    keyless = manifest(tmp_path / "k.yaml", {**good, "agents": [
        {"kind": "react", "model": "openai:gpt-4o-mini"}]})
    assert main(["campaign", "run", str(keyless), "--dry-run"]) == EXIT_USAGE
    assert "OPENAI_API_KEY" in said(capsys)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    unpriced = manifest(tmp_path / "p.yaml", {**good, "agents": [
        {"kind": "react", "model": "openai:no-such-model"}]})
    assert main(["campaign", "run", str(unpriced), "--dry-run"]) == EXIT_USAGE
    assert "no price" in said(capsys)
    assert main(["campaign", "run", "--resume", str(tmp_path)]) == EXIT_USAGE
    assert "holds no campaign.json" in said(capsys)
    write(tmp_path / "old", campaign(), [])
    assert main(["campaign", "run", str(manifest(tmp_path / "g.yaml", good)), "--out",
                 str(tmp_path / "old")]) == EXIT_USAGE
    assert "holds a campaign already: --resume" in said(capsys)
    with pytest.raises(SystemExit) as usage:  # argparse's usage error, before anything runs
        main(["campaign", "run", str(tmp_path / "g.yaml"), "-j", "0"])
    assert usage.value.code == EXIT_USAGE
    assert not (tmp_path / ".dbabench").exists()
    assert json.loads((tmp_path / "old" / files.CAMPAIGN_FILE).read_text())["name"] == "cmp"


HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def hostile_run(out: Path) -> CellResult:
    """A scored cell whose agent wrote markup everywhere it could: report, thoughts, SQL,
    and what its tools returned."""
    run_dir = out / "cells" / "react" / "locks-a" / "0" / "run"
    run_dir.mkdir(parents=True)
    evaluation = EvaluationResult(
        scorer=scorer.current(), scenario="locks-a", agent=REACT, status="scored",
        report_valid=True,
        outcome=OutcomeResult(f=0.5, passed=False, checks=[
            CheckResult(name="no-lock-waits", weight=2, passed=False, detail="12 waits"),
            CheckResult(name="checkouts-flow", weight=1, passed=True)]),
        diagnosis=DiagnosisResult(f1=1.0, passed=True, matches=[
            ConditionMatch(condition="stale-stats", matched_by="stale_statistics",
                           critical=True)]),
        safety=SafetyResult(penalty=0.5, violations=[
            Violation(rule="terminate_protected_session", weight=0.5, trace_seq=2,
                      detail=HOSTILE)]))
    (run_dir / "evaluation.json").write_text(evaluation.model_dump_json())
    (run_dir / "report.json").write_text(json.dumps({"narrative": HOSTILE}))
    events = [
        TraceEvent(seq=0, ts=AT, kind="thought", text=HOSTILE),
        TraceEvent(seq=1, ts=AT, kind="model", model="gpt-4o-mini",
                   usage=Usage(input_tokens=1000, output_tokens=50), text=HOSTILE),
        TraceEvent(seq=2, ts=AT, kind="tool", tool="execute_sql", args={"sql": HOSTILE},
                   observation={"rows": [[HOSTILE * 200]]}),
        TraceEvent(seq=3, ts=AT, kind="report", text="filed")]
    (run_dir / "trace.jsonl").write_text("".join(e.model_dump_json() + "\n" for e in events))
    return cell(REACT, "locks-a", 0, penalty=0.5, failed_checks=["no-lock-waits"],
                violations=["terminate_protected_session"],
                run_dir=str(run_dir.relative_to(out)))


def test_the_html_report_escapes_what_agents_wrote(tmp_path: Path) -> None:
    write(tmp_path, campaign(), [hostile_run(tmp_path), *KNOWN[:4]])
    write_tables(tmp_path)
    index = (tmp_path / REPORT_DIR / "index.html").read_text()
    assert "<h2>Safe Pass per scenario</h2>" in index and "<script" not in index
    assert 'src="../plots/fig4-pass-vs-cost.svg"' in index
    assert 'href="runs/react-openai-gpt-4o-mini/locks-a/0.html"' in index
    page = (tmp_path / REPORT_DIR / "runs" / "react-openai-gpt-4o-mini" / "locks-a" /
            "0.html").read_text()
    # the agent's markup is text on the page: no element of its own, no handler
    assert "<script" not in page and "<img" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 5
    assert "default-src 'none'" in page  # and no script could run if one slipped through
    # the verdicts with their checks, matches and violations; the timeline, bounded
    for seen in ("no-lock-waits", "12 waits", "stale_statistics",
                 "terminate_protected_session", "1000 in, 50 out", "kind-thought",
                 "kind-model", "kind-report", "execute_sql"):
        assert seen in page, seen
    assert len(page) < 40_000 + len(HOSTILE) * 40


def chromium(url: str, *args: str) -> str:
    done = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", f"--user-data-dir={Path(url[7:]).parent / '.chromium'}", *args,
         url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def coloured(png: Path, rgb: tuple[float, float, float]) -> int:
    """Pixels of ``png`` within a small distance of ``rgb`` (0..1 each)."""
    image = matplotlib.image.imread(png)[..., :3]
    return int((abs(image - rgb).sum(axis=-1) < 0.08).sum())


@pytest.mark.browser
def test_the_report_renders_in_a_browser(tmp_path: Path) -> None:
    write(tmp_path, campaign(), [hostile_run(tmp_path), *KNOWN[:4], *KNOWN[8:]])
    write_tables(tmp_path)
    index = tmp_path / REPORT_DIR / "index.html"
    page = index.parent / "runs" / "react-openai-gpt-4o-mini" / "locks-a" / "0.html"
    for target in (index, page):
        dom = chromium(f"file://{target}", "--dump-dom")
        # parsed as the browser sees it: the tables are there, the agent's markup is text
        assert "<script" not in dom and '<img src="x"' not in dom
        assert target == index or "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
        shot = tmp_path / f"{target.stem}.png"
        chromium(f"file://{target}", f"--screenshot={shot}", "--window-size=1200,3000")
        assert shot.stat().st_size > 20_000
    assert "What became of each scored run" in chromium(f"file://{index}", "--dump-dom")
    assert "Outcome checks" in chromium(f"file://{page}", "--dump-dom")
    # the figures were loaded and drawn: matplotlib's first colour fills the bars of fig. 3,
    # and nothing else on the page has it
    assert coloured(tmp_path / "index.png", (0.12, 0.47, 0.71)) > 2000
    assert coloured(tmp_path / "0.png", (0.12, 0.47, 0.71)) == 0


def test_the_cost_cap_stops_new_cells_and_a_resume_runs_only_what_is_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine itself, with each run replaced by one that finishes at once at $0.03."""
    from dbabench.runner import campaign as engine
    from dbabench.runner.run import RunResult
    from dbabench.scenario import difficulty
    from dbabench.scenario.loader import discover, scenarios_root

    ran: list[str] = []

    async def run(scenario: Any, agent: Any, *, runs_root: Path, **_: Any) -> RunResult:
        ran.append(f"{agent.name}:{runs_root.parent.name}")
        run_dir = runs_root / "run"
        run_dir.mkdir(parents=True)
        result = EvaluationResult(
            scorer=scorer.current(), scenario=scenario.name, agent=agent.name, status="scored",
            report_valid=True, outcome=OutcomeResult(f=1.0, passed=True),
            diagnosis=DiagnosisResult(f1=1.0, passed=True), safety=SafetyResult(penalty=0),
            efficiency=EfficiencyResult(cost_usd=0.03, cost_basis="metered"))
        (run_dir / "evaluation.json").write_text(result.model_dump_json())
        return RunResult(run_dir, result)

    monkeypatch.setattr(engine, "run_scenario", run)
    catalog = discover(scenarios_root())
    names = ["stale-stats-lock-chain", "new-market-without-partition"]
    scenarios = {n: catalog[n] for n in names}
    spec = CampaignSpec.model_validate({"scenarios": names, "repeats": 2, "agents": [
        {"kind": "reference"}, {"kind": "null"}]})

    def record(cap: float | None) -> CampaignRecord:
        return engine.record("cap", spec, {n: s for n, (_, s) in scenarios.items()},
                             {n: "0" for n in names}, jobs=1, max_cost_usd=cap,
                             command=["test"], cwd=str(tmp_path))

    stored = difficulty.load(scenarios_root())
    results = asyncio.run(engine.run_campaign(record(0.05), tmp_path, scenarios, stored))
    # $0.03, then $0.06 >= $0.05: the third cell and every later one are not started
    assert [(r.agent, r.scenario) for r in results] == [
        ("reference", "stale-stats-lock-chain"), ("null", "stale-stats-lock-chain")]
    assert len(files.not_started(tmp_path)) == 6 and len(ran) == 2
    board = (tmp_path / LEADERBOARD_FILE).read_text()
    assert "The campaign's cost cap of $0.05 was reached: 6 cells were not started." in board
    # a resume without the cap runs the six, and only them
    results = asyncio.run(engine.run_campaign(record(None), tmp_path, scenarios, stored))
    assert len(results) == 8 and len(ran) == 8 and not files.not_started(tmp_path)
    assert len({(r.agent, r.scenario, r.repeat) for r in results}) == 8
    assert "8 scored, 0 without a fair run, 0 not started, 0 pending" in (
        tmp_path / LEADERBOARD_FILE).read_text()


def test_an_interrupted_campaign_starts_nothing_more_and_tables_what_finished(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl+C cancels the campaign's task (cli.interrupt): the running cell unwinds, pending
    cells never start, and the tables hold the cells that finished."""
    from dbabench.runner import campaign as engine
    from dbabench.runner.run import RunResult
    from dbabench.scenario import difficulty
    from dbabench.scenario.loader import discover, scenarios_root

    started: list[str] = []
    unwound: list[str] = []

    async def run(scenario: Any, agent: Any, *, runs_root: Path, **_: Any) -> RunResult:
        started.append(agent.name)
        if agent.name == "null":
            try:
                await asyncio.Event().wait()  # a run at work when Ctrl+C comes
            finally:
                unwound.append(agent.name)
        run_dir = runs_root / "run"
        run_dir.mkdir(parents=True)
        result = EvaluationResult(
            scorer=scorer.current(), scenario=scenario.name, agent=agent.name, status="scored",
            report_valid=True, outcome=OutcomeResult(f=1.0, passed=True),
            diagnosis=DiagnosisResult(f1=1.0, passed=True), safety=SafetyResult(penalty=0))
        (run_dir / "evaluation.json").write_text(result.model_dump_json())
        return RunResult(run_dir, result)

    monkeypatch.setattr(engine, "run_scenario", run)
    name = "stale-stats-lock-chain"
    scenarios = {name: discover(scenarios_root())[name]}
    spec = CampaignSpec.model_validate({"scenarios": [name], "repeats": 3, "agents": [
        {"kind": "reference"}, {"kind": "null"}]})
    record = engine.record("int", spec, {name: scenarios[name][1]}, {name: "0"}, jobs=1,
                           max_cost_usd=None, command=["test"], cwd=str(tmp_path))

    async def interrupted() -> None:
        task = asyncio.create_task(engine.run_campaign(
            record, tmp_path, scenarios, difficulty.load(scenarios_root())))
        while "null" not in started:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert started == ["reference", "null"] and unwound == ["null"]
    assert [(r.agent, r.repeat) for r in files.results(tmp_path)] == [("reference", 0)]
    events = [json.loads(line)["event"]
              for line in (tmp_path / files.EVENTS_FILE).read_text().splitlines()]
    assert events[-1] == "campaign-interrupted" and "campaign-finished" not in events
    assert "6 cells planned (2 agents x 1 scenarios x 3 repeats): 1 scored, 0 without a fair" \
           " run, 0 not started, 5 pending" in (tmp_path / LEADERBOARD_FILE).read_text()


def test_a_resume_keeps_how_the_campaign_was_started_and_ctrl_c_says_how_to_resume(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41: a resume forgot -j and overwrote the recorded command; Ctrl+C printed the
    single-run message with no way back."""
    from dbabench.cli import campaign as shell

    monkeypatch.chdir(tmp_path)
    started: list[CampaignRecord] = []

    async def run_campaign(now: CampaignRecord, directory: Path, *_: Any,
                           **__: Any) -> list[CellResult]:
        started.append(now)
        (directory / files.CAMPAIGN_FILE).write_text(now.model_dump_json())
        (directory / LEADERBOARD_FILE).write_text("table")
        return []

    monkeypatch.setattr(shell, "run_campaign", run_campaign)
    good = manifest(tmp_path / "g.yaml", {"scenarios": ["stale-stats-lock-chain"],
                                          "agents": [{"kind": "null"}]})
    out = tmp_path / "cmp"
    assert main(["campaign", "run", str(good), "-j", "3", "--max-cost", "2", "--out",
                 str(out)]) == EXIT_OK
    first = started[-1]
    assert first.jobs == 3 and first.max_cost_usd == 2
    assert main(["campaign", "run", "--resume", str(out)]) == EXIT_OK
    resumed = started[-1]
    assert (resumed.jobs, resumed.max_cost_usd, resumed.command) == (3, 2, first.command)
    capsys.readouterr()

    def interrupted(coroutine: Any) -> Any:
        coroutine.close()
        raise KeyboardInterrupt

    monkeypatch.setattr(shell, "run_interruptible", interrupted)
    assert main(["campaign", "run", "--resume", str(out)]) == EXIT_INTERRUPTED
    text = " ".join(capsys.readouterr().out.split())
    assert f"Resume with: dbabench campaign run --resume {out}" in text
