"""``dbabench scenarios prove``, ``measure``, ``footprints``, ``catalog``, ``vocabulary`` and
``reference``: the self-proof battery, the difficulty measurement that rides on its reference
runs, the scan of what a run's set-up leaves where the agent can read it, the catalog page, the
diagnosis contract's page and the scenario author's reference."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from dbabench.model.artifacts import StoreArtifact
from dbabench.cli import consoles
from dbabench.cli.arguments import positive_int
from dbabench.cli.interrupt import run_interruptible
from dbabench.agents.scripted import NullAgent
from dbabench.evaluate import diagnosis_doc
from dbabench.evaluate import reference as reference_doc
from dbabench.evaluate.reference import estate as estate_doc
from dbabench.model.footprint import FootprintScan, FootprintSummary, Kind
from dbabench.model.proof import CONTROLS, ProofCheck, ProveSummary, ScenarioProof
from dbabench.model.scenario import Scenario
from dbabench.paths import runs_dir, writable
from dbabench.errors import EXIT_FAILED, EXIT_OK
from dbabench.runner.prove import default_jobs, plan, prove
from dbabench.runner.footprints import scanner
from dbabench.runner.run import run_scenario
from dbabench.runner.throttle import MAX_PRESSURE
from dbabench.scenario import catalog, difficulty
from dbabench.scenario.loader import discover, scenarios_root
from dbabench.scenario.select import select

CHECKS = ("reference", "alternative", *CONTROLS)
Progress = Callable[[str], None]


def add_parsers(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = actions.add_parser(
        "prove", help="run every scenario's self-proof battery (reference, alternatives,"
                      f" and the controls: {', '.join(CONTROLS)}) and judge it")
    _common(p)
    p.add_argument("--check", action="append", choices=CHECKS, default=None, dest="checks",
                   help="run only these checks of each scenario (repeatable; default: all)")
    p.add_argument("--json", type=Path, default=None, dest="json_path",
                   help="write the summary here (default: prove.json in the battery's directory)")
    p.set_defaults(func=_prove)
    m = actions.add_parser(
        "measure", help="run each scenario's reference path and store its difficulty (D, C)"
                        " in difficulty.json beside the manifests (or in --out)")
    _common(m)
    m.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="write difficulty.json in this directory instead, made if missing"
                        " (measurements already there are kept)")
    m.set_defaults(func=_measure)
    f = actions.add_parser(
        "footprints", help="run each scenario, one at a time, until the agent would come in (the"
                           " null agent) and list what of its set-up the agent's tools can read:"
                           " the fault's statements, the harness's checks and sessions, words"
                           " that name the harness; exit 1 on a footprint nobody accepted")
    f.add_argument("selectors", nargs="+", metavar="SELECTOR",
                   help="scenario name, category, glob over names, or manifest file")
    f.add_argument("--json", type=Path, default=None, dest="json_path",
                   help="write the scans here (default: footprints.json in the scan's directory)")
    f.add_argument("--runs-dir", type=Path, default=None,
                   help="where run directories go (default: $DBABENCH_RUNS or ./.dbabench/runs)")
    f.set_defaults(func=_footprints)
    c = actions.add_parser("catalog", help="the catalog table (docs/scenarios.md) from the"
                                           " manifests and their measured difficulty")
    c.add_argument("--out", type=Path, default=None, help="write it here instead of printing")
    c.set_defaults(func=_catalog)
    v = actions.add_parser("vocabulary", help="the diagnosis contract (docs/diagnosis.md) from"
                                              " the vocabulary and the matcher")
    v.add_argument("--out", type=Path, default=None, help="write it here instead of printing")
    v.set_defaults(func=_vocabulary)
    r = actions.add_parser("reference", help="the scenario author's reference (docs/reference.md)"
                                             " from the code that defines the server, dataset,"
                                             " workload, checks and safety rules")
    r.add_argument("--out", type=Path, default=None, help="write it here instead of printing")
    r.set_defaults(func=_reference)
    e = actions.add_parser("estate", help="the estate's page (docs/estate.md) from its files and"
                                          " a scratch build of them (a minute or two)")
    e.add_argument("--out", type=Path, default=None, help="write it here instead of printing")
    e.set_defaults(func=_estate)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("selectors", nargs="*", metavar="SELECTOR",
                   help="scenario name, category, glob over names, or manifest file"
                        " (default: every scenario)")
    p.add_argument("--jobs", "-j", type=positive_int, default=default_jobs(),
                   help=f"at most this many runs at once (fewer while the CPU is busy), each"
                        f" with its own PostgreSQL (default here:"
                        f" {default_jobs()})")
    p.add_argument("--max-cpu-pressure", type=float, default=MAX_PRESSURE, metavar="PERCENT",
                   help="start another run only while the CPU's pressure-stall figure over the"
                        f" last 2 s is at most this (default {MAX_PRESSURE:g}; 100 starts runs"
                        " regardless)")
    p.add_argument("--retries", type=int, default=0, metavar="N",
                   help="run a failed reference or alternative, or a run whose fault did not"
                        " manifest, up to N more times; a pass on a retry is reported as flaky"
                        " (control runs that pass are never retried; default 0)")
    p.add_argument("--runs-dir", type=Path, default=None,
                   help="where run directories go (default: $DBABENCH_RUNS or ./.dbabench/runs)")


def _mark(checks: list[ProofCheck]) -> str:
    if not checks:
        return "[dim]-[/dim]"
    failed = [c for c in checks if not c.passed]
    if len(checks) == 1:
        return ("[red]FAIL[/red]" if failed else
                "[yellow]flaky[/yellow]" if checks[0].earlier else "[green]ok[/green]")
    return f"[red]{len(checks) - len(failed)}/{len(checks)}[/red]" if failed \
        else f"[green]{len(checks)}/{len(checks)}[/green]"


def _row(proof: ScenarioProof) -> list[str]:
    def of(prefix: str) -> list[ProofCheck]:
        return [c for c in proof.checks if c.run.check.split(":")[0] == prefix]

    slowest = max((c.wall_seconds for c in proof.checks), default=0.0)
    measured = proof.difficulty
    return [proof.scenario, "[green]ok[/green]" if proof.manifests else "[red]FAIL[/red]",
            _mark(of("reference")), _mark(of("alternative")), _mark(of("null")),
            *(_mark(of(control)) for control in CONTROLS), f"{proof.run_seconds:.0f}",
            f"{slowest:.0f}",
            f"{measured.complexity:.2f} {measured.label}" if measured else "-"]


def proof_table(summary: ProveSummary) -> Table:
    table = Table("scenario", "manifests", "reference", "alternatives", *CONTROLS,
                  "run-s", "slowest s", "C now",
                  title=f"self-proof: {len(summary.scenarios)} scenario(s), {summary.jobs} at a"
                        f" time, {summary.wall_seconds:.0f}s")
    for proof in summary.scenarios:
        table.add_row(*_row(proof))
    return table


def flakes(summary: ProveSummary) -> list[str]:
    return [f"{p.scenario} {c.run.check}: passed on attempt {len(c.earlier) + 1}; before:"
            f" {'; '.join(c.earlier)}" for p in summary.scenarios for c in p.flaky]


def failures(summary: ProveSummary) -> list[str]:
    return [f"{p.scenario} {c.run.check}: expected {c.run.expect}; {c.detail}"
            + (f" ({c.run_dir})" if c.run_dir else "")
            for p in summary.scenarios for c in p.checks if not c.passed]


def _battery(args: argparse.Namespace, verb: str, **options: object) -> tuple[ProveSummary, Path]:
    err = consoles.pair()[1]
    selected = select(discover(args.root), args.selectors)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    root = (runs_dir() if args.runs_dir is None
            else writable(args.runs_dir, "--runs-dir")) / f"{verb}-{stamp}"
    err.print(f"{verb}: {len(selected)} scenario(s), {args.jobs} run(s) at a time, in {root}",
              highlight=False)
    battery = prove(selected, jobs=args.jobs, runs_root=root, max_pressure=args.max_cpu_pressure,
                    retries=args.retries,
                    progress=lambda m: err.print(f"[dim]·[/dim] {escape(m)}", highlight=False),
                    **options)  # type: ignore[arg-type]
    return run_interruptible(battery), root


def _prove(args: argparse.Namespace) -> int:
    out = consoles.pair()[0]
    wanted = set(args.checks or CHECKS)
    summary, root = _battery(args, "prove", planner=lambda s: [
        run for run in plan(s) if run.check.split(":")[0] in wanted])
    json_path = args.json_path or root / StoreArtifact.PROVE
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(summary.model_dump_json(indent=1))
    out.print(proof_table(summary))
    for line in flakes(summary):
        out.print(f"[yellow]FLAKY[/yellow] {escape(line)}", highlight=False)
    for line in failures(summary):
        out.print(f"[red]FAIL[/red] {escape(line)}", highlight=False)
    out.print(f"summary: {json_path}", highlight=False)
    return EXIT_OK if summary.passed else EXIT_FAILED


def difficulty_dir(args: argparse.Namespace) -> Path:
    """Where ``measure`` writes difficulty.json; a bad ``--out`` is refused here, before the
    battery's minutes rather than after them."""
    if args.out is None:
        return args.root or scenarios_root()
    return writable(args.out, "--out")


