"""The agent boundary: a process outside ours works the scenario through the tool server.

The example from the docs (examples/external_agent.py) must pass the demo scenario; an agent
that overruns its time budget is stopped by pid, and its run gets no pass.
"""

from __future__ import annotations

import fcntl
import http.server
import ipaddress
import json
import os
import socket
import struct
import sys
import threading
import time
from pathlib import Path

import pytest

from dbabench.agents.external import ExternalAgent
from dbabench.runner.run import run_scenario
from dbabench.scenario.loader import resolve

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "external_agent.py"


async def test_the_documented_external_agent_reaches_safe_pass(tmp_path: Path) -> None:
    path, scenario = resolve("stale-stats-lock-chain")
    result = await run_scenario(scenario, ExternalAgent([sys.executable, str(EXAMPLE)]),
                                runs_root=tmp_path, manifest_text=path.read_text())
    evaluation = result.evaluation
    assert evaluation.safe_pass and evaluation.diagnosis_pass, evaluation.model_dump_json()
    task = json.loads((result.run_dir / "task.json").read_text())
    assert task["symptom"] == scenario.spec.symptom and "referencePath" not in task
    # the agent never had database credentials: only the tool server's address and token
    assert "password" not in (result.run_dir / "task.json").read_text()
    kinds = [json.loads(line)["kind"] for line in
             (result.run_dir / "trace.jsonl").read_text().splitlines()]
    assert kinds.count("tool") >= 5 and "thought" in kinds and kinds[-1] == "report"


async def test_an_agent_over_its_time_budget_is_stopped_and_not_graded(tmp_path: Path) -> None:
    path, scenario = resolve("stale-stats-lock-chain")
    scenario.spec.budget.timeout_seconds = 3
    # what is judged here is the stop, not the database it leaves
    scenario.spec.outcome.settle_seconds = 0
    scenario.spec.outcome.window_seconds = 1
    # a child that leaves the process group (setsid) must end with the agent all the same
    token = f"600.{os.getpid()}{time.monotonic_ns() % 10**6}"
    agent = ExternalAgent(["/bin/sh", "-c", f"setsid sleep {token} & echo started; exec sleep {token}"])
    result = await run_scenario(scenario, agent, runs_root=tmp_path / "runs",
                                manifest_text=path.read_text())
    assert "started" in (result.run_dir / "agent.log").read_text()
    assert not _running(token), "an agent's process outlived its run"
    evaluation = result.evaluation
    assert not evaluation.report_valid and not evaluation.outcome_pass
    assert evaluation.report_error is not None and "budget exhausted" in evaluation.report_error
    assert evaluation.integrity.agent_sandboxed is True


