"""The operator's own metrics (prometheus-client), created at startup, never at import."""

from __future__ import annotations

from threading import Thread
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server


class OperatorMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.transitions = Counter("dbabench_operator_phase_transitions",
                                   "AgentRun phase changes, by the phase entered", ["phase"],
                                   registry=self.registry)
        self.reconciles = Counter("dbabench_operator_reconciles", "Handler invocations",
                                  ["resource"], registry=self.registry)
        self.errors = Counter("dbabench_operator_reconcile_errors", "Handler failures",
                              ["resource"], registry=self.registry)
        self.durations = Histogram("dbabench_operator_run_duration_seconds",
                                   "Wall time of AgentRuns from provisioning to grade",
                                   buckets=(30, 60, 120, 300, 600, 1200, 1800, 3600),
                                   registry=self.registry)
        self._server: tuple[WSGIServer, Thread] | None = None

    def serve(self, port: int, addr: str = "0.0.0.0") -> None:
        self._server = start_http_server(port, addr=addr, registry=self.registry)

    def stop(self) -> None:
        if self._server is not None:
            server, thread = self._server
            server.shutdown()
            thread.join(timeout=5)
            self._server = None
