"""``dbabench campaign``: run a Campaign manifest on this machine, and rebuild its tables."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

import yaml
from pydantic import ValidationError
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TaskID,
                           TextColumn, TimeElapsedColumn)
from rich.table import Table

from dbabench.cli import consoles
from dbabench.cli.arguments import positive_int, usd
from dbabench.cli.interrupt import run_interruptible
from dbabench.errors import EXIT_INFRA, EXIT_INTERRUPTED, EXIT_OK
from dbabench.agents import registry
from dbabench.model.agent import EFFORTS
from dbabench.model.kube import Campaign, CampaignSpec
from dbabench.paths import campaigns_dir, writable
from dbabench.records import campaign as files
from dbabench.runner.campaign import (CampaignError, Cell, cells, check_agents, check_resumable,
                                      digest, record, run_campaign, select)
from dbabench.results.html_report import write_tables
from dbabench.results.leaderboard import LEADERBOARD_FILE
from dbabench.scenario import difficulty
from dbabench.scenario.loader import discover, format_validation_error, scenarios_root
from dbabench.yamltext import load_yaml

out, console = consoles.pair()


def _runbook_files(path: Path, doc: object) -> None:
    """An agent's ``runbookFile`` (relative to the manifest) becomes its ``runbook``, the text
    the Campaign resource takes: what is recorded, and compared on resume, is the text."""
    spec = doc.get("spec") if isinstance(doc, dict) else None
    agents = spec.get("agents") if isinstance(spec, dict) else None
    for i, agent in enumerate(agents if isinstance(agents, list) else []):
        if not isinstance(agent, dict) or "runbookFile" not in agent:
            continue
        if "runbook" in agent:
            raise CampaignError(f"{path}: spec.agents[{i}]: give runbook (the text) or"
                                " runbookFile (a file), not both")
        file = path.parent / str(agent.pop("runbookFile"))
        try:
            agent["runbook"] = file.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise CampaignError(f"{path}: spec.agents[{i}].runbookFile: cannot read {file}:"
                                f" {getattr(e, 'strerror', None) or e}") from e


def _manifest(path: Path) -> Campaign:
    try:
        doc = load_yaml(path.read_text())
    except OSError as e:
        raise CampaignError(f"{path}: cannot read: {e.strerror}") from e
    except yaml.YAMLError as e:
        raise CampaignError(f"{path}: not valid YAML: {e}") from e
    _runbook_files(path, doc)
    try:
        # the names the CRD has: the file the operator takes is the file this takes
        return Campaign.model_validate(doc, by_name=False)
    except ValidationError as e:
        raise CampaignError(format_validation_error(str(path), e).replace(
            "invalid Scenario", "invalid Campaign")) from e


def _plan(name: str, spec: CampaignSpec, max_cost: float | None) -> Table:
    planned = cells(spec)
    table = Table("agent", "cells", "at most (USD)",
                  title=f"campaign {name}: {len(planned)} cells ({len(spec.agents)} agents x"
                        f" {len(spec.scenarios)} scenarios x {spec.repeats} repeats)")
    bound = 0.0
    for agent in spec.agents:
        n = sum(1 for c in planned if c.agent == agent)
        if registry.metered_provider(agent) is None:
            cap = "0 (no model calls)"
        elif agent.max_cost_usd is not None:
            bound += n * agent.max_cost_usd
            cap = f"{n * agent.max_cost_usd:g} ({agent.max_cost_usd:g} a run)"
        else:
            bound = float("inf")
            cap = "unbounded (no maxCostUsd)"
        table.add_row(escape(agent.label), str(n), cap)
    if max_cost is not None:
        bound = min(bound, max_cost)
    table.caption = ("campaign at most: " + ("unbounded: give --max-cost or each model agent"
                                             " maxCostUsd" if bound == float("inf")
                                             else f"${bound:g}"))
    return table


class _Display:
    """A campaign's progress: on a terminal, a bar for the campaign and a line for each cell
    at work with its run's latest news; elsewhere (a CI log), a line as each cell starts and
    ends."""

    def __init__(self, total: int, finished: int) -> None:
        self.total, self.finished = total, finished
        self.live = console.is_terminal
        self.bars = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                             MofNCompleteColumn(), TimeElapsedColumn(), console=console)
        self.campaign = self.bars.add_task("campaign", total=total, completed=finished)
        self.running: dict[tuple[str, str, int], TaskID] = {}

    def __enter__(self) -> _Display:
        if self.live:
            self.bars.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self.live:
            self.bars.stop()

    def __call__(self, cell: Cell, news: str, ended: bool) -> None:
        label = escape(f"{cell.label} on {cell.scenario} #{cell.repeat}")
        self.finished += ended
        if not self.live:
            if ended or news == "started":
                console.print(f"[dim]{self.finished}/{self.total}[/dim] {label}:"
                              f" {escape(news)}", highlight=False)
            return
        if ended:
            self.bars.advance(self.campaign)
            task = self.running.pop(cell.key, None)
            if task is not None:
                self.bars.remove_task(task)
            self.bars.console.print(f"{label}: {escape(news)}", highlight=False)
            return
        line = f"  {label}: [dim]{escape(news)}[/dim]"
        if cell.key in self.running:
            self.bars.update(self.running[cell.key], description=line)
        else:
            self.running[cell.key] = self.bars.add_task(line, total=None)


def _run(args: argparse.Namespace) -> int:
    root = args.root or scenarios_root()
    stored = None
    if args.resume is not None:
        if not (args.resume / files.CAMPAIGN_FILE).exists():
            raise CampaignError(f"{args.resume} holds no {files.CAMPAIGN_FILE}: nothing to"
                                " resume")
        stored = files.campaign(args.resume)
    if args.manifest is not None:
        manifest = _manifest(args.manifest)
        name, spec = manifest.metadata.name, manifest.spec
    elif stored is not None:
        name, spec = stored.name, stored.asked or stored.spec
    else:
        raise CampaignError("give a Campaign manifest, or --resume DIR")
    catalog = discover(root)
    measured = difficulty.load(root)
    asked = spec
    try:
        spec = select(spec, {s: sc for s, (_, sc) in catalog.items()}, measured)
    except CampaignError as e:
        raise CampaignError(f"{e} (see dbabench scenarios list; scenarios from {root})") from e
    scenarios = {s: catalog[s] for s in spec.scenarios}
    check_agents(spec, scenarios)
    # a resume keeps what the campaign was started with, unless told otherwise
    jobs = args.jobs or (stored.jobs if stored is not None else spec.max_parallel)
    max_cost = (args.max_cost if args.max_cost is not None else
                stored.max_cost_usd if stored is not None else spec.max_cost_usd)
    if args.dry_run:
        out.print(_plan(name, spec, max_cost))
        out.print("scenarios: " + ", ".join(spec.scenarios), highlight=False)
        return EXIT_OK
    now = record(name, spec, {s: sc for s, (_, sc) in scenarios.items()},
                 {s: digest(p.read_bytes()) for s, (p, _) in scenarios.items()}, cwd=os.getcwd(),
                 jobs=jobs, max_cost_usd=max_cost,
                 command=stored.command if stored is not None else sys.argv,
                 asked=None if asked == spec else asked)
    if stored is not None:
        check_resumable(stored, now)
        directory = args.resume
    else:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        directory = writable(args.out or campaigns_dir() / f"{name}-{stamp}", "--out")
        if (directory / files.CAMPAIGN_FILE).exists():
            raise CampaignError(f"{directory} holds a campaign already: --resume {directory}"
                                " to finish it, or choose another --out")
    total = len(cells(spec))
    done = len(files.results(directory))
    if done >= total:
        out.print(f"campaign {name}: all {total} cells have results; nothing to run (its"
                  " tables are written again)", highlight=False)
    else:
        out.print(f"campaign {name}: {total} cells ({done} done), up to {jobs} at once,"
                  f" in {directory}", highlight=False)
    try:
        with _Display(total, done) as display:
            results = run_interruptible(run_campaign(now, directory, scenarios, measured,
                                                     progress=display))
    except KeyboardInterrupt:
        out.print(f"interrupted: every cell at work was stopped and leaves no result; the"
                  f" {len(files.results(directory))} finished are kept. Resume with:"
                  f" dbabench campaign run --resume {directory}", highlight=False,
                  soft_wrap=True)
        return EXIT_INTERRUPTED
    out.print((directory / LEADERBOARD_FILE).read_text(), markup=False, highlight=False,
              soft_wrap=True)
    out.print(f"campaign directory: {directory}")
    return EXIT_INFRA if any(r.status == "harness_error" for r in results) else EXIT_OK


def _report(args: argparse.Namespace) -> int:
    if not (args.dir / files.CAMPAIGN_FILE).exists():
        raise CampaignError(f"{args.dir} holds no {files.CAMPAIGN_FILE}: not a campaign"
                            " directory")
    write_tables(args.dir)
    out.print(f"wrote {args.dir / LEADERBOARD_FILE} and the tables beside it")
    return EXIT_OK


def _fetch(args: argparse.Namespace) -> int:
    from kubernetes.config import ConfigException

    from dbabench.env.kube import read_campaign_results

    directory = args.out or campaigns_dir() / args.name
    if (directory / files.CAMPAIGN_FILE).exists() and not args.replace:
        raise CampaignError(f"{directory} holds a campaign already: --replace to overwrite its"
                            " records, or choose another --out")
    try:
        records = read_campaign_results(args.name, args.namespace)
    except ConfigException as e:
        raise CampaignError(f"no Kubernetes API to read from: {e}") from e
    if records is None:
        raise CampaignError(f"Campaign {args.name} in namespace {args.namespace} has no results"
                            " ConfigMaps (it records them once a run has finished)")
    files.write_records(directory, records)
    write_tables(directory)
    out.print(f"wrote {directory}: {len(files.results(directory))} finished cells, their tables,"
              " plots and report")
    return EXIT_OK


def _judge(args: argparse.Namespace) -> int:
    import asyncio

    from dbabench.agents.chat import ChatSettings
    from dbabench.results.judge import judge_campaign

    if not (args.dir / files.CAMPAIGN_FILE).exists():
        raise CampaignError(f"{args.dir} holds no {files.CAMPAIGN_FILE}: not a campaign"
                            " directory")
    made = asyncio.run(judge_campaign(args.dir, args.model, dict(os.environ),
                                      ChatSettings(effort=args.effort)))
    write_tables(args.dir)
    cost = sum(j.cost_usd for j in made)
    out.print(f"the judge read {len(made)} runs (${cost:.4f}); its labels are in"
              f" {args.dir / files.JUDGE_FILE} and {args.dir / LEADERBOARD_FILE}")
    return EXIT_OK


def add_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    c = sub.add_parser("campaign", help="rank agents: a Campaign manifest's matrix of agents x"
                                        " scenarios x repeats, run here")
    actions = c.add_subparsers(dest="action", required=True)
    r = actions.add_parser("run", help="run every cell (or what a resumed campaign lacks)")
    r.add_argument("manifest", nargs="?", type=Path, default=None,
                   help="a Campaign manifest (kind: Campaign), as the operator takes it")
    r.add_argument("-j", "--jobs", type=positive_int, default=None,
                   help="cells at once (default: the manifest's maxParallel); beyond the first,"
                        " one starts only while the CPU has room")
    r.add_argument("--out", type=Path, default=None,
                   help="the campaign directory (default: $DBABENCH_CAMPAIGNS or"
                        " ./.dbabench/campaigns, then NAME-TIME)")
    r.add_argument("--max-cost", type=usd, default=None, metavar="USD",
                   help="campaign-wide: once the cells' cost reaches it, no new cell starts"
                        " (default: the manifest's maxCostUsd)")
    r.add_argument("--dry-run", action="store_true",
                   help="print the plan and what it would cost at most; start nothing")
    r.add_argument("--resume", type=Path, default=None, metavar="DIR",
                   help="finish this campaign directory's campaign: only the cells it lacks")
    r.set_defaults(func=_run)
    rep = actions.add_parser("report", help="rebuild a campaign directory's tables from its"
                                            " records")
    rep.add_argument("dir", type=Path)
    rep.set_defaults(func=_report)
    judge = actions.add_parser("judge", help="a judge model's labels of the scored runs,"
                                             " stored apart and shown beside the rules' (never"
                                             " a score)")
    judge.add_argument("dir", type=Path)
    judge.add_argument("--model", required=True, metavar="PROVIDER:MODEL",
                       help="the judge (key and address from the environment, as for"
                            " dbabench run)")
    judge.add_argument("--effort", choices=EFFORTS, default=None)
    judge.set_defaults(func=_judge)
    fetch = actions.add_parser("fetch", help="a Campaign resource's records (its results"
                                             " ConfigMaps) as a campaign directory, with its"
                                             " tables, plots and report")
    fetch.add_argument("name", help="the Campaign's name")
    fetch.add_argument("-n", "--namespace", default="default")
    fetch.add_argument("--out", type=Path, default=None,
                       help="the campaign directory (default: $DBABENCH_CAMPAIGNS or"
                            " ./.dbabench/campaigns, then NAME)")
    fetch.add_argument("--replace", action="store_true",
                       help="overwrite the records of a directory fetched before")
    fetch.set_defaults(func=_fetch)
