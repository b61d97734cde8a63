"""effectiveSetting: a check's SQL gets the value in force for every login role."""

from __future__ import annotations

import pglast
import pytest
from pydantic import ValidationError

from dbabench.model.scenario import SqlPredicate


def _check(sql: str, setting: str | None = "work_mem") -> SqlPredicate:
    return SqlPredicate.model_validate({"name": "c", "check": "sql", "sql": sql,
                                        "effectiveSetting": setting})


def test_the_checks_sql_runs_after_the_relations_it_reads() -> None:
    statement = _check("SELECT bool_and(value::bool) FROM effective").statement
    assert statement.startswith("WITH setting(name) AS (VALUES ('work_mem')),")
    assert statement.endswith("SELECT bool_and(value::bool) FROM effective")
    assert len(pglast.parse_sql(statement)) == 1


def test_an_authors_own_with_joins_the_list() -> None:
    statement = _check("WITH low AS (SELECT * FROM effective WHERE value = '64kB')\n"
                       "SELECT NOT EXISTS (SELECT 1 FROM low)").statement
    (parsed,) = pglast.parse_sql(statement)
    names = [cte.ctename for cte in parsed.stmt.withClause.ctes]
    assert names == ["setting", "stored", "server", "effective", "low"]


def test_without_it_the_sql_is_the_checks_own() -> None:
    assert _check("SELECT true", None).statement == "SELECT true"


@pytest.mark.parametrize("name", ["work_mem'); DROP TABLE x; --", "Work_Mem", ""])
def test_a_setting_is_a_name(name: str) -> None:
    with pytest.raises(ValidationError):
        _check("SELECT true", name)
