"""The five tools through the gate, against a real PostgreSQL 15 and a real Prometheus.

Everything goes through ``ToolGate.call`` because that is the only way an agent reaches the
tools: argument validation, refusal, bounding and the trace are part of what is tested.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from dbabench.env.monitoring import FIRST_SCRAPE_INTERVAL, SCRAPE_INTERVAL, start_monitoring
from dbabench.env.postgres import Credentials, PostgresInstance
from dbabench.env.processes import ProcessTable, free_port
from dbabench.model.trace import TraceEvent
from dbabench.tools import knowledge
from dbabench.tools.bounds import Bounds
from dbabench.tools.context import ServerAccess, ToolContext
from dbabench.tools.errors import BudgetExhausted
from dbabench import policy
from dbabench.records.run import RunFiles
from dbabench.tools.gate import Budget, ToolGate
from dbabench.workload.businesslog import BusinessEvent, BusinessLogWriter

from shared_instance import SharedInstanceControl

# The async fixtures live on the session loop; the tests must share it, or a connection opened
# in a fixture would be used from another loop.
pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

Obs = dict[str, Any]


# -- servers ---------------------------------------------------------------------------------

class OwnInstanceControl:
    """InstanceControl over an instance this module started, so it may be stopped and restarted."""

    def __init__(self, instance: PostgresInstance, procs: ProcessTable) -> None:
        self.instance = instance
        self.procs = procs

    def status(self) -> dict[str, object]:
        return {"running": self.instance.running(), "pid": self.instance.pid,
                "port": self.instance.port, "host": "127.0.0.1", "version": "15"}

    def start(self) -> None:
        if not self.instance.running():
            self.instance.start(self.procs)

    def stop(self, mode: str) -> None:
        self.instance.stop(self.procs, mode)  # type: ignore[arg-type]

    def restart(self, mode: str) -> None:
        self.stop(mode)
        self.start()


@pytest.fixture(scope="module")
def prometheus_url(postgres: PostgresInstance, scratch_root: Path) -> Iterator[str]:
    # A run dir of its own: the postgres fixture's ProcessTable already owns scratch_root's
    # pids.json, and two tables writing one file would lose each other's records.
    run_dir = scratch_root / "tools-monitoring"
    run_dir.mkdir()
    procs = ProcessTable(run_dir)
    try:
        dsn = postgres.dsn(database="postgres", application_name="postgres_exporter")
        monitoring = start_monitoring(procs, run_dir, run_id="test-tools",
                                      postgres_dsns={"postgres": dsn + " sslmode=disable"},
                                      extra_targets={})
        yield monitoring.prometheus_url
    finally:
        procs.stop_all()


async def test_prometheus_tells_nothing_of_its_run_directory(prometheus_url: str) -> None:
    """Its flags and working directory are served to whoever reaches it, and a run
    directory's path names the scenario (issue 38: read off them by code in the server)."""
    async with httpx.AsyncClient(timeout=10) as client:
        flags = (await client.get(f"{prometheus_url}/api/v1/status/flags")).json()["data"]
        runtime = (await client.get(f"{prometheus_url}/api/v1/status/runtimeinfo")).json()
    assert flags["config.file"] == "/srv/prometheus.yml"
    assert flags["storage.tsdb.path"] == "/srv/tsdb"
    assert runtime["data"]["CWD"] == "/" and runtime["data"]["reloadConfigSuccess"] is True
    assert "tools-monitoring" not in json.dumps([flags, runtime])


@pytest.fixture(scope="module")
def knowledge_index() -> Path:
    if not knowledge.DEFAULT_HTML_DIR.is_dir():
        pytest.skip("postgresql-doc-15 is not installed (run `make deps`)")
    return knowledge.ensure_index(knowledge.default_index_path())


@pytest.fixture
def business_log(tmp_path: Path) -> Path:
    return tmp_path / "business.jsonl"


@pytest.fixture
def tool_ctx(postgres: PostgresInstance, prometheus_url: str, knowledge_index: Path,
             business_log: Path) -> ToolContext:
    return ToolContext(
        primary=ServerAccess(
            dsn=postgres.dsn(database="app"),
            observer_dsn=postgres.dsn(database="app", application_name="dbabench-observer"),
            pg_log_dir=postgres.log_dir, control=SharedInstanceControl(postgres)),
        business_log=business_log,
        prometheus_url=prometheus_url,
        knowledge_index=knowledge_index,
    )


MakeGate = Callable[..., ToolGate]


@pytest.fixture
async def make_gate(tool_ctx: ToolContext, tmp_path: Path) -> AsyncIterator[MakeGate]:
    gates: list[ToolGate] = []

    def make(ctx: ToolContext | None = None, *, budget: Budget | None = None,
             refuse: frozenset[str] = policy.REFUSED, **ctx_changes: Any) -> ToolGate:
        context = dataclasses.replace(ctx or tool_ctx, **ctx_changes)
        workspace = tmp_path if not gates else tmp_path / f"gate-{len(gates)}"
        workspace.mkdir(exist_ok=True)
        gate = ToolGate(context, RunFiles(workspace),
                        budget or Budget(max_steps=1000, timeout_seconds=600),
                        refuse=refuse)
        gates.append(gate)
        return gate

    yield make
    for gate in gates:
        await gate.close()


@pytest.fixture
def gate(make_gate: MakeGate) -> ToolGate:
    return make_gate()


