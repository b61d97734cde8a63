"""The workload fork server: each run's workload is a fork of one process that imported the
engine once, yet it is the run's like any child: recorded by pid, in its own session, in the
caller's directory, stopped by the run's table, its CPU counted for the run."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from dbabench.env.postgres import PostgresInstance
from dbabench.env.processes import PIDS_FILE, ProcessTable, ProcessTableClosed, alive
from dbabench.model.workload import OltpCheckoutWorkload
from dbabench.workload.businesslog import read_events
from dbabench.workload.engine import WorkloadConfig
from dbabench.workload.forkserver import ForkServer

pytestmark = pytest.mark.integration


def _config(postgres: PostgresInstance, run_dir: Path) -> Path:
    config = WorkloadConfig(
        dsn=postgres.dsn(application_name=""), business_log=run_dir / "business.jsonl",
        spec=OltpCheckoutWorkload(profile="oltp-checkout", clients=2, request_interval_ms=50),
        metrics_port=0)
    path = run_dir / "workload.json"
    path.write_text(config.model_dump_json())
    return path


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_forked_workloads_are_their_runs_children_in_all_but_name(
        postgres: PostgresInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = ForkServer()
    pids, parents = [], set()
    try:
        for n in range(2):  # the second is forked by the same server
            run_dir = tmp_path / f"run-{n}"
            run_dir.mkdir()
            monkeypatch.chdir(run_dir)
            procs = ProcessTable(run_dir)
            try:
                pid = server.spawn(procs, "workload", _config(postgres, run_dir),
                                   run_dir / "workload.log")
                pids.append(pid)
                recorded = json.loads((run_dir / PIDS_FILE).read_text())["processes"]
                assert [(r["pid"], r["name"]) for r in recorded] == [(pid, "workload")]
                parents.add(_ppid(pid))
                assert os.getsid(pid) == pid
                assert os.readlink(f"/proc/{pid}/cwd") == str(run_dir)
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and len(read_events(
                        run_dir / "business.jsonl")) < 10:
                    time.sleep(0.2)
            finally:
                procs.stop_all()
            assert not alive(pid)
            assert procs.cpu_seconds["workload"] > 0  # the server handed it over
            assert len(read_events(run_dir / "business.jsonl")) >= 10
            with pytest.raises(ProcessTableClosed):
                server.spawn(procs, "workload", run_dir / "workload.json", run_dir / "x.log")
        assert pids[0] != pids[1] and len(parents) == 1 and os.getpid() not in parents
    finally:
        server.close()
    assert not any(alive(p) for p in pids)
