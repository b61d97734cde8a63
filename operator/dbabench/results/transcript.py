"""A run as a transcript: every step of its trace in order (the call, its SQL highlighted, what
came back as a table, a plan or a log, the agent's thoughts and model calls between), with the
verdict beside it, each failed check, missed condition and broken rule linked to its step, the
diagnosis the grader expected next to the one the agent filed, and links to the raw files.

Everything shown of a run is agent input and goes through ``pages.esc``; no id, class or
address is built from it (anchors are step numbers and list positions). A page is rendered
once, when it is written: long answers are folded into ``<details>`` and each step's text is
capped, so a run of hundreds of steps and megabytes of observations opens at once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from dbabench.model.evaluation import EvaluationResult
from dbabench.model.statement import StatementClass
from dbabench.model.tool import ToolName
from dbabench.model.trace import TraceEvent
from dbabench.records import shown as run_files
from dbabench.results.pages import esc, label, mark, page, table

STEP_CHARS = 200_000
"""The most of one step's answer a page shows; the trace keeps it all (linked)."""
CELL_CHARS = 4_000
"""The most of one result-set value a table cell shows."""
TABLE_ROWS = 500
LONG_CELL = 24
"""Values longer than this may break anywhere; shorter ones only where text breaks."""
FOLD_CHARS = 1_500
"""Answers longer than this are folded: a line says what they hold, a click opens them."""
FOLD_ROWS = 15
QUIET_CLASSES = frozenset({StatementClass.read_only, StatementClass.session_inspection})
"""Statement classes not worth a tag on a step."""

STYLE = """
header.run h1 { margin-bottom: .2em; }
.headline { font-size: 15px; margin: .2em 0 .6em; }
.layout { display: grid; grid-template-columns: minmax(0, 1.7fr) minmax(320px, 1fr);
          gap: 1.5em; align-items: start; }
.layout > aside { position: sticky; top: 0; max-height: 100vh; overflow-y: auto;
                  padding: 0 .3em 2em 0; }
@media (max-width: 1000px) {
  .layout { grid-template-columns: minmax(0, 1fr); }
  .layout > aside { position: static; max-height: none; order: -1; }
}
aside table { width: 100%; } aside td { overflow-wrap: break-word; }
aside td:last-child { overflow-wrap: anywhere; min-width: 10em; }
aside table.expected td { overflow-wrap: anywhere; min-width: 7em; }
aside h2 { font-size: 17px; margin: 1em 0 .3em; } aside h3 { font-size: 15px; margin: .8em 0 .2em; }
ol.steps { list-style: none; padding: 0; margin: 0; }
li.step { border: 1px solid #ddd; border-left: 4px solid #bbb; border-radius: 3px;
          margin: 0 0 .8em; padding: .4em .7em .5em; background: #fff;
          overflow-wrap: anywhere; }
li.step th, li.step td:not(.long) { overflow-wrap: normal; }
li.step:target { outline: 3px solid #f9a825; }
li.step.flagged { border-left-color: #b71c1c; }
li.kind-model { background: #f7f4ff; border-left-color: #7e57c2; }
li.kind-thought { background: #fffbea; border-left-color: #e0b000; }
li.kind-report { background: #eef8ee; border-left-color: #2e7d32; }
li.kind-failure, li.kind-infra, li.kind-budget { background: #fdecec; }
.step .head { display: flex; flex-wrap: wrap; gap: .2em .7em; align-items: baseline;
              margin-bottom: .3em; }
.step .head a.seq { font-weight: 700; text-decoration: none; }
.tag { font-size: 11px; border: 1px solid #bbb; border-radius: 8px; padding: 0 .5em;
       color: #444; white-space: nowrap; }
.tag.bad { border-color: #b71c1c; color: #b71c1c; }
.tag.good { border-color: #2e7d32; color: #2e7d32; }
a.tag { text-decoration: none; }
.result { margin: .4em 0; } .result > .status { font-size: 12px; color: #555; }
.result table, .obs table { font-size: 12px; margin: .3em 0 .6em; max-width: 100%; }
.wide-box { overflow-x: auto; max-width: 100%; }
.result td.long, .obs td { overflow-wrap: anywhere; min-width: 12ch; }
td.null { color: #999; font-style: italic; }
pre.sql { background: #f6f8fa; padding: .35em .5em; border-radius: 3px; }
pre.plan { background: #fbfbf4; padding: .35em .5em; border-left: 3px solid #c9c38a;
           max-height: none; }
pre.log { background: #f7f7f7; padding: .35em .5em; }
.sql .k { color: #7b1fa2; font-weight: 600; } .sql .s { color: #2e7d32; }
.sql .n { color: #bf360c; } .sql .c { color: #888; font-style: italic; }
details > summary { cursor: pointer; color: #444; font-size: 12px; margin: .2em 0; }
dl.args { display: grid; grid-template-columns: fit-content(12em) minmax(0, 1fr);
          gap: .1em .8em; margin: .2em 0; font-size: 13px; }
dl.args dt { color: #555; overflow-wrap: anywhere; }
dl.args dd { margin: 0; overflow-wrap: anywhere; }
ul.compact { margin: .2em 0; padding-left: 1.2em; }
.raw a { margin-right: .6em; white-space: nowrap; }
"""

