"""The settings that decide what the server logs are read as the server reads them, in Python:
most of them are the server's (sighup), so a session cannot set one to read it back, and the
refused SET would write the harness's error into the log the agent reads."""

from __future__ import annotations

import pytest

from dbabench.evaluate.log_settings import normalised


@pytest.mark.parametrize("raw, vartype, unit, expected", [
    ("on", "bool", None, "on"), ("OFF", "bool", None, "off"), ("t", "bool", None, "on"),
    ("'100ms'", "integer", "ms", "100"), ("1h", "integer", "ms", "3600000"),
    ("-1", "integer", "ms", "-1"), ("10MB", "integer", "kB", "10240"), ("1s", "integer", "s", "1"),
    ("ERROR", "enum", None, "error"), ("maybe", "bool", None, "?maybe"),
    ("10 parsecs", "integer", "ms", "?10 parsecs")])
def test_a_log_setting_is_read_as_the_server_reads_it(raw: str, vartype: str,
                                                      unit: str | None, expected: str) -> None:
    assert normalised(raw, vartype, unit) == expected
