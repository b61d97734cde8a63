"""A dataset's services: read from their files, placed in traffic profiles, added to every
scenario on the dataset as jobs of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dbabench.model.dataset import DatasetName, Traffic
from dbabench.model.workload import JobStep
from dbabench.scenario import datasets
from dbabench.scenario.datasets import Dataset, DatasetError, _services, complete
from dbabench.scenario.loader import parse, scenarios_root


def _job(name: str, application: str) -> dict:
    return {"action": "job", "name": name, "application_name": application,
            "role": "reporting", "statements": [f"SELECT '{name}'"], "interval_seconds": 5}


def _write(directory: Path, services: dict[str, list[dict]], profiles: dict) -> Path:
    (directory / "services").mkdir()
    for file, jobs in services.items():
        (directory / "services" / f"{file}.yaml").write_text(yaml.safe_dump(jobs))
    (directory / "traffic.yaml").write_text(yaml.safe_dump(profiles))
    return directory


def test_services_are_read_and_placed_in_their_profiles(tmp_path: Path) -> None:
    root = _write(tmp_path, {"10_api": [_job("api-read", "api"), _job("api-write", "api")],
                             "20_bi": [_job("bi-tiles", "bi")],
                             "30_monitor": [_job("monitor", "agent")]},
                  {"oltp": ["api", "agent"], "olap": ["bi", "agent"]})
    found = {s.application_name: s for s in _services(root / "services", root / "traffic.yaml")}
    assert [j.name for j in found["api"].jobs] == ["api-read", "api-write"]
    # services ran long before the incident: their jobs start at any phase of their interval
    assert all(job.staggered for s in found.values() for job in s.jobs)
    assert found["api"].traffic == {Traffic.mixed, Traffic.oltp}
    assert found["agent"].traffic == {Traffic.mixed, Traffic.oltp, Traffic.olap}
    dataset = Dataset("d", 1, (), services=tuple(found.values()))
    assert [j.name for j in dataset.jobs(Traffic.olap)] == ["bi-tiles", "monitor"]
    assert len(dataset.jobs(Traffic.mixed)) == 4 and dataset.jobs(Traffic.none) == []


@pytest.mark.parametrize(("services", "profiles", "says"), [
    ({"a": [_job("x", "api"), _job("y", "bi")]}, {"oltp": ["api", "bi"]},
     "share one application_name"),
    ({"a": [_job("x", "api")], "b": [_job("x", "bi")]}, {"oltp": ["api", "bi"]},
     "used twice"),
    ({"a": [_job("x", "api")]}, {"olap": []}, "in no profile but mixed"),
    ({"a": [_job("x", "api")]}, {"oltp": ["api", "typo"]}, "which no service"),
    ({"a": [_job("x", "api")]}, {"nightly": ["api"]}, "mapping of oltp and olap"),
    ({"a": [{**_job("x", "api"), "sessions": 0}]}, {"oltp": ["api"]},
     r"(?s)a\.yaml, job 1: .*sessions"),
])
def test_a_bad_service_file_is_named(tmp_path: Path, services: dict, profiles: dict,
                                     says: str) -> None:
    root = _write(tmp_path, services, profiles)
    with pytest.raises(DatasetError, match=says):
        _services(root / "services", root / "traffic.yaml")


def test_a_scenario_gets_its_traffics_services_as_jobs_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    api = datasets.Service("api", frozenset({Traffic.mixed, Traffic.oltp}), (
        JobStep.model_validate(_job("api-read", "api")),))
    bi = datasets.Service("bi", frozenset({Traffic.mixed, Traffic.olap}), (
        JobStep.model_validate(_job("bi-tiles", "bi")),
        JobStep.model_validate(_job("order-api", "bi"))))
    monkeypatch.setitem(datasets.DATASETS, DatasetName.estate,
                        lambda scale: Dataset("estate", 1, (), services=(api, bi)))
    path = scenarios_root() / "composite" / "stale-stats-lock-chain.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["spec"]["database"]["dataset"] = "estate"

    def jobs(traffic: str) -> list[str]:
        doc["spec"]["database"]["traffic"] = traffic
        scenario = parse(yaml.safe_dump(doc), "test")
        assert complete(scenario) is scenario  # parse completed it: nothing is added twice
        return [s.name for s in scenario.spec.fault.runtime if isinstance(s, JobStep)]

    own = [s["name"] for s in doc["spec"]["fault"]["runtime"] if s["action"] == "job"]
    assert "order-api" in own  # the scenario's own job of that name wins
    assert jobs("mixed") == [*own, "api-read", "bi-tiles"]
    assert jobs("oltp") == [*own, "api-read"]
    assert jobs("olap") == [*own, "bi-tiles"]
    assert jobs("none") == own
