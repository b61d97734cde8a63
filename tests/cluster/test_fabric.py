"""The player's pod network (fabric.py): a run's own NetworkPolicies, read as the API defines
them, and relays between real network namespaces. No control plane: the policies are the
bodies env.kube makes for a run."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from dbabench.env import kube
from dbabench.env.netns import AgentNetwork, NetworkUnavailable
from dbabench.model.kube import AgentSpec
from dbabench.model.scenario import ReplicaSpec

from fabric import Endpoint, Fabric, allowed

COMPONENTS = ("postgres", "replica", "workload", "admit", "tools", "agent", "evaluate")


def _policies(run: str, namespace: str, **settings: Any) -> list[dict[str, Any]]:
    objs = kube.run_objects(run, namespace, "golden-x", "kind: Scenario\n", "app",
                            {"superuser-password": "s", "app-password": "a"}, "g", "t", "c",
                            kube.AgentContainer(name="external", spec=AgentSpec(
                                kind="external", image="me/agent:1")),
                            kube.KubeSettings(**settings), None, ReplicaSpec())
    policies = [o for phase in objs.values() for o in phase if o["kind"] == "NetworkPolicy"]
    for p in policies:
        p["metadata"]["namespace"] = namespace
    return policies


def _pod(run: str, component: str, namespace: str = "ns") -> Endpoint:
    return Endpoint(namespace, {kube.RUN_LABEL: run, kube.COMPONENT_LABEL: component}, {})


def _reachable(policies: list[dict[str, Any]], source: Endpoint) -> set[tuple[str, str]]:
    """(run, component:port) of every pod of runs r1 and r2 the source may connect to."""
    return {(run, f"{component}:{name}") for run in ("r1", "r2") for component in COMPONENTS
            for name, port in kube.PORTS.items()
            if allowed(policies, source, _pod(run, component), port)}


def test_a_runs_agent_reaches_its_tool_server_and_nothing_else_of_any_run() -> None:
    policies = _policies("r1", "ns") + _policies("r2", "ns")
    assert _reachable(policies, _pod("r1", "agent")) == {("r1", "tools:tools")}
    # the outside world only where a gateway is configured
    assert not allowed(policies, _pod("r1", "agent"), None, 443)
    opened = _policies("r1", "ns", model_gateway_cidr="127.0.0.0/8")
    assert allowed(opened, _pod("r1", "agent"), None, 443)
    # nothing reaches the agent, not even its own tool server
    for component in COMPONENTS:
        assert not any(allowed(policies, _pod(run, component), _pod("r1", "agent"), port)
                       for run in ("r1", "r2") for port in kube.PORTS.values()), component


def test_the_tool_server_reaches_its_runs_servers_and_admits_its_agent_alone() -> None:
    policies = _policies("r1", "ns") + _policies("r2", "ns")
    reached = _reachable(policies, _pod("r1", "tools"))
    assert {("r1", f"postgres:{p}") for p in ("postgres", "control", "prometheus")} <= reached
    assert {("r1", "replica:postgres"), ("r1", "replica:control")} <= reached
    assert not {item for item in reached if item[0] == "r2" and not
                item[1].startswith(("workload", "admit", "evaluate"))}, reached
    assert allowed(policies, _pod("r1", "tools"), None, 6443)  # the API server, a gateway
    for run in ("r1", "r2"):
        for component in COMPONENTS:
            admitted = allowed(policies, _pod(run, component), _pod("r1", "tools"),
                               kube.PORTS["tools"])
            assert admitted == ((run, component) == ("r1", "agent")), (run, component)


def test_what_the_player_does_not_know_is_refused_not_guessed() -> None:
    policy = {"metadata": {"namespace": "ns"}, "spec": {
        "podSelector": {}, "policyTypes": ["Egress"],
        "egress": [{"to": [{"namespaceSelector": {}}]}]}}
    with pytest.raises(ValueError, match="namespaceSelector"):
        allowed([policy], _pod("r1", "agent"), _pod("r1", "tools"), 8765)


@pytest.fixture
def namespaces() -> Iterator[tuple[AgentNetwork, AgentNetwork]]:
    try:
        one, two = AgentNetwork([]), AgentNetwork([])
    except NetworkUnavailable as e:
        pytest.skip(str(e))
    yield one, two
    one.close()
    two.close()


def _answers(network: AgentNetwork | None, port: int) -> bool:
    def probe() -> bool:
        with socket.socket() as s:
            s.settimeout(2)
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return False
            s.sendall(b"ping")
            return s.recv(4) == b"pong"
    return probe() if network is None else network.inside(probe)


def test_a_relay_joins_two_namespaces_and_nothing_else(
        namespaces: tuple[AgentNetwork, AgentNetwork]) -> None:
    client, server = namespaces
    listener = server.inside(lambda: socket.create_server(("127.0.0.1", 0)))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            if conn.recv(4) == b"ping":
                conn.sendall(b"pong")

    fabric = Fabric()
    try:
        # the server's port is in its namespace only, not on the host or in the client's
        assert not _answers(None, port) and not _answers(client, port)
        fabric.relay(client, port, server, port)
        thread = threading.Thread(target=serve)
        thread.start()
        assert _answers(client, port)
        thread.join()
        assert fabric.ports_of(client) == {port}
        fabric.drop(client, port)
        assert fabric.ports_of(client) == set()
        assert not _answers(client, port)
        # port-forward: the test's way in
        forwarded = fabric.forward(server, port)
        thread = threading.Thread(target=serve)
        thread.start()
        assert _answers(None, forwarded)
        thread.join()
    finally:
        fabric.stop()
        listener.close()
