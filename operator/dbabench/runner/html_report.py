"""A campaign's report as static HTML, opened from disk with no server: ``report/index.html``
(the leaderboard's tables, the figures, every cell) and a page per run (its verdicts with their
checks, matches and violations, the report it filed, and its trace as a timeline).

Everything an agent wrote (its report, its thoughts, its SQL, what its tools returned) is text
an attacker chose: it is escaped, and no page runs a script.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from dbabench.jsonl import complete_records
from dbabench.model.campaign import CampaignRecord, CellResult
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.trace import TraceEvent
from dbabench.runner import campaign_files as files
from dbabench.runner.leaderboard import (CSV_FILE, LEADERBOARD_FILE, Board, Section, board,
                                         markdown, results_csv)
from dbabench.runner.plots import FIGURES, PLOTS_DIR, write_plots

REPORT_DIR = "report"
OBSERVATION_CHARS = 2000
"""How much of a tool's answer a timeline row shows; the trace itself keeps it all."""
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px;
       color: #222; padding: 0 1em; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.pass { color: #1b5e20; font-weight: 600; } .fail { color: #b71c1c; font-weight: 600; }
.muted { color: #777; } pre { white-space: pre-wrap; margin: 0; max-height: 24em;
overflow: auto; font-size: 12px; } img { max-width: 100%; border: 1px solid #eee; }
.kind-model { background: #f4f0ff; } .kind-thought { background: #fffbea; }
.kind-report { background: #eaf7ea; } .kind-failure, .kind-infra { background: #fdecec; }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _page(title: str, body: str) -> str:
    # no script on any page: a CSP that forbids one, should anything slip past the escaping
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
            " img-src 'self'; style-src 'unsafe-inline'\">"
            f"<title>{_e(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n"
            "</body></html>\n")


def _table(header: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    """``rows`` hold HTML already escaped; ``classes``: one CSS class per row."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(
        (f"<tr class=\"{_e(cls)}\">" if cls else "<tr>")
        + "".join(f"<td>{v}</td>" for v in row) + "</tr>\n"
        for row, cls in zip(rows, classes or [""] * len(rows)))
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>\n"


def _section(section: Section) -> str:
    note = f"<p class=\"muted\">{_e(section.note)}</p>" if section.note else ""
    body = (_table(section.header, [[_e(v) for v in row] for row in section.rows])
            if section.rows else f"<p>{_e(section.empty)}</p>")
    return f"<h2>{_e(section.title)}</h2>\n{note}{body}"


def _mark(ok: bool) -> str:
    return "<span class=\"pass\">PASS</span>" if ok else "<span class=\"fail\">FAIL</span>"


def run_page_path(cell: CellResult) -> str:
    """A cell's page, relative to the report directory."""
    agent = re.sub(r"[^A-Za-z0-9._@-]+", "-", cell.agent)
    return f"runs/{agent}/{cell.scenario}/{cell.repeat}.html"


def index(board: Board, cells: list[CellResult]) -> str:
    parts = [f"<h1>{_e(board.title)}</h1>", *(f"<p>{_e(p)}</p>" for p in board.summary)]
    parts += [_section(s) for s in board.sections]
    parts.append("<h2>Figures</h2>")
    parts += [f"<p><img src=\"../{PLOTS_DIR}/{name}.svg\" alt=\"{_e(name)}\"></p>"
              for name in FIGURES]
    rows = []
    for c in cells:
        verdict = (_e(c.reason or c.status) if c.summary is None else
                   f"{_mark(c.summary.safe_pass)} Safe · {_mark(c.summary.outcome_pass)}"
                   f" Outcome · {_mark(c.summary.diagnosis_pass)} Diagnosis")
        link = (f"<a href=\"{_e(run_page_path(c))}\">{_e(c.scenario)}</a>" if c.run_dir
                else _e(c.scenario))
        rows.append([_e(c.agent), link, _e(c.repeat), verdict,
                     _e(f"${c.summary.cost_usd:.4f}" if c.summary else "–")])
    parts.append("<h2>Every run</h2>" + _table(["agent", "scenario", "repeat", "verdict",
                                                 "cost"], rows))
    return _page(board.title, "\n".join(parts))


def _json(value: Any) -> str:
    return _e(json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True))


def _timeline(events: list[TraceEvent]) -> str:
    if not events:
        return "<p>No trace.</p>"
    start = events[0].ts
    rows = []
    for ev in events:
        what = ev.tool or ev.model or ""
        if ev.kind == "model":
            usage = ev.usage
            detail = (f"{usage.input_tokens} in, {usage.output_tokens} out"
                      if usage is not None else "tokens unknown")
            body = _e(detail) + (f"<pre>{_e(ev.text)}</pre>" if ev.text else "")
        elif ev.kind == "tool":
            observed = ev.error if not ev.ok else ev.observation
            text = observed if isinstance(observed, str) else json.dumps(
                observed, ensure_ascii=False, sort_keys=True, default=str)
            cut = len(text) > OBSERVATION_CHARS
            body = (f"<pre>{_json(ev.args)}</pre><pre>{_e(text[:OBSERVATION_CHARS])}"
                    f"{' …' if cut or ev.truncated else ''}</pre>")
            if ev.refused:
                body += f"<p class=\"fail\">refused: {_e(', '.join(ev.refused))}</p>"
        else:
            body = f"<pre>{_e(ev.text or ev.error or ev.failure or '')}</pre>"
        rows.append([f"{(ev.ts - start).total_seconds():.1f}s", _e(ev.kind), _e(what), body])
    # each row's class says its kind: model calls, thoughts, the report stand out
    return _table(["t", "kind", "tool / model", "what"], rows,
                  [f"kind-{ev.kind}" for ev in events])


def run_page(cell: CellResult, run_dir: Path, symptom: str) -> str:
    title = f"{cell.agent} on {cell.scenario} #{cell.repeat}"
    parts = [f"<h1>{_e(title)}</h1>", f"<p><a href=\"{'../' * 3}index.html\">campaign</a></p>",
             f"<h2>Symptom</h2><p>{_e(symptom)}</p>"]
    evaluation_file = run_dir / "evaluation.json"
    if evaluation_file.exists():
        ev = EvaluationResult.model_validate_json(evaluation_file.read_text())
        parts.append("<h2>Verdicts</h2>")
        if ev.status == "infra_error":
            parts.append(f"<p>Not scored: {_e(ev.infra_reason)}</p>")
        else:
            assert ev.outcome and ev.diagnosis and ev.safety
            if ev.integrity.violated:
                parts.append("<p class=\"fail\">Integrity violated: "
                             + _e("; ".join(f.detail for f in ev.integrity.findings))
                             + " — no dimension passes.</p>")
            parts.append(_table(["dimension", "verdict", "detail"], [
                ["Outcome Pass", _mark(ev.outcome_pass), _e(f"F={ev.outcome.f:.2f}")],
                ["Diagnosis Pass", _mark(ev.diagnosis_pass),
                 _e(f"F1={ev.diagnosis.f1:.2f} {ev.diagnosis.reason}")],
                ["Safe Pass", _mark(ev.safe_pass), _e(f"S={ev.safety.penalty:g}")],
                ["report", _mark(ev.report_valid), _e(ev.report_error or "valid")]]))
            parts.append("<h3>Outcome checks</h3>" + _table(
                ["check", "weight", "verdict", "detail"],
                [[_e(c.name), _e(c.weight), _mark(c.passed), _e(c.detail)]
                 for c in ev.outcome.checks]))
            parts.append("<h3>Diagnosis</h3>" + _table(
                ["condition", "critical", "matched by"],
                [[_e(m.condition), _e(m.critical), _e(m.matched_by or "—")]
                 for m in ev.diagnosis.matches]))
            if ev.diagnosis.false_positives:
                parts.append("<p>Counted against the report: "
                             + _e(", ".join(ev.diagnosis.false_positives)) + "</p>")
            parts.append("<h3>Safety</h3>" + (_table(
                ["rule", "weight", "trace step", "detail"],
                [[_e(v.rule), _e(v.weight), _e(v.trace_seq), _e(v.detail)]
                 for v in ev.safety.violations]) if ev.safety.violations
                else "<p>No violation.</p>"))
            e = ev.efficiency
            parts.append(f"<p>{_e(e.tool_calls)} tool calls, {_e(f'{e.wall_seconds:.0f}')}s,"
                         f" {_e(e.input_tokens)}+{_e(e.output_tokens)} tokens,"
                         f" ${_e(f'{e.cost_usd:.4f}')} ({_e(e.cost_basis)})</p>")
    report = run_dir / "report.json"
    parts.append("<h2>Report</h2>" + (f"<pre>{_json(json.loads(report.read_text()))}</pre>"
                                      if report.exists() else "<p>No report was filed.</p>"))
    events = [TraceEvent.model_validate(r) for r in complete_records(run_dir / "trace.jsonl")]
    parts.append("<h2>Trace</h2>" + _timeline(events))
    return _page(title, "\n".join(parts))


def write_report(out: Path, campaign: CampaignRecord, cells: list[CellResult],
                 board: Board) -> None:
    directory = out / REPORT_DIR
    directory.mkdir(exist_ok=True)
    (directory / "index.html").write_text(index(board, cells))
    for c in cells:
        if c.run_dir is None:
            continue
        page = directory / run_page_path(c)
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(run_page(c, out / c.run_dir, campaign.symptoms.get(c.scenario, "")))


def write_tables(out: Path) -> None:
    """(Re)write everything a campaign directory shows from its records alone: leaderboard.md,
    results.csv, the plots and the HTML report."""
    cells = sorted(files.results(out), key=lambda c: (c.repeat, c.scenario, c.agent))
    record = files.campaign(out)
    table = board(record, cells, files.not_started(out), files.judged(out))
    (out / LEADERBOARD_FILE).write_text(markdown(table))
    (out / CSV_FILE).write_text(results_csv(cells))
    write_plots(out, record, cells)
    write_report(out, record, cells, table)
