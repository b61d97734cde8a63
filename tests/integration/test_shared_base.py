"""Goldens on a shared dataset: its own snapshot is built once, each scenario's golden is a
clone of it with passwords of its own, the dataset's intended state is every scenario's, and
where the fault sits among the intended settings still tells nothing.

A small shared dataset stands in for the estate (its build takes minutes): what is tested is
the mechanism, which is the estate's."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
import yaml

from dbabench.env.local import LocalEnvironment, build_cluster
from dbabench.env.postgres import GOLDEN_META, Credentials, PostgresInstance
from dbabench.env.processes import ProcessTable, free_port
from dbabench.env.snapshot import SnapshotStore, choose_strategy
from dbabench.faults.steps import _early
from dbabench.model.dataset import DatasetName
from dbabench.model.scenario import IntendedSetting, Scenario
from dbabench.runner.assembly import golden_recipe
from dbabench.scenario import datasets
from dbabench.scenario.datasets import Dataset, complete
from dbabench.scenario.loader import resolve

pytestmark = pytest.mark.integration

ROLE = "ledger_writer"
INTENDED = tuple(
    IntendedSetting(role=ROLE, name=name, value=value, purpose=f"the ledger's {name}")
    for name, value in (("statement_timeout", "15s"), ("work_mem", "16MB"),
                        ("idle_in_transaction_session_timeout", "30s"),
                        ("lock_timeout", "2s"), ("search_path", ["payments", "public"]),
                        ("temp_file_limit", "1GB"))) + (
    IntendedSetting(table="payments.ledger_lines", name="fillfactor", value="90",
                    purpose="HOT updates of the posting status"),
    IntendedSetting(database="app", name="random_page_cost", value="1.1",
                    purpose="the SSD volume's costs"),
)
SHARED = Dataset(
    name="estate", version="test-1", shared=True, intended=INTENDED,
    statements=(f"CREATE ROLE {ROLE} LOGIN", "CREATE SCHEMA payments",
                "CREATE TABLE payments.ledger_lines(id bigint PRIMARY KEY, cents bigint)",
                "SET search_path = payments",  # a session's, as psql runs a file
                "INSERT INTO ledger_lines SELECT g, g * 7 FROM generate_series(1, 1000) g",
                "CREATE TABLE in_public(id int)",
                "VACUUM ANALYZE"),
    sessions=(0, 3, 5))


def _scenario(name: str, fault: str) -> Scenario:
    path, _ = resolve("role-search-path-hides-tables")
    doc = yaml.safe_load(path.read_text())
    doc["metadata"]["name"] = name
    doc["spec"]["database"]["dataset"] = "estate"
    doc["spec"]["fault"]["persistent"] = [{"action": "sql", "sql": fault}]
    doc["spec"]["intended"] = []
    return complete(Scenario.model_validate(doc))


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(datasets.DATASETS, DatasetName.estate, lambda scale: SHARED)


def _setconfig(conn: psycopg.Connection) -> list[str]:
    row = conn.execute("SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_roles r"
                       " ON r.oid = s.setrole WHERE r.rolname = %s AND s.setdatabase = 0",
                       (ROLE,)).fetchone()
    assert row is not None
    return [c.split("=", 1)[0] for c in row[0]]


def test_goldens_on_a_shared_dataset_clone_its_snapshot(shared: None, scratch_root: Path) -> None:
    cache = scratch_root / "shared-cache"
    cache.mkdir()
    store = SnapshotStore(cache, choose_strategy(cache))
    first = _scenario("shared-first", f"ALTER ROLE {ROLE} SET default_transaction_isolation"
                                      " = 'serializable'")
    second = _scenario("shared-second", "ALTER DATABASE app SET jit = off")
    # the dataset's intended state is each scenario's, ahead of its own, and judged
    assert first.spec.intended == list(INTENDED)
    assert complete(first) is first  # read back from a run, nothing is added twice
    assert {f"intended-{ROLE.replace('_', '-')}-work-mem",
            "intended-payments-ledger-lines-fillfactor"} <= {
        c.predicate.name for c in first.spec.outcome_checks}

    recipes = [golden_recipe(s) for s in (first, second)]
    assert recipes[0].base is not None and recipes[1].base is not None
    assert recipes[0].base.key == recipes[1].base.key and recipes[0].key != recipes[1].key
    run_dir = scratch_root / "shared-run"
    run_dir.mkdir()
    with LocalEnvironment(run_dir, "shared", store) as env:
        goldens = [env.ensure_golden(r) for r in recipes]
        base_meta = json.loads((store.golden(recipes[0].base.key) / GOLDEN_META).read_text())
        # built once: the second golden found it
        assert base_meta["built_at"] < min(g.built_at for g in goldens)
        assert len([p for p in store.golden("any").parent.iterdir() if p.is_dir()
                    and not p.name.startswith(".")]) == 3
        base_password = base_meta["credentials"]["superuser_password"]
        assert len({base_password, *(g.credentials.superuser_password for g in goldens)}) == 3
        assert len({base_meta["credentials"]["app_password"],
                    *(g.credentials.app_password for g in goldens)}) == 3

        instance = env.restore(goldens[0])
        with psycopg.connect(instance.dsn(), autocommit=True) as conn:
            # the dataset, the second session's SET not reaching the third's CREATE TABLE
            assert conn.execute("SELECT count(*) FROM payments.ledger_lines").fetchone() == (1000,)
            assert conn.execute("SELECT to_regclass('public.in_public') IS NOT NULL"
                                ).fetchone() == (True,)
            for setting in INTENDED:
                predicate = setting.check().predicate
                assert conn.execute(predicate.sql.encode()).fetchone() == (True,), setting.layer
            order = _setconfig(conn)
        fault_at = order.index("default_transaction_isolation")
        early = {s.name for s in INTENDED if s.role and _early(s, first.spec)}
        # stored before the fault: the estate's set early; after it: the rest
        assert set(order[:fault_at]) == early
        assert set(order[fault_at + 1:]) == {s.name for s in INTENDED if s.role} - early
        assert 0 < len(early) < 6, "the digest put all of them on one side: change a value"
        # the shared snapshot's passwords open no scenario's golden
        refused = instance.dsn().replace(goldens[0].credentials.superuser_password,
                                         base_password)
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            psycopg.connect(refused).close()


def test_a_golden_built_where_no_snapshot_is_kept_builds_the_base_in_place(
        shared: None, scratch_root: Path) -> None:
    """The pods build a golden on a volume of its own, with no store of shared snapshots."""
    scenario = _scenario("shared-pods", f"ALTER ROLE {ROLE} SET jit = off")
    home = scratch_root / "shared-volume"
    (scratch_root / "shared-volume-procs").mkdir()
    procs = ProcessTable(scratch_root / "shared-volume-procs")
    credentials = Credentials.generate()
    build_cluster(home, golden_recipe(scenario), credentials, procs=procs)
    instance = PostgresInstance(home, credentials)
    instance.relocate(free_port())
    instance.start(procs)
    try:
        with psycopg.connect(instance.dsn(), autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM payments.ledger_lines").fetchone() == (1000,)
            assert all(conn.execute(s.check().predicate.sql.encode()).fetchone() == (True,)
                       for s in INTENDED)
            order = _setconfig(conn)
        early = {s.name for s in INTENDED if s.role and _early(s, scenario.spec)}
        assert set(order[:order.index("jit")]) == early
    finally:
        procs.stop_all()
