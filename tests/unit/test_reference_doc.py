"""docs/reference.md, the scenario author's reference, is generated from the code it describes
(issue 41), and the parts the code cannot generate are held to the code they state."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import get_args

import pytest

from dbabench.agents.scripted import ReferenceAgent
from dbabench.env import local, monitoring
from dbabench.evaluate import complexity, evaluator, predicates
from dbabench.evaluate import reference as reference_doc
from dbabench.model.scenario import Predicate, WorkloadPredicate
from dbabench.runner import assembly, run
from dbabench.scenario.datasets import Dataset
from dbabench.scenario.loader import scenarios_root
from dbabench.workload import businesslog, engine

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference.md"


@pytest.fixture(scope="module")
def page() -> str:
    return reference_doc.render(scenarios_root())


def test_docs_reference_md_is_generated_from_the_code(page: str) -> None:
    assert DOC.read_text() == page, "docs/reference.md is out of date: run `make catalog`"


def test_every_manifest_field_the_page_lists_has_a_meaning() -> None:
    missing = [f"{model.__name__}.{name}" for model in reference_doc.DOCUMENTED_MODELS
               for name in model.model_fields if not reference_doc.meaning(model, name)]
    assert not missing, f"give these fields a description, or a FIELD_NOTES entry: {missing}"
    # a note stands in for a description the model lacks, and for nothing else
    stale = [f"{model.__name__}.{name}" for model, name in reference_doc.FIELD_NOTES
             if name not in model.model_fields or model.model_fields[name].description]
    assert not stale, f"FIELD_NOTES entries for fields that now describe themselves: {stale}"


def test_every_check_kind_stat_and_outcome_is_on_the_page(page: str) -> None:
    kinds = {reference_doc._tag(model) for model in get_args(get_args(Predicate)[0])}
    assert kinds == {"check: sql", "check: estimate", "check: workload", "check: log"}
    for kind in kinds:
        assert f"### `{kind}`" in page and f"| `{kind.split(': ')[1]}` |" in page
    stats = set(get_args(WorkloadPredicate.model_fields["stat"].annotation))
    assert stats == set(reference_doc.STAT_MEANINGS) == set(businesslog.WindowStats.model_fields)
    filed = {engine.classify_error(e, session_alive=alive)[0]
             for e, alive, _ in reference_doc.OUTCOME_EXAMPLES}
    assert filed == set(get_args(businesslog.Outcome)) - {"ok"}


def test_the_metric_tables_cover_what_a_run_scrapes() -> None:
    assert list(reference_doc.NODE_COLLECTOR_SERIES) == list(monitoring.NODE_COLLECTORS)
    assert set(monitoring.EXPORTER_JOBS.values()) == {"postgres", "postgres_replica"}
    # the workload's scrape job, and the exporter's database, as the page names them
    assert '{"workload": f"127.0.0.1:{metrics_port}"}' in inspect.getsource(run)
    assert "server.dsn(application_name=EXPORTER_APPLICATION)" in inspect.getsource(
        local.LocalEnvironment.start_monitoring)


def _in_order(source: str, *names: str) -> None:
    at = [source.find(name) for name in names]
    assert -1 not in at, [n for n, i in zip(names, at) if i == -1]
    assert at == sorted(at), f"not in this order any more: {names}"


def test_the_timeline_states_what_the_run_does(page: str) -> None:
    assert f"again {run.ADMISSION_POLL_SECONDS:g} s (`ADMISSION_POLL_SECONDS`) after" in page
    _in_order(inspect.getsource(run.run_scenario), "apply_steps", "start_workload",
              "_admit_while_monitoring_starts", "agent_turn", "drive_agent", "evaluator.grade")
    _in_order(inspect.getsource(run.admit), "check_all", "all(r.passed", "integrity.take",
              "_logging(probe)", "forget_statements")
    _in_order(inspect.getsource(evaluator.verify_outcome), "spec.settle_seconds",
              "spec.window_seconds", "predicates.check")
    assert "passed=report_valid and f == 1.0" in inspect.getsource(evaluator.verify_outcome)
    assert evaluator.STATE_CHECKS == (predicates.SqlPredicate, predicates.EstimatePredicate)
    # the reference agent: hops first, a missed expect only noted, then fix, verify, report
    _in_order(inspect.getsource(ReferenceAgent.run), "spec.reference_path", "gate.think",
              "_apply(", "spec.verification", "submit_report")
    assert "[:len(path)]" in inspect.getsource(complexity.measure)


def test_the_workload_prose_states_what_the_engine_does(page: str) -> None:
    job = inspect.getsource(engine.scheduled_job)
    _in_order(job, "conn.execute(statement)", "client.halt.wait(job.idle_in_transaction_seconds)",
              "while not client.halt.is_set()", "client.request(job.operation, run)",
              "client.halt.wait(job.interval_seconds)")
    _in_order(inspect.getsource(engine.Client.request), "with conn.transaction():",
              "body(conn)", "except (psycopg.Error, OSError, NotStored)")
    request = inspect.getsource(engine.Client.request)
    assert 'if outcome == "connection_error":\n            self.halt.wait(RECONNECT_DELAY)' \
        in request
    assert '"terminated",' in request and "self._drop()" in request and "self._reset()" in request
    assert "self.conn.rollback()" in inspect.getsource(engine.Client._reset)
    assert "autocommit=True" in inspect.getsource(engine.Client._connection)
    assert f"plus {engine.RECONNECT_DELAY:g} s after a connection error" in page
    worker = inspect.getsource(engine.checkout_worker)
    for drawn in ("rng.random() < spec.browse_share", "rng.randint(1, spec.merchants)",
                  "rng.random() < spec.hot_share", "rng.randint(1, spec.skus)",
                  "rng.randint(1, 5)"):
        assert drawn in worker, drawn
    assert "rng.uniform(0.5, 1.5)" in inspect.getsource(engine._pause)
    # the application's login; a request is in a window by when it ended, ends included
    assert "user=APP_ROLE" in inspect.getsource(assembly.workload_config)
    assert "e.ts < start or end and e.ts > end" in inspect.getsource(
        businesslog.BusinessLogReader.events)
    log_check = inspect.getsource(predicates._log)
    assert "re.IGNORECASE" in log_check and 'record.get("message"' in log_check \
        and "probe.pg_log" in log_check


@pytest.mark.parametrize("statement", [
    "DELETE FROM t WHERE id > 1",
    "INSERT INTO t SELECT g FROM generate_series(1, 10) g WHERE g % 2 = 0",
    "INSERT INTO t SELECT g FROM some_table g",
    "CREATE TABLE u(id int, CHECK (id > 0))",
])
def test_a_dataset_the_page_cannot_describe_faithfully_is_refused(statement: str) -> None:
    dataset = Dataset("probe", 1, ("CREATE TABLE t(id int)", statement))
    with pytest.raises(reference_doc.DatasetShapeError):
        reference_doc.dataset_shape(reference_doc.build_statements(dataset))


def test_the_dataset_is_read_from_what_the_build_runs() -> None:
    dataset = Dataset("probe", 1, (
        "CREATE TABLE t(id bigserial PRIMARY KEY, a int NOT NULL DEFAULT 7, b text)",
        "INSERT INTO t(b) SELECT 'x' || g FROM generate_series(1, 30) g, generate_series(0, 9) h",
        "CREATE INDEX t_a_idx ON t(a)",
        "GRANT SELECT ON t TO app"))
    build = reference_doc.build_statements(dataset)
    assert [s.text.split(" ")[0:2] for s in build[:3]] == [
        ["CREATE", "ROLE"], ["CREATE", "DATABASE"], ["CREATE", "EXTENSION"]]
    shape = reference_doc.dataset_shape(build)
    table = shape.tables["t"]
    assert table.rows == 300 and table.filled == {"b": "'x' || g"}
    assert table.sequences == [("t_id_seq", "bigint", "t.id")]
    assert [i[0] for i in table.indexes] == ["t_pkey", "t_a_idx"]
    assert [c.default for c in table.columns] == ["nextval('t_id_seq')", "7", ""]
    assert shape.roles["app"].grants == ["SELECT on `t`"]
    assert re.search(r"LOGIN", shape.roles["app"].attributes)
