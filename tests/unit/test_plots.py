"""A campaign's figures stay readable when nothing cost anything: a campaign of the scripted
agents (or of agents whose model calls were neither metered nor reported) is all at $0."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.text import Text

from dbabench.results.plots import FIGURES, PLOTS_DIR, ZERO_MARK, pass_vs_cost, write_plots

from test_campaign_tables import KNOWN, campaign

FREE = [c if c.summary is None else c.model_copy(update={
    "summary": c.summary.model_copy(update={"cost_usd": 0.0, "cost_basis": "none"})})
    for c in KNOWN]
# what examples/campaign.yaml and the battery's controls give: most agents on one spot
SCRIPTED = {"reference": (0.0, 1.0), "decoy": (0.0, 0.0), "null": (0.0, 0.0),
            "sweep": (0.0, 0.0), "reset": (0.0, 0.02), "reference-alt": (0.0, 1.0)}


def svg_texts(path: Path) -> list[str]:
    """The text of every label of an SVG that matplotlib wrote (it draws glyphs as paths and
    keeps each text as a comment)."""
    return [part.split(" -->", 1)[0] for part in path.read_text().split("<!-- ")[1:]]


def test_figures_of_a_campaign_that_cost_nothing_say_so(tmp_path: Path) -> None:
    write_plots(tmp_path, campaign(), FREE)
    fig4 = svg_texts(tmp_path / PLOTS_DIR / f"{FIGURES[1]}.svg")
    # one tick at $0, none below: a cost is never negative
    assert not [t for t in fig4 if t.startswith("\N{MINUS SIGN}")]
    assert "0" in fig4 and "every run cost $0" in " ".join(fig4)
    # null passed nothing: its bars have no height, so each is marked with its 0
    fig3 = svg_texts(tmp_path / PLOTS_DIR / f"{FIGURES[0]}.svg")
    assert fig3.count(ZERO_MARK) == 7  # null x 2 categories x 3 rates, react's Safe Pass once


def test_labels_of_agents_at_the_same_cost_and_rate_do_not_overlap() -> None:
    fig = pass_vs_cost(SCRIPTED)
    try:
        fig.canvas.draw()  # places the labels
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        ax = fig.axes[0]
        labels = [t for t in ax.texts if isinstance(t, Text)]
        assert sorted(n for t in labels for n in t.get_text().split("\n")) == sorted(SCRIPTED)
        # the words themselves: a moved label's line to its point may pass another's
        boxes = [Text.get_window_extent(t, renderer) for t in labels]
        legend = ax.get_legend().get_window_extent(renderer)
        inside = ax.get_window_extent(renderer)
        for a, b in combinations(boxes, 2):
            assert not a.overlaps(b), (a, b)
        for box in boxes:
            assert not box.overlaps(legend)
            assert inside.y0 <= box.y0 and box.y1 <= inside.y1
    finally:
        plt.close(fig)
