"""A campaign's tables, built from its records alone: ``leaderboard.md`` and ``results.csv``.

Everything here is a function of ``campaign.json``, ``results.jsonl`` and ``events.jsonl``:
rebuilt from the same records, the files are byte-identical. Rates are over scored cells, each
cell counted once (never the best of its repeats); cells that did not get a fair run are
listed with their reason and kept out of every rate.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dbabench.model.artifacts import CampaignOutput
from dbabench.model.campaign import BECAME, SECONDARY, CampaignRecord, CellResult, JudgeLabel

LEADERBOARD_FILE = CampaignOutput.LEADERBOARD
CSV_FILE = CampaignOutput.CSV
def _rate(cells: list[CellResult], passed: Callable[[CellResult], bool]) -> str:
    scored = [c for c in cells if c.summary is not None]
    if not scored:
        return "–"
    k = sum(1 for c in scored if passed(c))
    return f"{k}/{len(scored)} ({100 * k / len(scored):.0f}%)"


def _sp(c: CellResult) -> bool:
    return c.summary is not None and c.summary.safe_pass


def _op(c: CellResult) -> bool:
    return c.summary is not None and c.summary.outcome_pass


def _dp(c: CellResult) -> bool:
    return c.summary is not None and c.summary.diagnosis_pass


@dataclass
class Section:
    """One table of the leaderboard, whatever it is rendered as (markdown, HTML)."""

    title: str
    header: list[str]
    rows: list[list[object]]
    note: str = ""
    empty: str = "None."


@dataclass
class Board:
    title: str
    summary: list[str]
    sections: list[Section]


def _spread(cells: list[CellResult]) -> str:
    """Safe Pass rate per repeat, and its standard deviation over the repeats."""
    by_repeat: dict[int, list[CellResult]] = defaultdict(list)
    for c in cells:
        if c.summary is not None:
            by_repeat[c.repeat].append(c)
    rates = [sum(map(_sp, cs)) / len(cs) for _, cs in sorted(by_repeat.items())]
    if len(rates) < 2:
        return "–"
    return f"{statistics.pstdev(rates):.2f} over {len(rates)} repeats"


def _by(cells: list[CellResult], agents: list[str], key: Callable[[CellResult], object],
        title: str) -> Section:
    groups = sorted({key(c) for c in cells}, key=str)
    rows: list[list[object]] = [
        [g, *(_rate([c for c in cells if c.agent == a and key(c) == g], _sp) for a in agents)]
        for g in groups]
    return Section(f"Safe Pass by {title}", [title, *agents], rows)


def _judged(cells: list[CellResult], agents: list[str],
            judged: Sequence[JudgeLabel]) -> list[Section]:
    """A judge model's labels beside the rules' (results.judge): how often they agree, and
    where they do not, with the judge's reason."""
    rule = {(c.agent, c.scenario, c.repeat): c.became for c in cells if c.summary is not None}
    read = [j for j in judged if (j.agent, j.scenario, j.repeat) in rule]
    rows: list[list[object]] = []
    for model in sorted({j.model for j in read}):
        for a in agents:
            mine = [j for j in read if j.model == model and j.agent == a]
            if mine:
                rows.append([a, model, len(mine),
                             sum(1 for j in mine if j.label == rule[j.agent, j.scenario,
                                                                    j.repeat]),
                             sum(1 for j in mine if j.label is None),
                             f"${sum(j.cost_usd for j in mine):.4f}"])
    differ = [[j.agent, j.scenario, j.repeat, j.model, rule[j.agent, j.scenario, j.repeat],
               j.label or "no answer", j.reason]
              for j in sorted(read, key=lambda j: (j.agent, j.scenario, j.repeat, j.model))
              if j.label != rule[j.agent, j.scenario, j.repeat]]
    return [Section("A judge model's labels", ["agent", "judge", "read", "agree", "no answer",
                                               "judge's cost"], rows,
                    "Stored apart (judge.jsonl): no rate, mean or verdict reads them."),
            Section("Where the judge read a run otherwise",
                    ["agent", "scenario", "repeat", "judge", "by rule", "by the judge",
                     "the judge's reason"], differ, empty="Nowhere.")]


