"""A network of its own for an external agent: a namespace whose only interface is a loopback
on which the harness alone listens.

The namespace is made by a thread of ours that unshares its network namespace, brings ``lo``
up, binds the listening sockets the harness asks for and returns to the machine's namespace.
A socket stays in the namespace it was made in whatever thread later accepts on it, so the
harness serves the agent's loopback from its own event loop, and the agent, entered into the
namespace between fork and exec, finds there the tool server (and whatever egress its user
allowed, env.egress) and nothing of the machine: no PostgreSQL, Prometheus, exporter,
workload endpoint or other run. No process, file or mount is made for it; it ends when the
agent's last process and our last socket in it are gone.

Python 3.11 has no ``os.unshare``/``os.setns`` (3.12 has), hence libc through ctypes.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS = 0x8913, 0x8914
_IFF_UP = 0x1
_IFREQ = "16sH14x"
# looked up before any fork: a child enters the namespace between fork and exec
_libc = ctypes.CDLL(None, use_errno=True)


class NetworkUnavailable(RuntimeError):
    """This machine cannot make a network namespace (not root, or a kernel without them)."""


def _call(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


class AgentNetwork:
    """One agent's network namespace: ``sockets`` listen on its loopback; ``enter`` (a
    ``preexec_fn``) moves a forked child into it."""

    def __init__(self, ports: list[int]) -> None:
        """Make the namespace with a listening socket on 127.0.0.1 at each of ``ports``
        (0: a free one), in the order given (``sockets``)."""
        def make() -> tuple[int, list[socket.socket]]:
            ns = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
            try:
                _loopback_up()
                return ns, [_listening(port) for port in ports]
            except BaseException:
                os.close(ns)
                raise

        try:
            made = _in_namespace(make, None)
        except Exception as e:
            raise NetworkUnavailable(f"cannot give the agent a network of its own: {e}"
                                     " (network namespaces need root)") from e
        self._ns: int | None = made[0]
        self.sockets: list[socket.socket] = made[1]

    def inside(self, make: Callable[[], T]) -> T:
        """What ``make`` returns, called by a thread of ours entered into the namespace: a
        socket made there stays there (a listener on its loopback, a connection into it)."""
        if self._ns is None:
            raise OSError("the namespace is closed")
        return _in_namespace(make, self._ns)

    def enter(self) -> None:
        """For ``preexec_fn``, after fork: this process joins the namespace."""
        if self._ns is None or _libc.setns(self._ns, CLONE_NEWNET) != 0:
            os._exit(127)  # never exec outside it

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()
        if self._ns is not None:
            os.close(self._ns)
            self._ns = None

    def __enter__(self) -> AgentNetwork:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _in_namespace(work: Callable[[], T], ns: int | None) -> T:
    """``work()`` in a thread of ours entered into namespace ``ns`` (None: a new one it
    unshares), which goes back to the machine's namespace before it ends, so nothing else it
    might run is inside; its exception is raised here."""
    made: dict[str, object] = {}

    def run() -> None:
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            if ns is None:
                _call(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
            else:
                _call(_libc.setns(ns, CLONE_NEWNET), "setns")
            try:
                made["value"] = work()
            finally:
                _call(_libc.setns(home, CLONE_NEWNET), "setns back")
        except BaseException as e:  # noqa: BLE001 - carried to the caller's thread
            made["error"] = e
        finally:
            os.close(home)

    thread = threading.Thread(target=run, name="netns")
    thread.start()
    thread.join()
    if "error" in made:
        raise made["error"]  # type: ignore[misc]
    return made["value"]  # type: ignore[return-value]


def _loopback_up() -> None:
    """A new namespace's ``lo`` is down; raising it needs no iproute2."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        current = fcntl.ioctl(s, _SIOCGIFFLAGS, struct.pack(_IFREQ, b"lo", 0))
        flags = struct.unpack(_IFREQ, current)[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack(_IFREQ, b"lo", flags | _IFF_UP))


def _listening(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.setblocking(False)
    return sock
