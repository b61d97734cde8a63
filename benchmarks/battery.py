"""What the self-proof battery costs: CPU and wall per run by phase, runs at once, flakes,
now and at a baseline commit.

    .venv/bin/python benchmarks/battery.py [SELECTOR...] [--repeat N] [--jobs N]
                                           [--max-cpu-pressure P] [--retries N] [--baseline REV]
    .venv/bin/python benchmarks/battery.py --report PROVE_JSON... [--baseline-json PROVE_JSON]

The first form proves SELECTOR (default: every scenario) with the working tree ``--repeat``
times in a row (flakes show as verdicts that differ between batteries), then, with
``--baseline``, once with that commit's code and manifests (``git archive``), on the same
machine. The second reads batteries already run (``make prove-ci`` writes prove.json). Each
battery's CPU is what its process and everything it reaped used (its rusage, taken by us when
it ends; for ``--report``, what prove.json recorded); where prove.json records CPU by
process (version 2), the split is printed too. Figures are printed, never asserted: they
depend on the machine and on what else it is running.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from dbabench.model.proof import ProofCheck, ProveSummary
from dbabench.model.run import RunRecord
from run_phases import CHECKOUT, PHASES, SMOKE_SCENARIO, export

SMOKE_CHECKS = ["reference", "null"]  # a fix and a failing control: margins has both sides


def measured(summary: ProveSummary, cpu_seconds: float | None) -> dict[str, object]:
    checks = [c for proof in summary.scenarios for c in proof.checks]
    # a run's start and wall are rounded to 0.1 s: the next run in its slot may seem to start
    # before it ended, and be counted beyond --jobs
    spans = [(start, start + c.wall_seconds - 0.1) for c in checks
             if (start := started(summary, c)) is not None]
    # runs at once over the time runs ran (before version 4 the goldens' phase came first)
    golden = summary.golden_seconds
    if golden is None and spans:
        golden = min(a for a, _ in spans)  # version 1: the first run starts after the goldens
    running = [t for t in range(int(summary.wall_seconds))
               if any(a <= t < b for a, b in spans)]
    at_once = [sum(a <= t < b for a, b in spans) for t in running]
    if cpu_seconds is None and summary.cpu is not None:
        cpu_seconds = summary.cpu.total_seconds
    # the goldens are a cost of the scenarios, not of their runs (recorded since version 3)
    golden_cpu = summary.golden_cpu
    if cpu_seconds is not None and golden_cpu is not None:
        cpu_seconds -= golden_cpu.total_seconds
    by_process: collections.Counter[str] = collections.Counter()
    for check in checks:
        by_process.update(check.cpu_seconds)
    if summary.cpu is not None:
        runs = summary.cpu if golden_cpu is None else summary.cpu.minus(golden_cpu)
        recorded = sum(by_process.values())
        by_process["harness (one process for every run)"] = runs.harness_seconds
        by_process["other children (psql, cp, mount, retries' processes)"] = round(
            runs.children_seconds - recorded, 2)
    return {
        "scenarios": len(summary.scenarios), "runs": len(checks),
        "wall": summary.wall_seconds, "golden": golden,
        "golden cpu": None if golden_cpu is None else golden_cpu.total_seconds,
        "per scenario": summary.wall_seconds / max(1, len(summary.scenarios)),
        "run wall": statistics.fmean(c.wall_seconds for c in checks) if checks else 0.0,
        "at once": statistics.fmean(at_once) if at_once else 0.0,
        "max at once": max(at_once, default=0),
        "cpu per run": cpu_seconds / len(checks) if cpu_seconds and checks else None,
        "throttle waits": summary.throttle_waits,
        "phases": {p: statistics.fmean(c.phases.get(p, 0.0) for c in checks) for p in PHASES},
        "by process": {k: v / len(checks) for k, v in by_process.most_common()},
        "costliest": costliest(checks),
        "failed": [f"{c.run.scenario} {c.run.check}" for c in checks if not c.passed],
        "flaky": [f"{c.run.scenario} {c.run.check}" for c in checks if c.passed and c.earlier],
    }


def costliest(checks: list[ProofCheck], top: int = 8) -> list[tuple[str, float, float]]:
    """The scenarios whose runs cost most CPU (recorded by process since prove.json version 2):
    name, CPU per run, and the share of it PostgreSQL used. Where a lever pays most."""
    by_scenario: dict[str, list[dict[str, float]]] = collections.defaultdict(list)
    for check in checks:
        if check.cpu_seconds:
            by_scenario[check.run.scenario].append(check.cpu_seconds)
    rows = [(name, statistics.fmean(sum(r.values()) for r in runs),
             statistics.fmean(r.get("postgres", 0.0) for r in runs))
            for name, runs in by_scenario.items()]
    return [(name, cpu, postgres / cpu if cpu else 0.0)
            for name, cpu, postgres in sorted(rows, key=lambda r: -r[1])[:top]]


def started(summary: ProveSummary, check: ProofCheck) -> float | None:
    """Seconds from the battery's start to the run's: recorded since prove.json version 2,
    read from the run's run.json before (while its directory is still there)."""
    if check.started_seconds is not None:
        return check.started_seconds
    if check.run_dir is None or not (check.run_dir / "run.json").exists():
        return None
    record = RunRecord.model_validate_json((check.run_dir / "run.json").read_text())
    return (record.started_at - summary.started_at).total_seconds()


