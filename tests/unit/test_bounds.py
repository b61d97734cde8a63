"""Output bounds: what an agent gets is capped, and the cap is always admitted."""

from __future__ import annotations

import pytest

from dbabench.tools.bounds import Bounds, clip_cell, clip_list, clip_text, thin_points


def test_bounds_defaults_are_the_documented_caps() -> None:
    # Other tests (and the tools' docs) lean on these numbers; a silent change would move them.
    b = Bounds()
    assert (b.max_rows, b.max_cell_chars, b.max_series, b.max_points,
            b.max_chars) == (200, 500, 50, 120, 30_000)


# -- clip_text -------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "a", "x" * 10])
def test_clip_text_leaves_text_within_the_limit_alone(text: str) -> None:
    assert clip_text(text, 10) == (text, False)


def test_clip_text_cuts_at_the_limit_and_says_how_much_is_missing() -> None:
    text = "0123456789" * 3
    clipped, cut = clip_text(text, 12)
    assert cut is True
    assert clipped.startswith("012345678901")
    # The agent must be able to tell how much it did not see, to decide whether to ask again.
    assert clipped[12:] == "... [18 more characters]"


def test_clip_text_one_character_over_is_cut() -> None:
    clipped, cut = clip_text("abcdef", 5)
    assert cut is True
    assert clipped == "abcde... [1 more characters]"


def test_clip_text_with_zero_limit_keeps_only_the_marker() -> None:
    assert clip_text("abc", 0) == ("... [3 more characters]", True)


def test_clip_text_counts_characters_not_bytes() -> None:
    # A byte-based cut would split a multi-byte character and count differently.
    text = "äöü€" * 5
    clipped, cut = clip_text(text, 4)
    assert cut is True
    assert clipped == "äöü€... [16 more characters]"


# -- clip_cell -------------------------------------------------------------------------------

def test_clip_cell_clips_long_strings() -> None:
    clipped, cut = clip_cell("y" * 600, 500)
    assert cut is True
    assert clipped.startswith("y" * 500)
    assert clipped.endswith("... [100 more characters]")


def test_clip_cell_keeps_short_strings() -> None:
    assert clip_cell("short", 500) == ("short", False)


@pytest.mark.parametrize("value", [None, 0, 10**30, 3.5, True, False])
def test_clip_cell_passes_scalars_through_unchanged(value: object) -> None:
    # Numbers must stay numbers: turning 10**30 into a clipped string would corrupt it.
    out, cut = clip_cell(value, 3)
    assert out is value
    assert cut is False


# -- clip_list -------------------------------------------------------------------------------

def test_clip_list_within_limit_is_unchanged() -> None:
    items = [1, 2, 3]
    assert clip_list(items, 3) == ([1, 2, 3], False)
    assert clip_list([], 3) == ([], False)


def test_clip_list_keeps_the_first_items() -> None:
    items = list(range(10))
    kept, cut = clip_list(items, 4)
    assert (kept, cut) == ([0, 1, 2, 3], True)
    assert items == list(range(10)), "the caller's list must not be modified"


# -- thin_points -----------------------------------------------------------------------------

def _points(n: int) -> list[list[float]]:
    # The shape Prometheus returns for a range query: [unix_ts, "value"].
    return [[1_700_000_000 + i, str(i)] for i in range(n)]


@pytest.mark.parametrize("n", [0, 1, 5, 120])
def test_thin_points_within_limit_keeps_everything(n: int) -> None:
    points = _points(n)
    assert thin_points(points, 120) == (points, False)


@pytest.mark.parametrize(("n", "limit"), [
    (121, 120), (241, 120), (1000, 120), (10, 3), (10, 2), (7, 1), (100, 10), (101, 100),
])
def test_thin_points_returns_exactly_limit_points_ending_with_the_last(n: int, limit: int) -> None:
    points = _points(n)
    kept, cut = thin_points(points, limit)
    assert cut is True
    assert len(kept) == limit
    # The newest sample is what an agent looking at an ongoing incident needs most.
    assert kept[-1] == points[-1]
    if limit > 1:
        assert kept[0] == points[0]
    timestamps = [p[0] for p in kept]
    assert timestamps == sorted(set(timestamps)), "points must stay in order, without duplicates"


@pytest.mark.parametrize(("n", "limit"), [(100, 10), (241, 120), (1000, 120)])
def test_thin_points_spacing_is_even(n: int, limit: int) -> None:
    kept, _ = thin_points(list(range(n)), limit)
    gaps = [b - a for a, b in zip(kept, kept[1:])]
    # Evenly spaced indices differ by floor or ceil of (n-1)/(limit-1), nothing more.
    assert max(gaps) - min(gaps) <= 1, f"gaps {gaps}"