KEYWORDS = frozenset("""
select from where join left right inner outer full cross natural lateral on using group by
order having limit offset fetch insert into values update set delete create alter drop table
index view function procedure as and or not null is in exists case when then else end distinct
union intersect except all any some with recursive returning begin commit rollback savepoint
release start transaction isolation level read write only explain analyze analyse verbose
buffers costs timing format summary settings vacuum full freeze reindex cluster checkpoint
grant revoke truncate lock share exclusive mode nowait skip locked for reset show discard
concurrently if cascade restrict database role user system schema sequence extension policy
trigger owner to of do language returns replace temporary temp unlogged materialized refresh
copy comment rename column add type enable disable row primary key references default
constraint unique check foreign between like ilike similar asc desc nulls first last over
partition window filter cast interval true false prepare execute deallocate call listen
notify load security definer invoker
""".split())
SQL_TOKENS = re.compile(r"(--[^\n]*|/\*.*?(?:\*/|\Z))|('(?:[^']|'')*'?)|(\"(?:[^\"]|\"\")*\"?)"
                        r"|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z_0-9$]*)", re.DOTALL)
EXPLAIN = re.compile(r"^\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*explain\b", re.IGNORECASE | re.DOTALL)


def sql(text: str) -> str:
    """SQL as escaped HTML, keywords, strings, numbers and comments marked for colour."""
    out, at = [], 0
    for m in SQL_TOKENS.finditer(text):
        out.append(esc(text[at:m.start()]))
        comment, string, quoted, number, word = m.groups()
        piece = esc(m.group(0))
        if comment:
            out.append(f"<span class=\"c\">{piece}</span>")
        elif string:
            out.append(f"<span class=\"s\">{piece}</span>")
        elif number:
            out.append(f"<span class=\"n\">{piece}</span>")
        elif word and word.lower() in KEYWORDS:
            out.append(f"<span class=\"k\">{piece}</span>")
        else:
            out.append(piece)
        at = m.end()
    out.append(esc(text[at:]))
    return "".join(out)


def as_text(value: Any) -> str:
    """A JSON value as a person reads it: strings as they are, the rest as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class Budget:
    """How much more of one step's answer the page shows."""

    def __init__(self, chars: int = STEP_CHARS) -> None:
        self.left = chars
        self.cut = False

    def take(self, text: str, most: int | None = None) -> str:
        limit = self.left if most is None else min(most, self.left)
        if len(text) > limit:
            self.cut = True
            text = text[:limit] + " …"
        self.left -= len(text)
        return text


def fold(summary: str, body: str, *, size: int, rows: int = 0) -> str:
    """``body`` shown, or folded behind ``summary`` when it is long."""
    if size <= FOLD_CHARS and rows <= FOLD_ROWS:
        return body
    return f"<details><summary>{esc(summary)}</summary>{body}</details>"


# Observations ---------------------------------------------------------------------------------

def _is_plan(result: dict[str, Any]) -> bool:
    columns = result.get("columns")
    return (isinstance(columns, list) and len(columns) == 1
            and (columns[0] == "QUERY PLAN" or bool(EXPLAIN.match(as_text(
                result.get("statement", ""))))))


def _rows(value: Any) -> list[list[Any]]:
    if not isinstance(value, list):
        return []
    return [r if isinstance(r, list) else [r] for r in value]


def result_set(result: dict[str, Any], budget: Budget, statement: bool = True) -> str:
    """One statement's answer from execute_sql: its statement (``statement``: shown; a call of
    one statement has it in its arguments already), then a table, a plan or the command's
    status."""
    text = as_text(result.get("statement", ""))
    parts = [f"<pre class=\"sql\">{sql(budget.take(text, CELL_CHARS))}</pre>"] if statement else []
    columns = result.get("columns") if isinstance(result.get("columns"), list) else []
    rows = _rows(result.get("rows"))
    status = as_text(result.get("status", ""))
    note = " (the tool cut the rows)" if result.get("truncated") is True else ""
    if columns and _is_plan(result):
        lines = [as_text(r[0]) if len(r) == 1 else as_text(r) for r in rows]
        if len(lines) == 1 and lines[0][:1] in "[{":  # EXPLAIN (FORMAT JSON): one value
            try:
                lines = json.dumps(json.loads(lines[0]), indent=1).splitlines()
            except ValueError:
                pass
        text = budget.take("\n".join(lines))
        parts.append(fold(f"plan, {len(lines)} lines{note}",
                          f"<pre class=\"plan\">{esc(text)}</pre>", size=len(text)))
    elif columns:
        shown = rows[:TABLE_ROWS]
        body, size = [], 0
        for row in shown:
            if budget.left <= 0:
                break
            tds = []
            for v in row:
                if v is None:
                    tds.append("<td class=\"null\">NULL</td>")
                    continue
                text = budget.take(as_text(v), CELL_CHARS)
                size += len(text)
                long = " class=\"long\"" if len(text) > LONG_CELL else ""
                tds.append(f"<td{long}>{esc(text)}</td>")
            body.append(f"<tr>{''.join(tds)}</tr>")
        head = "".join(f"<th>{esc(budget.take(as_text(c), 200))}</th>" for c in columns)
        more = len(rows) - len(body)
        tail = (f"<p class=\"muted\">{more} more rows in the trace</p>" if more > 0 else "")
        html = (f"<div class=\"wide-box\"><table><thead><tr>{head}</tr></thead><tbody>"
                f"{''.join(body)}</tbody></table></div>{tail}")
        parts.append(fold(f"{len(rows)} rows × {len(columns)} columns ({status}){note}",
                          html, size=size, rows=len(rows)))
    parts.append(f"<div class=\"status\">{esc(budget.take(status, 200))}{esc(note)}</div>")
    return f"<div class=\"result\">{''.join(parts)}</div>"


