"""Bad input is bad input (issue 41): a malformed file, a number out of range, a directory that
cannot be written are exit 2 with one line naming what is wrong and what to do, before anything
starts; never "harness bug" and a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbabench.cli.main import EXIT_USAGE, main


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse's usage errors
        return int(e.code or 0)


def said(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    return " ".join((captured.out + captured.err).split())


def test_a_campaign_that_is_not_yaml_is_named_with_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "smoke.yaml"
    bad.write_text("apiVersion: dbabench.io/v1alpha1\nkind: Campaign\nmetadata: {name: x\n")
    assert exit_code(["campaign", "run", str(bad)]) == EXIT_USAGE
    text = said(capsys)
    assert f"{bad}: not valid YAML" in text and "line" in text
    assert "harness bug" not in text and "Traceback" not in text


@pytest.mark.parametrize("argv", [
    ["run", "stale-stats-lock-chain", "--agent", "react", "--model", "self:x", "--max-cost", "-1"],
    ["run", "stale-stats-lock-chain", "--agent", "react", "--model", "self:x", "--max-cost", "nan"],
    ["campaign", "run", "c.yaml", "--max-cost", "-1"],
    ["campaign", "run", "c.yaml", "--max-cost", "0"],
    ["campaign", "run", "c.yaml", "-j", "0"],
    ["scenarios", "prove", "--jobs", "-2"],
])
def test_a_number_out_of_range_is_a_usage_error(argv: list[str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(argv) == EXIT_USAGE
    text = said(capsys)
    assert "must be" in text and "harness bug" not in text


@pytest.mark.parametrize("argv, option", [
    (["run", "stale-stats-lock-chain", "--agent", "null", "--runs-dir", "/proc/1/runs"],
     "--runs-dir"),
    (["scenarios", "prove", "stale-stats-lock-chain", "--runs-dir", "/proc/1/runs"],
     "--runs-dir"),
    (["scenarios", "measure", "stale-stats-lock-chain", "--out", "/proc/1/runs"], "--out"),
])
def test_a_directory_that_cannot_be_written_is_named(argv: list[str], option: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(argv) == EXIT_USAGE
    text = said(capsys)
    assert "/proc/1/runs: cannot write there" in text and f"give {option}" in text
    assert "harness bug" not in text


def test_an_unwritable_default_runs_directory_names_its_variable(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DBABENCH_RUNS", "/proc/1/runs")
    assert exit_code(["run", "stale-stats-lock-chain", "--agent", "null"]) == EXIT_USAGE
    assert "give DBABENCH_RUNS" in said(capsys)
