"""Sandboxes: what a run's database server, and an external agent, can see of this machine.

A superuser of the server can run programs (COPY ... PROGRAM, archive_command) and read files
(pg_read_file) as the server's OS user; an external agent is a program of anyone's. The gate
refuses the first to the agent, and the sandbox makes a refusal that was missed harmless. Each
runs in a private mount namespace whose root is a fresh tmpfs holding a read-only ``/usr``,
a minimal ``/etc``, private ``/tmp`` and ``/dev/shm``, the few device nodes programs open, and
only the paths its owner declares: the server its instance directory, the agent its command
and task file. No run directory, checkout, snapshot store, golden or other run exists in
there, and the harness's environment does not either.

Each also gets a pid namespace: when its first process ends, or is stopped, every process it
started ends with it, ``setsid`` or not. A server's first process is the postmaster itself
(``chroot`` and ``setpriv`` exec in place), so its recorded pid takes a shutdown mode as an
unsandboxed one does; an agent's is a small init that forwards SIGTERM.
"""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from dbabench.errors import PermanentInfraError

# Where each sandbox's root is mounted, inside its own mount namespace only; one directory
# serves every sandbox because no namespace sees another's mounts.
SANDBOX_MOUNTPOINT = Path("/run/dbabench-sandbox")

AGENT_USER = "dbabench-agent"
"""The unprivileged OS user external agents run as (created by scripts/install-system-deps.sh)."""

DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
# merged-/usr Debian: these are symlinks into /usr
USR_LINKS = {"bin": "usr/bin", "lib": "usr/lib", "lib64": "usr/lib64", "sbin": "usr/sbin"}
# What a networked program reads of /etc: name resolution and the CA certificates of TLS.
NETWORK_ETC = ("resolv.conf", "hosts", "nsswitch.conf", "host.conf", "ssl", "ca-certificates",
               "ca-certificates.conf", "localtime")

POSTMASTER_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                  "TZ": "UTC"}
"""The whole environment of a server: nothing of the harness's (keys, paths) reaches it."""

# pid 1 of an agent's namespace: the kernel gives pid 1 no default signal actions, so it
# forwards SIGTERM to the agent and leaves with the agent's status.
_AGENT_INIT = ('cd /tmp; "$@" & child=$!; trap \'kill -TERM "$child" 2>/dev/null\' TERM INT;'
               ' while :; do wait "$child"; status=$?;'
               ' kill -0 "$child" 2>/dev/null || exit "$status"; done')


class SandboxUnavailable(PermanentInfraError, RuntimeError):
    """This machine cannot build the sandbox: trying again does not change the machine."""


@dataclass
class View:
    """What a sandbox shows besides the system: paths at their own absolute paths."""

    readable: list[Path] = field(default_factory=list)
    writable: list[Path] = field(default_factory=list)
    hidden: list[Path] = field(default_factory=list)
    """Files inside a shown directory that read as empty."""
    etc: tuple[str, ...] = ()
    """Entries of the machine's /etc to show, read-only."""
    proc: bool = False
    """A /proc of the sandbox's own pid namespace."""


def available(user: str | None = None) -> str | None:
    """None when sandboxes (running as ``user``) can be made here, else why not."""
    if os.geteuid() != 0:
        return "not root: a private mount namespace and chroot need root"
    missing = [t for t in ("unshare", "chroot", "setpriv", "mount") if shutil.which(t) is None]
    if missing:
        return f"missing {', '.join(missing)} (util-linux, coreutils)"
    if user is not None:
        try:
            pwd.getpwnam(user)
        except KeyError:
            return (f"no OS user {user!r}: create it with `make deps`"
                    " (scripts/install-system-deps.sh)")
    return None


def server(argv: list[str], *, home: Path, user: str, hidden: tuple[str, ...] = (),
           sockets: tuple[Path, ...] = (), own_network: bool = False) -> list[str]:
    """The postmaster ``argv`` as a command that runs it sandboxed as ``user``, seeing its
    instance directory ``home`` read-write, except the ``hidden`` files in it, and the
    ``sockets`` directories (its own, where it listens; a standby's primary's).

    The postmaster is the first process of a pid namespace of its own, as in a container:
    nothing it runs (a program of ``archive_command``, ``COPY ... PROGRAM``) can signal a
    process outside it, and when it exits the kernel ends everything left inside, ``setsid``
    daemons too. ``unshare`` waits for it; its pid is the one to signal
    (ProcessTable.follow_child). With ``own_network`` it also gets a network namespace of its
    own with no interface up: a server that listens on its socket alone needs none, and what
    it runs then reaches no port of this machine (the harness's, another run's) at all."""
    view = View(writable=[home, *sockets], hidden=[home / name for name in hidden])
    return ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--kill-child",
            *(("--net",) if own_network else ()), "--", "sh", "-c", _script(view, user, argv)]


