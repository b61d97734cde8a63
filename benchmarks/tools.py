"""Gate cost benchmark: what one execute_sql costs through the gate, beside raw psycopg.

One PostgreSQL 15 (sandboxed, as a run's), one statement, three ways in one run, interleaved
so that a noisy moment costs all three alike:

* ``raw``: a psycopg AsyncConnection executing the statement (the baseline);
* ``gate``: ``ToolGate.call("execute_sql", ...)`` in process: classification with every
  policy check, the trace record written, bounds, the same server;
* ``http``: the same call through the run's tool server (``POST /v1/tools/execute_sql``) over
  loopback, made as an external agent makes it: from a process of its own, with dbabench's
  client (``ToolClient``). That process is this script again (``--client``), which makes one
  call per line it reads and answers with the call's milliseconds.

The working tree and ``--baseline`` (exported with ``git archive``) are each measured in a
process of their own (``--measure``), ``--rounds`` times, alternating, so both see the same
machine. Prints p50 and p95 per version and way and each way's overhead above raw, against the
targets (<= 0.5 ms in process, <= 2 ms over HTTP), as information: the exit status is non-zero
only on errors.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg

from dbabench.env.postgres import Credentials, PostgresInstance
from dbabench.env.processes import ProcessTable, free_port
from dbabench.model.task import AgentTask
from dbabench.tools.context import ServerAccess, ToolContext
from dbabench.tools.client import ToolClient
from dbabench.tools.gate import Budget, ToolGate
from dbabench.tools.server import serve
from run_phases import CHECKOUT, export

STATEMENT = ("SELECT pid, state, wait_event_type, left(query, 60) FROM pg_stat_activity"
             " WHERE backend_type = 'client backend' ORDER BY pid LIMIT 20")
TARGET_GATE_MS = 0.5
TARGET_HTTP_MS = 2.0
BASELINE = "fc3a953"  # before the gate's parse, statement timer and trace file were made cheaper


class _Control:
    def status(self) -> dict[str, object]:
        return {"running": True}

    def start(self) -> None: ...

    def stop(self, mode: str) -> None: ...

    def restart(self, mode: str) -> None: ...


def _gate(ctx: ToolContext, work: Path, budget: Budget) -> ToolGate:
    """The gate as the version this process imports makes it: over the run's files
    (dbabench.records), or, before there were any, over its trace writer."""
    try:
        from dbabench.records.run import RunFiles
    except ImportError:
        from dbabench.tools.gate import TraceWriter  # type: ignore[attr-defined]
        return ToolGate(ctx, TraceWriter(work / "trace.jsonl"), budget)  # type: ignore[arg-type]
    return ToolGate(ctx, RunFiles(work), budget)


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(instance: PostgresInstance, work: Path, calls: int) -> dict[str, list[float]]:
    dsn = instance.dsn(database="postgres")
    ctx = ToolContext(primary=ServerAccess(dsn=dsn, observer_dsn=dsn, pg_log_dir=instance.log_dir,
                                           control=_Control()),
                      business_log=work / "business.jsonl",
                      prometheus_url=f"http://127.0.0.1:{free_port()}")
    gate = _gate(ctx, work, Budget(max_steps=10 * calls + 100, timeout_seconds=3600))
    task = AgentTask(incident="INC-BENCH", symptom="benchmark", tools=["execute_sql"],
                     max_steps=10 * calls + 100, timeout_seconds=3600)
    token = "bench-token"
    raw = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    samples: dict[str, list[float]] = {"raw": [], "gate": [], "http": []}
    async with serve(gate, task, token) as url:
        client = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--client", url, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, env={**os.environ, "DBABENCH_TOOLS_TOKEN": token})
        assert client.stdin is not None and client.stdout is not None
        stdin, stdout = client.stdin, client.stdout

        async def via_raw() -> None:
            cur = await raw.execute(STATEMENT.encode())
            await cur.fetchall()

        async def via_gate() -> None:
            out = await gate.call("execute_sql", {"sql": STATEMENT})
            assert out["ok"], out

        async def via_http() -> float:
            stdin.write(b"call\n")
            answer = await stdout.readline()
            if not answer:
                raise RuntimeError("the client process ended; its error is above")
            return float(answer)

        async def timed(way: Callable[[], Awaitable[object]]) -> float:
            started = time.perf_counter()
            await way()
            return (time.perf_counter() - started) * 1000

        ways: dict[str, Callable[[], Awaitable[float]]] = {
            "raw": lambda: timed(via_raw), "gate": lambda: timed(via_gate), "http": via_http}
        try:
            for way in ways.values():  # warm: connections, caches, the first trace write
                for _ in range(20):
                    await way()
            for i in range(calls):
                order = list(ways.items())
                order = order[i % 3:] + order[:i % 3]
                for name, way in order:
                    samples[name].append(await way())
        finally:
            stdin.close()
            await client.wait()
    await raw.close()
    await gate.close()
    return samples


def client(url: str) -> int:
    """The external agent's side: one execute_sql per line read, its milliseconds written."""
    with ToolClient(url, os.environ["DBABENCH_TOOLS_TOKEN"]) as tools:
        for _ in sys.stdin:
            started = time.perf_counter()
            out = tools.call("execute_sql", sql=STATEMENT)
            elapsed = (time.perf_counter() - started) * 1000
            assert out["ok"], out
            print(f"{elapsed:.6f}", flush=True)
    return 0


