"""A real Prometheus scraping postgres_exporter, node_exporter and the workload, per run.

Everything listens on 127.0.0.1 on free ports and is stopped by pid with the run. Scrapes run
as often as the metrics tool steps by default (``SCRAPE_INTERVAL``).
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from dbabench.model import artifacts
from dbabench.model.artifacts import MonitoringArtifact, exporter_log
from dbabench.errors import InfraError
from dbabench.env.postgres import HARNESS_APPLICATION_PREFIX
from dbabench.env.processes import ProcessTable, free_port
from dbabench.model.workload import Server

SCRAPE_INTERVAL = "5s"
"""No verdict reads Prometheus (checks read the business log, the server log and SQL); its
series are the agent's evidence, which the metrics tool steps at 5 s by default: a sample a
step. Every scrape costs the exporters, Prometheus and, for postgres_exporter's queries, the
server: at 1 s they were ~1.1 s of CPU a run (battery of 2026-12-04 at -j6); 5 s instead of 2
saved 0.25 s a run side by side (benchmarks/README, "a 5 s scrape")."""
FIRST_SCRAPE_INTERVAL = "1s"
"""The interval a run's Prometheus starts with, until every target has been scraped once. A
target's first scrape lands anywhere in its first interval (an offset hashed from its labels)
and the run waits for all of them before the agent comes in: at 5 s the last of four came ~4 s
after the start, most of a run's admission. Then the configuration is rewritten at
``SCRAPE_INTERVAL`` and reloaded (SIGHUP), which keeps every series (a reload writes no
staleness markers); the next scrape comes within 5 s."""
PLAIN_HTTP = False
"""httpx's ``verify`` for the harness's own plain-http servers (Prometheus, a pod's components):
a client made with the default loads the CA bundle, ~30 ms of CPU, and runs make many."""
GO_RUNTIME = {"GOMAXPROCS": "1"}
"""The environment the Go programs of a run (Prometheus and the exporters) start with. Each
serves one run's few series, and a battery runs several at once on few cores: with a processor
per core, Go's collector and scheduler spread over all of them. Measured over 22 s with two
cores: Prometheus 0.22 s of CPU against 0.31 (benchmarks/monitoring.py; benchmarks/README, "one
processor for the monitoring's Go programs")."""
NODE_COLLECTORS = ("cpu", "loadavg", "pressure", "meminfo", "vmstat", "stat", "diskstats",
                   "netdev", "filefd", "uname")
"""What the host tells a DBA about a database server: CPU, load and stall time, memory and
paging, processes and context switches, disk and network I/O, file handles. The other default
collectors (sockets, conntrack, clock discipline, softnet, ...) and the exporter's own Go
runtime series were half of each scrape (422 series, 208 left) and most of its cost (5 scrapes:
0.10 s of CPU, 0.02 left); the host's mounts say nothing about this database."""
EXPORTER_JOBS: dict[Server, str] = {"primary": "postgres", "replica": "postgres_replica"}
"""The Prometheus job of each server's postgres_exporter: what the agent's queries select."""
EXPORTER_RELABELLING = [
    {"source_labels": ["application_name"], "action": "drop",
     "regex": f"{HARNESS_APPLICATION_PREFIX}.*"},
    {"source_labels": ["filename"], "regex": ".+", "target_label": "filename",
     "replacement": "/etc/postgres_exporter/queries.yaml"},
]
"""As the exporters' series are scraped: those of the harness's own sessions (the fault
program's, admission's verifier) are dropped, so what the agent queries is the incident's (the
exporter's query itself names no one: its text is in pg_stat_statements for all to read); the
queries file's path, a label of the exporter's own series, is where a deployment keeps it,
not the path of a package named after the harness."""
EXPORTER_APPLICATION = "postgres_exporter"
"""The application_name of the exporters' sessions, as a real deployment's would show."""
EXPORTER_QUERIES = Path(__file__).with_name(artifacts.EXPORTER_QUERIES)
"""The queries a production set-up adds to postgres_exporter's defaults (per table, index,
role, service and statement), run in the application's database (--extend.query-path)."""
EXPORTER_STATEMENTS: tuple[str, ...] = (
    "SELECT version()",
    "SELECT * FROM pg_stat_database",
    "SELECT * FROM pg_stat_database_conflicts",
    "SELECT name, setting, COALESCE(unit, $1), short_desc, vartype FROM pg_settings"
    " WHERE vartype IN ($2, $3, $4) AND name != $5",
    "SELECT pg_database.datname ,pg_database_size(pg_database.datname) FROM pg_database",
    "SELECT pg_database.datname, tmp.state, COALESCE(count,$1) as count,"
    " COALESCE(max_tx_duration,$2) as max_tx_duration FROM ( VALUES ($3), ($4), ($5), ($6),"
    " ($7), ($8) ) AS tmp(state) CROSS JOIN pg_database LEFT JOIN ( SELECT datname, state,"
    " count(*) AS count, MAX(EXTRACT($9 FROM now() - xact_start))::float AS max_tx_duration"
    " FROM pg_stat_activity GROUP BY datname,state) AS tmp2 ON tmp.state = tmp2.state"
    " AND pg_database.datname = tmp2.datname",
    "SELECT pg_database.datname,tmp.mode,COALESCE(count,$1) as count FROM ( VALUES ($2), ($3),"
    " ($4), ($5), ($6), ($7), ($8), ($9), ($10) ) AS tmp(mode) CROSS JOIN pg_database LEFT JOIN"
    " (SELECT database, lower(mode) AS mode,count(*) AS count FROM pg_locks WHERE database IS"
    " NOT NULL GROUP BY database, lower(mode) ) AS tmp2 ON tmp.mode=tmp2.mode and"
    " pg_database.oid = tmp2.database ORDER BY 1",
    "SELECT *, (case pg_is_in_recovery() when $1 then $2 else pg_current_wal_lsn() end) AS"
    " pg_current_wal_lsn, (case pg_is_in_recovery() when $3 then $4 else"
    " pg_wal_lsn_diff(pg_current_wal_lsn(), pg_lsn($5))::float end) AS"
    " pg_current_wal_lsn_bytes, (case pg_is_in_recovery() when $6 then $7 else"
    " pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::float end) AS pg_wal_lsn_diff FROM"
    " pg_stat_replication",
    "SELECT checkpoints_timed ,checkpoints_req ,checkpoint_write_time ,checkpoint_sync_time"
    " ,buffers_checkpoint ,buffers_clean ,maxwritten_clean ,buffers_backend"
    " ,buffers_backend_fsync ,buffers_alloc ,stats_reset FROM pg_stat_bgwriter",
    "SELECT slot_name, database, active, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)"
    " FROM pg_replication_slots",
    "SELECT *, extract($1 from now() - last_archived_time) AS last_archive_age"
    " FROM pg_stat_archiver",
    *(str(q["query"]) for q in yaml.safe_load(EXPORTER_QUERIES.read_text()).values()),
)
"""What postgres_exporter (Debian's 0.11.1, its default collectors and ``EXPORTER_QUERIES``)
runs, as pg_stat_statements shows it (constants aside): monitoring every real server has, so its sessions and statements are the incident's
ordinary traffic even where a scenario's check reads the same view the same way (seen in a CI
run: the exporter's ``SELECT * FROM pg_stat_database_conflicts`` in pg_stat_activity, taken for
a check's). tests/integration/test_footprints.py holds it to what the exporter runs."""


class MonitoringError(InfraError, RuntimeError):
    pass


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise MonitoringError(f"{name} is not installed; install the Debian package of that name"
                              " (`make deps` does)")
    return path


PROMETHEUS_MAJOR = 3
"""Prometheus 2 applies a new server's targets after two 5 s tickers: every run would wait ~6 s
for its first scrape. 3.x does in under a second with the reload interval below."""


@functools.cache
def prometheus_binary() -> str:
    """The pinned Prometheus: next to this interpreter (``make deps`` links the build of
    scripts/build-prometheus.sh into the venv; the image installs it into its venv), never
    whichever one is first on PATH, which may be a distribution's 2.x."""
    path = Path(sys.executable).parent / "prometheus"
    hint = ("build and link it with `make deps` (scripts/build-prometheus.sh builds it from the"
            " Go module proxy)")
    if not path.exists():
        raise MonitoringError(f"Prometheus {PROMETHEUS_MAJOR}.x is not installed at {path}: {hint}")
    done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30)
    words = (done.stdout + done.stderr).split()
    version = words[2] if len(words) > 2 and words[:2] == ["prometheus,", "version"] else "?"
    if done.returncode != 0 or not version.startswith(f"{PROMETHEUS_MAJOR}."):
        raise MonitoringError(f"{path} is Prometheus {version}, not {PROMETHEUS_MAJOR}.x: {hint}")
    return str(path)


@dataclass
class Monitoring:
    prometheus_url: str
    targets: dict[str, str]


def write_prometheus_config(work_dir: Path, run_id: str, targets: dict[str, str],
                            interval: str = SCRAPE_INTERVAL) -> Path:
    """The scrape configuration of one run (job name -> address), in ``work_dir``."""
    config = {
        "global": {"scrape_interval": interval, "evaluation_interval": interval,
                   "external_labels": {"run": run_id}},
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [addr]}],
             **({"metric_relabel_configs": EXPORTER_RELABELLING}
                if job in EXPORTER_JOBS.values() else {})}
            for job, addr in targets.items()
        ],
    }
    config_path = work_dir / MonitoringArtifact.PROMETHEUS_CONFIG
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    return config_path


