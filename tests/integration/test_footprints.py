"""The footprint scan against a real server: a small fault, built as a golden's is, leaves its
statements in pg_stat_statements and a harness word in a comment, and its runtime step's
failure in the server log; the scan finds the first two and none once the harness has emptied
the statistics (as admission does) and the comment is mended; the log's harness records are
never served to the agent, and the gate's bookkeeping is never tracked."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
import yaml

from dbabench.env.monitoring import (EXPORTER_APPLICATION, EXPORTER_STATEMENTS, GO_RUNTIME,
                                     exporter_argv, exporter_dsn)
from dbabench.env.postgres import Credentials, PostgresInstance
from dbabench.env.processes import ProcessTable, free_port
from dbabench.evaluate.footprints import Manifest, scan
from dbabench.evaluate.predicates import Probe
from dbabench.faults.steps import apply_steps, create_database
from dbabench.model.footprint import FootprintScan, Kind, Place, Source
from dbabench.model.scenario import Scenario, SqlStep
from dbabench.scenario.datasets import Dataset
from dbabench.scenario.loader import resolve
from dbabench.runner.assembly import server_access
from dbabench.tools.context import ToolContext
from dbabench.tools.logs import pg_records, served_postgresql_lines
from shared_instance import SharedInstanceControl

FAULT = ("CREATE SCHEMA orders_v2; GRANT USAGE ON SCHEMA orders_v2 TO app;"
         " ALTER ROLE app SET search_path = orders_v2;"
         " COMMENT ON SCHEMA orders_v2 IS 'dbabench fault: hides the tables'")
RUNTIME_FAILURE = "SELECT count(*) FROM orders_v2.orders"
TINY = Dataset(name="tiny", version=1, statements=(
    "CREATE TABLE orders(id int PRIMARY KEY, merchant_id int NOT NULL)",
    "INSERT INTO orders SELECT g, g % 7 FROM generate_series(1, 500) g",
    "VACUUM ANALYZE"))


def _scenario() -> Scenario:
    """A shipped scenario with this small fault in place of its own."""
    path, _ = resolve("role-search-path-hides-tables")
    manifest = yaml.safe_load(path.read_text())
    manifest["spec"]["fault"]["persistent"] = [{"action": "sql", "sql": FAULT}]
    manifest["spec"]["intended"] = []
    return Scenario.model_validate(manifest)


@pytest.fixture(scope="module")
def server(scratch_root: Path) -> Iterator[PostgresInstance]:
    """A server of its own: the scan reads the whole of it, and the test empties its
    statistics."""
    (scratch_root / "footprints").mkdir()
    procs = ProcessTable(scratch_root / "footprints")
    instance = PostgresInstance(scratch_root / "footprints", Credentials.generate(),
                                database="app")
    instance.initdb({}, procs)
    instance.start(procs)
    try:
        yield instance
    finally:
        procs.stop_all()


def _found(result: FootprintScan, place: Place) -> list[str]:
    return [f"{f.source.value}: {f.matched}" for f in result.open_footprints
            if f.place == place]


def test_the_scan_finds_the_set_up_and_nothing_once_it_is_cleaned(
        server: PostgresInstance, tmp_path: Path) -> None:
    scenario = _scenario()
    create_database(server, TINY)
    apply_steps(server, scenario.spec.fault.persistent)
    # a runtime step that fails as planned: the server logs it, with its statement
    apply_steps(server, [SqlStep(action="sql", sql=RUNTIME_FAILURE, expect_error="42P01")])
    business = tmp_path / "business.jsonl"
    business.write_text('{"ts": "2026-12-07T00:00:00+00:00", "service": "checkout-worker",'
                        ' "operation": "place_order", "outcome": "ok"}\n')
    ctx = ToolContext(primary=server_access(server, server.log_dir,
                                            SharedInstanceControl(server)),  # type: ignore[arg-type]
                      business_log=business, prometheus_url=f"http://127.0.0.1:{free_port()}")
    probe = Probe.of(server, business_log=business, pg_log_dir=server.log_dir)

    before = asyncio.run(scan(scenario, probe, ctx, incident="INC-TEST"))
    statements = _found(before, Place.STATEMENTS)
    assert any(s.startswith("fault: ALTER ROLE app SET search_path") for s in statements), \
        statements
    assert "setup: VACUUM ANALYZE" in statements  # the dataset's last statement
    assert _found(before, Place.DEFINITIONS) == ["harness: dbabench, fault"]
    # the fault's stored setting is the incident, not a footprint
    assert [f.kind for f in before.findings if f.place == Place.ROLE_SETTINGS] == [Kind.INCIDENT]
    # the runtime step's failure is in the log, but as the harness's session, which read_log
    # does not serve
    assert [r for r in pg_records(server.log_dir)
            if r.get("application_name") == "dbabench-fault"
            and RUNTIME_FAILURE in str(r.get("statement"))]
    assert not [ln for ln in served_postgresql_lines(server.log_dir) if "dbabench" in ln]
    assert not _found(before, Place.SERVER_LOG)
    assert not [f for f in before.findings if f.source == Source.CHECK]

    # the author mends the comment; the harness empties the statistics as admission ends
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute("COMMENT ON SCHEMA orders_v2 IS 'cutover target of release 7.4'")
    asyncio.run(probe.forget_statements())
    # the gate's bookkeeping during the agent's turn is not tracked either
    with psycopg.connect(ctx.primary.observer_dsn, autocommit=True) as conn:
        conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name <> 'dba-agent'")
    after = asyncio.run(scan(scenario, probe, ctx, incident="INC-TEST"))
    assert after.open_footprints == [], after.open_footprints
    with psycopg.connect(server.dsn()) as conn:
        assert conn.execute("SELECT count(*) FROM pg_stat_statements"
                            " WHERE query LIKE '%FROM pg_stat_activity WHERE application_name%'"
                            ).fetchone() == (0,)
    assert {p.place for p in after.places if p.seen} >= {
        Place.ACTIVITY, Place.SERVER_LOG, Place.BUSINESS_LOG, Place.SETTINGS,
        Place.DEFINITIONS, Place.NAMES, Place.TABLE_STATS, Place.SERVER_STATS}


def test_the_monitoring_statements_are_what_the_exporter_runs(
        server: PostgresInstance, scratch_root: Path) -> None:
    """EXPORTER_STATEMENTS is what the scan takes for monitoring: held here to what the
    installed postgres_exporter runs, both ways (a statement it stops running would excuse a
    check's; one it starts running would be taken for the harness's)."""
    (scratch_root / "exporter").mkdir()
    procs = ProcessTable(scratch_root / "exporter")
    port = free_port()
    # in database postgres: the other test makes app, and may run in another worker
    with psycopg.connect(server.dsn(database="postgres"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        conn.execute("SELECT pg_stat_statements_reset()")
    try:
        dsn = server.dsn(database="postgres", application_name=EXPORTER_APPLICATION)
        procs.spawn("exporter", exporter_argv(f"127.0.0.1:{port}"),
                    env={"DATA_SOURCE_NAME": exporter_dsn(dsn), **GO_RUNTIME},
                    log=scratch_root / "exporter" / "exporter.log")
        for _ in range(100):
            try:
                metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
                if "pg_up 1" in metrics:
                    break
            except httpx.TransportError:
                pass
            procs.pause(0.1, "waiting for the exporter")
        else:
            pytest.fail("postgres_exporter did not come up")
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)  # a second scrape: all of it
    finally:
        procs.stop_all()
    with psycopg.connect(server.dsn(database="postgres"), autocommit=True) as conn:
        ran = [q for (q,) in conn.execute(
            "SELECT s.query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid"
            " WHERE d.datname = 'postgres' AND s.query NOT LIKE '%pg_stat_statements_reset%'"
            " AND s.query NOT LIKE 'CREATE EXTENSION%'")]
    # compared by shape (constants aside), not as the scan matches: its substring rule takes
    # pg_stat_database_conflicts' statement for pg_stat_database's
    listed, seen = Manifest("monitoring"), Manifest("exporter")
    for statement in EXPORTER_STATEMENTS:
        listed.add(Source.WORKLOAD, statement)
    for statement in ran:
        seen.add(Source.WORKLOAD, statement)
    listed_shapes, seen_shapes = ({k.shape: k.text for k in m.known} for m in (listed, seen))
    assert sorted(seen_shapes.keys() - listed_shapes.keys()) == [], \
        "the exporter runs statements EXPORTER_STATEMENTS lacks"
    assert sorted(listed_shapes.keys() - seen_shapes.keys()) == [], \
        "EXPORTER_STATEMENTS lists what the exporter no longer runs"
