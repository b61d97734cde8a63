"""What a run's monitoring costs: Prometheus and the exporters as a run starts them, with the Go
runtime they get (``GO_RUNTIME``) and with Go's default of one processor per core, in turn.

    .venv/bin/python benchmarks/monitoring.py [--seconds S] [--rounds N]

Starts one PostgreSQL (sandboxed, as a run's), then ``start_monitoring`` as a run calls it, for
``--seconds`` each time, alternating the two environments ``--rounds`` times so that both see
the same machine. Prints each program's CPU (its rusage, reaped when the run's process table
stops it), start-up included. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from dbabench.env import monitoring
from dbabench.env.postgres import PostgresInstance
from dbabench.env.processes import ProcessTable
from run_phases import scratch_server


def one(instance: PostgresInstance, work: Path, go_runtime: dict[str, str],
        seconds: float) -> dict[str, float]:
    run_dir = work / f"run-{time.monotonic_ns()}"
    procs = ProcessTable(run_dir)
    # start_monitoring reads the module's setting as it spawns: the variant under test
    kept, monitoring.GO_RUNTIME = monitoring.GO_RUNTIME, go_runtime
    try:
        # the exporter's connection as a run makes it (LocalEnvironment.start_monitoring)
        dsn = instance.dsn(database="postgres", application_name="postgres_exporter")
        monitoring.start_monitoring(procs, run_dir, run_id="bench",
                                    postgres_dsns={monitoring.EXPORTER_JOBS["primary"]:
                                                   dsn + " sslmode=disable"},
                                    extra_targets={})
        time.sleep(seconds)
    finally:
        monitoring.GO_RUNTIME = kept
        procs.stop_all()
    return dict(procs.cpu_seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=22.0,
                        help="per monitoring run (a battery's runs average ~26 s)")
    parser.add_argument("--rounds", type=int, default=4, help="runs of each environment")
    parser.add_argument("--smoke", action="store_true",
                        help="does the script run: one run of 2 s each (instead of --seconds"
                             " and --rounds), in seconds")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.rounds = 2.0, 1
    work = Path(tempfile.mkdtemp(prefix="dbabench-bench-monitoring-"))
    work.chmod(0o755)
    variants = {"now " + " ".join(f"{k}={v}" for k, v in monitoring.GO_RUNTIME.items()):
                monitoring.GO_RUNTIME, "Go's default": {}}
    try:
        with scratch_server(work) as instance:
            results: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
            for _ in range(args.rounds):
                for name, go_runtime in variants.items():
                    results[name].append(one(instance, work, go_runtime, args.seconds))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    programs = sorted({p for runs in results.values() for r in runs for p in r})
    print(f"monitoring of one run, {args.seconds:.0f} s each, {args.rounds} runs per"
          f" environment, alternating; CPU seconds per run (mean, min-max)")
    print(f"{'environment':22}" + "".join(f" {p:>22}" for p in programs) + f" {'total':>8}")
    for name, runs in results.items():
        cells = []
        for p in programs:
            values = [r.get(p, 0.0) for r in runs]
            cells.append(f"{statistics.fmean(values):.3f} ({min(values):.2f}-{max(values):.2f})")
        total = statistics.fmean(sum(r.values()) for r in runs)
        print(f"{name:22}" + "".join(f" {c:>22}" for c in cells) + f" {total:8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
