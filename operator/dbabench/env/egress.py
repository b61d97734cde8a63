"""The way out of a sandboxed agent's network (env.netns) that its user allowed: named
``HOST:PORT`` destinations and nothing else.

A destination on this machine's loopback is relayed at the same address inside the agent's
namespace, so ``http://127.0.0.1:8080`` reaches the user's model server unchanged. Any other
is reached through an HTTP proxy the harness serves on the agent's loopback (``CONNECT`` for
TLS, absolute-form requests for plain HTTP), announced in the variables every common client
reads (``HTTPS_PROXY`` and kin); it opens a connection only to a destination on the list, as
the client spelled it, and answers 403 to anything else. The harness, not the agent, resolves
names and connects, so an agent's DNS cannot be turned into a way around the list.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

CONNECT_TIMEOUT_SECONDS = 15.0
LOOPBACK_NAMES = frozenset({"localhost"})


@dataclass(frozen=True)
class Destination:
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> Destination:
        """``HOST:PORT`` (``[::1]:PORT`` for an IPv6 address); bad input names what to write."""
        host, sep, port = text.strip().rpartition(":")
        host = host.strip("[]").lower()
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"--agent-egress {text!r}: write HOST:PORT, say api.openai.com:443"
                             " or 127.0.0.1:8080")
        return cls(host, int(port))

    @property
    def loopback(self) -> bool:
        if self.host in LOOPBACK_NAMES:
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def proxy_environment(port: int) -> dict[str, str]:
    """What points an agent's HTTP clients at the proxy, loopback (its tool server) excepted."""
    url = f"http://127.0.0.1:{port}"
    names = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
    return {**dict.fromkeys(names, url), "NO_PROXY": "127.0.0.1,localhost,::1",
            "no_proxy": "127.0.0.1,localhost,::1"}


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def splice(client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                  upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
    """Copy both ways until both sides have closed."""
    await asyncio.gather(_pipe(client[0], upstream[1]), _pipe(upstream[0], client[1]))


async def _open(destination: Destination) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    async with asyncio.timeout(CONNECT_TIMEOUT_SECONDS):
        return await asyncio.open_connection(destination.host, destination.port)


class Egress:
    """Serves the allowed ``destinations`` on sockets made inside the agent's namespace:
    ``relay_ports`` lists the ports to bind there for the loopback ones (the same as theirs),
    and ``needs_proxy`` whether a proxy socket is wanted too."""

    def __init__(self, destinations: Sequence[Destination]) -> None:
        self.destinations = list(dict.fromkeys(destinations))
        self.relayed = [d for d in self.destinations if d.loopback]
        self.proxied = {(d.host, d.port) for d in self.destinations if not d.loopback}
        self.refused: list[str] = []
        """What the agent asked the proxy for and was refused: recorded for the run."""
        self._servers: list[asyncio.Server] = []

    @property
    def relay_ports(self) -> list[int]:
        return [d.port for d in self.relayed]

    @property
    def needs_proxy(self) -> bool:
        return bool(self.proxied)

    async def start(self, relays: Sequence[socket.socket],
                    proxy: socket.socket | None) -> dict[str, str]:
        """Serve, and return the variables the agent needs (none without a proxy)."""
        for destination, sock in zip(self.relayed, relays, strict=True):
            self._servers.append(await asyncio.start_server(
                lambda r, w, d=destination: self._relay(r, w, d), sock=sock))
        if proxy is None:
            return {}
        self._servers.append(await asyncio.start_server(self._proxy, sock=proxy))
        return proxy_environment(proxy.getsockname()[1])

    async def close(self) -> None:
        for server in self._servers:
            server.close()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     destination: Destination) -> None:
        try:
            upstream = await _open(destination)
        except (OSError, TimeoutError):
            writer.close()
            return
        await splice((reader, writer), upstream)

    async def _proxy(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        request_line, _, rest = head.partition(b"\r\n")
        parts = request_line.decode("latin-1").split(" ")
        target = _target(parts)
        if target is None:
            return await self._answer(writer, 400, "not a proxy request")
        if (target.host, target.port) not in self.proxied:
            self.refused.append(str(target))
            return await self._answer(writer, 403, f"{target} is not an allowed destination"
                                                   " (--agent-egress)")
        try:
            upstream = await _open(target)
        except (OSError, TimeoutError) as e:
            return await self._answer(writer, 502, f"cannot reach {target}: {e}")
        if parts[0] == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            # absolute-form to origin-form; one request per connection keeps the list in force
            url = urlsplit(parts[1])
            path = (url.path or "/") + (f"?{url.query}" if url.query else "")
            headers = [h for h in rest.split(b"\r\n") if h and not h.lower().startswith(
                (b"connection:", b"proxy-connection:", b"proxy-authorization:", b"keep-alive:"))]
            upstream[1].write(b"\r\n".join([f"{parts[0]} {path} {parts[2]}".encode("latin-1"),
                                            *headers, b"Connection: close", b"", b""]))
        await splice((reader, writer), upstream)

    @staticmethod
    async def _answer(writer: asyncio.StreamWriter, status: int, message: str) -> None:
        reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
        body = message.encode() + b"\n"
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        with contextlib.suppress(Exception):
            await writer.drain()
            writer.close()


def _target(parts: list[str]) -> Destination | None:
    """Where a proxy request line asks to go: ``CONNECT host:port`` or ``GET http://host/``."""
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    method, target = parts[0], parts[1]
    try:
        if method == "CONNECT":
            return Destination.parse(target)
        url = urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            return None
        return Destination(url.hostname.lower(), url.port or 80)
    except ValueError:
        return None
