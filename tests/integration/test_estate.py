"""The estate, built as its shared snapshot is (at volume 1: nothing checked here depends on
the volume): what issue 42 asks of it, its page, its checkout core, and no word of the harness
anywhere an agent reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from dbabench.env.postgres import APP_ROLE
from dbabench.evaluate.footprints import _DEFINITIONS, _NAMES, Manifest
from dbabench.evaluate.reference import estate as estate_doc
from dbabench.model.scenario import SqlPredicate
from dbabench.scenario.datasets import checkout, estate_at

pytestmark = pytest.mark.integration

DOC = Path(__file__).resolve().parents[2] / "docs" / "estate.md"
ESTATE = estate_at(1, estate_doc.DOC_VOLUME)
CORE = ("merchants", "orders", "price_history")


@pytest.fixture(scope="module")
def estate() -> Iterator[psycopg.Connection]:
    with estate_doc.built(ESTATE) as conn:
        yield conn


def _one(conn: psycopg.Connection, sql: str) -> object:
    row = conn.execute(sql.encode()).fetchone()
    assert row is not None
    return row[0]


def test_docs_estate_md_is_generated_from_the_estate(estate: psycopg.Connection) -> None:
    assert DOC.read_text() == estate_doc.render(estate, ESTATE), \
        "docs/estate.md is out of date: run `make catalog`"


def test_the_estate_is_the_size_of_a_company(estate: psycopg.Connection) -> None:
    tables = """SELECT count(*) FILTER (WHERE true), count(*) FILTER (WHERE NOT c.relispartition),
                       count(DISTINCT n.nspname)
                  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE c.relkind IN ('r', 'p') AND n.nspname NOT LIKE 'pg\\_%'
                   AND n.nspname <> 'information_schema'"""
    total, plain, schemas = estate.execute(tables.encode()).fetchone()  # type: ignore[misc]
    assert total >= 150 and plain >= 100 and schemas >= 6, (total, plain, schemas)
    assert _one(estate, "SELECT count(*) FROM pg_roles WHERE rolname NOT LIKE 'pg\\_%'") >= 25
    assert {"pg_trgm", "pgcrypto", "btree_gin", "pg_stat_statements"} <= {
        name for (name,) in estate.execute("SELECT extname FROM pg_extension")}
    for kind in ("pg_trigger WHERE NOT tgisinternal", "pg_policy", "pg_matviews",
                 "pg_partitioned_table"):
        assert _one(estate, f"SELECT count(*) FROM {kind}") > 0, kind  # type: ignore[operator]
    assert len(ESTATE.intended) >= 40
    assert {s.layer.split(" ")[0] for s in ESTATE.intended} == {"role", "database", "table",
                                                               "server"}
    assert any(s.role and s.database for s in ESTATE.intended)


def test_every_intended_setting_is_in_force_after_the_build(estate: psycopg.Connection) -> None:
    for setting in ESTATE.intended:
        predicate = setting.check().predicate
        assert isinstance(predicate, SqlPredicate)
        assert _one(estate, predicate.sql) is True, f"{setting.layer}: {setting.name}"


def test_the_checkout_core_is_the_checkout_dataset(estate: psycopg.Connection) -> None:
    """Every checkout fault and the checkout workload run on the estate unchanged."""
    shape = """SELECT a.attrelid::regclass::text, a.attname, format_type(a.atttypid, a.atttypmod),
                      a.attnotnull, pg_get_expr(d.adbin, d.adrelid)
                 FROM pg_attribute a LEFT JOIN pg_attrdef d
                   ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                WHERE a.attrelid IN ('public.merchants'::regclass, 'public.orders'::regclass,
                                     'public.price_history'::regclass)
                  AND a.attnum > 0 AND NOT a.attisdropped
               UNION ALL
               SELECT indrelid::regclass::text, indexrelid::regclass::text,
                      pg_get_indexdef(indexrelid), indisunique, ''
                 FROM pg_index WHERE indrelid IN ('public.merchants'::regclass,
                      'public.orders'::regclass, 'public.price_history'::regclass)
               UNION ALL
               SELECT 'rows', 'merchants', (SELECT count(*) FROM merchants)::text, true, ''
               UNION ALL SELECT 'rows', 'orders', (SELECT count(*) FROM orders)::text, true, ''
               UNION ALL SELECT 'rows', 'price_history',
                                (SELECT count(*) FROM price_history)::text, true, ''
               UNION ALL
               SELECT 'app may', t, string_agg(p, ',' ORDER BY p), true, ''
                 FROM unnest(ARRAY['merchants', 'orders', 'price_history']) t,
                      unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p
                WHERE has_table_privilege('app', 'public.' || t, p) GROUP BY t
               ORDER BY 1, 2, 3"""
    with estate_doc.built(checkout(1)) as plain:
        expected = plain.execute(shape.encode()).fetchall()
    assert estate.execute(shape.encode()).fetchall() == expected


def test_no_object_of_the_estate_names_the_harness(estate: psycopg.Connection) -> None:
    words = Manifest("estate")
    said = [f"{what}: {words.harness_words(f'{what} {text}')}"
            for sql in (_DEFINITIONS, _NAMES)
            for what, text in estate.execute(sql.encode()).fetchall()
            if words.harness_words(f"{what} {text or ''}")]
    assert said == []


def test_every_service_runs_as_its_role_without_an_error(
        estate: psycopg.Connection) -> None:
    assert len(ESTATE.services) >= 9
    failed = []
    for service in ESTATE.services:
        for job in service.jobs:
            try:
                with estate.transaction(force_rollback=True):
                    estate.execute(f"SET LOCAL ROLE {job.role or APP_ROLE}".encode())
                    for statement in job.statements:
                        estate.execute(statement.encode())
            except psycopg.Error as e:
                failed.append(f"{job.name}: {e}")
    assert failed == []


def test_services_are_many_shapes_and_name_nothing_of_the_harness() -> None:
    jobs = [job for service in ESTATE.services for job in service.jobs]
    shapes = {statement for job in jobs for statement in job.statements}
    assert len(shapes) >= 250
    assert len({s.application_name for s in ESTATE.services}) >= 9
    words = Manifest("estate")
    said = [f"{job.name}: {words.harness_words(text)}" for job in jobs
            for text in (job.name, job.application_name, *job.statements)
            if words.harness_words(text)]
    said += [f"{s.application_name}: {words.harness_words(s.description)}"
             for s in ESTATE.services if words.harness_words(s.description)]
    assert said == []
