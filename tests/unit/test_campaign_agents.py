"""What a campaign runs: its scenarios chosen by name, pattern, category and difficulty from
the real catalog; its agents' runbooks and external commands, as the manifest gives them."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from dbabench.agents import registry
from dbabench.agents.external import ExternalAgent
from dbabench.cli.campaign import _manifest as campaign_manifest
from dbabench.cli.main import main
from dbabench.errors import EXIT_OK, EXIT_USAGE
from dbabench.model.kube import AgentSpec, CampaignSpec
from dbabench.model.task import AgentTask
from dbabench.runner.campaign import CampaignError, build_agent, select
from dbabench.scenario import difficulty
from dbabench.scenario.loader import discover, scenarios_root

CATALOG = {name: scenario for name, (_, scenario) in discover(scenarios_root()).items()}
MEASURED = difficulty.load(scenarios_root())


def spec(**fields: object) -> CampaignSpec:
    return CampaignSpec.model_validate({"agents": [{"kind": "null"}], **fields})


def test_scenarios_are_chosen_by_name_pattern_category_and_difficulty() -> None:
    named = select(spec(scenarios=["stale-stats-lock-chain"]), CATALOG, MEASURED)
    assert named.scenarios == ["stale-stats-lock-chain"]
    # a pattern's matches sorted, a name given twice taken once, the entries' order kept
    replicas = sorted(n for n in CATALOG if n.startswith("replica-"))
    assert len(replicas) >= 2
    chosen = select(spec(scenarios=["stale-stats-lock-chain", "replica-*",
                                    replicas[0]]), CATALOG, MEASURED)
    assert chosen.scenarios == ["stale-stats-lock-chain", *replicas]
    # the filters apply to every entry, and are resolved away: the record holds names
    every = select(spec(scenarios=["*"], categories=["health-check"], difficulty="Hard"),
                   CATALOG, MEASURED)
    expected = sorted(n for n, s in CATALOG.items() if s.spec.category.value == "health-check"
                      and difficulty.describe(s, MEASURED)[1] == "Hard")
    assert every.scenarios == expected and expected
    assert (every.categories, every.difficulty) == (None, None)
    easy = select(spec(scenarios=["*"], difficulty="Easy"), CATALOG, MEASURED).scenarios
    assert not set(easy) & set(expected) and len(easy) < len(CATALOG)


def test_a_choice_that_finds_nothing_is_named() -> None:
    with pytest.raises(CampaignError, match=re.escape("no scenario matches 'nothing-*'")):
        select(spec(scenarios=["stale-stats-lock-chain", "nothing-*"]), CATALOG, MEASURED)
    with pytest.raises(CampaignError, match="no scenario is named 'typo'"):
        select(spec(scenarios=["typo"]), CATALOG, MEASURED)
    with pytest.raises(CampaignError, match="no scenario is left of replica-\\* once filtered"
                                            " by categories query-tuning"):
        select(spec(scenarios=["replica-*"], categories=["query-tuning"]), CATALOG, MEASURED)
    with pytest.raises(ValidationError, match="difficulty"):
        spec(scenarios=["*"], difficulty="Medium")


def test_an_external_agent_is_an_image_or_a_command_and_is_labelled_by_it() -> None:
    agent = AgentSpec.model_validate({"kind": "external",
                                      "command": ["/usr/bin/python3", "/x/my_agent.py", "-v"]})
    assert agent.label == "external:python3 my_agent.py -v"
    built = build_agent(agent, CATALOG["stale-stats-lock-chain"])
    assert isinstance(built, ExternalAgent) and built.gateway is None
    for bad, says in [({"kind": "external"}, "one of image"),
                      ({"kind": "external", "image": "a", "command": ["b"]}, "one of image"),
                      ({"kind": "null", "command": ["b"]}, "for external agents only"),
                      ({"kind": "external", "command": []}, "at least 1")]:
        with pytest.raises(ValidationError, match=says):
            AgentSpec.model_validate(bad)


def test_a_metered_command_gets_the_meter_and_never_the_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider")
    agent = AgentSpec.model_validate({"kind": "external", "command": ["agent"],
                                      "meter": "openai", "maxCostUsd": 0.5})
    built = registry.build(agent, None, env={"OPENAI_API_KEY": "sk-provider"})
    assert isinstance(built, ExternalAgent) and built.gateway is not None
    assert built.gateway.max_cost_usd == 0.5
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(Exception, match="OPENAI_API_KEY"):
        build_agent(agent, CATALOG["stale-stats-lock-chain"])


def test_the_runbook_reaches_the_agent_with_its_task() -> None:
    scenario = CATALOG["stale-stats-lock-chain"]
    plain = AgentTask.of(scenario, ["execute_sql"], "INC-1")
    given = AgentTask.of(scenario, ["execute_sql"], "INC-1", "Check locks first.\n")
    assert given.as_text() == plain.as_text() + "\n\nYour team's runbook:\n\nCheck locks first."
    assert plain.runbook is None and "runbook" not in plain.as_text()


def manifest(path: Path, agents: list[dict[str, object]], **spec: object) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "dbabench.io/v1alpha1", "kind": "Campaign", "metadata": {"name": "c"},
        "spec": {"scenarios": ["stale-stats-lock-chain"], "agents": agents, **spec}}))
    return path


def test_a_runbook_file_is_read_beside_the_manifest_into_the_spec(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "books").mkdir()
    (tmp_path / "books" / "locks.md").write_text("Check locks first.\n")
    good = manifest(tmp_path / "good.yaml", [{"kind": "reference",
                                              "runbookFile": "books/locks.md"}],
                    scenarios=["stale-stats-*", "replica-*"], categories=["composite"])
    assert main(["campaign", "run", str(good), "--dry-run"]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "scenarios: stale-stats-lock-chain" in printed and "replica-" not in printed
    # the spec holds the text: what is recorded, and compared on a resume
    assert campaign_manifest(good).spec.agents[0].runbook == "Check locks first.\n"
    missing = manifest(tmp_path / "m.yaml", [{"kind": "null", "runbookFile": "nope.md"}])
    assert main(["campaign", "run", str(missing), "--dry-run"]) == EXIT_USAGE
    err = " ".join(capsys.readouterr().err.split())
    assert "spec.agents[0].runbookFile: cannot read" in err and "nope.md" in err
    both = manifest(tmp_path / "b.yaml", [{"kind": "null", "runbook": "x",
                                           "runbookFile": "books/locks.md"}])
    assert main(["campaign", "run", str(both), "--dry-run"]) == EXIT_USAGE
    assert "not both" in capsys.readouterr().err


def test_progress_shows_the_campaign_and_each_cell_at_work(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from dbabench.cli import campaign as shell
    from dbabench.runner.campaign import Cell

    cell = Cell("stale-stats-lock-chain", AgentSpec.model_validate({"kind": "null"}), 0)
    screen = io.StringIO()
    monkeypatch.setattr(shell, "console", Console(file=screen, force_terminal=True, width=150))
    with shell._Display(2, 0) as display:
        display(cell, "started", False)
        display(cell, "provisioning (reflink store)", False)
        campaign, running = display.bars.tasks
        assert "null on stale-stats-lock-chain #0" in running.description
        assert "provisioning (reflink store)" in running.description
        display(cell, "Safe Pass", True)
        assert [t.completed for t in display.bars.tasks] == [1]
    assert "null on stale-stats-lock-chain #0: Safe Pass" in screen.getvalue()
    # in a log, a line as a cell starts and as it ends; the run's news stays in its directory
    log = io.StringIO()
    monkeypatch.setattr(shell, "console", Console(file=log, width=150))
    with shell._Display(2, 1) as display:
        for news, ended in (("started", False), ("provisioning", False), ("Safe Pass", True)):
            display(cell, news, ended)
    assert log.getvalue().splitlines() == [
        "1/2 null on stale-stats-lock-chain #0: started",
        "2/2 null on stale-stats-lock-chain #0: Safe Pass"]


def test_every_control_the_battery_runs_is_an_agent_a_campaign_takes() -> None:
    """One list of the harness's agents (model.proof): a campaign, an AgentRun and
    ``dbabench run`` take the same ones (the sweep was refused by campaigns before)."""
    from typing import get_args

    from dbabench.model.kube import SCRIPTED_KINDS, AgentKind
    from dbabench.model.proof import CONTROLS, ScriptedAgent

    assert {k.value for k in SCRIPTED_KINDS} == set(get_args(ScriptedAgent)) >= set(CONTROLS)
    scenario = CATALOG["stale-stats-lock-chain"]
    for control in CONTROLS:
        agent = build_agent(AgentSpec(kind=AgentKind(control)), scenario)
        assert agent.name == control
    chosen = spec(agents=[{"kind": "sweep"}, {"kind": "reset"}],
                  scenarios=["stale-stats-lock-chain"])
    assert [a.kind.value for a in chosen.agents] == ["sweep", "reset"]
