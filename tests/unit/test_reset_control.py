"""The targeted-reset control (agents.scripted.ResetAgent, issue 39) names its cause from the
vocabulary alone, as a blind script would: by the setting's name and the direction of the value
it reset, read as PostgreSQL reads units."""

from __future__ import annotations

import pytest

from dbabench.agents.scripted import _cause_of, _suspect
from dbabench.policy import pg_magnitude


@pytest.mark.parametrize("value, unit, expected", [
    ("64MB", "kB", 65536), ("4096", "kB", 4096), ("1GB", "MB", 1024 ** 2),
    ("10s", "ms", 10_000), ("2min", "s", 120_000), ("100", "8kB", 800), ("on", None, None)])
def test_a_value_is_read_in_its_settings_base_unit(value: str, unit: str | None,
                                                    expected: float | None) -> None:
    assert pg_magnitude(value, unit) == expected


@pytest.mark.parametrize("name, value, boot, unit, cause", [
    ("commit_delay", "100000", "0", None, "commit_delay_too_high"),
    ("deadlock_timeout", "10s", "1000", "ms", "deadlock_timeout_too_high"),
    ("track_counts", "off", "on", None, "track_counts_off"),
    ("max_wal_size", "32MB", "1024", "MB", "max_wal_size_too_small"),
    ("enable_nestloop", "off", "on", None, "configuration_change"),
])
def test_the_cause_is_read_off_the_vocabulary(name: str, value: str, boot: str,
                                              unit: str | None, cause: str) -> None:
    assert _cause_of(name, value, boot, unit) == cause


def test_the_usual_suspects_and_nothing_else() -> None:
    assert all(_suspect(n) for n in ("work_mem", "enable_seqscan", "autovacuum_naptime",
                                     "Search_Path"))
    assert not any(_suspect(n) for n in ("log_min_messages", "shared_buffers", "max_connections"))