def prometheus_argv(work_dir: Path, run_id: str, targets: dict[str, str], listen: str,
                    interval: str = SCRAPE_INTERVAL, seen_at: Path | None = None) -> list[str]:
    """Write the scrape configuration of one run into ``work_dir`` and return the command line
    of its Prometheus; ``seen_at``: where it will find ``work_dir`` (a mount of it)."""
    write_prometheus_config(work_dir, run_id, targets, interval)
    home = seen_at or work_dir
    return [prometheus_binary(), f"--config.file={home / MonitoringArtifact.PROMETHEUS_CONFIG}",
            f"--storage.tsdb.path={home / 'tsdb'}", f"--web.listen-address={listen}",
            "--storage.tsdb.retention.time=1d", "--log.level=warn",
            # a run's few series never need more; the default (50M samples) is gigabytes,
            # past what a machine running several runs has (query_metrics bounds subqueries)
            "--query.max-samples=5000000",
            # a hidden flag (5 s by default): the first scrape lands within a scrape
            # interval of the start instead of ~5 s later
            "--scrape.discovery-reload-interval=100ms"]


# Prometheus tells whoever reaches it its flags (/api/v1/status/flags) and working directory
# (/api/v1/status/runtimeinfo), and a run directory's path names the scenario (a campaign
# cell's, the agent too). Where it can, it runs in a mount namespace of its own, the run's
# monitoring directory bound at MOUNTED_AT, from "/": what it tells names neither.
MOUNTED_AT = Path("/srv")
_BIND_AND_EXEC = 'mount --bind "$0" "$1" && cd / && shift && exec "$@"'