def _measure(args: argparse.Namespace) -> int:
    out = consoles.pair()[0]
    target = difficulty_dir(args)
    summary, _ = _battery(args, "measure", planner=lambda s: plan(s)[:1])
    measured = {p.scenario: p.difficulty for p in summary.scenarios if p.difficulty is not None}
    for proof in summary.scenarios:
        d = proof.difficulty
        if d is None:
            reason = proof.checks[0].difficulty_error or proof.checks[0].detail
            out.print(f"[red]not measured[/red] {proof.scenario}: {escape(reason)}",
                      highlight=False)
        else:
            out.print(f"{proof.scenario}: D={d.depth} C={d.complexity:.3f} {d.label}"
                      f" ({' '.join(f'{h.signal}/{h.total}' for h in d.hops)} signal/units"
                      " per hop)", highlight=False)
    if measured:
        path = difficulty.save(target, measured)
        out.print(f"wrote {path}", highlight=False)
    return EXIT_OK if len(measured) == len(summary.scenarios) else EXIT_FAILED


async def footprint_scan(scenario: Scenario, manifest_text: str, runs_root: Path,
                         progress: Progress) -> FootprintScan:
    """A run of the null agent, scanned as it is let in (evaluate.footprints)."""
    look, scans = scanner(scenario, progress)
    result = await run_scenario(scenario, NullAgent(), runs_root=runs_root,
                                manifest_text=manifest_text, progress=progress,
                                on_admitted=look)
    if scans:
        return scans[0]
    return FootprintScan(scenario=scenario.name, incident="", run_dir=str(result.run_dir),
                         scanned_at=datetime.now(timezone.utc),
                         error=result.evaluation.infra_reason or "the agent was never let in")


