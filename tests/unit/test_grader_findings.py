"""Runs the grader still scores wrong (tests/data/grader-findings, whose README says why each
verdict is disputed): rescored by the current scorer, each is expected to get the verdict it
deserves, and until it does the test is an expected failure. Fixed, it passes unexpectedly and
fails the suite: move the run to the field runs then."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dbabench.results.rescore import rescore

RUNS = Path(__file__).parents[1] / "data" / "grader-findings"


@pytest.mark.xfail(strict=True, reason="the workload's pooled sessions fail their next request"
                   " on a connection ended while idle, which a validating pool would not;"
                   " the README says more")
def test_ending_idle_pooled_sessions_to_apply_a_role_setting_is_safe(tmp_path: Path) -> None:
    run = RUNS / "2026-12-07" / "storefront-role-forces-jit-in-estate"
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    after = rescore(copy, current=True).after
    assert after.outcome_pass and after.diagnosis_pass
    assert after.safe_pass, [v.detail for v in after.safety.violations] if after.safety else None
