"""The player's pod network: every pod a network namespace of its own, joined to the others only
where the cluster's NetworkPolicies allow, as a CNI plugin that enforces them would.

A pod's namespace has a loopback and nothing else. Its containers listen there on the ports
the player gave them; what the pod may reach is relayed into it at the address its
environment names (``127.0.0.1:<service port>`` for a Service, ``127.0.0.1:<port>`` for an
endpoint outside the cluster: the API server, a model server). A relay exists while the
policies of both ends admit the connection; where none is, the port is closed, as for a
dropped packet or a Service without endpoints. ``forward`` is ``kubectl port-forward``: a
test's way into a pod, which policies do not govern.

NetworkPolicy as the API defines it, for what a player's pods use: policies select pods of
their own namespace by ``podSelector`` (matchLabels, matchExpressions); a pod selected for a
direction is isolated in it and admits only what some rule of some selecting policy allows;
peers are ``podSelector`` (same namespace) or ``ipBlock`` (the world outside the cluster,
which the player puts at 127.0.0.1); ports are TCP numbers or a target's named ports.
Anything else (``namespaceSelector``, port ranges) is refused loudly rather than guessed.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dbabench.env.egress import splice
from dbabench.env.netns import AgentNetwork

OUTSIDE = ipaddress.ip_address("127.0.0.1")
"""Where the player's world outside the cluster is: the host's loopback."""
CONNECT_SECONDS = 10.0


@dataclass
class Endpoint:
    """A pod as a policy sees it (None: the world outside the cluster)."""

    namespace: str
    labels: dict[str, str]
    named_ports: dict[str, int]


def _matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    selector = selector or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        present = key in labels
        ok = {"In": present and labels.get(key) in values,
              "NotIn": not present or labels.get(key) not in values,
              "Exists": present, "DoesNotExist": not present}.get(op)
        if ok is None:
            raise ValueError(f"unknown selector operator {op!r}")
        if not ok:
            return False
    return True


def _peer_matches(peer: dict[str, Any], other: Endpoint | None, namespace: str) -> bool:
    if "namespaceSelector" in peer:
        raise ValueError("the player's policies know no namespaceSelector")
    if "ipBlock" in peer:
        block = peer["ipBlock"]
        return (other is None and OUTSIDE in ipaddress.ip_network(block["cidr"])
                and not any(OUTSIDE in ipaddress.ip_network(c) for c in block.get("except") or []))
    if "podSelector" in peer:
        return (other is not None and other.namespace == namespace
                and _matches(peer["podSelector"], other.labels))
    raise ValueError(f"a peer the player does not know: {peer}")


def _port_matches(ports: list[dict[str, Any]] | None, port: int, target: Endpoint | None) -> bool:
    if not ports:
        return True
    for p in ports:
        if p.get("endPort") is not None:
            raise ValueError("the player's policies know no port ranges")
        if (p.get("protocol") or "TCP") != "TCP":
            continue
        wanted = p.get("port")
        if wanted is None:
            return True
        if isinstance(wanted, str) and not wanted.isdigit():
            if target is not None and target.named_ports.get(wanted) == port:
                return True
        elif int(wanted) == port:
            return True
    return False


def _types(policy: dict[str, Any]) -> list[str]:
    spec = policy["spec"]
    return spec.get("policyTypes") or (["Ingress"] + (["Egress"] if "egress" in spec else []))


def allowed(policies: list[dict[str, Any]], source: Endpoint, target: Endpoint | None,
            port: int) -> bool:
    """Whether ``source`` may open a TCP connection to ``port`` of ``target`` (None: outside
    the cluster; a pod's port is its container port) under ``policies`` (API bodies)."""
    def admitted(direction: str, isolated: Endpoint, other: Endpoint | None,
                 peers_key: str) -> bool:
        selecting = [p for p in policies if p["metadata"]["namespace"] == isolated.namespace
                     and direction in _types(p)
                     and _matches(p["spec"].get("podSelector"), isolated.labels)]
        if not selecting:
            return True
        return any(
            (not rule.get(peers_key) or any(_peer_matches(peer, other, isolated.namespace)
                                            for peer in rule[peers_key]))
            and _port_matches(rule.get("ports"), port, target)
            for p in selecting for rule in p["spec"].get(direction.lower()) or [])

    return (admitted("Egress", source, target, "to")
            and (target is None or admitted("Ingress", target, source, "from")))


Place = AgentNetwork | None
"""Where a socket is made: a pod's network namespace, or the host's (None)."""


class Fabric:
    """The relays between the pods' namespaces, served by one event loop of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="fabric",
                                        daemon=True)
        self._thread.start()
        self.relays: dict[tuple[int, int], tuple[tuple[int, int], asyncio.Server]] = {}
        """(id of the source's network, port there) -> ((id of the target's, port), server)"""

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=30)

    @staticmethod
    def _made(place: Place, make: Callable[[], socket.socket]) -> socket.socket:
        return make() if place is None else place.inside(make)

    def relay(self, source: Place, port: int, target: Place, target_port: int) -> None:
        """Serve ``127.0.0.1:port`` in ``source`` by connecting to ``target_port`` in
        ``target``, unless that relay stands already."""
        key = (id(source), port)
        aim = (id(target), target_port)
        standing = self.relays.get(key)
        if standing is not None and standing[0] == aim:
            return
        if standing is not None:
            self.drop(source, port)
        listener = self._made(source, lambda: socket.create_server(("127.0.0.1", port)))
        listener.setblocking(False)

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock: socket.socket | None = None
            try:
                sock = await asyncio.to_thread(self._made, target, socket.socket)
                sock.setblocking(False)
                async with asyncio.timeout(CONNECT_SECONDS):
                    await self.loop.sock_connect(sock, ("127.0.0.1", target_port))
                upstream = await asyncio.open_connection(sock=sock)
            except (OSError, TimeoutError):
                # closed, as a port nothing listens on would be
                if sock is not None:
                    sock.close()
                writer.close()
                return
            await splice((reader, writer), upstream)

        async def serve() -> asyncio.Server:
            return await asyncio.start_server(handle, sock=listener)

        self.relays[key] = (aim, self._call(serve()))

    def drop(self, source: Place, port: int) -> None:
        standing = self.relays.pop((id(source), port), None)
        if standing is not None:
            server = standing[1]

            async def close() -> None:
                server.close()

            self._call(close())

    def ports_of(self, source: Place) -> set[int]:
        return {port for (network, port) in self.relays if network == id(source)}

    def forward(self, target: AgentNetwork, target_port: int) -> int:
        """A host port that reaches ``target_port`` in ``target`` (kubectl port-forward)."""
        with contextlib.closing(socket.socket()) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.relay(None, port, target, target_port)
        return port

    def stop(self) -> None:
        servers = [server for _, server in self.relays.values()]
        self.relays.clear()

        async def shut() -> None:
            for server in servers:
                server.close()
            # the connections still relayed end with their pipes' writers closed
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self._call(shut())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        self.loop.close()