def _mounting(directory: Path) -> list[str] | None:
    """The command line before a program's that runs it with ``directory`` seen at
    MOUNTED_AT; None where this machine cannot (not root, no mount point)."""
    unshare, mount, sh = (shutil.which(p) for p in ("unshare", "mount", "sh"))
    if os.geteuid() != 0 or not MOUNTED_AT.is_dir() or None in (unshare, mount, sh):
        return None
    return [str(unshare), "--mount", "--propagation", "private", str(sh), "-c",
            _BIND_AND_EXEC.replace("mount ", f"{mount} ", 1), str(directory), str(MOUNTED_AT)]


def exporter_binary() -> str:
    return _binary("prometheus-postgres-exporter")


EXPORTER_SESSION = {"sslmode": "disable", "work_mem": "4MB", "log_temp_files": "-1",
                    "temp_file_limit": "-1"}
"""What the exporter's connection string adds: its queries sort and join in the application's
database, whose work_mem a scenario may starve (64 kB), and a monitoring role's sessions are
set not to spill into the log a scenario's checks count temp-file lines of. The exporter's
driver (lib/pq) sends keys it does not know as the session's settings."""


def exporter_dsn(dsn: str) -> str:
    """``dsn`` (a key=value connection string) as the exporter connects with it."""
    return " ".join([dsn, *(f"{k}={v}" for k, v in EXPORTER_SESSION.items())])


def exporter_argv(listen: str) -> list[str]:
    """postgres_exporter serving on ``listen``, with the production set-up's queries."""
    return [exporter_binary(), f"--web.listen-address={listen}",
            f"--extend.query-path={EXPORTER_QUERIES}"]


