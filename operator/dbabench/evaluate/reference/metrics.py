"""The metrics' section: the run's Prometheus and its scrape jobs, the workload's metrics (from
its registry), the exporters' metric families (observed, per collector: the code cannot say
them) and the names the shipped scenarios query."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from prometheus_client import CollectorRegistry

from dbabench.env import monitoring
from dbabench.evaluate.reference.markdown import code, table
from dbabench.model.tool import ToolName
from dbabench.scenario.loader import discover
from dbabench.workload import engine

POSTGRES_EXPORTER_FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("pg_up, pg_static", "server; version, short_version",
     "1 while the exporter can query the server; the server's version"),
    ("pg_stat_database_*", "datid, datname, server",
     "pg_stat_database per database: numbackends, xact_commit, xact_rollback, blks_read,"
     " blks_hit, tup_returned/fetched/inserted/updated/deleted, conflicts, temp_files,"
     " temp_bytes, deadlocks, checksum_failures, checksum_last_failure, blk_read_time,"
     " blk_write_time, session_time, active_time, idle_in_transaction_time, sessions,"
     " sessions_abandoned/fatal/killed, stats_reset"),
    ("pg_stat_database_conflicts_confl_*", "datid, datname, server",
     "recovery conflicts (tablespace, lock, snapshot, bufferpin, deadlock): the standby's"),
    ("pg_stat_activity_count, pg_stat_activity_max_tx_duration", "datname, state, server",
     "sessions per database and state, and the oldest open transaction's age in seconds"),
    ("pg_locks_count", "datname, mode, server", "locks held or awaited, per database and mode"),
    ("pg_stat_bgwriter_*_total", "server",
     "checkpoints_timed/req, checkpoint_write/sync_time, buffers_checkpoint/clean/backend,"
     " buffers_backend_fsync, maxwritten_clean, buffers_alloc, stats_reset"),
    ("pg_database_size_bytes", "datname, server", "each database's size"),
    ("pg_stat_archiver_archived_count, _failed_count, _last_archive_age", "server",
     "WAL archiving"),
    ("pg_settings_*", "server",
     "every numeric or boolean setting, units normalised (`_seconds`, `_bytes`):"
     " pg_settings_work_mem_bytes, pg_settings_autovacuum, …"),
    ("pg_stat_replication_*, pg_replication_slots_*", "application_name, slot_name, server",
     "rows of pg_stat_replication and pg_replication_slots (active, pg_wal_lsn_diff): only"
     " while there are some (a streaming standby, a slot)"),
    ("pg_exporter_*, pg_scrape_collector_*, go_*, process_*", "",
     "the exporter's own health and runtime"),
)
"""What the Debian postgres_exporter (0.11.1, `scripts/install-system-deps.sh`) gives with its
defaults, observed from a run's Prometheus."""

NODE_COLLECTOR_SERIES: dict[str, str] = {
    "cpu": "node_cpu_seconds_total{cpu, mode}, node_cpu_guest_seconds_total",
    "loadavg": "node_load1, node_load5, node_load15",
    "pressure": "node_pressure_{cpu,io,memory}_waiting_seconds_total,"
                " node_pressure_{io,memory}_stalled_seconds_total",
    "meminfo": "node_memory_*_bytes (MemTotal, MemAvailable, Cached, Dirty, SwapFree, …)",
    "vmstat": "node_vmstat_pgfault, _pgmajfault, _pgpgin, _pgpgout, _pswpin, _pswpout,"
              " _oom_kill",
    "stat": "node_context_switches_total, node_forks_total, node_intr_total,"
            " node_procs_running, node_procs_blocked, node_boot_time_seconds",
    "diskstats": "node_disk_{reads,writes}_completed_total, node_disk_{read,written}_bytes_total,"
                 " node_disk_io_time_seconds_total, node_disk_io_now, … {device}",
    "netdev": "node_network_{receive,transmit}_{bytes,packets,errs,drop}_total {device}",
    "filefd": "node_filefd_allocated, node_filefd_maximum",
    "uname": "node_uname_info",
}
"""The series of each node_exporter collector a run enables (Debian's node_exporter 1.5.0)."""


def workload_series() -> list[tuple[str, str, str, str]]:
    """(series, type, labels, help) as the workload's registry exposes them, each sampled
    once so that every series of a labelled metric exists."""
    registry = CollectorRegistry()
    metrics = engine.Metrics(registry)
    metrics.requests.labels("s", "o", "ok").inc()
    metrics.latency.labels("s", "o").observe(0.01)
    rows = []
    for family in registry.collect():
        for sample in dict.fromkeys((s.name, tuple(sorted(s.labels))) for s in family.samples):
            rows.append((sample[0], family.type, ", ".join(sample[1]), family.documentation))
    return rows