def board(campaign: CampaignRecord, cells: list[CellResult],
          not_started: list[dict[str, object]], judged: Sequence[JudgeLabel] = ()) -> Board:
    agents = [a.label for a in campaign.spec.agents]
    by_agent = {a: [c for c in cells if c.agent == a] for a in agents}
    scored = [c for c in cells if c.summary is not None]
    unfair = [c for c in cells if c.summary is None]
    planned = len(campaign.spec.scenarios) * len(agents) * campaign.spec.repeats
    summary = [f"{planned} cells planned ({len(campaign.spec.agents)} agents x"
               f" {len(campaign.spec.scenarios)} scenarios x {campaign.spec.repeats} repeats):"
               f" {len(scored)} scored, {len(unfair)} without a fair run,"
               f" {len(not_started)} not started, {planned - len(cells) - len(not_started)}"
               " pending. Scorer " + campaign.scorer.digest[:12]
               + f" (dbabench {campaign.scorer.dbabench}), prices as of"
               f" {campaign.price_table}."]
    if not_started and campaign.max_cost_usd is not None:
        summary.append(f"The campaign's cost cap of ${campaign.max_cost_usd:g} was reached:"
                       f" {len(not_started)} cells were not started.")
    rows: list[list[object]] = []
    for a in agents:
        mine = by_agent[a]
        costs = [c.summary.cost_usd for c in mine if c.summary is not None]
        rows.append([a, len(costs), _rate(mine, _sp), _rate(mine, _op), _rate(mine, _dp),
                     _spread(mine),
                     f"${statistics.fmean(costs):.4f}" if costs else "–",
                     f"${sum(costs):.4f}"])
    sections = [Section("Agents", ["agent", "scored", "Safe Pass", "Outcome Pass",
                                   "Diagnosis Pass", "Safe Pass spread", "mean cost",
                                   "total cost"], rows, "Rates over scored cells.")]
    sections.append(Section("Safe Pass per scenario", ["scenario", *agents], [
        [s, *(_rate([c for c in by_agent[a] if c.scenario == s], _sp) for a in agents)]
        for s in campaign.spec.scenarios]))
    sections += [_by(cells, agents, lambda c: c.category, "category"),
                 _by(cells, agents, lambda c: c.difficulty, "difficulty"),
                 _by(cells, agents, lambda c: c.depth, "depth")]
    sections.append(Section("What became of each scored run", ["agent", *BECAME], [
        [a, *(sum(1 for c in by_agent[a] if c.summary is not None and c.became == label)
              for label in BECAME)] for a in agents]))
    sections.append(Section("What else went wrong", ["agent", *SECONDARY], [
        [a, *(sum(1 for c in by_agent[a] if c.summary is not None and label in c.secondary)
              for label in SECONDARY)] for a in agents],
        "Secondary labels of scored runs, derived from their checks, safety rules, reports"
        " and traces; a run may have several."))
    sections.append(Section(
        "Said done, was not", ["agent", "scenario", "repeat", "failed checks"],
        [[c.agent, c.scenario, c.repeat, ", ".join(c.failed_checks)] for c in scored
         if c.claimed_fixed and not c.summary.outcome_pass],  # type: ignore[union-attr]
        "The report said the fix was verified; the outcome checks failed."))
    points: list[list[object]] = []
    for a in agents:
        lost = Counter(f"check {n}" for c in by_agent[a] for n in c.failed_checks)
        lost.update(f"rule {r}" for c in by_agent[a] for r in c.violations)
        points += [[a, what, n] for what, n in sorted(lost.items(), key=lambda x: (-x[1], x[0]))]
    sections.append(Section("Where the points went", ["agent", "failed", "cells"], points,
                            "How often each outcome check failed and each safety rule was"
                            " broken, per agent.", "Nowhere."))
    rows = [[c.agent, c.scenario, c.repeat, c.status, c.reason or ""] for c in unfair]
    rows += [[e["agent"], e["scenario"], e["repeat"], "not started", e.get("reason", "")]
             for e in not_started]
    sections.append(Section("Cells that did not get a fair run",
                            ["agent", "scenario", "repeat", "status", "reason"], rows,
                            "Kept out of every rate."))
    if judged:
        sections += _judged(cells, agents, judged)
    cut = Counter(c.agent for c in cells if c.output_limited)
    if cut:
        sections.append(Section("Replies cut at the output limit", ["agent", "cells"],
                                [[a, n] for a, n in sorted(cut.items())]))
    if campaign.symptoms:
        sections.append(Section("What each scenario told its agent", ["scenario", "symptom"],
                                [[s, " ".join(campaign.symptoms[s].split())]
                                 for s in campaign.spec.scenarios if s in campaign.symptoms]))
    return Board(f"Campaign {campaign.name}", summary, sections)


def _md_table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def markdown(b: Board) -> str:
    parts = [f"# {b.title}\n", *(f"{p}\n" for p in b.summary)]
    for section in b.sections:
        note = f"{section.note}\n\n" if section.note else ""
        body = _md_table(section.header, section.rows) if section.rows else f"{section.empty}\n"
        parts.append(f"## {section.title}\n\n{note}{body}")
    return "\n".join(parts)


CSV_COLUMNS = ("agent", "scenario", "repeat", "category", "difficulty", "depth", "status",
               "reason", "outcome_pass", "diagnosis_pass", "safe_pass", "integrity_violated",
               "f", "f1", "penalty", "cost_usd", "cost_basis", "tool_calls", "wall_seconds",
               "label", "secondary", "failed_checks", "violations", "run_dir")


def results_csv(cells: list[CellResult]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in sorted(cells, key=lambda c: (c.agent, c.scenario, c.repeat)):
        s = c.summary
        writer.writerow([
            c.agent, c.scenario, c.repeat, c.category, c.difficulty, c.depth, c.status,
            c.reason or "",
            *(("", "", "", "", "", "", "", "", "") if s is None else (
                s.outcome_pass, s.diagnosis_pass, s.safe_pass, s.integrity_violated, s.f, s.f1,
                s.penalty, s.cost_usd, s.cost_basis)),
            c.tool_calls, c.wall_seconds, "" if s is None else c.became,
            "" if s is None else ";".join(c.secondary), ";".join(c.failed_checks),
            ";".join(c.violations), c.run_dir or ""])
    return buffer.getvalue()
