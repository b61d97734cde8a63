"""Campaign planning and tallying: pure functions over AgentRun bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dbabench.model.kube import AgentSpec, CampaignSpec, OwnerReference
from dbabench.env.kube import campaign_results, joined_results
from dbabench.operator import campaigns
from dbabench.records.campaign import write_records
from dbabench.results.html_report import write_tables
from dbabench.results.leaderboard import LEADERBOARD_FILE

SPEC = CampaignSpec.model_validate({
    "scenarios": ["a", "b"], "repeats": 2, "maxParallel": 3,
    "agents": [{"kind": "reference"}, {"kind": "reference", "remediation": "alt"},
               {"kind": "null"}]})


def run(phase: str | None, **summary: Any) -> dict[str, Any]:
    status: dict[str, Any] = {} if phase is None else {"phase": phase}
    if summary:
        status["summary"] = {"outcomePass": False, "diagnosisPass": False, "safePass": False,
                             "costUsd": 0.0, **summary}
    return {"status": status}


def test_plan_is_every_pair_per_repeat_with_stable_names() -> None:
    planned = campaigns.plan("cmp", SPEC)
    assert len(planned) == 12
    assert [p.name for p in planned[:3]] == ["cmp-0000", "cmp-0001", "cmp-0002"]
    assert {(p.scenario, p.agent.label) for p in planned[:6]} == {
        (s, a) for s in "ab" for a in ("reference", "reference:alt", "null")}
    assert {p.repeat for p in planned[:6]} == {0}
    assert planned == campaigns.plan("cmp", SPEC)
    long = campaigns.plan("x" * 80, SPEC)
    assert all(len(p.name) <= 63 for p in long) and len({p.name for p in long}) == 12


def test_runs_start_in_order_up_to_the_parallel_limit() -> None:
    planned = campaigns.plan("cmp", SPEC)
    assert [p.name for p in campaigns.to_start(planned, {}, SPEC)] == [
        "cmp-0000", "cmp-0001", "cmp-0002"]
    existing = {"cmp-0000": run("Succeeded"), "cmp-0001": run("Running"),
                "cmp-0002": run(None)}
    assert [p.name for p in campaigns.to_start(planned, existing, SPEC)] == ["cmp-0003"]
    two = SPEC.model_copy(update={"max_parallel": 2})
    assert campaigns.to_start(planned, existing, two) == []


def test_the_cost_cap_starts_no_new_run_lets_running_ones_finish_and_says_so() -> None:
    capped = SPEC.model_copy(update={"max_cost_usd": 1.0})
    planned = campaigns.plan("cmp", capped)
    under = {"cmp-0000": run("Succeeded", costUsd=0.6), "cmp-0001": run("Running")}
    assert [p.name for p in campaigns.to_start(planned, under, capped)] == ["cmp-0002", "cmp-0003"]
    reached = {**under, "cmp-0002": run("Succeeded", costUsd=0.4)}
    assert campaigns.to_start(planned, reached, capped) == []
    status = campaigns.tally(planned, reached, capped)
    # a run still going finishes; until it has, the campaign is running
    assert (status.phase, status.cost_usd, status.not_started) == ("Running", 1.0, 9)
    ended = {**reached, "cmp-0001": run("Succeeded", costUsd=0.3)}
    status = campaigns.tally(planned, ended, capped)
    assert (status.phase, status.finished, status.not_started) == ("Capped", 3, 9)
    assert "cost cap of $1 was reached ($1.3): 9 not started" in status.phase_reason
    # without a cap the same spend starts the next run
    assert campaigns.to_start(planned, ended, SPEC)[0].name == "cmp-0003"


def test_tally_scores_per_agent_and_keeps_infra_errors_apart() -> None:
    planned = campaigns.plan("cmp", SPEC)
    existing = {
        "cmp-0000": run("Succeeded", outcomePass=True, diagnosisPass=True, safePass=True,
                        costUsd=0.25, costBasis="metered"),
        "cmp-0003": run("Succeeded", outcomePass=True, costUsd=0.5, costBasis="self-reported"),
        "cmp-0001": run("InfraError"),
        "cmp-0002": run("Running"),
    }
    status = campaigns.tally(planned, existing, SPEC)
    assert (status.phase, status.runs, status.finished) == ("Running", 12, 3)
    by_agent = {t.agent: t for t in status.agents}
    ref = by_agent["reference"]
    assert (ref.runs, ref.finished, ref.scored, ref.outcome_pass, ref.safe_pass) == (4, 2, 2, 2, 1)
    assert ref.safe_pass_rate == 0.5 and ref.cost_usd == 0.75
    # one run metered, one reported: the agent's total is neither
    assert ref.cost_basis == "mixed"
    alt = by_agent["reference:alt"]
    assert (alt.finished, alt.infra_errors, alt.scored, alt.safe_pass_rate) == (1, 1, 0, None)
    done = {p.name: run("Succeeded", safePass=True) for p in planned}
    assert campaigns.tally(planned, done, SPEC).phase == "Succeeded"


def test_a_model_agent_reaches_its_runs_whole_and_is_tallied_by_model() -> None:
    spec = CampaignSpec.model_validate({"scenarios": ["a"], "agents": [
        {"kind": "react", "model": "openai:gpt-4o-mini", "effort": "low", "maxCostUsd": 0.5,
         "apiKeySecret": {"name": "gateway-key", "key": "api-key"}}]})
    (planned,) = campaigns.plan("cmp", spec)
    owner = OwnerReference(api_version="dbabench.io/v1alpha1", kind="Campaign", name="cmp",
                           uid="u-1")
    body = campaigns.agentrun_body(planned, "cmp", spec, owner)
    assert body["metadata"] == {
        "name": planned.name, "labels": {campaigns.CAMPAIGN_LABEL: "cmp"},
        "ownerReferences": [{"apiVersion": "dbabench.io/v1alpha1", "kind": "Campaign",
                             "name": "cmp", "uid": "u-1", "controller": True,
                             "blockOwnerDeletion": True}]}
    assert body["spec"]["agent"] == {
        "kind": "react", "model": "openai:gpt-4o-mini", "effort": "low", "maxCostUsd": 0.5,
        "apiKeySecret": {"name": "gateway-key", "key": "api-key"}}
    # one model at two efforts is two agents of the table
    assert planned.agent.label == "react:openai:gpt-4o-mini@low"


def test_model_fields_belong_to_model_agents() -> None:
    from pydantic import ValidationError
    with pytest.raises(ValidationError, match="a plan agent needs model"):
        CampaignSpec.model_validate({"scenarios": ["a"], "agents": [{"kind": "plan"}]})
    with pytest.raises(ValidationError, match="model, effort: for react and plan agents only"):
        CampaignSpec.model_validate({"scenarios": ["a"], "agents": [
            {"kind": "null", "model": "openai:gpt-4o", "effort": "low"}]})


def test_an_external_agent_takes_a_gateway_only_to_be_metered() -> None:
    from pydantic import ValidationError
    metered = {"kind": "external", "image": "me/agent:1", "meter": "openai",
               "baseUrl": "http://gateway/v1", "maxCostUsd": 1,
               "apiKeySecret": {"name": "k", "key": "api-key"}}
    assert AgentSpec.model_validate(metered).meter == "openai"
    with pytest.raises(ValidationError, match="an external agent takes baseUrl, apiKeySecret"
                                              " and maxCostUsd with meter"):
        AgentSpec.model_validate({**metered, "meter": None})
    with pytest.raises(ValidationError, match="effort: for react and plan agents only"):
        AgentSpec.model_validate({**metered, "effort": "low"})
    with pytest.raises(ValidationError, match="meter: for external agents only"):
        AgentSpec.model_validate({"kind": "react", "model": "openai:gpt-4o", "meter": "openai"})


def test_the_operator_tables_a_campaign_as_the_command_line_does(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    from dbabench.model.evaluation import (DiagnosisResult, EvaluationResult, OutcomeResult,
                                           SafetyResult)
    from dbabench.scenario.loader import discover, scenarios_root

    spec = CampaignSpec.model_validate({"scenarios": ["stale-stats-lock-chain"], "repeats": 2,
                                        "agents": [{"kind": "reference"}, {"kind": "null"}]})
    planned = campaigns.plan("cmp", spec)
    scenario = discover(scenarios_root())["stale-stats-lock-chain"][1]

    def evaluation(ok: bool) -> EvaluationResult:
        return EvaluationResult(status="scored", scenario=scenario.name, agent="a",
                                report_valid=True, outcome=OutcomeResult(f=1.0, passed=ok),
                                diagnosis=DiagnosisResult(f1=1.0, passed=ok),
                                safety=SafetyResult(penalty=0))

    existing = {p.name: {"status": {"phase": "Succeeded", "finishedAt": "2026-12-01T10:00:00Z"}}
                for p in planned}
    # the second null run was never manifested; the last reference run is still running
    existing[planned[3].name]["status"] = {"phase": "InfraError",
                                           "phaseReason": "fault did not manifest: x"}
    existing[planned[2].name]["status"] = {"phase": "Running"}
    evaluations = {p.name: evaluation(p.agent.kind.value == "reference") for p in planned[:2]}
    found = campaigns.finished_cells(planned, existing, evaluations,
                                     {scenario.name: scenario}, {})
    assert [(c.agent, c.repeat, c.status) for c in found] == [
        ("reference", 0, "scored"), ("null", 0, "scored"), ("null", 1, "infra_error")]
    assert found[0].finished_at == datetime(2026, 12, 1, 10, tzinfo=timezone.utc)
    made = campaigns.tables("cmp", spec, "2026-12-01T09:00:00Z",
                            {scenario.name: {"spec": {"x": 1}}}, {scenario.name: scenario},
                            found, [])
    board = made.leaderboard
    assert "4 cells planned (2 agents x 1 scenarios x 2 repeats): 2 scored, 1 without a fair" \
           " run, 0 not started, 1 pending" in board
    assert "| reference | 1 | 1/1 (100%) |" in board and "| null | 1 | 0/1 (0%) |" in board
    assert "| null | stale-stats-lock-chain | 1 | infra_error | fault did not manifest: x |" \
        in board
    # the records it keeps (in its ConfigMaps) give the command line the same table, and
    # every plot and page
    directory = tmp_path / "fetched"
    write_records(directory, joined_results(campaign_results("cmp", None, made.records)))
    write_tables(directory)
    assert (directory / LEADERBOARD_FILE).read_text() == board
    assert (directory / "report" / "index.html").exists()


def test_a_campaign_record_of_any_size_fits_its_configmaps() -> None:
    lines = [json.dumps({"cell": i, "pad": "x" * 900}) + "\n" for i in range(2500)]
    records = {"campaign.json": "{}", "results.jsonl": "".join(lines), "events.jsonl": ""}
    bodies = campaign_results("cmp", None, records)
    assert [b["metadata"]["name"] for b in bodies] == ["cmp-results-0", "cmp-results-1",
                                                       "cmp-results-2"]
    assert all(len(json.dumps(b)) < 1_000_000 for b in bodies)
    assert set(bodies[1]["data"]) == {"results.jsonl"}
    assert bodies[0]["metadata"]["labels"] == {campaigns.CAMPAIGN_LABEL: "cmp",
                                               "dbabench.io/component": "results"}
    # shards come back in any order, as the API lists them; one the first does not count
    # (written by anyone else with the label) is not read
    stray = {"metadata": {"name": "cmp-results-3"}, "data": {"results.jsonl": "{}\n"}}
    assert joined_results([stray, *bodies[::-1]]) == records
    empty = {**records, "results.jsonl": ""}
    assert joined_results(campaign_results("cmp", None, empty)) == empty
