"""JSON-lines read while another process appends: a torn last line waits, a bad line is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbabench.jsonl import JsonlTail, complete_records


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


def test_a_tail_parses_only_what_was_appended_and_finishes_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    tail = JsonlTail(path)
    assert tail.read() == []
    path.write_text('{"a": 1}\n{"a": ')
    first = tail.read()
    assert first == [{"a": 1}]
    with path.open("a") as f:
        f.write('2}\n{"a": 3}\n')
    assert tail.read() == [{"a": 1}, {"a": 2}, {"a": 3}]
    assert first is tail.records  # appended to, not parsed again


def test_a_tail_reads_a_rewritten_file_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n')
    tail = JsonlTail(path)
    assert tail.read() == [{"a": 1}, {"a": 2}]
    path.write_text('{"b": 1}\n{"b": 2}\n{"b": 3}\n')  # longer, but not the same file
    assert tail.read() == [{"b": 1}, {"b": 2}, {"b": 3}]
    path.write_text('{"b": 1}\n')  # the same start, cut short
    assert tail.read() == [{"b": 1}]


def test_a_bad_line_after_good_ones_is_named_with_its_number_on_every_read(
        tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n')
    tail = JsonlTail(path)
    tail.read()
    with path.open("a") as f:
        f.write("oops\n")
    for _ in range(2):
        with pytest.raises(ValueError, match=r"log.jsonl: line 2 is not a JSON record"):
            tail.read()
