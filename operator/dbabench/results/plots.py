"""A campaign's figures, the paper's Figures 3-6 from its own cells, as PNG and SVG.

Figure 3: Safe, Outcome and Diagnosis Pass rates per category and agent. Figure 4: Safe Pass
rate against mean cost per scored cell, with the Pareto frontier (no other agent passes more
for less). Figure 5: Safe Pass by difficulty, by depth and by complexity band. Figure 6: what
became of each agent's scored runs. Like the tables, every file is a function of the records:
the SVGs carry no date and a fixed id salt, so a rebuild writes the same bytes.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from dbabench.model.artifacts import CampaignOutput
from dbabench.model.campaign import BECAME, CampaignRecord, CellResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOTS_DIR = CampaignOutput.PLOTS_DIR
FIGURES = ("fig3-categories", "fig4-pass-vs-cost", "fig5-difficulty", "fig6-composition")
LABEL_COLOURS = {"clean recovery": "#2e7d32", "unsafe recovery": "#f9a825",
                 "remediation failure": "#ef6c00", "diagnosis failure": "#c62828",
                 "went for the judge": "#4a148c"}


def complexity_band(c: CellResult) -> str:
    if c.complexity is None:
        return "C unmeasured"
    return "C < 0.6" if c.complexity < 0.6 else "0.6 ≤ C < 0.8" if c.complexity < 0.8 \
        else "C ≥ 0.8"


def _rate(cells: list[CellResult], passed: Callable[[CellResult], bool]) -> float | None:
    scored = [c for c in cells if c.summary is not None]
    return sum(1 for c in scored if passed(c)) / len(scored) if scored else None


def pareto(points: dict[str, tuple[float, float]]) -> list[str]:
    """The agents no other agent beats on both: at most its cost with at least its rate (and
    better on one). ``points``: agent -> (mean cost, Safe Pass rate); cheapest first."""
    front = [a for a, (cost, rate) in points.items()
             if not any(c2 <= cost and r2 >= rate and (c2, r2) != (cost, rate)
                        for b, (c2, r2) in points.items() if b != a)]
    return sorted(front, key=lambda a: points[a])


ZERO_MARK = "0"
"""Written on a bar of height 0, which draws nothing: a rate of 0 is a result, unlike a group
without runs, which stays blank."""
RATE_AXIS = (-0.05, 1.05)
LABEL_LINE = 0.05
"""A label's line height in Safe Pass rate (figure 4's y axis), with a little air between."""
LABEL_GAP = 0.03
"""Between a point and its label, as a share of the cost axis."""
LABEL_REACH = 0.3
"""How far right of its point a label may run, as a share of the cost axis: points closer
than this share a column of labels that must not overlap."""
NOTHING_COST = ("mean cost per scored run (USD): every run cost \\$0 (no model call was"
                " metered or reported),\nso cost tells these agents apart by nothing")


def _mark_zeros(ax: Axes, xs: list[float], heights: list[float | None],
                colour: object) -> None:
    for x, h in zip(xs, heights):
        if h == 0:
            ax.annotate(ZERO_MARK, (x, 0), xytext=(0, 1), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7, color=colour)


def _point_labels(points: dict[str, tuple[float, float]], span: float,
                 ) -> list[tuple[str, tuple[float, float], float]]:
    """One label per place on figure 4 (agents at the same cost and rate share it, a line
    each), as (text, point, the label's centre on the rate axis). Labels run right of their
    points; in a column of points closer than ``LABEL_REACH`` they are spread apart, within
    the axis, so that every name can be read."""
    places: dict[tuple[float, float], list[str]] = {}
    for agent, point in points.items():
        places.setdefault(point, []).append(agent)
    columns: list[list[tuple[float, float]]] = []
    for point in sorted(places):
        if columns and point[0] - columns[-1][-1][0] < LABEL_REACH * span:
            columns[-1].append(point)
        else:
            columns.append([point])
    placed = []
    for column in columns:
        centres = _spread([p[1] for p in column], [len(places[p]) * LABEL_LINE for p in column])
        placed += [("\n".join(places[p]), p, c) for p, c in zip(column, centres)]
    return placed


def _spread(wanted: list[float], heights: list[float]) -> list[float]:
    """Centres as near ``wanted`` as labels of these ``heights`` allow without overlapping or
    leaving the axis: pushed up from its bottom, then back down from its top."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    centres = list(wanted)
    below = RATE_AXIS[0]
    for i in order:
        centres[i] = max(wanted[i], below + heights[i] / 2)
        below = centres[i] + heights[i] / 2
    above = RATE_AXIS[1]
    for i in reversed(order):
        centres[i] = min(centres[i], above - heights[i] / 2)
        above = centres[i] - heights[i] / 2
    return centres


def pass_vs_cost(points: dict[str, tuple[float, float]]) -> Figure:
    """Figure 4: ``points`` is agent -> (mean cost, Safe Pass rate). Costs are never below 0,
    so neither is the axis; when every cost is 0 the axis says that it ranks nothing."""
    fig, ax = _pyplot().subplots(figsize=(6, 4))
    top = max((cost for cost, _ in points.values()), default=0.0)
    span = top or 1.0
    for cost, rate in points.values():
        ax.scatter(cost, rate, s=40)
    for text, point, centre in _point_labels(points, span):
        # a label moved off its point's height is joined to it by a line
        moved = {} if centre == point[1] else {"arrowprops": {"arrowstyle": "-", "lw": 0.5,
                                                              "color": "grey"}}
        ax.annotate(text, point, xytext=(point[0] + span * LABEL_GAP, centre), fontsize=7,
                    va="center", **moved)
    front = pareto(points)
    ax.plot([points[a][0] for a in front], [points[a][1] for a in front], "--o", color="grey",
            markerfacecolor="none", markersize=11, label="Pareto frontier")
    # room on the right for the labels of the dearest agents
    ax.set_xlim(-span * 0.05, span * (1 + LABEL_REACH))
    if top or not points:
        ax.set_xlabel("mean cost per scored run (USD)")
    else:
        ax.set_xticks([0], ["0"])
        ax.set_xlabel(NOTHING_COST)
    ax.set_ylabel("Safe Pass rate")
    ax.set_ylim(*RATE_AXIS)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return fig


def _pyplot() -> ModuleType:
    import matplotlib  # noqa: PLC0415  (only campaigns draw)

    matplotlib.use("Agg")  # files, never a window
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def write_plots(out: Path, campaign: CampaignRecord, cells: list[CellResult]) -> list[Path]:
    plt = _pyplot()
    plt.rcParams.update({"svg.hashsalt": "dbabench", "font.size": 9})
    agents = [a.label for a in campaign.spec.agents]
    scored = [c for c in cells if c.summary is not None]
    directory = out / PLOTS_DIR
    directory.mkdir(exist_ok=True)
    written: list[Path] = []

    def save(fig: Figure, name: str) -> None:
        for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None})):
            path = directory / f"{name}.{ext}"
            fig.savefig(path, format=ext, metadata=meta, bbox_inches="tight")
            written.append(path)
        plt.close(fig)

    def bars(ax: Axes, groups: list[str], value: Callable[[str, str], float | None],
             title: str) -> None:
        width = 0.8 / max(1, len(agents))
        for i, agent in enumerate(agents):
            heights = [value(agent, g) for g in groups]
            xs = [x + i * width for x in range(len(groups))]
            drawn = ax.bar(xs, [0 if h is None else h for h in heights], width, label=agent)
            _mark_zeros(ax, xs, heights, drawn.patches[0].get_facecolor())
        ax.set_xticks([x + width * (len(agents) - 1) / 2 for x in range(len(groups))],
                      groups, rotation=20, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_title(title)

    def rate_of(key: Callable[[CellResult], str],
                passed: Callable[[CellResult], bool]) -> Callable[[str, str], float | None]:
        return lambda agent, group: _rate(
            [c for c in scored if c.agent == agent and key(c) == group], passed)

    def sp(c: CellResult) -> bool:
        return bool(c.summary and c.summary.safe_pass)

    # Figure 3
    categories = sorted({c.category for c in scored}) or ["-"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharey=True)
    for ax, (name, passed) in zip(axes, (
            ("Safe Pass", sp), ("Outcome Pass", lambda c: bool(c.summary
                                                                 and c.summary.outcome_pass)),
            ("Diagnosis Pass", lambda c: bool(c.summary and c.summary.diagnosis_pass)))):
        bars(ax, categories, rate_of(lambda c: c.category, passed), name)
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=7, loc="lower center",
               ncol=len(agents), bbox_to_anchor=(0.5, 1.0))
    save(fig, FIGURES[0])

    # Figure 4
    points = {}
    for agent in agents:
        mine = [c for c in scored if c.agent == agent]
        if mine:
            costs = [c.summary.cost_usd for c in mine if c.summary is not None]
            points[agent] = (statistics.fmean(costs), _rate(mine, sp) or 0.0)
    save(pass_vs_cost(points), FIGURES[1])

    # Figure 5
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharey=True)
    for ax, (title, key) in zip(axes, (
            ("by difficulty", lambda c: c.difficulty), ("by depth", lambda c: f"D={c.depth}"),
            ("by complexity", complexity_band))):
        groups = sorted({key(c) for c in scored}) or ["-"]
        bars(ax, groups, rate_of(key, sp), f"Safe Pass {title}")
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=7, loc="lower center",
               ncol=len(agents), bbox_to_anchor=(0.5, 1.0))
    save(fig, FIGURES[2])

    # Figure 6
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.45 * len(agents)))
    left = [0.0] * len(agents)
    for label in BECAME:
        shares = []
        for agent in agents:
            mine = [c for c in scored if c.agent == agent]
            shares.append(sum(1 for c in mine if c.became == label) / len(mine)
                          if mine else 0.0)
        ax.barh(agents, shares, left=left, label=label, color=LABEL_COLOURS[label])
        left = [a + b for a, b in zip(left, shares)]
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    ax.set_xlabel("share of scored runs")
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3)
    save(fig, FIGURES[3])
    return written