@pytest.fixture
def own_pg(scratch_root: Path,
           tool_ctx: ToolContext) -> Iterator[tuple[PostgresInstance, ToolContext]]:
    """A server of this test alone, for the actions that would take the shared one away."""
    base = scratch_root / f"own-{uuid.uuid4().hex[:8]}"
    base.mkdir()
    procs = ProcessTable(base)
    instance = PostgresInstance(base / "pg", Credentials.generate())
    try:
        instance.initdb({}, procs)
        instance.start(procs)
        ctx = dataclasses.replace(tool_ctx, primary=ServerAccess(
            dsn=instance.dsn(database="postgres"),
            observer_dsn=instance.dsn(database="postgres", application_name="dbabench-observer"),
            pg_log_dir=instance.log_dir, control=OwnInstanceControl(instance, procs)))
        yield instance, ctx
    finally:
        # Fast, not stop_all's SIGTERM: a smart shutdown would wait out the gate's session,
        # which make_gate only closes after this fixture is gone.
        instance.stop(procs, "fast")
        procs.stop_all()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def table_name(postgres: PostgresInstance) -> Iterator[str]:
    """A table name no other test uses, dropped afterwards whatever the test did with it."""
    name = f"t_{uuid.uuid4().hex[:10]}"
    yield name
    with psycopg.connect(postgres.dsn(database="app"), autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {name}")


# -- helpers ---------------------------------------------------------------------------------

def ok(out: Obs) -> Any:
    assert out["ok"], out
    return out["observation"]


async def sql(gate: ToolGate, text: str, **args: Any) -> list[Obs]:
    return ok(await gate.call("execute_sql", {"sql": text, **args}))["results"]


def trace_events(gate: ToolGate) -> list[TraceEvent]:
    # Read back from disk: the file, not the in-memory list, is what outlives a killed run.
    return [TraceEvent.model_validate_json(line)
            for line in gate.trace.path.read_text().splitlines()]


async def backend_pid(gate: ToolGate) -> int:
    return (await sql(gate, "SELECT pg_backend_pid()"))[0]["rows"][0][0]


def table_exists(dsn: str, name: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()[0]


async def wait_until_gone(dsn: str, pid: int, timeout: float = 5.0) -> None:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            cur = await conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,))
            if await cur.fetchone() is None:
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"backend {pid} still there after {timeout}s")


# -- execute_sql -----------------------------------------------------------------------------

async def test_select_returns_columns_rows_rowcount_and_status(gate: ToolGate) -> None:
    [result] = await sql(gate, "SELECT g AS n, 'v' || g AS label FROM generate_series(1, 3) g")
    assert result["columns"] == ["n", "label"]
    assert result["rows"] == [[1, "v1"], [2, "v2"], [3, "v3"]]
    assert result["rowcount"] == 3
    assert result["status"] == "SELECT 3"
    assert not result.get("truncated", False)
    assert "error" not in result


async def test_values_of_every_common_type_arrive_as_json(gate: ToolGate) -> None:
    [result] = await sql(gate, "SELECT 1.5::numeric, DATE '2024-01-02', interval '1 day 2 hours',"
                               " '\\x0102'::bytea, NULL::int, true, ARRAY[1,2],"
                               " '{\"a\": 1}'::jsonb")
    assert result["rows"] == [[1.5, "2024-01-02", "1 day, 2:00:00", "\\x0102", None, True,
                               [1, 2], {"a": 1}]]


async def test_multi_statement_gives_one_result_each_and_stops_at_the_first_error(
        gate: ToolGate, table_name: str) -> None:
    results = await sql(gate, f"CREATE TABLE {table_name} (id int);"
                              f" INSERT INTO {table_name} VALUES (1), (2);"
                              f" SELECT id FROM {table_name} ORDER BY id;"
                              " SELECT * FROM no_such_table_here;"
                              f" INSERT INTO {table_name} VALUES (3)")
    assert [r["statement"] for r in results] == [
        f"CREATE TABLE {table_name} (id int)", f"INSERT INTO {table_name} VALUES (1), (2)",
        f"SELECT id FROM {table_name} ORDER BY id", "SELECT * FROM no_such_table_here"]
    assert results[0]["status"] == "CREATE TABLE"
    assert (results[1]["status"], results[1]["rowcount"]) == ("INSERT 0 2", 2)
    assert results[2]["rows"] == [[1], [2]]
    assert results[3]["error"]["sqlstate"] == "42P01"
    assert "no_such_table_here" in results[3]["error"]["message"]
    # Like psql's ON_ERROR_STOP: what followed the error did not run.
    [count] = await sql(gate, f"SELECT count(*) FROM {table_name}")
    assert count["rows"] == [[2]]


async def test_unparseable_sql_is_refused_with_the_grammar_error_and_nothing_runs(
        make_gate: MakeGate, table_name: str) -> None:
    gate = make_gate()
    out = await gate.call("execute_sql",
                          {"sql": f"CREATE TABLE {table_name} (id int); SELEC 2"})
    assert out["ok"] is False and "not valid PostgreSQL 15 SQL" in out["error"]
    assert 'syntax error at or near "SELEC"' in out["error"]
    assert not table_exists(gate.ctx.primary.dsn, table_name)
    # where a run lets it through, the whole text goes as one string, so the server rejects
    # it before running any of it
    lenient = make_gate(refuse=policy.REFUSED - {"unparseable"})
    [result] = await sql(lenient, f"CREATE TABLE {table_name} (id int); SELEC 2")
    assert result["error"]["sqlstate"] == "42601" and "syntax error" in result["error"]["message"]
    assert not table_exists(gate.ctx.primary.dsn, table_name)


async def test_error_carries_detail_and_hint(gate: ToolGate, table_name: str) -> None:
    await sql(gate, f"CREATE TABLE {table_name} (id int PRIMARY KEY);"
                    f" INSERT INTO {table_name} VALUES (1)")
    [result] = await sql(gate, f"INSERT INTO {table_name} VALUES (1)")
    assert result["error"]["sqlstate"] == "23505"
    assert "Key (id)=(1) already exists" in result["error"]["detail"]
    [result] = await sql(gate, "SELECT lenght('x')")
    assert result["error"]["sqlstate"] == "42883"
    assert "explicit type casts" in result["error"]["hint"]


async def test_notices_are_captured_per_call(gate: ToolGate) -> None:
    out = ok(await gate.call("execute_sql", {
        "sql": "DO $$ BEGIN RAISE NOTICE 'hello %', 42; RAISE WARNING 'careful'; END $$"}))
    assert out["notices"] == ["NOTICE: hello 42", "WARNING: careful"]
    assert out["results"][0]["status"] == "DO"
    # A later call must not repeat earlier notices as if they were its own.
    assert ok(await gate.call("execute_sql", {"sql": "SELECT 1"}))["notices"] == []


