"""The workload's CPU per request, now and at a baseline commit, against one PostgreSQL 15.

    .venv/bin/python benchmarks/workload.py [--baseline REV] [--seconds S] [--rounds N]

Starts one PostgreSQL (sandboxed, as a run's) with the checkout dataset, then runs the workload
process (the default oltp-checkout profile: six checkout workers) of the working tree and of
``--baseline`` (exported with ``git archive``) in turn, ``--rounds`` times each, ``--seconds``
each time, so that both see the same machine. For each it prints the requests served, the
workload process's CPU (its rusage, reaped by us) and the server's (what the postmaster reaped
of the backends that served it), per request and per workload run (imports included). Figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dbabench.env.postgres import PostgresInstance
from dbabench.env.processes import free_port
from dbabench.faults.steps import create_database
from dbabench.model.workload import OltpCheckoutWorkload
from dbabench.scenario.datasets import checkout
from dbabench.workload.engine import WorkloadConfig
from run_phases import CHECKOUT, export, scratch_server

BASELINE = "f336d71"  # before the workload's requests were made cheaper


def _reaped_cpu(pid: int) -> float:
    """What ``pid`` has reaped of its children so far (cutime + cstime), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def one(source: Path, instance: PostgresInstance, work: Path, seconds: float) -> dict[str, float]:
    log = work / f"business-{time.monotonic_ns()}.jsonl"
    config = WorkloadConfig(dsn=instance.dsn(user="app", application_name=""),
                            spec=OltpCheckoutWorkload(profile="oltp-checkout"),
                            business_log=log, metrics_port=free_port())
    config_path = work / "workload.json"
    # what both versions know: a field added since the baseline is one its model refuses
    config_path.write_text(config.model_dump_json(exclude_defaults=True))
    assert instance.pid is not None
    server_before = _reaped_cpu(instance.pid)
    # its output to a file: a pipe nobody reads while it runs could stall it
    output = work / "workload.log"
    with output.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "dbabench.workload", str(config_path)],
                                env={**os.environ, "PYTHONPATH": str(source)}, cwd=source,
                                stdout=out, stderr=subprocess.STDOUT)
    time.sleep(seconds)
    if proc.poll() is not None:  # reaped by poll: no rusage to read
        raise SystemExit(f"the workload of {source} ended early: {output.read_text()[-2000:]}")
    proc.send_signal(signal.SIGTERM)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"the workload of {source} failed: {output.read_text()[-2000:]}")
    time.sleep(0.5)  # the postmaster reaps the backends of the closed sessions
    requests = sum(1 for _ in log.open())
    return {"requests": requests, "workload": usage.ru_utime + usage.ru_stime,
            "server": _reaped_cpu(instance.pid) - server_before}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help=f"commit (default {BASELINE})")
    parser.add_argument("--seconds", type=float, default=20.0, help="per workload run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each version")
    parser.add_argument("--smoke", action="store_true",
                        help="does the script run: one run of 2 s each (instead of --seconds"
                             " and --rounds), in seconds")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.rounds = 2.0, 1
    work = Path(tempfile.mkdtemp(prefix="dbabench-bench-workload-"))
    work.chmod(0o755)
    sources = {"now": CHECKOUT / "operator", args.baseline: export(args.baseline, work)}
    try:
        with scratch_server(work) as instance:
            create_database(instance, checkout(1))
            results: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
            for _ in range(args.rounds):
                for name, source in sources.items():
                    results[name].append(one(source, instance, work, args.seconds))
    finally:
        shutil.rmtree(work, ignore_errors=True)  # a server's data directory and the exports
    print(f"oltp-checkout, default profile, {args.seconds:.0f} s per run, {args.rounds} runs"
          f" each, alternating; server sandboxed: {instance.sandboxed}")
    print(f"{'version':10} {'req/s':>7} {'wl ms/req':>10} {'pg ms/req':>10}"
          f" {'wl s/run':>9} {'pg s/run':>9}")
    for name, runs in results.items():
        rate = statistics.fmean(r["requests"] / args.seconds for r in runs)
        wl = statistics.fmean(1000 * r["workload"] / r["requests"] for r in runs)
        pg = statistics.fmean(1000 * r["server"] / r["requests"] for r in runs)
        print(f"{name:10} {rate:7.1f} {wl:10.3f} {pg:10.3f}"
              f" {statistics.fmean(r['workload'] for r in runs):9.2f}"
              f" {statistics.fmean(r['server'] for r in runs):9.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
