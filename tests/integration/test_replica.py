"""A primary and its hot standby, both thin clones of one golden: streaming, the tools on each
server, predicates on the standby, and a run directory that keeps both servers' logs."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from dbabench.env.local import GoldenRecipe, LocalEnvironment, LocalInstanceControl
from dbabench.env.postgres import PostgresInstance
from dbabench.env.snapshot import SnapshotStore, choose_strategy
from dbabench.evaluate import predicates
from dbabench.faults.steps import FaultError, apply_steps, run_sql
from dbabench.model.scenario import ReplicaSpec, SqlPredicate, SqlStep
from dbabench.model.workload import Server
from dbabench.tools.context import ServerAccess, ToolContext
from dbabench.tools.gate import Budget, ToolGate
from dbabench.records.run import RunFiles

pytestmark = pytest.mark.integration


def populate(instance: PostgresInstance) -> None:
    with psycopg.connect(instance.dsn(database="postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE app")
    run_sql(instance, "CREATE TABLE t(id int PRIMARY KEY)")
    run_sql(instance, "SELECT pg_create_physical_replication_slot('replica1', true)",
            database="postgres")


def wait_for(query: str, dsn: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    with psycopg.connect(dsn, autocommit=True) as conn:
        while True:
            row = conn.execute(query).fetchone()
            if row and row[0] or time.monotonic() > deadline:
                return row[0] if row else None
            time.sleep(0.1)


@pytest.fixture(scope="module")
def env(scratch_root: Path) -> Iterator[LocalEnvironment]:
    cache = scratch_root / "replica-cache"
    cache.mkdir(exist_ok=True)
    run_dir = scratch_root / "run-replica"
    run_dir.mkdir()
    with LocalEnvironment(run_dir, "replica", SnapshotStore(cache, choose_strategy(cache))) as env:
        golden = env.ensure_golden(GoldenRecipe("with-slot", "app", {}, populate))
        env.restore(golden, ReplicaSpec(settings={"hot_standby_feedback": True}))
        yield env
    assert (run_dir / "logs" / "replica").is_dir() and (run_dir / "logs" / "postgresql").is_dir()


def access(env: LocalEnvironment, server: Server) -> ServerAccess:
    instance = env.server(server)
    return ServerAccess(dsn=instance.dsn(), observer_dsn=instance.dsn(application_name="obs"),
                        pg_log_dir=instance.log_dir, control=LocalInstanceControl(env, server))


@pytest.fixture
async def gate(env: LocalEnvironment, tmp_path: Path) -> AsyncIterator[ToolGate]:
    ctx = ToolContext(primary=access(env, "primary"), replica=access(env, "replica"),
                      business_log=tmp_path / "business.jsonl",
                      prometheus_url="http://127.0.0.1:9")
    gate = ToolGate(ctx, RunFiles(tmp_path),
                    Budget(max_steps=100, timeout_seconds=600))
    yield gate
    await gate.close()


def test_the_standby_streams_from_the_primary_through_its_slot(env: LocalEnvironment) -> None:
    assert env.instance is not None and env.replica is not None
    primary, standby = env.instance.dsn(), env.replica.dsn()
    assert wait_for("SELECT state = 'streaming' FROM pg_stat_replication"
                    " WHERE application_name = 'replica1'", primary)
    assert wait_for("SELECT active FROM pg_replication_slots WHERE slot_name = 'replica1'",
                    primary)
    run_sql(env.instance, "INSERT INTO t VALUES (1)")
    assert wait_for("SELECT count(*) = 1 FROM t WHERE id = 1", standby)
    assert wait_for("SELECT pg_is_in_recovery()", standby)


async def test_the_standbys_settings_show_no_password(gate: ToolGate,
                                                      env: LocalEnvironment) -> None:
    # the third outside attack: SHOW primary_conninfo on the standby gave the superuser's
    # password, the same in every run of the scenario's golden
    assert env.instance is not None
    password = env.instance.credentials.superuser_password
    for call in ({"tool": "execute_sql", "args": {"sql": "SHOW primary_conninfo",
                                                  "server": "replica"}},
                 {"tool": "manage_instance", "args": {"action": "config_get", "server": "replica",
                                                      "name": "primary_conninfo"}}):
        out = await gate.call(call["tool"], call["args"])
        assert out["ok"] and "passfile=" in str(out) and password not in str(out)


async def test_each_tool_addresses_the_server_it_names(gate: ToolGate) -> None:
    out = await gate.call("execute_sql", {"sql": "SELECT pg_is_in_recovery()", "server": "replica"})
    assert out["observation"]["results"][0]["rows"] == [[True]]
    out = await gate.call("execute_sql", {"sql": "SELECT pg_is_in_recovery()"})
    assert out["observation"]["results"][0]["rows"] == [[False]]
    out = await gate.call("execute_sql", {"sql": "INSERT INTO t VALUES (2)", "server": "replica"})
    assert out["observation"]["results"][0]["error"]["sqlstate"] == "25006"  # read-only

    status = await gate.call("manage_instance", {"action": "status", "server": "replica"})
    assert status["observation"]["server"] == "replica" and status["observation"]["running"]
    out = await gate.call("manage_instance", {"action": "config_set", "server": "replica",
                                              "name": "hot_standby_feedback", "value": "off"})
    assert out["observation"]["setting"] == "off"
    out = await gate.call("manage_instance", {"action": "config_get",
                                              "name": "hot_standby_feedback"})
    assert out["observation"]["source"] == "default"  # the primary's own stays untouched

    log = await gate.call("read_log", {"source": "postgresql", "server": "replica", "tail": 200})
    assert any("started streaming WAL" in line for line in log["observation"]["lines"])
    log = await gate.call("read_log", {"source": "postgresql", "tail": 200})
    assert not any("started streaming WAL" in line for line in log["observation"]["lines"])


async def test_restarting_the_standby_leaves_the_primary_and_resumes_streaming(
        env: LocalEnvironment, gate: ToolGate) -> None:
    assert env.instance is not None
    primary_pid = env.instance.pid
    await gate.call("execute_sql", {"sql": "SELECT 1", "server": "replica"})
    out = await gate.call("manage_instance", {"action": "restart", "server": "replica"})
    assert out["ok"] and out["observation"]["running"]
    assert env.instance.pid == primary_pid
    # the agent's session on the standby was closed with it and reconnects
    out = await gate.call("execute_sql", {"sql": "SELECT 1", "server": "replica"})
    assert out["ok"] and out["observation"]["results"][0]["rows"] == [[1]]
    assert wait_for("SELECT state = 'streaming' FROM pg_stat_replication", env.instance.dsn())


async def test_predicates_and_fault_steps_reach_the_standby(env: LocalEnvironment) -> None:
    assert env.instance is not None and env.replica is not None
    probe = predicates.Probe(dsn=env.instance.dsn(), business_log=Path("/nonexistent"),
                             pg_log_dir=env.instance.log_dir, replica_dsn=env.replica.dsn())
    on_standby = SqlPredicate(name="standby", check="sql", sql="SELECT pg_is_in_recovery()",
                              server="replica")
    assert (await predicates.check(on_standby, probe)).passed
    without = predicates.Probe(dsn=env.instance.dsn(), business_log=Path("/nonexistent"),
                               pg_log_dir=env.instance.log_dir)
    result = await predicates.check(on_standby, without)
    assert not result.passed and "has none" in result.detail
    step = SqlStep(action="sql", sql="SELECT 1/0", server="replica", expect_error="22012")
    apply_steps(env.instance, [step], replica=env.replica)
    with pytest.raises(FaultError, match="there is none"):
        apply_steps(env.instance, [step])


async def test_a_system_without_a_standby_says_so(env: LocalEnvironment, tmp_path: Path) -> None:
    ctx = ToolContext(primary=access(env, "primary"), business_log=tmp_path / "b.jsonl",
                      prometheus_url="http://127.0.0.1:9")
    gate = ToolGate(ctx, RunFiles(tmp_path), Budget(max_steps=5,
                                                                      timeout_seconds=60))
    out = await gate.call("execute_sql", {"sql": "SELECT 1", "server": "replica"})
    await gate.close()
    assert out == {"ok": False, "error": "this system has no replica: address server primary",
                   "seq": 1}