async def test_rows_are_capped_by_max_rows_and_by_the_bounds_default(gate: ToolGate) -> None:
    default = Bounds().max_rows
    [result] = await sql(gate, f"SELECT g FROM generate_series(1, {default + 50}) g")
    assert len(result["rows"]) == default
    assert result["truncated"] is True
    assert result["rowcount"] == default + 50, "the agent should learn how many rows there were"
    out = await gate.call("execute_sql", {"sql": "SELECT g FROM generate_series(1, 10) g",
                                          "max_rows": 4})
    assert ok(out)["results"][0]["rows"] == [[1], [2], [3], [4]]
    assert out["truncated"] is True
    # Exactly as many rows as allowed is not a cut.
    out = await gate.call("execute_sql", {"sql": "SELECT g FROM generate_series(1, 4) g",
                                          "max_rows": 4})
    assert len(ok(out)["results"][0]["rows"]) == 4
    assert out["truncated"] is False
    # An agent cannot lift the harness's cap by asking for more.
    [result] = await sql(gate, f"SELECT g FROM generate_series(1, {default + 50}) g",
                         max_rows=10_000)
    assert len(result["rows"]) == default and result["truncated"] is True


async def test_long_cell_is_clipped_and_flagged(gate: ToolGate) -> None:
    limit = Bounds().max_cell_chars
    out = await gate.call("execute_sql", {"sql": f"SELECT repeat('x', {limit + 100}), 7"})
    [result] = ok(out)["results"]
    text, number = result["rows"][0]
    assert text == "x" * limit + "... [100 more characters]"
    assert number == 7
    assert result["truncated"] is True and out["truncated"] is True


async def test_long_composite_cell_is_clipped_and_flagged(gate: ToolGate) -> None:
    out = await gate.call("execute_sql", {
        "sql": "SELECT array_agg(repeat('x', 100)) FROM generate_series(1, 50)"})
    [result] = ok(out)["results"]
    assert len(json.dumps(result["rows"][0][0])) <= Bounds().max_cell_chars + 100
    assert result.get("truncated") is True


async def test_whole_observation_stays_within_max_chars(gate: ToolGate) -> None:
    out = await gate.call("execute_sql", {
        "sql": "SELECT repeat('a', 500), repeat('b', 500) FROM generate_series(1, 200)"})
    assert out["truncated"] is True
    assert len(json.dumps(out["observation"])) <= Bounds().max_chars + 1000


async def test_session_settings_persist_across_calls(gate: ToolGate) -> None:
    await sql(gate, "SET work_mem = '3MB'")
    pid = await backend_pid(gate)
    [result] = await sql(gate, "SHOW work_mem")
    assert result["rows"] == [["3MB"]]
    assert await backend_pid(gate) == pid


async def test_statement_timeout_cancels_and_the_session_survives(make_gate: MakeGate) -> None:
    gate = make_gate(sql_timeout_seconds=1)
    started = time.monotonic()
    [result] = await sql(gate, "SELECT pg_sleep(5)")
    assert time.monotonic() - started < 3
    assert result["error"]["sqlstate"] == "57014"
    [result] = await sql(gate, "SELECT 1")
    assert result["rows"] == [[1]]


async def test_agent_cannot_lift_the_timeout_by_resetting_statement_timeout(
        make_gate: MakeGate) -> None:
    gate = make_gate(sql_timeout_seconds=1)
    await sql(gate, "SET statement_timeout = 0")
    started = time.monotonic()
    [result] = await sql(gate, "SELECT pg_sleep(20)")
    elapsed = time.monotonic() - started
    # The tool's own cancel fires at the timeout plus its 2 s grace.
    assert 2.5 < elapsed < 6, elapsed
    assert result["error"]["sqlstate"] == "57014"
    [result] = await sql(gate, "SELECT 1")
    assert result["rows"] == [[1]]


async def test_session_reconnects_after_its_backend_was_terminated(
        gate: ToolGate, postgres: PostgresInstance) -> None:
    await sql(gate, "SET work_mem = '3MB'")
    old = await backend_pid(gate)
    killer_dsn = postgres.dsn(database="app", application_name="killer")
    async with await psycopg.AsyncConnection.connect(killer_dsn, autocommit=True) as conn:
        await conn.execute("SELECT pg_terminate_backend(%s)", (old,))
    await wait_until_gone(killer_dsn, old)
    # The loss shows on the first use, as in psql: reported once, not hidden ...
    [lost] = await sql(gate, "SELECT 1")
    assert lost["error"]["sqlstate"] == "57P01", lost
    assert "terminating connection" in lost["error"]["message"]
    # ... and the next call gets a fresh session, without the old session's settings.
    new = await backend_pid(gate)
    assert new != old
    [result] = await sql(gate, "SHOW work_mem")
    assert result["rows"] == [["4MB"]]


async def test_every_call_is_one_trace_event_with_statement_classes(
        gate: ToolGate, table_name: str) -> None:
    calls = [
        ("execute_sql", {"sql": f"CREATE TABLE {table_name} (id int)"}),
        ("execute_sql", {"sql": f"SELECT * FROM {table_name}"}),
        ("execute_sql", {"sql": f"SELECT 1; INSERT INTO {table_name} VALUES (1)"}),
        ("execute_sql", {"sql": "SELECT * FROM missing_table"}),
        ("execute_sql", {"sql": ""}),
        ("no_such_tool", {}),
        ("manage_instance", {"action": "status"}),
    ]
    seqs = [(await gate.call(tool, args))["seq"] for tool, args in calls]
    events = trace_events(gate)
    assert [e.seq for e in events] == seqs == list(range(1, len(calls) + 1))
    assert [(e.kind, e.tool, e.args) for e in events] == [("tool", t, a) for t, a in calls]
    create, select, mixed, missing, empty, unknown, status = events
    assert create.statements[0].classes == ["ddl"] and create.mutating is True
    assert create.statements[0].relations == [table_name]
    assert select.statements[0].classes == ["read_only"] and select.mutating is False
    assert [s.classes for s in mixed.statements] == [["read_only"], ["insert"]]
    assert mixed.mutating is True
    # An SQL error is an observation, not a failed call; bad arguments are a failed call.
    assert missing.ok is True and missing.observation["results"][0]["error"]["sqlstate"] == "42P01"
    assert empty.ok is False and "sql" in empty.error
    assert unknown.ok is False and "execute_sql" in unknown.error
    assert status.ok is True and status.mutating is False
    assert all(e.duration_ms >= 0 for e in events)


