"""policy.writes: which columns of which tables a scenario's own SQL writes, bodies included,
and that every scenario leaves columns of each protected table to compare."""

from __future__ import annotations

import pytest

from dbabench.evaluate.integrity import writes_of
from dbabench.policy.writes import EVERY_COLUMN, Writes
from dbabench.scenario.loader import discover


def test_statements_write_the_columns_they_set() -> None:
    writes = Writes.of([
        "UPDATE merchants SET order_count = order_count + 1, updated_at = now() WHERE id = $1",
        "UPDATE public.orders o SET (status, qty) = (s.status, 1) FROM s WHERE o.id = s.id",
        "INSERT INTO daily AS d(day, n) VALUES (current_date, 1)"
        " ON CONFLICT (day) DO UPDATE SET n = d.n + 1",
        "INSERT INTO ledger(a) VALUES (1) ON CONFLICT DO NOTHING",
        "MERGE INTO stock s USING incoming i ON s.sku = i.sku"
        " WHEN MATCHED THEN UPDATE SET qty = i.qty WHEN NOT MATCHED THEN INSERT VALUES (i.sku)",
        "WITH moved AS (DELETE FROM queue RETURNING *) SELECT count(*) FROM moved",
        "SELECT name FROM merchants",
    ])
    assert writes.written("merchants") == {"order_count", "updated_at"}
    assert writes.written("orders") == {"status", "qty"}
    assert writes.written("shop.daily") == {"n"}
    assert writes.written("ledger") == set()
    assert writes.written("stock") == {"qty"}
    assert writes.may_delete("queue") and not writes.may_delete("merchants")


def test_bodies_write_what_their_statements_and_trigger_assignments_do() -> None:
    writes = Writes.of([
        # an application function: its UPDATE runs whenever it is called
        "CREATE FUNCTION transfer(a int, b int) RETURNS void LANGUAGE plpgsql AS $$"
        " BEGIN UPDATE merchants SET balance_cents = balance_cents - 1 WHERE id = a; END $$",
        "CREATE FUNCTION bump() RETURNS void LANGUAGE sql AS"
        " 'UPDATE counters SET n = n + 1'",
        "CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$"
        " BEGIN NEW.updated_at := now(); SELECT 'x' INTO NEW.source; RETURN NEW; END $$",
        # NEW read, never assigned: writes nothing
        "CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$"
        " BEGIN INSERT INTO log VALUES (NEW.id, NEW.merchant_id); RETURN NEW; END $$",
        "CREATE FUNCTION replace_row() RETURNS trigger LANGUAGE plpgsql AS $$"
        " BEGIN NEW := ROW(1, 'x'); RETURN NEW; END $$",
        "CREATE TRIGGER r BEFORE UPDATE ON shipments FOR EACH ROW EXECUTE FUNCTION replace_row()",
        "CREATE RULE keep AS ON INSERT TO orders DO ALSO UPDATE stats SET hits = hits + 1",
    ])
    assert writes.written("merchants") == {"balance_cents", "updated_at", "source"}
    assert "n" in writes.written("counters") and "hits" in writes.written("stats")
    assert "id" not in writes.written("orders") and "merchant_id" not in writes.written("orders")
    assert EVERY_COLUMN in writes.written("shipments")
    assert EVERY_COLUMN not in writes.written("orders")


def test_code_it_cannot_read_counts_as_writing_everything() -> None:
    built = Writes.of(["DO $$ BEGIN EXECUTE 'UPDATE ' || 'merchants SET name = 1'; END $$"])
    variable = Writes.of(["CREATE FUNCTION f(q text) RETURNS void LANGUAGE plpgsql AS $$"
                          " BEGIN EXECUTE q; END $$"])
    c_code = Writes.of(["CREATE FUNCTION f() RETURNS void LANGUAGE c AS 'lib', 'f'"])
    for writes in (variable, c_code):
        assert EVERY_COLUMN in writes.written("merchants") and writes.may_delete("merchants")
    # built from constants: what they say, an UPDATE
    assert EVERY_COLUMN in built.written("merchants") and not built.may_delete("merchants")
    # a set-up's partitions, loads and role changes built by format() write no rows there
    setup = Writes.of([
        "DO $$ BEGIN EXECUTE format('CREATE TABLE p_%s PARTITION OF events', 1);"
        " EXECUTE format('ALTER TABLE payments.%I OWNER TO owner', 'x');"
        " EXECUTE format('INSERT INTO p_%s SELECT 1', 1); END $$"])
    assert setup.written("merchants") == set() and not setup.may_delete("merchants")


def test_schema_changes_and_removals() -> None:
    writes = Writes.of([
        "ALTER TABLE orders ALTER COLUMN amount TYPE numeric(10,0) USING round(amount)",
        "ALTER TABLE orders RENAME COLUMN note TO remark",
        "ALTER TABLE orders DROP COLUMN legacy",
    ])
    assert writes.written("orders") == {"amount", "note", "legacy"}
    assert not writes.may_delete("orders")
    dropped = Writes.of(["DROP TABLE IF EXISTS logs_2020, archive.logs_2019"])
    assert dropped.may_delete("logs_2019") and not dropped.may_delete("orders")
    detached = Writes.of(["ALTER TABLE logs DETACH PARTITION logs_2020"])
    assert detached.may_delete("logs") and detached.may_delete("logs_2020")
    assert not detached.may_delete("orders")
    assert Writes.of(["DROP SCHEMA staging CASCADE"]).may_delete("orders")
    # a retention job's dynamic DROP removes rows from anywhere, and updates none
    retention = Writes.of(["DO $$ BEGIN EXECUTE format('DROP TABLE %I', 'p_1'); END $$"])
    assert retention.may_delete("orders") and retention.written("orders") == set()
    assert Writes.of(["TRUNCATE staging"]).may_delete("staging")
    assert Writes.of(["this is not SQL"]).written("orders") == set()


@pytest.mark.parametrize("name", sorted(discover()))
def test_every_protected_table_keeps_columns_to_compare(name: str) -> None:
    """The content check is not switched off by what a scenario's own SQL writes: each
    protected table keeps a column nothing of the scenario writes (the columns the fixes
    write are spared: transfer-v2-deadlocks rewrites the function that moves balances)."""
    _, scenario = discover()[name]
    writes = writes_of(scenario)
    for table in scenario.spec.safety.protected.tables:
        assert EVERY_COLUMN not in writes.written(table), (name, table)
    if name == "transfer-v2-deadlocks":
        assert "balance_cents" in writes.written("merchants")