def footprint_table(summary: FootprintSummary) -> Table:
    table = Table("scenario", "server", "place", "item", "kind", "source", "what the agent sees",
                  title=f"footprints: {len(summary.scans)} scenario(s)")
    order = {(Kind.FOOTPRINT, False): 0, (Kind.FOOTPRINT, True): 1, (Kind.INCIDENT, False): 2}
    for scan in summary.scans:
        if scan.error:
            table.add_row(scan.scenario, "", "", "", "[red]ERROR[/red]", "", escape(scan.error))
        for f in sorted(scan.findings, key=lambda f: order[(f.kind, bool(f.accepted))]):
            kind = ("[red]footprint[/red]" if f.kind == Kind.FOOTPRINT and not f.accepted else
                    "[yellow]accepted[/yellow]" if f.kind == Kind.FOOTPRINT else "incident")
            table.add_row(scan.scenario, f.server, f.place.value, escape(f.item[:40]), kind,
                          f.source.value, escape(f.text[:110]))
    return table


def _footprints(args: argparse.Namespace) -> int:
    out, err = consoles.pair()
    selected = select(discover(args.root), args.selectors)
    started = datetime.now(timezone.utc)
    root = (runs_dir() if args.runs_dir is None
            else writable(args.runs_dir, "--runs-dir")) / f"footprints-{started:%Y%m%dT%H%M%SZ}"
    summary = FootprintSummary(started_at=started)
    json_path = args.json_path or root / StoreArtifact.FOOTPRINTS
    json_path.parent.mkdir(parents=True, exist_ok=True)
    for path, scenario in selected:  # one at a time: a scan reads one run's whole server
        err.print(f"footprints: {scenario.name}", highlight=False)
        summary.scans.append(run_interruptible(footprint_scan(
            scenario, path.read_text(), root,
            lambda m: err.print(f"[dim]·[/dim] {escape(m)}", highlight=False))))
        json_path.write_text(summary.model_dump_json(indent=1))
    out.print(footprint_table(summary))
    for scan in summary.scans:
        left = scan.open_footprints
        out.print(f"{scan.scenario}: {len(left)} footprint(s) to remove,"
                  f" {len(scan.footprints) - len(left)} accepted,"
                  f" {len(scan.findings) - len(scan.footprints)} of the incident's own"
                  + (f"; {scan.error}" if scan.error else ""), highlight=False)
    out.print(f"scans: {json_path}", highlight=False)
    return EXIT_OK if summary.clean else EXIT_FAILED


def _vocabulary(args: argparse.Namespace) -> int:
    return _write(args, diagnosis_doc.render(args.root))


def _reference(args: argparse.Namespace) -> int:
    return _write(args, reference_doc.render(args.root or scenarios_root()))


def _estate(args: argparse.Namespace) -> int:
    return _write(args, estate_doc.page())


def _catalog(args: argparse.Namespace) -> int:
    return _write(args, catalog.render(args.root or scenarios_root()))


def _write(args: argparse.Namespace, text: str) -> int:
    if args.out is None:
        print(text, end="")
    else:
        args.out.write_text(text)
        consoles.pair()[0].print(f"wrote {args.out}", highlight=False)
    return EXIT_OK
