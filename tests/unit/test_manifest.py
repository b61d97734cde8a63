"""Scenario manifests: the shipped ones validate; bad ones name every offending field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dbabench.cli.main import main
from dbabench.evaluate.diagnosis import evaluate_diagnosis
from dbabench.model.report import Report
from dbabench.scenario.loader import (ScenarioError, discover, golden_key, load_file, parse,
                                      scenarios_root)

SHIPPED = sorted(scenarios_root().rglob("*.yaml"))


def base_doc() -> dict:
    # the tests below edit fields this scenario has (an estimate check, a runtime job)
    path = scenarios_root() / "composite" / "stale-stats-lock-chain.yaml"
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_scenarios_validate(path: Path) -> None:
    scenario = parse(path.read_text(), str(path))
    assert scenario.kind == "Scenario"
    # the report the reference agent files passes diagnosis; the decoy's does not
    diagnosis = scenario.spec.diagnosis
    assert evaluate_diagnosis(diagnosis.canonical(), diagnosis).passed
    stub = scenario.spec.decoy_report
    decoy = Report(root_cause_type=stub.root_cause_type, causal_factors=stub.causal_factors,
                   affected_objects=stub.affected_objects)
    assert not evaluate_diagnosis(decoy, diagnosis).passed


def test_names_are_unique_and_discoverable() -> None:
    assert "stale-stats-lock-chain" in discover()


def errors_of(doc: dict) -> str:
    with pytest.raises(ScenarioError) as info:
        parse(yaml.safe_dump(doc), "bad.yaml")
    return str(info.value)


def test_missing_field_is_named_with_its_path() -> None:
    doc = base_doc()
    del doc["spec"]["symptom"]
    assert "spec.symptom: Field required" in errors_of(doc)


def test_unknown_field_is_rejected() -> None:
    doc = base_doc()
    doc["spec"]["manifestations"] = doc["spec"]["manifestation"]
    assert "spec.manifestations: Extra inputs are not permitted" in errors_of(doc)


def test_python_field_names_are_refused_as_the_api_server_refuses_them() -> None:
    # the CRD has the camelCase names only: a file the loader took would not kubectl-apply
    doc = base_doc()
    doc["spec"]["budget"]["max_steps"] = doc["spec"]["budget"].pop("maxSteps")
    assert ("spec.budget.max_steps: Extra inputs are not permitted (manifests name fields in"
            " camelCase: maxSteps)") in errors_of(doc)


def test_wrong_enum_inside_a_list_names_the_index() -> None:
    doc = base_doc()
    doc["spec"]["outcome"]["checks"][1]["predicate"]["op"] = "~"
    message = errors_of(doc)
    assert "spec.outcome.checks[1].predicate.estimate.op" in message


def test_unknown_predicate_kind() -> None:
    doc = base_doc()
    doc["spec"]["manifestation"]["predicates"][0]["check"] = "vibes"
    assert "spec.manifestation.predicates[0]" in errors_of(doc)


def test_job_cannot_be_persistent() -> None:
    doc = base_doc()
    doc["spec"]["fault"]["persistent"].append(doc["spec"]["fault"]["runtime"][0])
    assert "a job cannot be persistent" in errors_of(doc)


def test_the_replica_is_addressed_only_where_one_is_declared() -> None:
    doc = base_doc()
    doc["spec"]["fault"]["runtime"][0]["server"] = "replica"
    message = errors_of(doc)
    assert "addresses the replica, but database.replica is not set" in message
    doc["spec"]["database"]["replica"] = {"settings": {"hot_standby_feedback": True}}
    assert parse(yaml.safe_dump(doc)).spec.database.replica.slot == "replica1"
    doc = base_doc()
    doc["spec"]["referencePath"][0]["call"]["args"]["server"] = "replica"
    assert "execute_sql call addresses the replica" in errors_of(doc)
    doc = base_doc()
    doc["spec"]["fault"]["persistent"][0]["server"] = "replica"
    assert "a persistent step runs on the primary" in errors_of(doc)


def test_bad_name_and_duplicate_condition_ids() -> None:
    doc = base_doc()
    doc["metadata"]["name"] = "Not_A_DNS_Label"
    conditions = doc["spec"]["diagnosis"]["conditions"]
    conditions.append(dict(conditions[0]))
    message = errors_of(doc)
    assert "metadata.name" in message
    assert "condition ids must be unique" in message


def test_not_yaml_and_not_a_mapping() -> None:
    with pytest.raises(ScenarioError, match="not valid YAML"):
        parse("a: [", "x.yaml")
    with pytest.raises(ScenarioError, match="expected a mapping"):
        parse("- 1\n- 2\n", "x.yaml")


def test_golden_key_tracks_what_the_snapshot_holds() -> None:
    doc = base_doc()
    key = golden_key(parse(yaml.safe_dump(doc)), {})
    doc["spec"]["symptom"] = "a different alert text"
    assert golden_key(parse(yaml.safe_dump(doc)), {}) == key  # not baked into the snapshot
    doc["spec"]["fault"]["persistent"][0]["sql"] += " "
    changed = golden_key(parse(yaml.safe_dump(doc)), {})
    assert changed != key
    doc["spec"]["intended"] = [{"database": "app", "name": "TimeZone", "value": "UTC",
                                "purpose": "invoices are cut off at UTC midnight"}]
    assert golden_key(parse(yaml.safe_dump(doc)), {}) != changed


def test_intended_settings_are_set_in_their_layer_and_checked_by_the_outcome() -> None:
    doc = base_doc()
    doc["spec"]["intended"] = [
        {"role": "bi", "name": "statement_timeout", "value": "60s", "purpose": "BI guard"},
        {"role": "etl", "database": "app", "name": "search_path", "value": ["util", "public"],
         "purpose": "the ETL library"},
        {"name": "track_io_timing", "value": "on", "purpose": "I/O dashboards"},
    ]
    spec = parse(yaml.safe_dump(doc)).spec
    assert [s.statement() for s in spec.intended] == [
        "ALTER ROLE \"bi\" SET statement_timeout = '60s'",
        "ALTER ROLE \"etl\" IN DATABASE \"app\" SET search_path = 'util', 'public'",
        "ALTER SYSTEM SET track_io_timing = 'on'",
    ]
    names = [c.predicate.name for c in spec.outcome_checks]
    assert names[:len(spec.outcome.checks)] == [c.predicate.name for c in spec.outcome.checks]
    assert names[len(spec.outcome.checks):] == [
        "intended-bi-statement-timeout", "intended-etl-app-search-path",
        "intended-track-io-timing"]
    assert "still util, public: the ETL library" in spec.outcome_checks[-2].predicate.description
    doc["spec"]["intended"].append(dict(doc["spec"]["intended"][0], value="5min"))
    assert "intended-bi-statement-timeout" in errors_of(doc)
    doc["spec"]["intended"] = [{"role": "bi", "name": "work_mem", "value": "1MB"}]
    assert "spec.intended[0].purpose: Field required" in errors_of(doc)


def test_a_tables_storage_parameter_is_an_intended_setting_of_its_own_layer() -> None:
    doc = base_doc()
    doc["spec"]["intended"] = [
        {"table": "analytics.stage_orders", "name": "autovacuum_enabled", "value": "off",
         "purpose": "the loader truncates and reloads it hourly"},
        {"role": "bi", "database": "app", "name": "work_mem", "value": "64MB", "purpose": "BI"},
        {"name": "log_lock_waits", "value": "on", "purpose": "the lock-wait alert"},
    ]
    table, role, server = parse(yaml.safe_dump(doc)).spec.intended
    assert table.layer == "table analytics.stage_orders"
    assert table.statement() == ("ALTER TABLE \"analytics\".\"stage_orders\""
                                 " SET (autovacuum_enabled = 'off')")
    assert table.reset() == ("ALTER TABLE \"analytics\".\"stage_orders\""
                             " RESET (autovacuum_enabled)")
    assert role.reset() == "ALTER ROLE \"bi\" IN DATABASE \"app\" RESET work_mem"
    assert server.reset() == "ALTER SYSTEM RESET log_lock_waits"
    check = table.check().predicate
    assert check.name == "intended-analytics-stage-orders-autovacuum-enabled"
    assert "reloptions" in check.sql and "'analytics.stage_orders'" in check.sql
    doc["spec"]["intended"][0]["role"] = "bi"
    assert "give table alone" in errors_of(doc)
    doc["spec"]["intended"][0] = {"table": "stage_orders", "name": "fillfactor", "value": "90",
                                  "purpose": "HOT updates"}
    assert "spec.intended[0].table" in errors_of(doc)  # schema-qualified only


def test_cli_validate_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenarios", "validate"]) == 0
    bad = tmp_path / "bad.yaml"
    doc = base_doc()
    doc["spec"]["budget"] = {"maxSteps": 0}
    bad.write_text(yaml.safe_dump(doc))
    assert main(["scenarios", "validate", str(bad)]) == 2
    assert "spec.budget.maxSteps" in capsys.readouterr().err


def test_cli_unknown_scenario_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "no-such-scenario", "--agent", "null"]) == 2
    assert "no scenario named 'no-such-scenario'" in capsys.readouterr().err


def test_cli_unknown_agent_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "stale-stats-lock-chain", "--agent", "gpt"]) == 2
    assert "unknown agent 'gpt'" in capsys.readouterr().err


def test_a_cause_or_kind_outside_the_vocabulary_is_named_with_its_path() -> None:
    doc = base_doc()
    doc["spec"]["diagnosis"]["conditions"][0]["causes"] = ["stale_planner_stuff"]
    doc["spec"]["decoyReport"]["affectedObjects"] = [{"kind": "tablespace", "name": "x"}]
    message = errors_of(doc)
    assert "spec.diagnosis.conditions[0].causes" in message
    assert "nearest: stale_statistics" in message
    assert "spec.decoyReport.affectedObjects[0].kind" in message


def test_a_variant_is_its_base_with_its_spec_merged_over(tmp_path: Path) -> None:
    base = base_doc()
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    variant = {"apiVersion": base["apiVersion"], "kind": "ScenarioVariant",
               "metadata": {"name": "base-in-estate"}, "base": "base.yaml",
               "spec": {"database": {"dataset": "estate"}}}
    path = tmp_path / "variant.yaml"
    path.write_text(yaml.safe_dump(variant))
    scenario = load_file(path)
    original = parse(yaml.safe_dump(base))
    assert scenario.name == "base-in-estate"
    assert scenario.metadata.labels["dbabench.io/variant-of"] == original.name
    assert scenario.spec.database.dataset == "estate"
    # the rest of database, and every other field, is the base's
    assert scenario.spec.database.scale == original.spec.database.scale
    assert scenario.spec.fault.persistent == original.spec.fault.persistent
    assert scenario.spec.outcome == original.spec.outcome
    # the estate's intended state and its services' jobs come with its dataset
    assert len(scenario.spec.intended) > len(original.spec.intended)
    runtime = original.spec.fault.runtime
    assert scenario.spec.fault.runtime[:len(runtime)] == runtime
    assert len(scenario.spec.fault.runtime) > len(runtime)
    assert golden_key(scenario, {}) != golden_key(original, {})

    def refused(doc: dict) -> str:
        path.write_text(yaml.safe_dump(doc))
        with pytest.raises(ScenarioError) as e:
            load_file(path)
        return str(e.value)

    assert "cannot read" in refused(dict(variant, base="missing.yaml"))
    assert "not ['metadta']" in refused(dict(variant, metadta={}))
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(variant))
    assert "a variant of a variant" in refused(dict(variant, base="other.yaml"))
    with pytest.raises(ScenarioError, match="read from a file"):
        parse(yaml.safe_dump(variant))