def _log(observation: dict[str, Any], budget: Budget) -> str:
    lines = observation["lines"]
    text = budget.take("\n".join(as_text(line) for line in lines))
    head = (f"{len(lines)} lines of {as_text(observation.get('source', 'the log'))}"
            + (" (the tool cut them)" if observation.get("truncated") is True else ""))
    if not lines:
        return f"<p class=\"muted\">{esc(head)}: nothing matched</p>"
    pre = f"<pre class=\"log\">{esc(text)}</pre>"
    return f"<div class=\"obs\">{fold(head, pre, size=len(text))}</div>"


def _hits(observation: dict[str, Any], budget: Budget) -> str:
    rows = []
    for hit in observation["hits"][:TABLE_ROWS]:
        hit = hit if isinstance(hit, dict) else {"snippet": hit}
        rows.append([esc(budget.take(as_text(hit.get("title", hit.get("doc_id", ""))), 300)),
                     esc(budget.take(as_text(hit.get("snippet", "")), CELL_CHARS))])
    size = sum(len(r[1]) for r in rows)
    return "<div class=\"obs\">" + fold(f"{len(rows)} passages", table(
        ["passage", "text"], rows), size=size, rows=len(rows)) + "</div>"


def _number(value: Any) -> float | None:
    try:
        return float(value[1] if isinstance(value, list) and len(value) == 2 else value)
    except (TypeError, ValueError):
        return None


def _series(observation: dict[str, Any], budget: Budget) -> str:
    rows = []
    for s in observation["series"][:TABLE_ROWS]:
        s = s if isinstance(s, dict) else {"value": s}
        labels = s.get("labels")
        name = (", ".join(f"{k}={as_text(v)}" for k, v in labels.items())
                if isinstance(labels, dict) else as_text(labels)) or "—"
        if isinstance(s.get("values"), list):
            values = [v for v in (_number(p) for p in s["values"]) if v is not None]
            shown = (f"{len(values)} points: min {min(values):.4g}, max {max(values):.4g},"
                     f" last {values[-1]:.4g}" if values else "no points")
        else:
            value = _number(s.get("value"))
            shown = f"{value:.4g}" if value is not None else as_text(s.get("value"))
        rows.append([esc(budget.take(name, 500)), esc(budget.take(shown, 500))])
    names = observation.get("names")
    extra = (f"<p>{esc(budget.take(', '.join(as_text(n) for n in names)))}</p>"
             if isinstance(names, list) and names else "")
    if not rows:
        return f"<div class=\"obs\">{extra or '<p class=muted>no series</p>'}</div>"
    return "<div class=\"obs\">" + extra + fold(f"{len(rows)} series", table(
        ["series", "value"], rows), size=0, rows=len(rows)) + "</div>"


def _json(value: Any, budget: Budget) -> str:
    text = budget.take(json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True,
                                  default=str))
    return fold(f"{len(text)} characters", f"<pre>{esc(text)}</pre>", size=len(text))


def observation_html(event: TraceEvent, budget: Budget) -> str:
    """What a tool answered, by its shape (not its name: an answer is input like the rest)."""
    o = event.observation
    if not event.ok:
        return f"<pre class=\"fail\">{esc(budget.take(event.error or 'failed'))}</pre>"
    if o is None:
        return "<p class=\"muted\">no answer</p>"
    if isinstance(o, dict):
        if isinstance(o.get("results"), list):
            several = len(o["results"]) > 1
            parts = [result_set(r, budget, several) if isinstance(r, dict) else _json(r, budget)
                     for r in o["results"]]
            notices = o.get("notices")
            if isinstance(notices, list) and notices:
                parts.append("<div class=\"status\">notices:</div><pre class=\"log\">"
                             + esc(budget.take("\n".join(as_text(n) for n in notices)))
                             + "</pre>")
            return "".join(parts) or "<p class=\"muted\">no statement ran</p>"
        if isinstance(o.get("lines"), list):
            return _log(o, budget)
        if isinstance(o.get("hits"), list):
            return _hits(o, budget)
        if isinstance(o.get("series"), list):
            return _series(o, budget)
    if isinstance(o, str):
        text = budget.take(o)
        return fold(f"{len(text)} characters", f"<pre>{esc(text)}</pre>", size=len(text))
    return _json(o, budget)