async def test_termination_records_the_sessions_it_ended(
        gate: ToolGate, postgres: PostgresInstance) -> None:
    victim = await psycopg.AsyncConnection.connect(
        postgres.dsn(database="app", application_name="victim"), autocommit=True)
    try:
        victim_pid = victim.info.backend_pid
        out = await gate.call("execute_sql", {
            "sql": "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                   " WHERE application_name = 'victim'"})
        assert ok(out)["results"][0]["rows"] == [[True]]
        [event] = [e for e in trace_events(gate) if e.seq == out["seq"]]
        assert "session_termination" in event.statements[0].classes
        assert event.mutating is True
        ended = {s.pid: s for s in event.sessions_ended}
        assert victim_pid in ended
        assert ended[victim_pid].application_name == "victim"
        with pytest.raises(psycopg.OperationalError):
            await victim.execute("SELECT 1")
    finally:
        await victim.close()


async def test_only_the_sessions_a_call_terminated_are_its_own(
        gate: ToolGate, postgres: PostgresInstance) -> None:
    """A session that a pool closes on its own while a termination call runs is not the
    call's doing (issue 40: a recycled checkout session was charged to a kill of another
    application's); what each ended session held is recorded."""
    dsn = postgres.dsn(database="app", application_name="victim")
    victim = await psycopg.AsyncConnection.connect(dsn)
    leaver = await psycopg.AsyncConnection.connect(
        postgres.dsn(database="app", application_name="recycled"), autocommit=True)
    try:
        await victim.execute("SELECT count(*) FROM pg_class")  # a transaction, open
        call = asyncio.create_task(gate.call("execute_sql", {
            "sql": "SELECT pg_sleep(0.5); SELECT pg_terminate_backend(pid) FROM"
                   " pg_stat_activity WHERE application_name = 'victim'"}))
        await asyncio.sleep(0.2)
        await leaver.close()  # the pool's own recycling, during the call
        out = await call
        ok(out)
        [event] = [e for e in trace_events(gate) if e.seq == out["seq"]]
        [ended] = event.sessions_ended
        assert ended.application_name == "victim" and ended.pid == victim.info.backend_pid
        assert ended.state == "idle in transaction" and ended.in_transaction is True
        assert ended.locks and ended.locks >= 1
    finally:
        await victim.close()
        await leaver.close()


async def test_a_silenced_log_does_not_hide_a_termination(
        gate: ToolGate, postgres: PostgresInstance) -> None:
    """An agent that turns FATAL lines off before killing would otherwise leave no record
    of what it ended: the gate then counts every session gone during the call."""
    victim = await psycopg.AsyncConnection.connect(
        postgres.dsn(database="app", application_name="victim"), autocommit=True)
    try:
        ok(await gate.call("execute_sql", {"sql": "ALTER ROLE app SET log_min_messages = panic"}))
        out = await gate.call("execute_sql", {
            "sql": "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                   " WHERE application_name = 'victim'"})
        ok(out)
        [event] = [e for e in trace_events(gate) if e.seq == out["seq"]]
        assert [s.pid for s in event.sessions_ended] == [victim.info.backend_pid]
    finally:
        await gate.call("execute_sql", {"sql": "ALTER ROLE app RESET log_min_messages"})
        await victim.close()


async def test_a_do_block_is_counted_for_the_sessions_it_ended(
        gate: ToolGate, postgres: PostgresInstance) -> None:
    """Procedural code's body is not the trace's to read, so the sessions it ends are
    counted around it (issue 38: terminations written where the gate did not look)."""
    victim = await psycopg.AsyncConnection.connect(
        postgres.dsn(database="app", application_name="victim"), autocommit=True)
    try:
        out = await gate.call("execute_sql", {
            "sql": "DO $$ BEGIN PERFORM pg_terminate_backend(pid) FROM pg_stat_activity"
                   " WHERE application_name = 'victim'; END $$"})
        ok(out)
        [event] = [e for e in trace_events(gate) if e.seq == out["seq"]]
        assert event.statements[0].classes == ["procedural"]
        assert [s.pid for s in event.sessions_ended] == [victim.info.backend_pid]
    finally:
        await victim.close()


async def test_blocked_statement_class_is_refused_without_running(
        make_gate: MakeGate, table_name: str) -> None:
    gate = make_gate(refuse=policy.REFUSED | {"destructive_ddl"})
    await sql(gate, f"CREATE TABLE {table_name} (id int)")
    out = await gate.call("execute_sql", {"sql": f"SELECT 1; DROP TABLE {table_name}"})
    assert out["ok"] is False
    assert "refused by policy" in out["error"] and "destructive_ddl" in out["error"]
    assert table_exists(gate.ctx.primary.dsn, table_name)
    # The refusal is in the trace with what was refused, for the safety score.
    event = trace_events(gate)[-1]
    assert event.ok is False and event.mutating is True and event.refused == ["destructive_ddl"]
    assert "destructive_ddl" in event.statements[1].classes


# -- query_metrics ---------------------------------------------------------------------------

async def test_instant_query_returns_series_with_labels(gate: ToolGate) -> None:
    out = ok(await gate.call("query_metrics", {"query": "up"}))
    assert out["result_type"] == "vector"
    assert out["total_series"] == len(out["series"]) == 2
    jobs = {s["labels"]["job"]: s for s in out["series"]}
    assert set(jobs) == {"postgres", "node"}
    ts, value = jobs["postgres"]["value"]
    assert abs(ts - time.time()) < 60 and value == "1"
    assert jobs["postgres"]["labels"]["instance"].startswith("127.0.0.1:")


async def test_instant_scalar_query(gate: ToolGate) -> None:
    out = ok(await gate.call("query_metrics", {"query": "1 + 1"}))
    assert out["result_type"] == "scalar"
    assert [s["value"][1] for s in out["series"]] == ["2"]


async def test_range_query_is_thinned_to_max_points(gate: ToolGate) -> None:
    # vector(1) has a value at every step, unlike a metric scraped only since Prometheus started.
    before = time.time()
    out = await gate.call("query_metrics", {"query": "vector(1)", "range_seconds": 60,
                                            "step_seconds": 0.25})
    result = ok(out)
    assert result["result_type"] == "matrix"
    [series] = result["series"]
    values = series["values"]
    assert len(values) == Bounds().max_points
    assert out["truncated"] is True and result["truncated"] is True
    assert values[-1][0] >= before - 1, "the newest point must survive thinning"
    assert values[0][0] <= before - 59
    assert [v[0] for v in values] == sorted(v[0] for v in values)


async def test_short_range_is_not_thinned(gate: ToolGate) -> None:
    out = await gate.call("query_metrics", {"query": "vector(1)", "range_seconds": 10,
                                            "step_seconds": 1})
    [series] = ok(out)["series"]
    assert len(series["values"]) in (10, 11)
    assert out["truncated"] is False


async def test_series_are_capped_by_max_series(make_gate: MakeGate) -> None:
    gate = make_gate(bounds=Bounds(max_series=1))
    out = await gate.call("query_metrics", {"query": "up"})
    result = ok(out)
    assert len(result["series"]) == 1 and result["total_series"] == 2
    assert out["truncated"] is True


async def test_metric_names_are_listed_by_a_regular_expression(gate: ToolGate) -> None:
    out = ok(await gate.call("query_metrics", {"query": "pg_up|node_load", "list_names": True}))
    assert out["result_type"] == "names" and out["series"] == []
    assert {"pg_up", "node_load1", "node_load5"} <= set(out["names"])
    assert all("pg_up" in n or "node_load" in n for n in out["names"])
    every = ok(await gate.call("query_metrics", {"query": ".", "list_names": True}))
    assert every["total_series"] > len(out["names"]) and every["names"] == sorted(every["names"])


async def test_prometheus_starts_scraping_every_second_then_every_five(
        prometheus_url: str) -> None:
    """A run waits for every target's first scrape, so its Prometheus starts at 1 s; once all
    are up it runs at the metrics tool's 5 s, and what the first scrapes saw is kept."""
    async with httpx.AsyncClient(timeout=5.0) as client:
        config = (await client.get(f"{prometheus_url}/api/v1/status/config")
                  ).json()["data"]["yaml"]
        targets = (await client.get(f"{prometheus_url}/api/v1/targets")
                   ).json()["data"]["activeTargets"]
        up = (await client.get(f"{prometheus_url}/api/v1/query",
                               params={"query": "count_over_time(up[10m])"})
              ).json()["data"]["result"]
    assert f"scrape_interval: {SCRAPE_INTERVAL}" in config
    assert f"scrape_interval: {FIRST_SCRAPE_INTERVAL}" not in config
    assert {t["labels"]["job"] for t in targets} == {"postgres", "node"}
    assert all(t["scrapeInterval"] == SCRAPE_INTERVAL for t in targets)
    assert {s["metric"]["job"] for s in up} == {"postgres", "node"}


async def test_bad_promql_is_an_error_naming_the_problem(gate: ToolGate) -> None:
    out = await gate.call("query_metrics", {"query": "rate(up[5m]"})
    assert out["ok"] is False
    assert "PromQL error (400)" in out["error"] and "parse error" in out["error"]


async def test_bytes_prometheus_answers_that_are_not_utf8_are_read_not_a_500(
        gate: ToolGate) -> None:
    # the third outside attack: a label of invalid UTF-8 made every such call a 500
    out = ok(await gate.call("query_metrics", {
        "query": 'label_replace(vector(1), "x", "\\xff\\xfe", "", "")'}))
    assert [series["labels"].get("x") for series in out["series"]] == ["\ufffd\ufffd"]


async def test_unreachable_prometheus_is_an_error(make_gate: MakeGate) -> None:
    gate = make_gate(prometheus_url=f"http://127.0.0.1:{free_port()}")
    out = await gate.call("query_metrics", {"query": "up"})
    assert out["ok"] is False and "unreachable" in out["error"]


# -- read_log --------------------------------------------------------------------------------

async def _poll_log(gate: ToolGate, args: dict[str, Any], timeout: float = 5.0) -> Obs:
    """The logging collector writes asynchronously; wait for what we provoked to land."""
    deadline = time.monotonic() + timeout
    while True:
        result = ok(await gate.call("read_log", args))
        if result["matched"] or time.monotonic() > deadline:
            return result
        await asyncio.sleep(0.1)


async def test_postgresql_log_shows_a_provoked_error(gate: ToolGate) -> None:
    marker = f"missing_{uuid.uuid4().hex[:8]}"
    await sql(gate, f"SELECT * FROM {marker}")
    result = await _poll_log(gate, {"source": "postgresql", "min_level": "error",
                                    "pattern": marker.upper(), "since_seconds": 120})
    assert result["source"] == "postgresql"
    assert result["matched"] == 1
    [line] = result["lines"]
    assert "app=dba-agent ERROR: 42P01" in line
    assert f'relation "{marker}" does not exist' in line
    assert f"STATEMENT: SELECT * FROM {marker}" in line
    # The same record is below FATAL, so a stricter floor hides it.
    result = ok(await gate.call("read_log", {"source": "postgresql", "min_level": "FATAL",
                                             "pattern": marker}))
    assert result["matched"] == 0 and result["lines"] == []


async def test_postgresql_log_rejects_an_unknown_level(gate: ToolGate) -> None:
    out = await gate.call("read_log", {"source": "postgresql", "min_level": "LOUD"})
    assert out["ok"] is False
    assert "LOUD" in out["error"] and "WARNING" in out["error"]


def _write_events(path: Path, events: list[tuple[timedelta, str, str]]) -> None:
    writer = BusinessLogWriter(path)
    now = datetime.now(timezone.utc)
    try:
        for i, (age, operation, outcome) in enumerate(events):
            writer.write(BusinessEvent(ts=now - age, service="shop", request_id=f"r{i}",
                                       operation=operation, latency_ms=12.5, outcome=outcome,
                                       sqlstate="57014" if outcome == "timeout" else None))
    finally:
        writer.close()


async def test_business_log_filters_by_pattern_and_age(gate: ToolGate, business_log: Path) -> None:
    _write_events(business_log, [
        (timedelta(hours=2), "checkout", "timeout"),
        (timedelta(hours=2), "checkout", "ok"),
        (timedelta(seconds=30), "checkout", "timeout"),
        (timedelta(seconds=20), "browse", "ok"),
        (timedelta(seconds=10), "checkout", "timeout"),
    ])
    result = ok(await gate.call("read_log", {"source": "business", "pattern": "TIMEOUT",
                                             "since_seconds": 600}))
    assert result["matched"] == 2 and result["truncated"] is False
    assert [json.loads(line)["request_id"] for line in result["lines"]] == ["r2", "r4"]
    result = ok(await gate.call("read_log", {"source": "business", "pattern": "timeout"}))
    assert result["matched"] == 3


async def test_business_log_tail_keeps_the_newest_and_flags_the_cut(
        gate: ToolGate, business_log: Path) -> None:
    _write_events(business_log, [(timedelta(seconds=60 - i), "browse", "ok") for i in range(30)])
    out = await gate.call("read_log", {"source": "business", "tail": 5})
    result = ok(out)
    assert result["matched"] == 30
    assert [json.loads(line)["request_id"] for line in result["lines"]] == [
        "r25", "r26", "r27", "r28", "r29"]
    assert result["truncated"] is True and out["truncated"] is True
    out = await gate.call("read_log", {"source": "business", "tail": 30})
    assert len(ok(out)["lines"]) == 30 and out["truncated"] is False
    out = await gate.call("read_log", {"source": "business", "tail": 501})
    assert out["ok"] is False and "tail" in out["error"]


async def test_business_log_long_line_is_clipped(gate: ToolGate, business_log: Path) -> None:
    limit = Bounds().max_cell_chars * 4
    writer = BusinessLogWriter(business_log)
    writer.write(BusinessEvent(ts=datetime.now(timezone.utc), service="shop", request_id="big",
                               operation="report", latency_ms=1.0, outcome="error",
                               message="m" * (limit + 500)))
    writer.close()
    out = await gate.call("read_log", {"source": "business"})
    [line] = ok(out)["lines"]
    assert line.startswith('{"ts":') and "more characters]" in line
    assert len(line) < limit + 50
    assert out["truncated"] is True


async def test_business_log_that_does_not_exist_yet_is_empty(gate: ToolGate) -> None:
    result = ok(await gate.call("read_log", {"source": "business"}))
    assert (result["lines"], result["matched"], result["truncated"]) == ([], 0, False)


async def test_invalid_regex_is_a_clear_error(gate: ToolGate) -> None:
    out = await gate.call("read_log", {"source": "business", "pattern": "(unclosed"})
    assert out["ok"] is False
    assert "not a valid regular expression" in out["error"]
    out = await gate.call("read_log", {"source": "syslog"})
    assert out["ok"] is False and "source" in out["error"]


@pytest.mark.timeout(120)
async def test_a_pattern_that_backtracks_without_end_answers_with_no_match(
        gate: ToolGate, business_log: Path) -> None:
    """``(.|.)*QQQQ`` took Python's re 2**n steps on each line of n characters, the GIL held:
    the whole harness wedged (the second outside attack). RE2 matches in linear time."""
    _write_events(business_log, [(timedelta(seconds=600 - i), "checkout",
                                  "timeout" if i % 5 == 0 else "ok") for i in range(500)])
    for source in ("business", "postgresql"):
        result = ok(await gate.call("read_log", {"source": source, "pattern": "(.|.)*QQQQ",
                                                 "tail": 200}))
        assert (result["matched"], result["lines"]) == (0, []), source
    # what is there is still found, case-insensitively, by the same shape of pattern
    result = ok(await gate.call("read_log", {"source": "business",
                                             "pattern": '(.|.)*"OUTCOME":"TIMEOUT"'}))
    assert result["matched"] == 100


async def test_a_pattern_re2_cannot_match_in_linear_time_is_refused_naming_what(
        gate: ToolGate, business_log: Path) -> None:
    _write_events(business_log, [(timedelta(seconds=10), "checkout", "timeout")])
    for pattern, named in ((r"(timeout)\1", "backreferences"),
                           (r"checkout(?=.*timeout)", "lookahead"),
                           (r"(?<!app=)checkout", "lookbehind")):
        out = await gate.call("read_log", {"source": "business", "pattern": pattern})
        assert out["ok"] is False, out
        assert "RE2 syntax" in out["error"] and f"{named}" in out["error"], out["error"]
        assert "not supported" in out["error"]
    out = await gate.call("read_log", {"source": "business", "pattern": "x" * 1001})
    assert out["ok"] is False and out["error"].startswith("invalid arguments: pattern")
    # each a refusal the agent sees; none a harness failure
    assert [(e.kind, e.ok) for e in trace_events(gate)] == [("tool", False)] * 4


async def test_postgresql_since_seconds_works_with_a_non_utc_log_timezone(
        make_gate: MakeGate, scratch_root: Path, tool_ctx: ToolContext,
        monkeypatch: pytest.MonkeyPatch) -> None:
    base = scratch_root / f"tz-{uuid.uuid4().hex[:8]}"
    base.mkdir()
    procs = ProcessTable(base)
    instance = PostgresInstance(base / "pg", Credentials.generate())
    try:
        # What initdb does on a machine outside UTC: it writes that zone as log_timezone.
        monkeypatch.setenv("TZ", "Europe/Berlin")
        instance.initdb({}, procs)
        monkeypatch.delenv("TZ")
        instance.start(procs)
        gate = make_gate(primary=dataclasses.replace(tool_ctx.primary,
                                                      pg_log_dir=instance.log_dir))
        out = await gate.call("read_log", {"source": "postgresql", "since_seconds": 600,
                                           "pattern": "ready to accept connections"})
        assert ok(out)["matched"] == 1
    finally:
        instance.stop(procs, "fast")
        procs.stop_all()
        shutil.rmtree(base, ignore_errors=True)


# -- manage_instance -------------------------------------------------------------------------

async def test_status_reports_the_running_server(gate: ToolGate,
                                                 postgres: PostgresInstance) -> None:
    out = await gate.call("manage_instance", {"action": "status"})
    assert ok(out)["running"] is True and out["observation"]["pid"] == postgres.pid


async def test_config_get_reads_pg_settings(gate: ToolGate) -> None:
    setting = ok(await gate.call("manage_instance", {"action": "config_get",
                                                     "name": "shared_buffers"}))
    assert setting["name"] == "shared_buffers"
    assert (setting["setting"], setting["unit"]) == ("16384", "8kB")  # 128MB, the baseline
    assert setting["context"] == "postmaster" and setting["pending_restart"] is False
    # Names are case-insensitive in PostgreSQL, so they are here.
    assert ok(await gate.call("manage_instance", {"action": "config_get",
                                                  "name": "Shared_Buffers"}))["setting"] == "16384"


@pytest.mark.parametrize(("args", "named"), [
    ({"action": "config_set", "name": "work_mem"}, "value"),
    ({"action": "config_get"}, "name"),
    ({"action": "config_get", "name": "work_mem; DROP TABLE x"}, "name"),
    ({"action": "explode"}, "action"),
    ({"action": "restart", "mode": "gentle"}, "mode"),
])
async def test_invalid_manage_args_fail_naming_the_field(
        gate: ToolGate, args: dict[str, Any], named: str) -> None:
    out = await gate.call("manage_instance", args)
    assert out["ok"] is False
    assert out["error"].startswith("invalid arguments") and named in out["error"]


async def test_config_get_of_an_unknown_setting_is_an_error(gate: ToolGate) -> None:
    out = await gate.call("manage_instance", {"action": "config_get", "name": "no_such_guc"})
    assert out["ok"] is False and "no_such_guc" in out["error"]


async def test_config_set_of_a_reloadable_setting_takes_effect(
        make_gate: MakeGate, own_pg: tuple[PostgresInstance, ToolContext]) -> None:
    _, ctx = own_pg
    gate = make_gate(ctx)
    await sql(gate, "SELECT 1")  # a session that exists before the change
    setting = ok(await gate.call("manage_instance", {"action": "config_set", "name": "work_mem",
                                                     "value": "8MB"}))
    assert (setting["setting"], setting["unit"]) == ("8192", "kB")
    setting = ok(await gate.call("manage_instance", {"action": "config_get",
                                                     "name": "work_mem"}))
    assert setting["setting"] == "8192" and setting["source"] == "configuration file"
    assert setting["pending_restart"] is False
    # A reload reaches sessions that were already open.
    [result] = await sql(gate, "SHOW work_mem")
    assert result["rows"] == [["8MB"]]
    event = trace_events(gate)[-3]
    assert event.args["action"] == "config_set" and event.mutating is True


async def test_config_set_of_a_bad_value_is_an_error(
        make_gate: MakeGate, own_pg: tuple[PostgresInstance, ToolContext]) -> None:
    _, ctx = own_pg
    gate = make_gate(ctx)
    out = await gate.call("manage_instance", {"action": "config_set", "name": "work_mem",
                                              "value": "lots"})
    assert out["ok"] is False and "22023" in out["error"]


async def test_postmaster_setting_pends_until_restart_and_sql_reconnects(
        make_gate: MakeGate, own_pg: tuple[PostgresInstance, ToolContext]) -> None:
    instance, ctx = own_pg
    gate = make_gate(ctx)
    # a backend's pid is its server's pid namespace's: a restarted server may give it again
    started = "SELECT pg_backend_pid(), pg_postmaster_start_time()::text"
    old_backend = (await sql(gate, started))[0]["rows"][0]
    old_pid = instance.pid
    setting = ok(await gate.call("manage_instance", {"action": "config_set",
                                                     "name": "max_connections", "value": "50"}))
    assert setting["pending_restart"] is True and setting["setting"] == "100"
    out = ok(await gate.call("manage_instance", {"action": "restart"}))
    assert out["restarted"] is True and out["mode"] == "fast"
    assert out["running"] is True and out["pid"] not in (None, old_pid)
    assert (await sql(gate, started))[0]["rows"][0] != old_backend
    setting = ok(await gate.call("manage_instance", {"action": "config_get",
                                                     "name": "max_connections"}))
    assert setting["setting"] == "50" and setting["pending_restart"] is False


async def test_stop_then_start(make_gate: MakeGate,
                               own_pg: tuple[PostgresInstance, ToolContext]) -> None:
    _, ctx = own_pg
    gate = make_gate(ctx)
    await sql(gate, "SELECT 1")
    assert ok(await gate.call("manage_instance", {"action": "stop", "mode": "immediate"})) == {
        "stopped": True, "mode": "immediate"}
    assert ok(await gate.call("manage_instance", {"action": "status"}))["running"] is False
    out = await gate.call("execute_sql", {"sql": "SELECT 1"})
    assert out["ok"] is False and "cannot connect" in out["error"]
    out = await gate.call("manage_instance", {"action": "config_get", "name": "work_mem"})
    assert out["ok"] is False and "does not accept connections" in out["error"]
    out = ok(await gate.call("manage_instance", {"action": "start"}))
    assert out["started"] is True and out["running"] is True
    [result] = await sql(gate, "SELECT 1")
    assert result["rows"] == [[1]]
    assert [e.mutating for e in trace_events(gate)] == [False, True, False, False, False, True,
                                                        False]


def _overcommits() -> bool:
    """Whether the kernel maps any anonymous memory asked for (vm.overcommit_memory = 1): a
    shared_buffers of 200GB then does not stop the server from starting."""
    try:
        return Path("/proc/sys/vm/overcommit_memory").read_text().strip() == "1"
    except OSError:
        return False


@pytest.mark.skipif(_overcommits(), reason="the kernel would map 200GB of shared memory")
async def test_a_restart_the_server_refuses_is_an_observation_and_a_later_start_recovers(
        make_gate: MakeGate, own_pg: tuple[PostgresInstance, ToolContext]) -> None:
    """The agent's own setting keeps the server from starting: what PostgreSQL said is the
    agent's observation (not a harness failure, a 500 on the tool server), the server stays
    down until the agent starts it again, and the run goes on."""
    instance, ctx = own_pg
    gate = make_gate(ctx)
    setting = ok(await gate.call("manage_instance", {"action": "config_set",
                                                     "name": "shared_buffers", "value": "200GB"}))
    assert setting["pending_restart"] is True
    out = await gate.call("manage_instance", {"action": "restart"})
    assert out["ok"] is False, out
    assert out["error"].startswith("the server did not start"), out["error"]
    # PostgreSQL's own words: it cannot map the shared memory shared_buffers asks for
    assert "shared memory" in out["error"] and "shared_buffers" in out["error"], out["error"]
    status = ok(await gate.call("manage_instance", {"action": "status"}))
    assert status["running"] is False and status["pid"] is None
    # a start with the setting still in place fails the same way, again an observation
    out = await gate.call("manage_instance", {"action": "start"})
    assert out["ok"] is False and "shared memory" in out["error"], out
    # nothing that goes through a connection can take the setting back while the server is down
    out = await gate.call("manage_instance", {"action": "config_set", "name": "shared_buffers",
                                              "value": "128MB"})
    assert out["ok"] is False and "does not accept connections" in out["error"]
    # every call was the agent's, none a harness failure
    events = trace_events(gate)
    assert [e.kind for e in events] == ["tool"] * 5
    assert [e.ok for e in events] == [True, False, True, False, False]
    # The setting taken back outside the tools (as a DBA would edit postgresql.auto.conf):
    # the harness's control of the server is intact, and a start brings it back.
    auto_conf = instance.pgdata / "postgresql.auto.conf"
    auto_conf.write_text("".join(line for line in auto_conf.read_text().splitlines(True)
                                 if not line.startswith("shared_buffers")))
    out = ok(await gate.call("manage_instance", {"action": "start"}))
    assert out["started"] is True and out["running"] is True and out["pid"] == instance.pid
    [result] = await sql(gate, "SHOW shared_buffers")
    assert result["rows"] == [["128MB"]]


# -- query_knowledge_base --------------------------------------------------------------------

async def test_knowledge_base_finds_a_function(gate: ToolGate) -> None:
    out = ok(await gate.call("query_knowledge_base", {"query": "pg_blocking_pids"}))
    hits = out["hits"]
    assert 1 <= len(hits) <= 5
    # The function's own reference entry, not just pages that mention locks in general.
    assert any(h["doc_id"].startswith("functions-info.html#") for h in hits), hits
    assert all("pg_blocking_pids" in h["snippet"] for h in hits), hits
    assert all(h["score"] > 0 and h["source"] in ("postgresql-docs", "sop") for h in hits)
    assert out["total_matches"] >= len(hits)


async def test_knowledge_base_limit(gate: ToolGate) -> None:
    out = ok(await gate.call("query_knowledge_base", {"query": "vacuum", "limit": 2}))
    assert len(out["hits"]) == 2 and out["truncated"] is True


@pytest.mark.parametrize(("query", "says"), [("", "query"), ("   ", "search term")])
async def test_knowledge_base_rejects_an_empty_query(gate: ToolGate, query: str, says: str) -> None:
    out = await gate.call("query_knowledge_base", {"query": query})
    assert out["ok"] is False and says in out["error"]


async def test_knowledge_base_absent_is_an_error(make_gate: MakeGate) -> None:
    gate = make_gate(knowledge_index=None)
    out = await gate.call("query_knowledge_base", {"query": "vacuum"})
    assert out["ok"] is False and "not available" in out["error"]


# -- budget ----------------------------------------------------------------------------------

async def test_step_budget_stops_the_third_call(make_gate: MakeGate) -> None:
    gate = make_gate(budget=Budget(max_steps=2, timeout_seconds=600))
    ok(await gate.call("execute_sql", {"sql": "SELECT 1"}))
    # A failed call is still a step.
    assert (await gate.call("read_log", {"source": "nowhere"}))["ok"] is False
    with pytest.raises(BudgetExhausted, match="step budget of 2"):
        await gate.call("execute_sql", {"sql": "SELECT 2"})
    events = trace_events(gate)
    assert [e.kind for e in events] == ["tool", "tool", "budget"]
    budget = events[-1]
    assert budget.ok is False and budget.tool == "execute_sql"
    assert budget.args == {"sql": "SELECT 2"} and "step budget" in budget.error


async def test_time_budget_stops_calls(make_gate: MakeGate) -> None:
    gate = make_gate(budget=Budget(max_steps=100, timeout_seconds=5,
                                   started=time.monotonic() - 10))
    with pytest.raises(BudgetExhausted, match="time budget"):
        await gate.call("execute_sql", {"sql": "SELECT 1"})
    assert [e.kind for e in trace_events(gate)] == ["budget"]
