"""One PostgreSQL 15 instance: a directory with ``pgdata/`` and ``log/``, and a socket directory.

A server of this machine listens on its Unix socket alone, in a directory of its own under
``SOCKET_ROOT`` (an instance directory is too deep for a socket's 107-byte path); sandboxed,
it has a network namespace of its own with nothing in it. A server in a pod listens on TCP too.

The postmaster is started directly (not through ``pg_ctl``) so that its pid is ours to record
and to signal. Shutdown modes are the postmaster's signals: SIGTERM smart, SIGINT fast, SIGQUIT
immediate. A golden snapshot must be stopped *fast*: an immediate stop comes back through crash
recovery, which zeroes every cumulative statistic (dead tuples, n_mod_since_analyze) that a
scenario's fault may rest on.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
import psycopg

from dbabench.model.artifacts import StoreArtifact
from dbabench.model.tool import ShutdownMode
from dbabench.errors import InfraError
from dbabench.env import sandbox
from dbabench.env.processes import (
    ProcessTable,
    as_user_kwargs,
    chown_for_postgres,
    run_as_user,
)
from dbabench.env.sandbox import POSTMASTER_ENV

PG_BIN = Path(os.environ.get("DBABENCH_PG_BIN", "/usr/lib/postgresql/15/bin"))
SOCKET_ROOT = (Path("/run/pg") if os.geteuid() == 0
               else Path(tempfile.gettempdir()) / f"pg-{os.getuid()}")
"""Where the socket directories of this machine's servers are made, one per instance. The
agent reads the path (the server logs it, the exporter labels its series with it), so it names
nothing of the harness."""
SOCKET_NAME_BYTES = 6
"""A socket directory's name: this many random bytes, in hex."""
SOCKET_OWNER = "instance"
"""In a socket directory, a link to the instance directory it serves: once that is gone (a run
killed before its teardown discarded it), so is the socket directory (``_reap_sockets``)."""
LOCAL_PORT = 5432
"""Each server of this machine has a socket directory of its own: all can have the usual port."""
SUPERUSER = "postgres"
APP_ROLE = "app"
AGENT_APPLICATION = "dba-agent"
"""The application_name of the agent's sessions: the harness leaves them out of the sessions
a termination is judged by."""
HARNESS_APPLICATION = "dbabench-harness"
"""The application_name of the harness's own bookkeeping sessions."""
HARNESS_APPLICATION_PREFIX = "dbabench"
"""Every session of the harness is named so (its build, the fault program, the verifier, the
bookkeeping, ``dsn()``'s default); no incident's session is."""


def harness_application(application_name: str) -> bool:
    """Whether a session of this application_name is the harness's own."""
    return application_name.startswith(HARNESS_APPLICATION_PREFIX)

_SIGNALS: dict[ShutdownMode, int] = {
    ShutdownMode.smart: signal.SIGTERM, ShutdownMode.fast: signal.SIGINT,
    ShutdownMode.immediate: signal.SIGQUIT,
}

# Catalog §1.1 baseline, plus a parseable log: jsonlog, one record a line.
BASELINE_SETTINGS: dict[str, str] = {
    "shared_preload_libraries": "'pg_stat_statements'",
    "logging_collector": "on",
    "log_destination": "'jsonlog'",
    "log_filename": "'postgresql-%Y%m%d-%H%M%S.log'",
    "log_rotation_size": "0",
    # initdb writes the machine's zone; log times are compared with UTC clocks
    "log_timezone": "'UTC'",
    "log_lock_waits": "on",
    "log_min_duration_statement": "2000",
    "log_autovacuum_min_duration": "0",
    "log_temp_files": "0",
    "log_checkpoints": "on",
    "track_io_timing": "on",
    "wal_level": "replica",
    "max_prepared_transactions": "10",
    "max_wal_senders": "5",
    "max_replication_slots": "5",
    "max_connections": "100",
    "shared_buffers": "128MB",
}


GOLDEN_META = StoreArtifact.GOLDEN_META
"""A golden's metadata, credentials included, in its home; it travels in every clone."""
STANDBY_PASSFILE = "primary.pgpass"
"""In a standby's home: the password its walreceiver logs in to the primary with."""
INITDB_OUT = "initdb.out"
"""What initdb printed, in the home while it runs; read when it fails, removed after."""
# no server sees it
SANDBOX_HIDDEN = (GOLDEN_META,)


class PostgresError(InfraError, RuntimeError):
    pass