def args_html(event: TraceEvent, budget: Budget) -> str:
    if not event.args:
        return ""
    items = []
    for name, value in event.args.items():
        if name in ("sql", "statement", "query") and isinstance(value, str) and (
                event.tool == ToolName.execute_sql or name != "query"):
            shown = f"<pre class=\"sql\">{sql(budget.take(value, STEP_CHARS // 4))}</pre>"
        else:
            shown = esc(budget.take(as_text(value), CELL_CHARS))
        items.append(f"<dt>{esc(name)}</dt><dd>{shown}</dd>")
    return f"<dl class=\"args\">{''.join(items)}</dl>"


# The report -----------------------------------------------------------------------------------

def _field(report: dict[str, Any], *names: str) -> Any:
    return next((report[n] for n in names if n in report), None)


def _object(value: Any) -> str:
    if isinstance(value, dict) and "name" in value:
        return f"{as_text(value.get('kind', '?'))} {as_text(value['name'])}"
    return as_text(value)


def report_html(report: Any, budget: Budget, steps: set[int]) -> str:
    """A report as filed, any shape: the fields of model.report.Report shown as such (with each
    piece of evidence linked to the step it cites), whatever else as JSON."""
    if not isinstance(report, dict):
        return _json(report, budget)
    rows: list[list[str]] = []
    known = {"root_cause_type", "rootCauseType", "causal_factors", "causalFactors",
             "affected_objects", "affectedObjects", "evidence", "actions", "verification",
             "narrative", "version"}
    root = _field(report, "root_cause_type", "rootCauseType")
    if root is not None:
        rows.append(["root cause", f"<b>{esc(budget.take(as_text(root), 300))}</b>"])
    factors = _field(report, "causal_factors", "causalFactors")
    if isinstance(factors, list) and factors:
        rows.append(["causal factors", esc(budget.take(", ".join(as_text(f) for f in factors)))])
    objects = _field(report, "affected_objects", "affectedObjects")
    if isinstance(objects, list) and objects:
        rows.append(["affected objects", esc(budget.take(", ".join(_object(o) for o in objects)))])
    evidence = report.get("evidence")
    if isinstance(evidence, list) and evidence:
        items = []
        for i, e in enumerate(evidence):
            e = e if isinstance(e, dict) else {"observation": e}
            seq = e.get("trace_seq")
            cites = (f" <a href=\"#step-{seq}\">step {seq}</a>" if isinstance(seq, int)
                     and seq in steps else f" <span class=\"muted\">step {esc(seq)} (not in"
                     " the trace)</span>" if isinstance(seq, int) else "")
            tool = budget.take(as_text(e.get("tool", "")), 100)
            seen = budget.take(as_text(e.get("observation", "")), CELL_CHARS)
            items.append(f"<li id=\"ev-{i}\">{esc(tool)}{cites}: {esc(seen)}</li>")
        rows.append(["evidence", f"<ul class=\"compact\">{''.join(items)}</ul>"])
    actions = report.get("actions")
    if isinstance(actions, list) and actions:
        items = []
        for a in actions:
            a = a if isinstance(a, dict) else {"description": a}
            statement = a.get("statement")
            items.append(f"<li>{esc(budget.take(as_text(a.get('description', '')), CELL_CHARS))}"
                         + (f"<pre class=\"sql\">{sql(budget.take(as_text(statement), CELL_CHARS))}"
                            "</pre>" if statement else "") + "</li>")
        rows.append(["actions", f"<ul class=\"compact\">{''.join(items)}</ul>"])
    for name in ("verification", "narrative"):
        if report.get(name):
            rows.append([name, esc(budget.take(as_text(report[name])))])
    rest = {k: v for k, v in report.items() if k not in known}
    if rest:
        rows.append(["other fields", f"<pre>{esc(budget.take(as_text(rest)))}</pre>"])
    return table(["", ""], rows) if rows else "<p class=\"muted\">an empty report</p>"


def cited(report: Any) -> list[int | None]:
    """The step each piece of a report's evidence cites, by position (None: none)."""
    evidence = report.get("evidence") if isinstance(report, dict) else None
    if not isinstance(evidence, list):
        return []
    return [e.get("trace_seq") if isinstance(e, dict) and isinstance(e.get("trace_seq"), int)
            else None for e in evidence]


# Steps ----------------------------------------------------------------------------------------

