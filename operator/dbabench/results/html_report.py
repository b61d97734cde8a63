"""A campaign's report as static HTML, opened from disk with no server: ``report/index.html``
(the leaderboard's tables, the figures, every run with a line saying why it passed or failed)
and a page per run, its transcript (``results.transcript``: each step in order, the verdict
beside it, each failed check and broken rule linked to its step).

Everything an agent wrote (its report, its thoughts, its SQL, what its tools returned) is text
an attacker chose: it is escaped, and ``report/`` runs no script. ``dbabench view`` writes the
same pages with one script more, pinned by its hash: the list of runs sorts and filters itself.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote

from dbabench.model.artifacts import CampaignOutput
from dbabench.model.campaign import CampaignRecord, CellResult
from dbabench.records import campaign as files
from dbabench.results import transcript
from dbabench.results.leaderboard import (CSV_FILE, LEADERBOARD_FILE, Board, Section, board,
                                         markdown, results_csv)
from dbabench.results.pages import Cell, RunRow, esc, label, mark, page, runs_list, table
from dbabench.results.plots import FIGURES, PLOTS_DIR, write_plots

REPORT_DIR = CampaignOutput.REPORT_DIR
RUN_COLUMNS = ["agent", "scenario", "repeat", "verdict", "safe", "outcome", "diagnosis",
               "steps", "cost", "why"]


def _section(section: Section) -> str:
    note = f"<p class=\"muted\">{esc(section.note)}</p>" if section.note else ""
    body = (table(section.header, [[esc(v) for v in row] for row in section.rows])
            if section.rows else f"<p>{esc(section.empty)}</p>")
    return f"<h2>{esc(section.title)}</h2>\n{note}{body}"


def run_page_path(cell: CellResult) -> str:
    """A cell's page, relative to the report directory."""
    agent = re.sub(r"[^A-Za-z0-9._@-]+", "-", cell.agent)
    return f"runs/{agent}/{cell.scenario}/{cell.repeat}.html"


def run_directory(out: Path, cell: CellResult) -> Path | None:
    """The cell's run directory, where it has one inside the campaign directory."""
    if cell.run_dir is None:
        return None
    run_dir = (out / cell.run_dir).resolve()
    return run_dir if run_dir.is_relative_to(out.resolve()) else None


def cell_reason(cell: CellResult) -> str:
    """Why a cell passed or failed, from its line of results.jsonl alone."""
    s = cell.summary
    if s is None:
        return f"{cell.status.replace('_', ' ')}, not scored: {cell.reason or 'no reason recorded'}"
    parts = [f"check {cell.failed_checks[0]} failed" if cell.failed_checks else "",
             f"broke {cell.violations[0]}" if cell.violations else "",
             "" if s.diagnosis_pass else f"diagnosis F1 {s.f1:.2f}"]
    return "; ".join(p for p in parts if p) or "Safe Pass: every check held, no rule broken"


def run_row(cell: CellResult, run_dir: Path | None, href: str | None) -> RunRow:
    """A cell's line in the list of runs: the verdicts of results.jsonl, and the reason read
    from the run's own evaluation where the run directory is at hand."""
    s = cell.summary
    verdict = cell.became if s is not None else cell.status.replace("_", " ")
    reason = cell_reason(cell)
    if run_dir is not None and run_dir.is_dir():
        info = transcript.run_info(run_dir)
        reason = info.reason if info.label != "not graded" else reason
    link = f"<a href=\"{esc(href)}\">{esc(cell.scenario)}</a>" if href else esc(cell.scenario)

    def verdict_cell(ok: bool | None) -> Cell:
        return Cell("–", -1) if ok is None else Cell(mark(ok), int(ok))

    return RunRow(verdict, {
        "agent": Cell(esc(cell.agent)), "scenario": Cell(link, cell.scenario),
        "repeat": Cell(esc(cell.repeat), cell.repeat), "verdict": Cell(label(verdict), verdict),
        "safe": verdict_cell(s.safe_pass if s else None),
        "outcome": verdict_cell(s.outcome_pass if s else None),
        "diagnosis": verdict_cell(s.diagnosis_pass if s else None),
        "steps": Cell(esc(cell.tool_calls), cell.tool_calls),
        "cost": Cell(esc(f"${s.cost_usd:.4f}") if s else "–", s.cost_usd if s else -1),
        "why": Cell(esc(reason))})