def latency_buckets() -> list[float]:
    registry = CollectorRegistry()
    engine.Metrics(registry).latency.labels("s", "o").observe(0.0)
    return [float(s.labels["le"]) for f in registry.collect() for s in f.samples
            if s.name.endswith("_bucket") and s.labels["le"] != "+Inf"]


PROMQL_METRIC = re.compile(r"\b(?:pg|node|checkout)_[A-Za-z0-9_]+\b")


def metrics_in_manifests(root: Path) -> dict[str, list[str]]:
    """metric name -> the scenarios whose query_metrics calls (reference path, remediations,
    verification) name it."""
    used: dict[str, set[str]] = {}
    for name, (_, scenario) in discover(root).items():
        spec = scenario.spec
        calls = [h.call for h in spec.reference_path] + list(spec.verification) + [
            s.call for r in (spec.reference, spec.decoy, *spec.alternatives) for s in r.steps]
        for call in calls:
            if call.tool == ToolName.query_metrics:
                for metric in PROMQL_METRIC.findall(str(call.args.get("query", ""))):
                    used.setdefault(metric, set()).add(name)
    return {m: sorted(s) for m, s in sorted(used.items())}


def extra_families() -> list[tuple[str, str, str]]:
    """One row per query of ``EXPORTER_QUERIES``: its series, labels and kinds."""
    rows = []
    for name, query in yaml.safe_load(monitoring.EXPORTER_QUERIES.read_text()).items():
        columns = [(column, spec["usage"]) for metric in query["metrics"]
                   for column, spec in metric.items()]
        labels = [c for c, usage in columns if usage == "LABEL"]
        values = [(c, usage.lower()) for c, usage in columns if usage != "LABEL"]
        series = (f"{name}_{values[0][0]}" if len(values) == 1 else
                  f"{name}_{{{', '.join(c for c, _ in values)}}}")
        kinds = sorted({kind for _, kind in values})
        rows.append((code(series), ", ".join([*labels, "server"]), ", ".join(kinds)))
    return rows


def section(root: Path) -> list[str]:
    jobs = {monitoring.EXPORTER_JOBS["primary"]: "postgres_exporter on the primary",
            monitoring.EXPORTER_JOBS["replica"]: "postgres_exporter on the standby, with"
                                                 " `database.replica`",
            "node": "node_exporter (the host)",
            "workload": "the workload process (its own registry)"}
    used = metrics_in_manifests(root)
    return [
        "## Metrics",
        "",
        f"Each run has its own Prometheus, scraping every {monitoring.SCRAPE_INTERVAL}"
        f" (every {monitoring.FIRST_SCRAPE_INTERVAL} until each target has been scraped once);"
        " `query_metrics` queries it with PromQL, and `list_names: true` lists the names a"
        " regular expression matches in the run itself. Its scrape jobs:",
        "",
        *table(("job", "what"), ((code(j), w) for j, w in jobs.items())),
        "",
        "No verdict reads Prometheus: checks read the business log, the server log and SQL."
        " Metrics are the agent's evidence, and a reference hop's (`signal` counts a series'"
        " points).",
        "",
        "### The workload's metrics",
        "",
        *table(("series", "type", "labels", "help"),
               ((code(n), t, l, h) for n, t, l, h in workload_series())),
        "",
        "`service` and `operation` are the business log's; `outcome` its outcomes above. A"
        " counter is a `_total` (use `rate(checkout_requests_total[30s])`; a bare"
        " `checkout_requests` has no series). Latency buckets (`le`, seconds): "
        + ", ".join(f"{b:g}" for b in latency_buckets()) + ".",
        "",
        "### postgres_exporter",
        "",
        "Debian's `prometheus-postgres-exporter`, connected to the application's database"
        " as the superuser. Its default metrics (`pg_stat_database` covers every database):",
        "",
        *table(("series", "labels", "what"), ((code(s), l, w)
                                              for s, l, w in POSTGRES_EXPORTER_FAMILIES)),
        "",
        "And the queries a production set-up adds (env/exporter_queries.yaml, by"
        " `--extend.query-path`), on the application's database: per table, index, role and"
        " service, statement. Series are named query_column; the series of the harness's own"
        " sessions are dropped as they are scraped.",
        "",
        *table(("series", "labels", "kind"), extra_families()),
        "",
        "### node_exporter",
        "",
        "Only these collectors (env/monitoring.py `NODE_COLLECTORS`), without the exporter's"
        " own metrics:",
        "",
        *table(("collector", "series"), ((code(c), NODE_COLLECTOR_SERIES[c])
                                         for c in monitoring.NODE_COLLECTORS)),
        "",
        "### Names the shipped scenarios query",
        "",
        *(table(("metric", "scenarios"), ((code(m), ", ".join(s)) for m, s in used.items()))
          if used else ["None."]),
    ]