@dataclass
class Marks:
    """What the verdict says of each step, as links back to it: step seq -> HTML."""

    by_step: dict[int, list[str]] = field(default_factory=dict)

    def add(self, seq: int | None, html: str) -> None:
        if seq is not None:
            self.by_step.setdefault(seq, []).append(html)


def _seconds(event: TraceEvent, start: datetime | None) -> str:
    return "" if start is None else f"+{(event.ts - start).total_seconds():.1f}s"


def step_html(event: TraceEvent, start: datetime | None, marks: Marks,
              report_steps: set[int], steps: set[int]) -> str:
    budget = Budget()
    what = event.tool or (event.model if event.kind == "model" else None) or event.kind
    tags = [f"<span class=\"tag\">{esc(c)}</span>" for c in dict.fromkeys(
        c for st in event.statements for c in st.classes) if c not in QUIET_CLASSES]
    if event.refused:
        tags.append(f"<span class=\"tag bad\">refused: {esc(', '.join(event.refused))}</span>")
    if event.harness_access:
        tags.append("<span class=\"tag bad\">went for the harness</span>")
    if not event.ok:
        tags.append("<span class=\"tag bad\">error</span>")
    if event.truncated:
        tags.append("<span class=\"tag\">answer cut by the tool</span>")
    if event.sessions_ended:
        ended = ", ".join(f"{s.pid} ({s.application_name})" for s in event.sessions_ended)
        tags.append(f"<span class=\"tag bad\">ended sessions {esc(ended)}</span>")
    flags = marks.by_step.get(event.seq, [])
    head = (f"<a class=\"seq\" href=\"#step-{event.seq}\">#{event.seq}</a>"
            f"<span class=\"muted\">{_seconds(event, start)}</span>"
            f"<b>{esc(what)}</b>{''.join(tags)}"
            + (f"<span class=\"muted\">{event.duration_ms:.0f} ms</span>"
               if event.kind == "tool" else "") + "".join(flags))
    if event.kind == "tool":
        body = args_html(event, budget) + observation_html(event, budget)
    elif event.kind == "model":
        usage = (f"{event.usage.input_tokens} in, {event.usage.output_tokens} out"
                 + (f" ({event.usage.cached_input_tokens} cached)"
                    if event.usage.cached_input_tokens else "")
                 if event.usage is not None else "tokens unknown")
        metered = "metered" if event.metered else "as the agent reported"
        text = budget.take(event.text or "")
        body = (f"<div class=\"status\">{esc(usage)} · {esc(metered)}</div>"
                + (fold(f"the reply, {len(text)} characters", f"<pre>{esc(text)}</pre>",
                        size=len(text)) if text else ""))
    elif event.kind == "report":
        body = (report_html(event.observation, budget, steps) if event.observation is not None
                else f"<pre>{esc(budget.take(event.text or 'filed'))}</pre>")
    else:
        text = budget.take(" · ".join(str(t) for t in (event.failure, event.text, event.error)
                                      if t) or event.kind)
        body = fold(f"{len(text)} characters", f"<pre>{esc(text)}</pre>", size=len(text))
    if budget.cut:
        body += ("<p class=\"muted\">Cut where … stands (a value past"
                 f" {CELL_CHARS:,} characters, a step past {STEP_CHARS:,}): the whole step, seq"
                 f" {event.seq}, is in {run_files.TRACE}, linked above.</p>")
    bad = any("tag bad" in f for f in flags)
    flagged = " flagged" if bad and event.seq not in report_steps else ""
    return (f"<li id=\"step-{event.seq}\" class=\"step kind-{esc(event.kind)}{flagged}\">"
            f"<div class=\"head\">{head}</div>{body}</li>\n")


# The verdict ----------------------------------------------------------------------------------

def verdict_label(evaluation: EvaluationResult | None) -> str:
    """What became of the run (model.campaign.BECAME, as a campaign's cell is labelled), or why
    it has no verdict."""
    if evaluation is None:
        return "not graded"
    if evaluation.status == "infra_error":
        return "infra error"
    if evaluation.integrity.violated:
        return "went for the judge"
    if evaluation.outcome_pass:
        return "clean recovery" if evaluation.safe_pass else "unsafe recovery"
    return "remediation failure" if evaluation.diagnosis_pass else "diagnosis failure"


def _more(items: list[Any]) -> str:
    return f" (+{len(items) - 1} more)" if len(items) > 1 else ""


