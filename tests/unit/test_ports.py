"""Ports for a run's servers: never one handed out already, and a port taken by another server
is named as such, not misread."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, start_http_server

from dbabench.env import monitoring
from dbabench.env.monitoring import MonitoringError
from dbabench.env.processes import ProcessTable, free_port


def test_a_port_is_handed_out_once_even_where_the_kernel_repeats_it() -> None:
    # the kernel alone gave the same free port twice within a few binds (seen 8 apart); a
    # port handed out is bound only when its server starts, so a repeat is two servers on it
    ports = [free_port() for _ in range(2000)]
    assert len(set(ports)) == len(ports)


def test_a_port_another_server_holds_is_not_read_as_prometheus(tmp_path: Path) -> None:
    """A run's Prometheus given a port that a workload's metrics server holds: the query is
    answered, in the metrics text format. The run stops with what happened, not a bare
    JSONDecodeError."""
    port = free_port()
    server, thread = start_http_server(port, addr="127.0.0.1", registry=CollectorRegistry())
    try:
        with pytest.raises(MonitoringError, match="not as Prometheus does.*another server"):
            monitoring._wait_for_targets(ProcessTable(tmp_path), f"http://127.0.0.1:{port}",
                                         {"postgres"}, deadline=time.monotonic() + 10)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