class StartFailed(PostgresError):
    """The server did not come up: the postmaster exited during start-up, or it never accepted
    connections. When the harness starts a run's server this is an infrastructure error like
    any other; when the agent starts it (manage_instance), after a setting of its own, it is
    the agent's observation (tools.instance), with what the server said."""

    def __init__(self, reason: str, said: str) -> None:
        super().__init__(f"{reason}: {said}" if said else reason)
        self.reason = reason
        """What went wrong, in the harness's words."""
        self.said = said
        """What the server wrote during this start: its output before its logging collector
        ran, then its log's records as text; the end of it, at most ``SAID_CHARS``."""


SAID_CHARS = 3000
"""How much of what a server said while failing to start is kept: the end of it."""
_SAID_READ_BYTES = 64 * 1024
"""How much of each output is read back at most: the end of what the start added."""


@dataclass(frozen=True)
class OutputMarks:
    """The sizes of a server's outputs before a start: what is past them is that start's."""

    postmaster_out: int
    logs: dict[Path, int]


def _read_from(path: Path, offset: int) -> str:
    """``path`` past ``offset`` (its last ``_SAID_READ_BYTES`` of that), as text."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            start = offset if offset <= size else 0  # shorter than it was: written anew
            f.seek(max(start, size - _SAID_READ_BYTES))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _log_text(jsonlog: str) -> str:
    """jsonlog records as the server's stderr would have written them (severity, message,
    detail, hint); a line that is not a whole record (a cut first one, a partial last one)
    is left out."""
    lines = []
    for line in jsonlog.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        lines.append(f"{record.get('error_severity', 'LOG')}:  {record.get('message', '')}")
        lines.extend(f"{key.upper()}:  {record[key]}" for key in ("detail", "hint")
                     if record.get(key))
    return "\n".join(lines)


def _conf_value(value: bool | int | float | str) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (int, float)):
        return str(value)
    return "'" + value.replace("'", "''") + "'"


def _reap_sockets() -> None:
    """Remove the socket directories whose instance directory is gone; one still being made
    (no link yet) is left for a minute."""
    try:
        made = list(SOCKET_ROOT.iterdir())
    except FileNotFoundError:
        return
    for directory in made:
        if not re.fullmatch(f"[0-9a-f]{{{2 * SOCKET_NAME_BYTES}}}", directory.name):
            continue
        try:
            gone = not Path(os.readlink(directory / SOCKET_OWNER)).exists()
        except FileNotFoundError:
            try:
                gone = time.time() - directory.stat().st_mtime > 60
            except FileNotFoundError:
                continue
        except OSError:
            continue
        if gone:
            shutil.rmtree(directory, ignore_errors=True)


@dataclass
class Credentials:
    superuser_password: str
    app_password: str

    @classmethod
    def generate(cls) -> "Credentials":
        return cls(secrets.token_urlsafe(18), secrets.token_urlsafe(18))


class PostgresInstance:
    """A cluster directory and, while running, its postmaster."""

    def __init__(self, home: Path, credentials: Credentials, *, port: int | None = None,
                 database: str = "app", host: str | None = None) -> None:
        self.home = home
        self.socket_dir: Path | None = (
            SOCKET_ROOT / secrets.token_hex(SOCKET_NAME_BYTES) if host is None else None)
        """Where this machine's server listens (made when it starts); None: reached by TCP."""
        self.host = host if host is not None else str(self.socket_dir)
        self.listen = ""
        """The TCP addresses it listens on besides its socket: a pod's (``relocate``)."""
        self.upstream: Path | None = None
        """A standby's primary's socket directory, which its sandbox must show."""
        self.credentials = credentials
        self.port = port or LOCAL_PORT
        self.database = database
        self.pid: int | None = None
        self.sandboxed = sandbox.available() is None
        """Whether the server runs in env.sandbox (it cannot when we are not root)."""

    @property
    def pgdata(self) -> Path:
        return self.home / "pgdata"

    @property
    def log_dir(self) -> Path:
        return self.home / "log"

    def dsn(self, *, database: str | None = None, user: str = SUPERUSER,
            application_name: str = "dbabench") -> str:
        password = (self.credentials.superuser_password if user == SUPERUSER
                    else self.credentials.app_password)
        return psycopg.conninfo.make_conninfo(
            host=self.host, port=self.port, dbname=database or self.database, user=user,
            password=password, application_name=application_name, connect_timeout=5)

    # -- creation --------------------------------------------------------------------------

    def initdb(self, settings: dict[str, bool | int | float | str], procs: ProcessTable) -> None:
        for d in (self.home, self.log_dir):
            d.mkdir(parents=True, exist_ok=True)
            chown_for_postgres(d)
        pwfile = self.home / ".pwfile"
        pwfile.write_text(self.credentials.superuser_password + "\n")
        chown_for_postgres(pwfile)
        pwfile.chmod(0o600)
        out = self.home / INITDB_OUT
        try:
            status = procs.run("initdb", [
                str(PG_BIN / "initdb"), "-D", str(self.pgdata), "-U", SUPERUSER,
                "--data-checksums", "--auth=scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8",
                "--locale=C.UTF-8"], log=out, environment=POSTMASTER_ENV, as_postgres=True)
            if status != 0:
                raise PostgresError(f"initdb failed ({status}):"
                                    f" {out.read_text(errors='replace').strip()[-1000:]}")
        finally:
            pwfile.unlink(missing_ok=True)
            out.unlink(missing_ok=True)
        self.write_config(settings)

    def write_config(self, settings: dict[str, bool | int | float | str]) -> None:
        """The run-specific part of postgresql.conf: port and paths change per clone."""
        lines = dict(BASELINE_SETTINGS)
        lines.update({k: _conf_value(v) for k, v in settings.items()})
        lines.update(self._placed())
        body = "".join(f"{k} = {v}\n" for k, v in lines.items())
        conf = self.pgdata / "dbabench.conf"
        conf.write_text("# written by dbabench for this instance\n" + body)
        chown_for_postgres(conf)
        main = self.pgdata / "postgresql.conf"
        include = "include = 'dbabench.conf'\n"
        if include not in main.read_text():
            with main.open("a") as f:
                f.write(include)

    def _placed(self) -> dict[str, str]:
        """The settings that place a clone: its port, where it listens, its log directory."""
        return {"port": str(self.port), "listen_addresses": _conf_value(self.listen),
                "unix_socket_directories": _conf_value(str(self.socket_dir or "")),
                "log_directory": _conf_value(str(self.log_dir))}

    def relocate(self, port: int, *, listen: str = "") -> None:
        """Point a cloned cluster at this instance's paths and ``port``; ``listen`` (a pod's
        TCP addresses) also admits password logins, and a standby's, from other hosts."""
        self.port = port
        self.listen = listen
        self.log_dir.mkdir(parents=True, exist_ok=True)
        chown_for_postgres(self.log_dir)
        conf = self.pgdata / "dbabench.conf"
        placed = self._placed()
        kept = [ln for ln in conf.read_text().splitlines()[1:]
                if ln.split(" = ", 1)[0] not in placed]
        conf.write_text("# written by dbabench for this instance\n" + "\n".join(kept) + "\n"
                        + "".join(f"{k} = {v}\n" for k, v in placed.items()))
        hba = self.pgdata / "pg_hba.conf"
        # "all" does not match replication connections: a standby in another pod needs its own
        remote = "host all all all scram-sha-256\nhost replication all all scram-sha-256\n"
        if listen and remote not in hba.read_text():
            with hba.open("a") as f:
                f.write(remote)
        (self.pgdata / "postmaster.pid").unlink(missing_ok=True)

    def follow(self, primary: "PostgresInstance", *, slot: str | None,
               settings: dict[str, bool | int | float | str]) -> None:
        """Make this clone a hot standby of ``primary``, streaming as ``replica1``.

        Both are clones of one cleanly stopped golden: the standby starts consistent at the
        golden's shutdown checkpoint and streams the primary's WAL from there, as a standby
        copied from a stopped primary does. No base backup is needed."""
        # the password in a file of its own: SHOW primary_conninfo, which the agent may run on
        # the standby, would show it (the third outside attack read it so)
        passfile = self.home / STANDBY_PASSFILE
        password = primary.credentials.superuser_password
        passfile.write_text("*:*:*:" + SUPERUSER + ":"
                            + password.replace("\\", "\\\\").replace(":", "\\:") + "\n")
        chown_for_postgres(passfile)
        passfile.chmod(0o600)
        conninfo = psycopg.conninfo.make_conninfo(
            host=primary.host, port=primary.port, user=SUPERUSER, passfile=str(passfile),
            application_name="replica1")
        lines = {"primary_conninfo": _conf_value(conninfo), "hot_standby": "on",
                 **({"primary_slot_name": _conf_value(slot)} if slot else {}),
                 **{k: _conf_value(v) for k, v in settings.items()}}
        conf = self.pgdata / "dbabench.conf"
        with conf.open("a") as f:
            f.write("".join(f"{k} = {v}\n" for k, v in lines.items()))
        self.upstream = primary.socket_dir
        signal_file = self.pgdata / "standby.signal"
        signal_file.touch()
        chown_for_postgres(signal_file)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, procs: ProcessTable, *, timeout: float = 60.0) -> None:
        if self.pid is not None:
            raise PostgresError(f"instance on port {self.port} is already running (pid {self.pid})")
        # Unless stopped on purpose (stop()), a run's server is discarded with its clone:
        # immediate shutdown, which also takes every backend down with the postmaster.
        argv = [str(PG_BIN / "postgres"), "-D", str(self.pgdata)]
        marks = self.output_marks()
        if self.socket_dir is not None:
            _reap_sockets()
            self.socket_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            chown_for_postgres(self.socket_dir)
            owner = self.socket_dir / SOCKET_OWNER
            if not owner.is_symlink():
                owner.symlink_to(self.home)
        if self.sandboxed:
            sockets = tuple(d for d in (self.socket_dir, self.upstream) if d is not None)
            proc = procs.spawn("postgres", sandbox.server(argv, home=self.home, user=SUPERUSER,
                                                          hidden=SANDBOX_HIDDEN, sockets=sockets,
                                                          own_network=not self.listen),
                               log=self.home / "postmaster.out", environment=POSTMASTER_ENV,
                               stop_signal=signal.SIGQUIT)
            # the postmaster is the first process of its namespace: unshare's child
            pid = procs.follow_child(proc, argv0=argv[0])
        else:
            proc = procs.spawn("postgres", argv, log=self.home / "postmaster.out",
                               environment=POSTMASTER_ENV, as_postgres=True,
                               stop_signal=signal.SIGQUIT)
            pid = proc.pid
        self.pid = pid
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if pid is None or proc.poll() is not None:
                self.pid = None
                procs.stop(pid if pid is not None else proc.pid)
                procs.check_open("starting postgres")
                if pid is None:  # the sandbox never ran it: ours to fix, not the agent's
                    raise PostgresError(f"the sandbox did not start postgres (exit status"
                                        f" {proc.poll()}): {self.startup_output(marks)}")
                raise StartFailed(f"postgres exited with {proc.returncode} during start-up",
                                  self.startup_output(marks))
            try:
                with psycopg.connect(self.dsn(database="postgres"), autocommit=True) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError as e:
                last_error = e
                procs.pause(0.05, "starting postgres")
        # left running, as it is: a stop (the agent's, or the run's end) takes it down
        raise StartFailed(f"postgres (pid {pid}) did not accept connections in {timeout:.0f}s"
                          f" ({str(last_error).strip()})", self.startup_output(marks))

    def stop(self, procs: ProcessTable, mode: ShutdownMode = ShutdownMode.fast, *,
             timeout: float = 60.0) -> None:
        if self.pid is None:
            return
        procs.stop(self.pid, sig=_SIGNALS[mode], timeout=timeout)
        self.pid = None

    def discard_socket(self) -> None:
        """Remove the socket directory of a server that is gone for good."""
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)

    def cluster_state(self) -> str:
        """The state pg_controldata reads in the control file: "shut down" after a clean stop,
        "in production" while running or after a crash."""
        result = subprocess.run([str(PG_BIN / "pg_controldata"), "-D", str(self.pgdata)],
                                capture_output=True, text=True,
                                env={**POSTMASTER_ENV, "LC_ALL": "C"},
                                **as_user_kwargs(run_as_user()))  # type: ignore[call-overload]
        if result.returncode != 0:
            raise PostgresError(f"pg_controldata failed: {result.stderr.strip()[:500]}")
        for line in result.stdout.splitlines():
            if line.startswith("Database cluster state:"):
                return line.split(":", 1)[1].strip()
        raise PostgresError(f"pg_controldata printed no cluster state: {result.stdout[:300]}")

    def running(self) -> bool:
        return self.pid is not None

    def output_marks(self) -> OutputMarks:
        """Where the server's outputs end now: ``startup_output`` reads what comes after."""
        out = self.home / "postmaster.out"
        logs = sorted(self.log_dir.glob("*.json")) if self.log_dir.exists() else []
        sizes: dict[Path, int] = {}
        for path in [out, *logs]:
            try:
                sizes[path] = path.stat().st_size
            except OSError:
                sizes[path] = 0
        return OutputMarks(postmaster_out=sizes[out], logs={p: sizes[p] for p in logs})

    def startup_output(self, since: OutputMarks | None = None) -> str:
        """What the postmaster said while starting, past ``since`` (all of it without): its
        own output (what it writes before its logging collector runs: a failure to map its
        shared memory, to load a library, a bad setting), then its jsonlog's new records as
        text. The end of it, at most ``SAID_CHARS``."""
        since = since or OutputMarks(0, {})
        parts = [_read_from(self.home / "postmaster.out", since.postmaster_out).strip()]
        logs = sorted(self.log_dir.glob("*.json")) if self.log_dir.exists() else []
        parts.extend(_log_text(_read_from(path, since.logs.get(path, 0))) for path in logs)
        said = "\n".join(part for part in parts if part)
        return said if len(said) <= SAID_CHARS else "..." + said[-SAID_CHARS:]