def verdict_reason(evaluation: EvaluationResult | None) -> str:
    """Why the run passed or failed, in a line: per dimension that failed, the first thing
    that failed it (a check, a rule, a condition); or that it passed."""
    ev = evaluation
    if ev is None:
        return "no evaluation.json: the run was not graded"
    if ev.status == "infra_error":
        return f"infrastructure error, not scored: {ev.infra_reason or 'no reason recorded'}"
    parts = []
    if ev.integrity.violated:
        findings = ev.integrity.findings
        parts.append("integrity violated: " + (findings[0].detail + _more(findings)
                                               if findings else "no finding recorded"))
    if not ev.report_valid:
        parts.append("no valid report" + (f": {ev.report_error}" if ev.report_error else ""))
    failed = [c for c in (ev.outcome.checks if ev.outcome else []) if not c.passed]
    if failed:
        detail = f" ({failed[0].detail})" if failed[0].detail else ""
        parts.append(f"check {failed[0].name} failed{detail}{_more(failed)}")
    elif ev.outcome and not ev.outcome.passed and ev.report_valid:
        parts.append(f"outcome F={ev.outcome.f:.2f}")
    violations = ev.safety.violations if ev.safety else []
    if violations:
        v = violations[0]
        at = f" at step {v.trace_seq}" if v.trace_seq is not None else ""
        parts.append(f"broke {v.rule}{at}{_more(violations)}")
    d = ev.diagnosis
    if d is not None and not d.passed and ev.report_valid:
        if d.missing_critical:
            parts.append("diagnosis missed " + ", ".join(d.missing_critical))
        elif d.contradictions:
            parts.append("diagnosis contradicts: " + d.contradictions[0] + _more(d.contradictions))
        elif d.unfounded:
            parts.append(f"diagnosis unfounded: {d.unfounded}")
        else:
            wrong = (f": counted against it: {', '.join(d.false_positives[:3])}"
                     f"{' …' if len(d.false_positives) > 3 else ''}" if d.false_positives
                     else "")
            parts.append(f"diagnosis {d.reason or f'F1 {d.f1:.2f}'}{wrong}")
    if parts:
        return "; ".join(parts)
    f1 = f", diagnosis F1 {ev.diagnosis.f1:.2f}" if ev.diagnosis else ""
    return f"Safe Pass: every check held, no rule broken{f1}"


def ident(name: str) -> str:
    """An identifier (a rule, a check, a condition) escaped, free to break after its
    underscores in a narrow column."""
    return esc(name).replace("_", "_<wbr>")


def _step_link(seq: int | None, steps: set[int], text: str | None = None) -> str:
    if seq is None:
        return "—"
    shown = esc(text or f"step {seq}")
    return (f"<a href=\"#step-{seq}\">{shown}</a>" if seq in steps
            else f"{shown} <span class=\"muted\">(not in the trace)</span>")


def _expected_values(condition: Any) -> str:
    if not isinstance(condition, dict):
        return as_text(condition)
    causes = condition.get("causes")
    objects = condition.get("objects")
    found = []
    if isinstance(causes, list) and causes:
        found.append("cause " + " or ".join(as_text(c) for c in causes))
    if isinstance(objects, list) and objects:
        found.append(" or ".join(_object(o) for o in objects))
    return "; ".join(found) or as_text(condition)


def diagnosis_html(ev: EvaluationResult, expected: dict[str, Any] | None, report_seq: int | None,
                   steps: set[int], marks: Marks) -> str:
    d = ev.diagnosis
    assert d is not None
    conditions = {c.get("id"): c for c in (expected or {}).get("conditions", [])
                  if isinstance(c, dict)} if isinstance((expected or {}).get(
                      "conditions"), list) else {}
    filed = _step_link(report_seq, steps, "the report") if report_seq is not None else (
        "the report")
    rows, classes = [], []
    for i, m in enumerate(d.matches):
        want = _expected_values(conditions[m.condition]) if m.condition in conditions else ""
        got = ""
        if m.matched_by is None:
            got = f"<span class=\"fail\">missed</span> in {filed}"
            marks.add(report_seq, f"<a class=\"tag bad\" href=\"#cond-{i}\">missed"
                                  f" {esc(m.condition)}</a>")
        rows.append([f"<span id=\"cond-{i}\">{ident(m.condition)}</span>"
                     + (" <span class=\"tag\">critical</span>" if m.critical else ""),
                     esc(want), esc(m.matched_by) if m.matched_by else got])
        classes.append("" if m.matched_by else "missed")
    parts = [f"<p>{mark(ev.diagnosis_pass)} F1={d.f1:.2f}"
             + (f" · {esc(d.reason)}" if d.reason else "") + "</p>",
             table(["condition", "expected", "submitted"], rows, classes,
                   attrs=" class=\"expected\"") if rows
             else "<p class=\"muted\">No condition was recorded.</p>"]
    if d.false_positives:
        parts.append(f"<p><span class=\"fail\">named, not true</span> ({filed}): "
                     + esc(", ".join(d.false_positives)) + "</p>")
        marks.add(report_seq, "<a class=\"tag bad\" href=\"#diagnosis\">"
                              f"{len(d.false_positives)} named, not true</a>")
    if d.contradictions:
        parts.append("<p><span class=\"fail\">contradicts the incident</span>: "
                     + esc("; ".join(d.contradictions)) + "</p>")
    if d.unfounded:
        parts.append(f"<p><span class=\"fail\">unfounded</span>: {esc(d.unfounded)}</p>")
    if d.neutral:
        parts.append("<p class=\"muted\">named, neither counted nor against: "
                     + esc(", ".join(d.neutral)) + "</p>")
    also = (expected or {}).get("alsoTrue")
    if isinstance(also, dict) and (also.get("causes") or also.get("objects")):
        parts.append("<p class=\"muted\">also true of the incident (free to name): "
                     + esc(_expected_values(also)) + "</p>")
    wrong = (expected or {}).get("contradictions")
    if isinstance(wrong, list) and wrong:
        parts.append("<p class=\"muted\">ruled out: " + esc("; ".join(
            _expected_values(c) + (f" ({as_text(c['why'])})" if isinstance(c, dict)
                                   and c.get("why") else "") for c in wrong)) + "</p>")
    if expected is None:
        parts.append("<p class=\"muted\">The run kept no scenario.yaml: the expected values are"
                     " the conditions' names only.</p>")
    return "".join(parts)


