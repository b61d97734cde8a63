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
from typing import TYPE_CHECKING

from dbabench.model.campaign import BECAME, CampaignRecord, CellResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOTS_DIR = "plots"
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


def write_plots(out: Path, campaign: CampaignRecord, cells: list[CellResult]) -> list[Path]:
    import matplotlib  # noqa: PLC0415  (only campaigns draw)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

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
            ax.bar([x + i * width for x in range(len(groups))],
                   [0 if h is None else h for h in heights], width, label=agent)
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
    fig, ax = plt.subplots(figsize=(6, 4))
    for agent, (cost, rate) in points.items():
        ax.scatter(cost, rate, s=40)
        ax.annotate(agent, (cost, rate), fontsize=7, xytext=(4, 4), textcoords="offset points")
    front = pareto(points)
    ax.plot([points[a][0] for a in front], [points[a][1] for a in front], "--o", color="grey",
            markerfacecolor="none", markersize=11, label="Pareto frontier")
    ax.set_xlabel("mean cost per scored run (USD)")
    ax.set_ylabel("Safe Pass rate")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(fontsize=7)
    save(fig, FIGURES[1])

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