def index(board: Board, cells: list[CellResult], rows: list[RunRow] | None = None, *,
          interactive: bool = False, plots: str = f"../{PLOTS_DIR}") -> str:
    """The campaign's page. ``rows``: the list of runs (default: from results.jsonl alone);
    ``interactive``: the list sorts and filters itself (one script, pinned by its hash);
    ``plots``: the figures' directory relative to the page."""
    parts = [f"<h1>{esc(board.title)}</h1>", *(f"<p>{esc(p)}</p>" for p in board.summary)]
    parts.append("<p><a href=\"#every-run\">every run, with why it passed or failed</a></p>")
    parts += [_section(s) for s in board.sections]
    parts.append("<h2>Figures</h2>")
    parts += [f"<p><img src=\"{esc(plots)}/{name}.svg\" alt=\"{esc(name)}\"></p>"
              for name in FIGURES]
    if rows is None:
        rows = [run_row(c, None, run_page_path(c) if c.run_dir else None) for c in cells]
    parts.append("<h2 id=\"every-run\">Every run</h2>"
                 + runs_list(RUN_COLUMNS, rows, interactive=interactive))
    return page(board.title, "\n".join(parts), script=interactive)


def run_page(cell: CellResult, run_dir: Path, symptom: str, page_dir: Path) -> str:
    """A cell's transcript; ``page_dir``: where the page is written (its raw files' links are
    relative to it)."""
    base = quote(os.path.relpath(run_dir, page_dir).replace(os.sep, "/")) + "/"
    up = quote(os.path.relpath(page_dir.parents[2], page_dir).replace(os.sep, "/"))
    return transcript.run_page(run_dir, raw_base=base,
                               up=(f"{up}/{CampaignOutput.INDEX}", "campaign"), symptom=symptom,
                               title=f"{cell.agent} on {cell.scenario} #{cell.repeat}")


def write_report(out: Path, campaign: CampaignRecord, cells: list[CellResult],
                 board: Board, directory: Path | None = None, *,
                 interactive: bool = False, plots: Path | None = None) -> Path:
    """The campaign's pages in ``directory`` (default: ``report/`` of the campaign), its
    figures read from ``plots`` (default: the campaign's ``plots/``); returns the index. Each
    run's page is rewritten from its records every time."""
    directory = directory or out / REPORT_DIR
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for c in cells:
        run_dir = run_directory(out, c)
        href = run_page_path(c) if run_dir is not None else None
        rows.append(run_row(c, run_dir, href))
        if run_dir is None or href is None:
            continue
        target = directory / href
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(run_page(c, run_dir, campaign.symptoms.get(c.scenario, ""),
                                   target.parent))
    figures = quote(os.path.relpath(plots or out / PLOTS_DIR, directory).replace(os.sep, "/"))
    index_file = directory / CampaignOutput.INDEX
    index_file.write_text(index(board, cells, rows, interactive=interactive, plots=figures))
    return index_file


def campaign_board(out: Path) -> tuple[CampaignRecord, list[CellResult], Board]:
    """A campaign directory's record, its cells in order and its leaderboard."""
    cells = sorted(files.results(out), key=lambda c: (c.repeat, c.scenario, c.agent))
    record = files.campaign(out)
    return record, cells, board(record, cells, files.not_started(out), files.judged(out))


def write_tables(out: Path) -> None:
    """(Re)write everything a campaign directory shows from its records alone: leaderboard.md,
    results.csv, the plots and the HTML report."""
    record, cells, table = campaign_board(out)
    (out / LEADERBOARD_FILE).write_text(markdown(table))
    (out / CSV_FILE).write_text(results_csv(cells))
    write_plots(out, record, cells)
    write_report(out, record, cells, table)