def prove(source: Path, selectors: list[str], args: argparse.Namespace,
          runs: Path) -> tuple[ProveSummary, float]:
    """One battery in a child process; its summary and the CPU it and its descendants used."""
    out = runs / "prove.json"
    argv = [sys.executable, "-m", "dbabench.cli.main", "--root", str(source.parent / "scenarios"),
            "scenarios", "prove", *selectors, "--jobs", str(args.jobs), "--max-cpu-pressure",
            str(args.max_cpu_pressure), "--retries", str(args.retries), "--runs-dir", str(runs),
            "--json", str(out), *(f"--check={check}" for check in args.checks)]
    proc = subprocess.Popen(argv, env={**os.environ, "PYTHONPATH": str(source)}, cwd=source,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # 1: a check failed, which is shown
    if not out.exists():
        raise SystemExit(f"the battery of {source} wrote no summary; run it by hand: "
                         + " ".join(argv))
    return (ProveSummary.model_validate_json(out.read_text()),
            usage.ru_utime + usage.ru_stime)


def flips(summaries: list[ProveSummary]) -> list[str]:
    """Checks whose verdict (or whose retry) differs from one battery to the next."""
    seen: dict[str, set[str]] = collections.defaultdict(set)
    for summary in summaries:
        for proof in summary.scenarios:
            for c in proof.checks:
                verdict = "pass" if c.passed and not c.earlier else (
                    "flaky" if c.passed else "fail")
                seen[f"{c.run.scenario} {c.run.check}"].add(verdict)
    return [f"{name}: {' / '.join(sorted(v))}" for name, v in seen.items() if len(v) > 1]


def show(label: str, figures: dict[str, object]) -> None:
    cpu = figures["cpu per run"]
    golden, golden_cpu = figures["golden"], figures["golden cpu"]
    print(f"\n{label}: {figures['scenarios']} scenarios, {figures['runs']} runs,"
          f" wall {figures['wall']:.0f} s ({figures['per scenario']:.1f} s per scenario;"
          f" every golden ready at {'?' if golden is None else f'{golden:.0f}'} s"
          f"{'' if golden_cpu is None else f', {golden_cpu:.0f} s of CPU'})")
    print(f"  run wall {figures['run wall']:.1f} s; runs at once {figures['at once']:.2f}"
          f" (max {figures['max at once']}); CPU per run"
          f" {'?' if cpu is None else f'{cpu:.2f}'} s"
          f"{' (goldens included)' if cpu is not None and golden_cpu is None else ''}")
    waits = figures["throttle waits"]
    assert isinstance(waits, dict)
    if waits:
        print("  starts waited (s): " + ", ".join(f"{k} {v:.0f}" for k, v in waits.items()))
    phases = figures["phases"]
    assert isinstance(phases, dict)
    print("  phases (s per run): " + ", ".join(f"{p} {v:.1f}" for p, v in phases.items()))
    by_process = figures["by process"]
    assert isinstance(by_process, dict)
    if by_process:
        print("  CPU per run by process: " + ", ".join(f"{k} {v:.2f}"
                                                       for k, v in by_process.items()))
    costly = figures["costliest"]
    assert isinstance(costly, list)
    if costly:
        print("  costliest scenarios (CPU s per run, PostgreSQL's share): " + ", ".join(
            f"{name} {cpu:.1f} ({share:.0%})" for name, cpu, share in costly))
    for kind in ("failed", "flaky"):
        names = figures[kind]
        assert isinstance(names, list)
        if names:
            print(f"  {kind} ({len(names)}): {', '.join(names)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("selectors", nargs="*", metavar="SELECTOR")
    parser.add_argument("--repeat", type=int, default=1, help="batteries of the working tree")
    parser.add_argument("--jobs", type=int, default=8, help="as make prove-ci: 8")
    parser.add_argument("--max-cpu-pressure", type=float, default=100,
                        help="as make prove-ci: 100 (no gate)")
    parser.add_argument("--retries", type=int, default=1, help="as make prove-ci: 1")
    parser.add_argument("--baseline", default=None, help="also prove with this commit")
    parser.add_argument("--check", action="append", default=[], dest="checks",
                        help="only these checks of each scenario (repeatable; default: all)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="leave the batteries here (their prove.json for --report and"
                             " margins.py) instead of deleting them")
    parser.add_argument("--smoke", action="store_true",
                        help=f"does the script run: {SMOKE_SCENARIO}'s {' and '.join(SMOKE_CHECKS)}"
                             " checks at once, now and at HEAD (instead of the selection and"
                             " options above), in about a minute")
    parser.add_argument("--report", type=Path, nargs="+", default=None,
                        help="read these prove.json instead of running batteries")
    parser.add_argument("--baseline-json", type=Path, default=None,
                        help="with --report: a baseline battery's prove.json")
    args = parser.parse_args()
    if args.smoke:
        args.selectors, args.checks, args.baseline = [SMOKE_SCENARIO], SMOKE_CHECKS, "HEAD"
        args.repeat, args.jobs, args.retries = 1, len(SMOKE_CHECKS), 0
    batteries: list[tuple[str, ProveSummary, float | None]] = []
    if args.report:
        for path in args.report:
            batteries.append((f"now {path}", ProveSummary.model_validate_json(path.read_text()),
                              None))
        if args.baseline_json:
            batteries.append((f"baseline {args.baseline_json}", ProveSummary.model_validate_json(
                args.baseline_json.read_text()), None))
    else:
        with tempfile.TemporaryDirectory(prefix="dbabench-bench-battery-") as tmp:
            kept = args.keep or Path(tmp)
            for i in range(args.repeat):
                summary, cpu = prove(CHECKOUT / "operator", args.selectors, args,
                                     kept / f"now-{i}")
                batteries.append((f"now, battery {i + 1} of {args.repeat}", summary, cpu))
                show(batteries[-1][0], measured(summary, cpu))
            if args.baseline:
                source = export(args.baseline, Path(tmp), "operator", "scenarios")
                summary, cpu = prove(source, args.selectors, args, kept / "baseline")
                batteries.append((f"baseline {args.baseline}", summary, cpu))
            print("\n# summary")
    for label, summary, cpu in batteries:
        show(label, measured(summary, cpu))
    now = [s for label, s, _ in batteries if label.startswith("now")]
    if len(now) > 1:
        changed = flips(now)
        print(f"\nverdicts that differ between the {len(now)} batteries: {len(changed)}")
        for line in changed:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