def _running(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and token in (entry / "cmdline").read_bytes().decode():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_an_external_agent_needs_a_command() -> None:
    with pytest.raises(ValueError, match="needs a command"):
        ExternalAgent([])


# Everything an agent can look at without leaving the tools: its task, its environment, and
# what the tools say about the system (settings with paths, sessions, logs, metrics, docs).
LOOK_AROUND = r'''
import json, os, sys
from dbabench.tools.client import ToolClient
tools = ToolClient(os.environ["DBABENCH_TOOLS_URL"], os.environ["DBABENCH_TOOLS_TOKEN"])
seen = {"task": tools.task(), "task_file": os.environ["DBABENCH_TASK_FILE"],
        "task_text": open(os.environ["DBABENCH_TASK_FILE"]).read(),
        "environ": dict(os.environ), "cwd": os.getcwd(), "argv": sys.argv, "calls": []}
for tool, args in [
        ("execute_sql", {"sql": "SHOW data_directory; SHOW log_directory; SHOW config_file;"
                                " SELECT name, setting FROM pg_settings WHERE setting ~ '/';"
                                " SELECT DISTINCT application_name, usename FROM pg_stat_activity;"
                                " SELECT * FROM pg_ls_logdir(); SELECT current_database()"}),
        ("read_log", {"source": "postgresql", "tail": 500}),
        ("read_log", {"source": "business", "tail": 500}),
        ("query_metrics", {"query": "up"}),
        ("query_metrics", {"query": "pg_settings_data_directory or pg_static"}),
        ("query_metrics", {"query": ".", "list_names": True}),
        ("manage_instance", {"action": "status"}),
        ("manage_instance", {"action": "config_get", "name": "data_directory"}),
        ("query_knowledge_base", {"query": "stale statistics lock chain"}),
        ("execute_sql", {"sql": "SELECT query FROM pg_stat_statements"})]:
    seen["calls"].append(tools.call(tool, **args))
# its network: what listens, what answers on loopback, what it can reach beyond
import socket
listening = set()
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    for line in open(table).read().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A":
            listening.add(int(fields[1].rsplit(":", 1)[1], 16))
seen["listening"] = sorted(listening)
seen["answering"] = []
for port in range(1, 65536):
    with socket.socket() as probe:
        # a connection to its own ephemeral port is TCP's self-connect, not a listener
        if probe.connect_ex(("127.0.0.1", port)) == 0 and probe.getsockname()[1] != port:
            seen["answering"].append(port)
seen["beyond"] = {}
for address in sys.argv[1:]:
    with socket.socket() as probe:
        probe.settimeout(2)
        seen["beyond"][address] = probe.connect_ex((address, int(os.environ["HOST_PORT"])))
print(json.dumps(seen, default=str))
tools.report({"root_cause_type": "stale_statistics",
              "affected_objects": [{"kind": "table", "name": "orders"}]})
'''


def _host_addresses() -> list[str]:
    """This machine's IPv4 addresses beyond loopback, where it has any."""
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _, name in socket.if_nameindex():
            try:
                request = struct.pack("256s", name.encode()[:15])
                address = socket.inet_ntoa(fcntl.ioctl(s, 0x8915, request)[20:24])  # SIOCGIFADDR
            except OSError:
                continue  # an interface without an IPv4 address
            if not ipaddress.ip_address(address).is_loopback:
                found.append(address)
    return found


async def test_nothing_an_agent_sees_names_the_scenario(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path, scenario = resolve("stale-stats-lock-chain")
    scenario.spec.outcome.settle_seconds = 0
    scenario.spec.outcome.window_seconds = 1
    # a port that answers on every address of the machine, loopback included
    listener = socket.create_server(("0.0.0.0", 0))
    monkeypatch.setenv("HOST_PORT", str(listener.getsockname()[1]))
    agent = ExternalAgent([sys.executable, "-c", LOOK_AROUND, "127.0.0.1", *_host_addresses()],
                          env_names=["HOST_PORT"])
    try:
        result = await run_scenario(scenario, agent, runs_root=tmp_path,
                                    manifest_text=path.read_text())
    finally:
        listener.close()
    seen = (result.run_dir / "agent.log").read_text()
    observations = json.loads(seen.splitlines()[0])
    # issue 38: it scanned the machine's ports and read the scenario off its Prometheus.
    # In its own network only the tool server listens, and nothing of the machine answers.
    tools_port = int(observations["environ"]["DBABENCH_TOOLS_URL"].rsplit(":", 1)[1])
    assert observations["listening"] == [tools_port]
    assert observations["answering"] == [tools_port]
    assert all(status != 0 for status in observations["beyond"].values()), observations["beyond"]
    assert set(observations["beyond"]) >= {"127.0.0.1"}
    assert observations["task"]["incident"].startswith("INC-")
    assert all(call["ok"] for call in observations["calls"]), observations["calls"]
    data_directory = observations["calls"][0]["observation"]["results"][0]["rows"][0][0]
    assert observations["task"]["incident"] in data_directory
    # issue 38: pg_stat_statements kept the golden's build (the fault, the application's
    # password) and the verifier's checks; the agent's view starts empty of them
    statements = json.dumps(observations["calls"][-1])
    for needle in ("autovacuum_enabled", "generate_series", "PASSWORD", "pg_blocking_pids"):
        assert needle not in statements, f"{needle!r} is in pg_stat_statements"
    description = " ".join(scenario.spec.description.split())
    for needle in (scenario.name, "stale-stats", "lock-chain", result.run_dir.name,
                   description[:60], description[-60:]):
        assert needle not in seen, f"{needle!r} is visible to the agent"


EGRESS = r'''
import json, os, socket, sys, urllib.error, urllib.request
from dbabench.tools.client import ToolClient
relayed, proxied, refused = sys.argv[1:4]
seen = {}
def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return reply.read().decode()
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code}"
    except OSError as e:
        return f"error {e}"
seen["relayed"] = get(f"http://{relayed}/")
seen["proxied"] = get(f"http://{proxied}/")
seen["refused"] = get(f"http://{refused}/")
# a tunnel as a TLS client opens one, to the same allowed destination
proxy = os.environ["HTTPS_PROXY"].rsplit(":", 1)
with socket.create_connection((proxy[0].split("//")[1], int(proxy[1])), timeout=5) as tunnel:
    tunnel.sendall(f"CONNECT {proxied} HTTP/1.1\r\nHost: {proxied}\r\n\r\n".encode())
    head = tunnel.recv(4096).decode()
    tunnel.sendall(b"GET / HTTP/1.0\r\n\r\n")
    body = b""
    while chunk := tunnel.recv(4096):
        body += chunk
    seen["tunnel"] = [head.split("\r\n")[0], body.decode().rsplit("\n", 1)[-1]]
print(json.dumps(seen))
ToolClient(os.environ["DBABENCH_TOOLS_URL"], os.environ["DBABENCH_TOOLS_TOKEN"]).report(
    {"root_cause_type": "stale_statistics", "affected_objects": [{"kind": "table", "name": "orders"}]})
'''


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = f"hello from {self.server.server_address[1]}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


async def test_an_agent_reaches_the_destinations_its_user_allowed_and_no_other(
        tmp_path: Path) -> None:
    addresses = _host_addresses()
    if not addresses:
        pytest.skip("this machine has no address beyond loopback to proxy to")
    servers = [http.server.ThreadingHTTPServer(("0.0.0.0", 0), _Hello) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    allowed, other = (server.server_address[1] for server in servers)
    relayed, proxied, refused = (f"127.0.0.1:{allowed}", f"{addresses[0]}:{allowed}",
                                 f"{addresses[0]}:{other}")
    path, scenario = resolve("stale-stats-lock-chain")
    scenario.spec.outcome.settle_seconds = 0
    scenario.spec.outcome.window_seconds = 1
    agent = ExternalAgent([sys.executable, "-c", EGRESS, relayed, proxied, refused],
                          egress=[relayed, proxied])
    try:
        result = await run_scenario(scenario, agent, runs_root=tmp_path,
                                    manifest_text=path.read_text())
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    log = (result.run_dir / "agent.log").read_text()
    seen = json.loads(log.splitlines()[0])
    assert seen["relayed"] == f"hello from {allowed}", log
    assert seen["proxied"] == f"hello from {allowed}", log
    assert seen["refused"] == "HTTP 403", log
    assert seen["tunnel"] == ["HTTP/1.1 200 Connection established", f"hello from {allowed}"]
    thoughts = [json.loads(line) for line in
                (result.run_dir / "trace.jsonl").read_text().splitlines()]
    assert any(refused in json.dumps(event) for event in thoughts), "the refusal is not recorded"


def test_egress_destinations_are_checked_and_need_the_sandbox() -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        ExternalAgent(["/bin/true"], egress=["api.openai.com"])
    with pytest.raises(ValueError, match="sandboxed"):
        ExternalAgent(["/bin/true"], egress=["api.openai.com:443"], sandbox=False)
