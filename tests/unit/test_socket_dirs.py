"""Socket directories of this machine's servers: where each listens, and what is left of a run
killed before its teardown."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dbabench.env import postgres
from dbabench.env.postgres import Credentials, PostgresInstance

MACHINES_ROOT = postgres.SOCKET_ROOT


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "sockets"
    root.mkdir()
    monkeypatch.setattr(postgres, "SOCKET_ROOT", root)
    return root


def _made(root: Path, name: str, home: Path | None, *, age: float = 0.0) -> Path:
    directory = root / name
    directory.mkdir()
    if home is not None:
        (directory / postgres.SOCKET_OWNER).symlink_to(home)
    if age:
        then = time.time() - age
        os.utime(directory, (then, then))
    return directory


def test_a_socket_directory_goes_with_its_instance(root: Path, tmp_path: Path) -> None:
    alive = tmp_path / "alive"
    alive.mkdir()
    kept = _made(root, "a" * 12, alive)
    orphan = _made(root, "b" * 12, tmp_path / "discarded")
    being_made = _made(root, "c" * 12, None)
    abandoned = _made(root, "d" * 12, None, age=120)
    foreign = _made(root, "postgresql-main", None, age=120)
    postgres._reap_sockets()
    assert kept.exists() and being_made.exists() and foreign.exists()
    assert not orphan.exists() and not abandoned.exists()


def test_a_local_instance_listens_on_its_socket_alone(root: Path, tmp_path: Path) -> None:
    instance = PostgresInstance(tmp_path / "home", Credentials.generate())
    assert instance.socket_dir is not None and instance.socket_dir.parent == root
    assert instance.host == str(instance.socket_dir) and instance.port == postgres.LOCAL_PORT
    placed = instance._placed()
    assert placed["listen_addresses"] == "''"
    assert placed["unix_socket_directories"] == f"'{instance.socket_dir}'"
    # a path the agent reads (the server's log, the exporter's labels) names nothing of ours
    assert "dbabench" not in str(MACHINES_ROOT)
    # a server elsewhere is reached by TCP, and makes no socket directory
    remote = PostgresInstance(tmp_path / "x", Credentials.generate(), host="10.0.0.7", port=6432)
    assert remote.socket_dir is None and remote.host == "10.0.0.7"
