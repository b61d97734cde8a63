"""How far each outcome check's measured values came from its threshold in proven batteries:
where a window, a workload or a threshold can be made cheaper, and where it must not be.

    .venv/bin/python benchmarks/margins.py PROVE_JSON... [--root scenarios] [--top N]

Reads what prove.json (version 3) records of each run's outcome checks, pools the batteries
given, and for every check compared with a number (workload, log and estimate checks) prints
its threshold, the worst value a fixed run (reference or alternative) reached, the value of a
failing control run (null, decoy, sweep, reset) that came closest, and where the threshold sits in the
gap between them: 0% is a threshold a fixed run touched, 100% one a failing control touched.
A check whose fixed runs stay far from its threshold can afford a shorter window or fewer
requests; one near either end is where a busy machine flips a verdict. Figures are printed,
never asserted.
"""

from __future__ import annotations

import argparse
import collections
from dataclasses import dataclass, field
from pathlib import Path

from dbabench.model.proof import ProveSummary
from dbabench.model.scenario import Comparison, EstimatePredicate, LogPredicate, WorkloadPredicate
from dbabench.scenario.loader import load_file
from run_phases import CHECKOUT

Compared = WorkloadPredicate | LogPredicate | EstimatePredicate


@dataclass
class Seen:
    predicate: Compared
    fixed: list[float] = field(default_factory=list)
    failing_controls: list[float] = field(default_factory=list)
    passing_controls: int = 0

    def worst_fixed(self) -> float | None:
        """The fixed runs' value nearest the failing side of the threshold."""
        if not self.fixed:
            return None
        below = self.predicate.op in (Comparison.lt, Comparison.le)
        return max(self.fixed) if below else min(self.fixed)

    def nearest_control(self) -> float | None:
        if not self.failing_controls:
            return None
        threshold = self.predicate.value
        return min(self.failing_controls, key=lambda v: abs(v - threshold))

    def position(self) -> float | None:
        """Where the threshold sits between the worst fixed value (0) and the nearest failing
        control's (1); None where either side is missing or they meet."""
        fixed, control = self.worst_fixed(), self.nearest_control()
        if fixed is None or control is None or fixed == control:
            return None
        return (self.predicate.value - fixed) / (control - fixed)


def manifests(root: Path) -> dict[str, dict[str, Compared]]:
    """Each scenario's outcome checks that compare a number, by scenario and check name."""
    found: dict[str, dict[str, Compared]] = {}
    for path in sorted(root.glob("*/*.yaml")):
        scenario = load_file(path)
        found[scenario.name] = {
            c.predicate.name: c.predicate for c in scenario.spec.outcome.checks
            if isinstance(c.predicate, (WorkloadPredicate, LogPredicate, EstimatePredicate))}
    return found


def collect(summaries: list[ProveSummary], root: Path) -> dict[tuple[str, str], Seen]:
    compared = manifests(root)
    seen: dict[tuple[str, str], Seen] = {}
    for summary in summaries:
        for proof in summary.scenarios:
            checks = compared.get(proof.scenario, {})
            for run in proof.checks:
                for result in run.outcome_checks:
                    predicate = checks.get(result.name)
                    if predicate is None or not isinstance(result.value, (int, float)):
                        continue
                    entry = seen.setdefault((proof.scenario, result.name), Seen(predicate))
                    if run.run.agent == "reference":
                        entry.fixed.append(float(result.value))
                    elif result.passed:
                        entry.passing_controls += 1
                    else:
                        entry.failing_controls.append(float(result.value))
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prove_json", type=Path, nargs="+")
    parser.add_argument("--root", type=Path, default=CHECKOUT / "scenarios",
                        help="the scenarios the batteries proved (default: this checkout's)")
    parser.add_argument("--top", type=int, default=0, help="only the N tightest checks")
    args = parser.parse_args()
    summaries = [ProveSummary.model_validate_json(p.read_text()) for p in args.prove_json]
    unrecorded = [str(p) for p, s in zip(args.prove_json, summaries) if s.version < 3]
    if unrecorded:
        raise SystemExit(f"{', '.join(unrecorded)}: prove.json before version 3 records no"
                         " check values; prove the scenarios again with this checkout")
    seen = collect(summaries, args.root)
    rows = sorted(seen.items(), key=lambda kv: min(
        (p, 1 - p) if (p := kv[1].position()) is not None else (2.0, 2.0)))
    if args.top:
        rows = rows[:args.top]
    runs = collections.Counter(len(s.fixed) + len(s.failing_controls) + s.passing_controls
                               for s in seen.values())
    print(f"{len(summaries)} batteries, {len(seen)} compared checks"
          f" ({', '.join(f'{n} with {k} runs' for k, n in sorted(runs.items()))})")
    print(f"{'scenario / check':64} {'threshold':>26} {'worst fixed':>12}"
          f" {'nearest failing control':>24} {'position':>9}")
    for (scenario, name), s in rows:
        p = s.predicate
        fixed, control, position = s.worst_fixed(), s.nearest_control(), s.position()
        stat = p.stat if isinstance(p, WorkloadPredicate) else p.check
        print(f"{f'{scenario} / {name}':64.64} {f'{stat} {p.op.value} {p.value:g}':>26.26}"
              f" {'-' if fixed is None else f'{fixed:.4g}':>12}"
              f" {'-' if control is None else f'{control:.4g}':>24}"
              f" {'-' if position is None else f'{position:.0%}':>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
