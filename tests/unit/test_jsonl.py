"""JSON-lines read while another process appends: a torn last line waits, a bad line is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbabench.jsonl import complete_records


def test_the_line_still_being_written_is_left_for_later(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": ')
    assert list(complete_records(path)) == [{"a": 1}, {"a": 2}]
    assert list(complete_records(tmp_path / "absent.jsonl")) == []


def test_a_complete_line_that_is_not_json_is_named_with_its_file_and_number(
        tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n\n')
    with pytest.raises(ValueError, match=r"log.jsonl: line 2 is not a JSON record"):
        list(complete_records(path))