def verdict_html(ev: EvaluationResult | None, events: list[TraceEvent], report: Any,
                 expected: dict[str, Any] | None, marks: Marks) -> str:
    steps = {e.seq for e in events}
    report_seqs = [e.seq for e in events if e.kind == "report"]
    report_seq = report_seqs[-1] if report_seqs else None
    parts = [f"<h2>Verdict: {label(verdict_label(ev))}</h2>"]
    if ev is None:
        parts.append("<p class=\"muted\">The run kept no evaluation.json: the transcript"
                     " stands alone.</p>")
    elif ev.status == "infra_error":
        parts.append(f"<p>Not scored: {esc(ev.infra_reason or '')}. An infrastructure error"
                     " measures nothing of the agent.</p>")
    else:
        assert ev.outcome and ev.diagnosis and ev.safety
        if ev.integrity.findings:
            items = []
            for i, f in enumerate(ev.integrity.findings):
                marks.add(f.trace_seq, f"<a class=\"tag bad\" href=\"#i-{i}\">integrity:"
                                       f" {esc(f.kind)}</a>")
                items.append(f"<li id=\"i-{i}\">{esc(f.kind)} at {_step_link(f.trace_seq, steps)}:"
                             f" {esc(f.detail)}</li>")
            parts.append(("<p class=\"fail\">Integrity violated: no dimension passes.</p>"
                          if ev.integrity.violated else "")
                         + f"<ul class=\"compact\">{''.join(items)}</ul>")
        if ev.integrity.agent_sandboxed is False:
            parts.append("<p class=\"warn\">The agent ran outside its sandbox, as a trusted"
                         " script.</p>")
        parts.append(table(["dimension", "verdict", "detail"], [
            ["Safe Pass", mark(ev.safe_pass), esc(f"S={ev.safety.penalty:g}")],
            ["Outcome Pass", mark(ev.outcome_pass), esc(f"F={ev.outcome.f:.2f}")],
            ["Diagnosis Pass", mark(ev.diagnosis_pass), esc(f"F1={ev.diagnosis.f1:.2f}")],
            ["report", mark(ev.report_valid), esc(ev.report_error or "valid")]]))
        changes = [e.seq for e in events if e.kind == "tool" and e.mutating and e.ok
                   and not e.refused]
        last = changes[-1] if changes else None
        rows, classes = [], []
        for i, c in enumerate(ev.outcome.checks):
            after = ""
            if not c.passed:
                after = (f"<br>measured after the last change, {_step_link(last, steps)}"
                         if last is not None else "<br>the agent changed nothing")
                marks.add(last, f"<a class=\"tag bad\" href=\"#check-{i}\">check"
                                f" {esc(c.name)} failed after this</a>")
            rows.append([f"<span id=\"check-{i}\">{ident(c.name)}</span>", esc(f"{c.weight:g}"),
                         mark(c.passed), esc(c.detail) + after])
            classes.append("" if c.passed else "failed")
        parts.append("<h3>Outcome checks</h3>" + table(["check", "weight", "verdict", "detail"],
                                                       rows, classes))
        parts.append("<h3 id=\"diagnosis\">Diagnosis: expected and submitted</h3>"
                     + diagnosis_html(ev, expected, report_seq, steps, marks))
        violations = ev.safety.violations
        for i, v in enumerate(violations):
            marks.add(v.trace_seq, f"<a class=\"tag bad\" href=\"#v-{i}\">broke"
                                   f" {esc(v.rule)}</a>")
        parts.append("<h3>Safety</h3>" + (table(
            ["rule", "weight", "step", "detail"],
            [[f"<span id=\"v-{i}\">{ident(v.rule)}</span>", esc(f"{v.weight:g}"),
              _step_link(v.trace_seq, steps), esc(v.detail)]
             for i, v in enumerate(violations)]) if violations else "<p>No rule broken.</p>"))
        if ev.safety.exceptions_applied:
            parts.append("<p class=\"muted\">allowed by the scenario: "
                         + esc(", ".join(ev.safety.exceptions_applied)) + "</p>")
        e = ev.efficiency
        unpriced = (f"; unpriced: {', '.join(e.unpriced_models)}" if e.unpriced_models else "")
        parts.append(f"<h3>Efficiency</h3><p>{e.tool_calls} tool calls, {e.wall_seconds:.0f}s,"
                     f" {e.input_tokens}+{e.output_tokens} tokens, ${e.cost_usd:.4f}"
                     f" ({esc(e.cost_basis)}{esc(unpriced)})</p>")
    if report_seq is None and report is not None:
        parts.append("<h3>Report filed</h3>" + report_html(report, Budget(), steps))
    elif report_seq is not None:
        parts.append(f"<p>The report: {_step_link(report_seq, steps)}.</p>")
    elif ev is not None:
        parts.append("<p>No report was filed.</p>")
    return "".join(parts)


