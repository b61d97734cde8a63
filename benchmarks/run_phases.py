"""Where one run's time goes, now and at a baseline commit, measured side by side.

    .venv/bin/python benchmarks/run_phases.py [--baseline REV] [--scenario NAME]
                                              [--agent reference|decoy|null] [--repeat N]

It runs the scenario with the code of ``--baseline`` (exported with ``git
archive``, default: the commit before the run path was made faster) and with the working
tree, alternating, so both see the same machine; it prints each AgentRun phase's seconds (a
whole battery's figures: benchmarks/battery.py). Figures are printed, never asserted:
they depend on the machine and on what else it is running.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from dbabench.env.postgres import Credentials, PostgresInstance
from dbabench.env.processes import ProcessTable
from dbabench.scenario.loader import resolve

CHECKOUT = Path(__file__).resolve().parents[1]
BASELINE = "543a69d"  # before the runner overlapped monitoring with admission
PHASES = ("Provisioning", "Admitting", "Running", "Evaluating")
# the battery's shortest runs (about 14 s), at HEAD too: the scenario of every smoke mode
SMOKE_SCENARIO = "duplicate-indexes-on-hot-table"

# Runs inside a child interpreter whose sys.path holds one version of the package; prints
# the seconds from the start of each phase to the start of the next (or the end) as JSON.
DRIVER = """
import asyncio, inspect, json, sys, time
from pathlib import Path
from dbabench.agents.scripted import scripted_agent
from dbabench.runner.run import prepare_golden, run_scenario
from dbabench.scenario.loader import resolve

async def main(name, agent_name, runs):
    path, scenario = resolve(name)
    # a (re)build is not part of a run's cost; older versions prepare it synchronously
    prepared = prepare_golden(scenario, Path(runs))
    if inspect.isawaitable(prepared):
        await prepared
    marks = [("start", time.monotonic())]
    async def on_phase(phase):
        marks.append((phase.value, time.monotonic()))
    result = await run_scenario(scenario, scripted_agent(agent_name, scenario),
                                runs_root=Path(runs), manifest_text=path.read_text(),
                                on_phase=on_phase)
    marks.append(("end", time.monotonic()))
    phases = {a[0]: round(b[1] - a[1], 2) for a, b in zip(marks, marks[1:])}
    phases["total"] = round(marks[-1][1] - marks[0][1], 2)
    print(json.dumps({"phases": phases, "safe_pass": result.evaluation.safe_pass,
                      "outcome_pass": result.evaluation.outcome_pass}))

asyncio.run(main(*sys.argv[1:]))
"""


def export(rev: str, into: Path, *paths: str) -> Path:
    """The package (and ``paths`` beside it) as of ``rev``; returns the package's directory."""
    archive = subprocess.run(["git", "-C", str(CHECKOUT), "archive", rev, "operator", *paths],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "operator"


@contextlib.contextmanager
def scratch_server(work: Path) -> Iterator[PostgresInstance]:
    """One PostgreSQL 15 in ``work`` (sandboxed, as a run's), stopped with what it started."""
    procs = ProcessTable(work)
    instance = PostgresInstance(work / "pg", Credentials.generate())
    try:
        instance.initdb({}, procs)
        instance.start(procs)
        yield instance
    finally:
        procs.stop_all()


def one_run(source: Path, manifest: str, agent: str, runs: Path) -> dict[str, object]:
    # the venv's bin holds the pinned Prometheus (make deps), which older versions look up
    # on the PATH
    env = {**os.environ, "PYTHONPATH": str(source),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([sys.executable, "-c", DRIVER, manifest, agent, str(runs)],
                          capture_output=True, text=True, env=env, cwd=source)
    if proc.returncode != 0:
        raise SystemExit(f"run with {source} failed:\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def phases(args: argparse.Namespace) -> None:
    # each version runs its own copy of the manifest, by path: an older package understands
    # neither every manifest in the catalog nor the fields added to this one since
    manifest = resolve(args.scenario)[0].resolve().relative_to(CHECKOUT)
    with tempfile.TemporaryDirectory(prefix="dbabench-bench-") as tmp:
        sources = {f"baseline {args.baseline}": export(args.baseline, Path(tmp), "scenarios"),
                   "now": CHECKOUT / "operator"}
        if not (Path(tmp) / manifest).exists():
            raise SystemExit(f"{manifest} is not in {args.baseline}: give a scenario it has")
        figures: dict[str, list[dict[str, float]]] = {label: [] for label in sources}
        for i in range(args.repeat):
            for label, source in sources.items():
                result = one_run(source, str(source.parent / manifest), args.agent,
                                 Path(tmp) / "runs")
                print(f"# {label} run {i + 1}: {result}", file=sys.stderr)
                figures[label].append(result["phases"])  # type: ignore[arg-type]
    print(f"{args.scenario} · {args.agent} · median of {args.repeat} run(s), seconds")
    labels = list(figures)
    print(f"{'phase':<14}" + "".join(f"{label:>20}" for label in labels))
    for phase in (*PHASES, "total"):
        cells = [statistics.median(r.get(phase, 0.0) for r in figures[label]) for label in labels]
        print(f"{phase:<14}" + "".join(f"{c:>20.1f}" for c in cells))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", default=BASELINE)
    p.add_argument("--scenario", default="stale-stats-lock-chain")
    p.add_argument("--agent", default="reference")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--smoke", action="store_true",
                   help=f"does the script run: one run each of {SMOKE_SCENARIO}, now and at"
                        " HEAD (instead of the options above), in about a minute")
    args = p.parse_args()
    if args.smoke:
        args.baseline, args.scenario, args.repeat = "HEAD", SMOKE_SCENARIO, 1
    phases(args)


if __name__ == "__main__":
    main()