def measure_here(calls: int) -> dict[str, Any]:
    """The three ways with the dbabench this process imports, on a server of its own: the
    samples of each, and whether the server ran sandboxed."""
    work = Path(tempfile.mkdtemp(prefix="dbabench-bench-tools-"))
    work.chmod(0o755)
    procs = ProcessTable(work)
    instance = PostgresInstance(work / "pg", Credentials.generate())
    try:
        # the baseline's initdb did not yet take the process table
        if "procs" in inspect.signature(instance.initdb).parameters:
            instance.initdb({}, procs)
        else:
            instance.initdb({})  # type: ignore[call-arg]
        instance.start(procs)
        samples = asyncio.run(measure(instance, work, calls))
    finally:
        procs.stop_all()
        shutil.rmtree(work, ignore_errors=True)  # the server's data directory
    return {"samples": samples, "sandboxed": instance.sandboxed}


def measure_version(source: Path, calls: int) -> dict[str, Any]:
    """``measure_here`` in a process importing the package at ``source``."""
    proc = subprocess.run([sys.executable, __file__, "--measure", "--calls", str(calls)],
                          env={**os.environ, "PYTHONPATH": str(source)},
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"measuring {source} failed:\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls per way and run")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each version, alternating")
    parser.add_argument("--baseline", default=BASELINE, help=f"commit (default {BASELINE})")
    parser.add_argument("--smoke", action="store_true",
                        help="does the script run: 20 calls per way, one run of each version"
                             " (instead of --calls and --rounds), in seconds")
    parser.add_argument("--client", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smoke:
        args.calls, args.rounds = 20, 1
    if args.client:
        return client(args.client)
    if args.measure:
        print(json.dumps(measure_here(args.calls)))
        return 0
    work = Path(tempfile.mkdtemp(prefix="dbabench-bench-tools-"))
    try:
        sources = {"now": CHECKOUT / "operator", args.baseline: export(args.baseline, work)}
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in sources}
        sandboxed = True
        for _ in range(args.rounds):
            for name, source in sources.items():
                result = measure_version(source, args.calls)
                sandboxed &= result["sandboxed"]
                for way, values in result["samples"].items():
                    samples[name].setdefault(way, []).extend(values)
    finally:
        shutil.rmtree(work)  # the baseline's export
    print(f"execute_sql of one catalog query, {args.calls} calls per way in each of"
          f" {args.rounds} runs per version, interleaved within a run, versions alternating;"
          f" server sandboxed: {sandboxed}")
    print(f"{'version':10} {'way':6} {'p50 ms':>8} {'p95 ms':>8} {'p50 over raw':>13}"
          f" {'p95 over raw':>13} {'target':>8}")
    for version, ways in samples.items():
        base50, base95 = _percentile(ways["raw"], 0.5), _percentile(ways["raw"], 0.95)
        for name, target in (("raw", None), ("gate", TARGET_GATE_MS), ("http", TARGET_HTTP_MS)):
            p50, p95 = _percentile(ways[name], 0.5), _percentile(ways[name], 0.95)
            over = "" if target is None else f"{p50 - base50:13.3f} {p95 - base95:13.3f}"
            verdict = "" if target is None else (
                f"{'met' if p50 - base50 <= target else 'MISSED'} ≤{target}")
            print(f"{version:10} {name:6} {p50:8.3f} {p95:8.3f} {over:>27} {verdict:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