# The page -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunInfo:
    """A run in a line of the list of runs."""

    scenario: str
    agent: str
    label: str
    reason: str
    steps: int
    cost_usd: float | None
    wall_seconds: float | None
    safe_pass: bool | None


def run_info(run_dir: Path) -> RunInfo:
    """A run's line: read from its record and its verdict only (the trace is not read)."""
    try:
        ev = run_files.evaluation(run_dir)
        problem = None
    except run_files.Unreadable as e:
        ev, problem = None, str(e)
    try:
        record = run_files.record(run_dir)
    except run_files.Unreadable:
        record = None
    scenario = ev.scenario if ev else record.scenario if record else run_dir.name
    agent = ev.agent if ev else record.agent if record else "?"
    scored = ev is not None and ev.status == "scored"
    return RunInfo(scenario=scenario, agent=agent, label=verdict_label(ev),
                   reason=problem or verdict_reason(ev),
                   steps=ev.efficiency.tool_calls if ev else 0,
                   cost_usd=ev.efficiency.cost_usd if scored and ev else None,
                   wall_seconds=ev.efficiency.wall_seconds if ev else None,
                   safe_pass=ev.safe_pass if scored and ev else None)


def raw_links(run_dir: Path, base: str) -> str:
    """Links to the run's raw files; ``base``: the run directory relative to the page."""
    names = run_files.raw_files(run_dir)
    if not names:
        return ""
    return ("<p class=\"raw\">raw files: " + "".join(
        f"<a href=\"{esc(base + quote(n))}\">{esc(n)}</a> " for n in names) + "</p>")


def run_page(run_dir: Path, *, raw_base: str, up: tuple[str, str] | None = None,
             symptom: str | None = None, title: str | None = None) -> str:
    """A run's transcript page. ``raw_base``: the address of the run directory relative to
    the page (ends in /); ``up``: (address, words) of the page listing it."""
    problems: list[str] = []

    def read(what: Any, default: Any) -> Any:
        try:
            return what(run_dir)
        except run_files.Unreadable as e:
            problems.append(str(e))
            return default

    ev = read(run_files.evaluation, None)
    report = read(run_files.report, None)
    events, bad_lines = read(run_files.steps, ([], []))
    problems += bad_lines
    expected = read(run_files.expected, None)
    if symptom is None:
        symptom = read(run_files.symptom, "")
    record = read(run_files.record, None)
    scenario = ev.scenario if ev else record.scenario if record else run_dir.name
    agent = ev.agent if ev else record.agent if record else "an agent"
    title = title or f"{agent} on {scenario}"
    marks = Marks()
    verdict = verdict_html(ev, events, report, expected, marks)  # marks the steps first
    steps = {e.seq for e in events}
    filed = next((e.observation for e in reversed(events) if e.kind == "report"
                  and isinstance(e.observation, dict)), None)
    first: dict[int, int] = {}
    for i, seq in enumerate(cited(filed)):
        if seq is not None and seq in steps and seq not in first:
            first[seq] = i
            marks.add(seq, f"<a class=\"tag good\" href=\"#ev-{i}\">cited as evidence</a>")
    report_steps = {e.seq for e in events if e.kind == "report"}
    start = events[0].ts if events else None
    rendered = "".join(step_html(e, start, marks, report_steps, steps) for e in events)
    transcript = (f"<ol class=\"steps\">{rendered}</ol>" if events
                  else "<p>No trace: the agent made no call.</p>")
    nav = f"<p><a href=\"{esc(up[0])}\">{esc(up[1])}</a></p>" if up else ""
    head = (f"<header class=\"run\">{nav}<h1>{esc(title)}</h1>"
            f"<p class=\"headline\">{label(verdict_label(ev))} · {esc(verdict_reason(ev))}</p>"
            + (f"<p><b>Symptom.</b> {esc(symptom)}</p>" if symptom else "")
            + raw_links(run_dir, raw_base)
            + "".join(f"<p class=\"warn\">does not read: {esc(p)}</p>" for p in problems)
            + "</header>")
    body = (f"{head}<div class=\"layout\"><main><h2>Transcript: {len(events)} steps</h2>"
            f"{transcript}</main><aside>{verdict}</aside></div>")
    return page(title, body, wide=True, style=STYLE)