def agent(argv: list[str], *, view: View, user: str = AGENT_USER) -> list[str]:
    """An external agent's ``argv`` as a command that runs it sandboxed as ``user`` in its
    own pid namespace; ``--kill-child`` ends the namespace if we are killed."""
    init = ["/bin/sh", "-c", _AGENT_INIT, "agent-init", *argv]
    return ["unshare", "--mount", "--propagation", "private", "--pid", "--fork",
            "--kill-child", "--", "sh", "-c", _script(view, user, init, pdeathsig=True)]


def _script(view: View, user: str, argv: list[str], *, pdeathsig: bool = False) -> str:
    """``pdeathsig``: the sandboxed process is killed when its parent dies (unshare's
    --kill-child sets that, but a change of user clears it, so setpriv sets it again)."""
    why = available(user)
    if why is not None:
        raise SandboxUnavailable(f"cannot sandbox: {why}")
    pw = pwd.getpwnam(user)
    SANDBOX_MOUNTPOINT.mkdir(mode=0o700, parents=True, exist_ok=True)
    root = shlex.quote(str(SANDBOX_MOUNTPOINT))

    def inner(path: str | Path) -> str:
        return shlex.quote(f"{SANDBOX_MOUNTPOINT}{path}")

    def bind(path: Path, *, writable: bool) -> list[str]:
        target = inner(path)
        # a path inside one bound before exists already, on a read-only mount
        make = (f"[ -d {target} ] || mkdir -p {target}" if path.is_dir()
                else f"[ -e {target} ] || {{ mkdir -p {inner(path.parent)} && touch {target}; }}")
        lines = [make, f"mount --rbind {shlex.quote(str(path))} {target}"]
        if not writable:
            lines.append(f"mount -o remount,bind,ro {target}")
        return lines

    lines = [
        "set -eu",
        f"mount -t tmpfs -o mode=0755,size=16m dbabench-sandbox {root}",
        f"mkdir -p {inner('/usr')} {inner('/etc')} {inner('/tmp')} {inner('/dev/shm')}",
        f"mount --rbind /usr {inner('/usr')}",
        f"mount -o remount,bind,ro {inner('/usr')}",
        # what the machine's owner installed by hand is not the sandbox's business
        f"mount -t tmpfs -o ro,size=4k dbabench-empty {inner('/usr/local')}",
        *(f"ln -s {target} {inner('/' + link)}" for link, target in USR_LINKS.items()),
        f"chmod 1777 {inner('/tmp')}",
        f"mount -t tmpfs -o mode=1777,size=64m dbabench-shm {inner('/dev/shm')}",
        *(f"touch {inner('/dev/' + d)} && mount --bind /dev/{d} {inner('/dev/' + d)}"
          for d in DEVICES if Path(f"/dev/{d}").exists()),
        # the dynamic linker finds the multiarch libraries through its cache
        f"cp /etc/ld.so.cache {inner('/etc/ld.so.cache')}",
        f"printf '%s\\n' 'root:x:0:0::/:/usr/sbin/nologin'"
        f" '{user}:x:{pw.pw_uid}:{pw.pw_gid}::/tmp:/bin/sh' > {inner('/etc/passwd')}",
        f"printf '%s\\n' 'root:x:0:' '{user}:x:{pw.pw_gid}:' > {inner('/etc/group')}",
    ]
    for name in view.etc:
        if Path("/etc", name).exists():
            lines += bind(Path("/etc", name), writable=False)
    if view.proc:
        lines.append(f"mkdir -p {inner('/proc')} && mount -t proc proc {inner('/proc')}")
    for path in dict.fromkeys(view.readable):
        lines += bind(path, writable=False)
    for path in view.writable:
        lines += bind(path, writable=True)
    lines += [f"mount --bind /dev/null {inner(path)}" for path in view.hidden if path.exists()]
    lines.append(f"exec {shutil.which('chroot')} {root} {shutil.which('setpriv')}"
                 f" --reuid={pw.pw_uid} --regid={pw.pw_gid} --clear-groups --inh-caps=-all"
                 f" --bounding-set=-all --no-new-privs"
                 f"{' --pdeathsig SIGKILL' if pdeathsig else ''} -- {shlex.join(argv)}")
    return "\n".join(lines)