def start_monitoring(procs: ProcessTable, run_dir: Path, *, run_id: str,
                     postgres_dsns: dict[str, str], extra_targets: dict[str, str],
                     timeout: float = 30.0) -> Monitoring:
    """Start the exporters and Prometheus; return once every target has been scraped up.
    ``postgres_dsns``: a postgres_exporter for each server, by its Prometheus job name, on
    the application's database (its per-table series are that database's)."""
    mon_dir = run_dir / "monitoring"
    mon_dir.mkdir(parents=True, exist_ok=True)
    targets: dict[str, str] = {}
    for job, dsn in postgres_dsns.items():
        port = free_port()
        procs.spawn(f"{job}_exporter", exporter_argv(f"127.0.0.1:{port}"),
                    env={"DATA_SOURCE_NAME": dsn, **GO_RUNTIME},
                    log=mon_dir / exporter_log(job))
        targets[job] = f"127.0.0.1:{port}"
    node_port, prom_port = free_port(), free_port()
    procs.spawn("node_exporter",
                [_binary("prometheus-node-exporter"),
                 f"--web.listen-address=127.0.0.1:{node_port}",
                 "--collector.disable-defaults", "--web.disable-exporter-metrics",
                 *(f"--collector.{name}" for name in NODE_COLLECTORS)],
                env=GO_RUNTIME, log=mon_dir / MonitoringArtifact.NODE_EXPORTER_LOG)
    targets |= {"node": f"127.0.0.1:{node_port}", **extra_targets}
    mounting = _mounting(mon_dir)
    argv = prometheus_argv(mon_dir, run_id, targets, f"127.0.0.1:{prom_port}",
                           interval=FIRST_SCRAPE_INTERVAL, seen_at=MOUNTED_AT if mounting else None)
    prometheus = procs.spawn("prometheus", [*(mounting or []), *argv], env=GO_RUNTIME,
                             log=mon_dir / MonitoringArtifact.PROMETHEUS_LOG, execs=argv[0])
    url = f"http://127.0.0.1:{prom_port}"
    deadline = time.monotonic() + timeout
    _wait_for_targets(procs, url, set(targets), deadline)
    write_prometheus_config(mon_dir, run_id, targets)
    prometheus.send_signal(signal.SIGHUP)
    _wait_for_reload(procs, url, deadline)
    return Monitoring(prometheus_url=url, targets=targets)


def _result(url: str, response: httpx.Response) -> list[dict[str, Any]]:
    try:
        result: list[dict[str, Any]] = response.json()["data"]["result"]
        return result
    except (ValueError, KeyError, TypeError) as e:
        raise MonitoringError(
            f"{url} answered a query, but not as Prometheus does ({type(e).__name__}:"
            f" {response.text[:120]!r}): another server holds the port this run's Prometheus"
            " was given") from e


def _wait_for_targets(procs: ProcessTable, url: str, jobs: set[str], deadline: float) -> None:
    seen: set[str] = set()
    with httpx.Client(timeout=2.0, verify=PLAIN_HTTP) as client:
        while time.monotonic() < deadline:
            try:
                r = client.get(f"{url}/api/v1/query", params={"query": "up"})
                if r.status_code == 200:
                    seen = {s["metric"].get("job", "") for s in _result(url, r)
                            if s["value"][1] == "1"}
                    if jobs <= seen:
                        return
            except httpx.TransportError:
                pass
            # a first scrape lands anywhere in the first interval; each poll costs the harness
            # a query (~5 ms of CPU)
            procs.pause(0.25, "waiting for the scrape targets")
    raise MonitoringError(f"Prometheus at {url} did not see targets up in time:"
                          f" missing {sorted(jobs - seen)}")


def _wait_for_reload(procs: ProcessTable, url: str, deadline: float) -> None:
    """Until the Prometheus at ``url`` runs the configuration at ``SCRAPE_INTERVAL``: a reload
    that failed would leave it scraping every second for the whole run."""
    expected = f"scrape_interval: {SCRAPE_INTERVAL}"
    with httpx.Client(timeout=2.0, verify=PLAIN_HTTP) as client:
        while time.monotonic() < deadline:
            try:
                r = client.get(f"{url}/api/v1/status/config")
                # the scrape loops take the new interval once their scrape in flight ends
                # (an exporter's queries take a while): the targets say when they have
                t = client.get(f"{url}/api/v1/targets")
                if (r.status_code == 200 and expected in r.json()["data"]["yaml"]
                        and t.status_code == 200 and all(
                            target["scrapeInterval"] == SCRAPE_INTERVAL
                            for target in t.json()["data"]["activeTargets"])):
                    return
            except (httpx.TransportError, ValueError, KeyError, TypeError):
                pass
            procs.pause(0.05, "waiting for Prometheus to reload its configuration")
    raise MonitoringError(f"Prometheus at {url} did not reload its configuration (scraping"
                          f" every {SCRAPE_INTERVAL}) in time: see monitoring/prometheus.log")
