"""Gate cost benchmark: what one execute_sql costs through the gate, beside raw psycopg.

One PostgreSQL 15 (sandboxed, as a run's), one statement, three ways in one run, interleaved
so that a noisy moment costs all three alike:

* ``raw``: a psycopg AsyncConnection executing the statement (the baseline);
* ``gate``: ``ToolGate.call("execute_sql", ...)`` in process: classification with every
  policy check, the trace record written, bounds, the same server;
* ``http``: the same call through the run's tool server (``POST /v1/tools/execute_sql``) with
  the Python client, over loopback.

Prints p50 and p95 per way and each way's overhead above raw, against the targets (<= 0.5 ms
in process, <= 2 ms over HTTP), as information: the exit status is non-zero only on errors.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import psycopg

from dbabench.env.postgres import Credentials, PostgresInstance
from dbabench.env.processes import ProcessTable, free_port
from dbabench.model.task import AgentTask
from dbabench.tools.context import ServerAccess, ToolContext
from dbabench.tools.gate import Budget, ToolGate, TraceWriter
from dbabench.tools.server import serve

STATEMENT = ("SELECT pid, state, wait_event_type, left(query, 60) FROM pg_stat_activity"
             " WHERE backend_type = 'client backend' ORDER BY pid LIMIT 20")
TARGET_GATE_MS = 0.5
TARGET_HTTP_MS = 2.0


class _Control:
    def status(self) -> dict[str, object]:
        return {"running": True}

    def start(self) -> None: ...

    def stop(self, mode: str) -> None: ...

    def restart(self, mode: str) -> None: ...


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(instance: PostgresInstance, work: Path, calls: int) -> dict[str, list[float]]:
    dsn = instance.dsn(database="postgres")
    ctx = ToolContext(primary=ServerAccess(dsn=dsn, observer_dsn=dsn, pg_log_dir=instance.log_dir,
                                           control=_Control()),
                      business_log=work / "business.jsonl",
                      prometheus_url=f"http://127.0.0.1:{free_port()}")
    gate = ToolGate(ctx, TraceWriter(work / "trace.jsonl"),
                    Budget(max_steps=10 * calls + 100, timeout_seconds=3600))
    task = AgentTask(incident="INC-BENCH", symptom="benchmark", tools=["execute_sql"],
                     max_steps=10 * calls + 100, timeout_seconds=3600)
    token = "bench-token"
    raw = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    samples: dict[str, list[float]] = {"raw": [], "gate": [], "http": []}
    async with serve(gate, task, token) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30,
                                     headers={"Authorization": f"Bearer {token}"}) as http:
            async def via_raw() -> None:
                cur = await raw.execute(STATEMENT.encode())
                await cur.fetchall()

            async def via_gate() -> None:
                out = await gate.call("execute_sql", {"sql": STATEMENT})
                assert out["ok"], out

            async def via_http() -> None:
                response = await http.post("/v1/tools/execute_sql", json={"sql": STATEMENT})
                assert response.status_code == 200 and response.json()["ok"], response.text

            ways: dict[str, Callable[[], Awaitable[None]]] = {
                "raw": via_raw, "gate": via_gate, "http": via_http}
            for way in ways.values():  # warm: connections, caches, the first trace write
                for _ in range(20):
                    await way()
            for i in range(calls):
                order = list(ways.items())
                order = order[i % 3:] + order[:i % 3]
                for name, way in order:
                    started = time.perf_counter()
                    await way()
                    samples[name].append((time.perf_counter() - started) * 1000)
    await raw.close()
    await gate.close()
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per way")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dbabench-bench-tools-"))
    work.chmod(0o755)
    procs = ProcessTable(work)
    instance = PostgresInstance(work / "pg", Credentials.generate())
    instance.initdb({})
    instance.start(procs)
    try:
        samples = asyncio.run(measure(instance, work, args.calls))
    finally:
        procs.stop_all()
    base50, base95 = _percentile(samples["raw"], 0.5), _percentile(samples["raw"], 0.95)
    print(f"execute_sql of one catalog query, {args.calls} calls per way, interleaved;"
          f" server sandboxed: {instance.sandboxed}")
    print(f"{'way':6} {'p50 ms':>8} {'p95 ms':>8} {'p50 over raw':>13} {'p95 over raw':>13}"
          f" {'target':>8}")
    for name, target in (("raw", None), ("gate", TARGET_GATE_MS), ("http", TARGET_HTTP_MS)):
        p50, p95 = _percentile(samples[name], 0.5), _percentile(samples[name], 0.95)
        over = "" if target is None else f"{p50 - base50:13.3f} {p95 - base95:13.3f}"
        verdict = "" if target is None else (
            f"{'met' if p50 - base50 <= target else 'MISSED'} ≤{target}")
        print(f"{name:6} {p50:8.3f} {p95:8.3f} {over:>27} {verdict:>8}")
    print(f"mean raw {statistics.fmean(samples['raw']):.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
