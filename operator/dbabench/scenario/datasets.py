"""Schemas and data a scenario's database starts from, before any fault.

A dataset is SQL the superuser runs in the application database. Its version is part of the
golden snapshot's key, so changing it here rebuilds every snapshot that uses it.

Two datasets: ``checkout``, three tables of one service, and ``estate``, a company's primary
database (``estate/``: SQL files run in name order as psql would run them, with ``:scale`` and
``:volume``, the intended state the business relies on, ``estate/intended/*.yaml``, and the
services that use it, ``estate/services/*.yaml``). The estate is shared: built once per machine
as a snapshot of its own, which each scenario's golden clones (env.local); its intended state
is part of every scenario that uses it, and so are the services of the scenario's traffic
(``database.traffic``), as jobs of its own.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import yaml
from pglast.parser import ParseError, split
from pydantic import BaseModel, ValidationError

from dbabench.errors import BadInput, PermanentInfraError
from dbabench.model.dataset import DatasetName, Traffic
from dbabench.model.scenario import DatabaseSpec, IntendedSetting, Scenario
from dbabench.model.workload import JobStep

ESTATE_DIR = Path(__file__).with_name("estate")
ESTATE_VOLUME = "DBABENCH_ESTATE_VOLUME"
"""The environment variable that makes the estate smaller: percent of its full size (1-100,
100 when unset). For tests and quick tries; the golden key follows it."""
_VARIABLE = re.compile(r"(?<![:\w]):(scale|volume)\b")


class DatasetError(PermanentInfraError, ValueError):
    """A dataset's files are not what the loader can run: a bug in the checkout."""


@dataclass(frozen=True)
class Service:
    """One of the services that use a dataset: its jobs, all under one application_name."""

    application_name: str
    traffic: frozenset[Traffic]
    """The profiles it runs in (``mixed`` has every service)."""
    jobs: tuple[JobStep, ...]
    description: str = ""
    """What the service is, from its file's opening comment."""


@dataclass(frozen=True)
class Dataset:
    name: str
    version: int | str
    statements: tuple[str, ...]
    sessions: tuple[int, ...] = (0,)
    """Where each session starts in ``statements`` (a file runs in a session of its own, as
    psql would run it: a ``SET`` in one file does not reach the next)."""
    intended: tuple[IntendedSetting, ...] = ()
    """What the business relies on in this database, in every scenario built on it."""
    shared: bool = False
    """Built once as a snapshot of its own, which each scenario's golden is a clone of."""
    services: tuple[Service, ...] = ()
    """What else uses the database while a scenario runs (``complete`` adds their jobs)."""

    def jobs(self, traffic: Traffic) -> list[JobStep]:
        return [job for service in self.services if traffic in service.traffic
                for job in service.jobs]


def checkout(scale: int) -> Dataset:
    """Merchants, a price list with history, and orders: the checkout service's database.

    ``price_history`` keeps 500 versions per SKU with one current row, indexed on ``sku``
    alone, so a per-order lookup of the current price is cheap only in bulk (a hash join)
    and expensive per row (a bitmap scan of 500 versions in a nested loop).
    """
    merchants, orders_per_merchant = 100, 3000 * scale
    return Dataset(
        name="checkout",
        version=3,
        statements=(
            "CREATE TABLE merchants(id int PRIMARY KEY, name text NOT NULL,"
            " order_count bigint NOT NULL DEFAULT 0, open_value_cents bigint,"
            " settled_at timestamptz, updated_at timestamptz NOT NULL DEFAULT now())",
            f"INSERT INTO merchants(id, name) SELECT g, 'merchant-' || g"
            f" FROM generate_series(1, {merchants + 1}) g",
            "CREATE TABLE price_history(sku int NOT NULL, valid_from date NOT NULL,"
            " valid_to date, price_cents int NOT NULL)",
            "INSERT INTO price_history SELECT s, date '2020-01-01' + v,"
            " CASE WHEN v = 499 THEN NULL ELSE date '2020-01-01' + v + 1 END,"
            " 100 + (s * 37 + v * 11) % 9900"
            " FROM generate_series(1, 2000) s, generate_series(0, 499) v",
            "CREATE INDEX price_history_sku_idx ON price_history(sku)",
            "CREATE TABLE orders(id bigserial PRIMARY KEY, merchant_id int NOT NULL"
            " REFERENCES merchants(id), sku int NOT NULL, qty int NOT NULL,"
            " status text NOT NULL DEFAULT 'new', created_at timestamptz NOT NULL DEFAULT now())",
            "CREATE INDEX orders_merchant_idx ON orders(merchant_id, id)",
            f"INSERT INTO orders(merchant_id, sku, qty, created_at)"
            f" SELECT 1 + g % {merchants}, 1 + (g::bigint * 7919) % 2000, 1 + g % 5,"
            f" now() - make_interval(secs => g % 86400)"
            f" FROM generate_series(1, {merchants * orders_per_merchant}) g",
            "GRANT SELECT, INSERT, UPDATE ON merchants, orders, price_history TO app",
            "GRANT USAGE ON SEQUENCE orders_id_seq TO app",
            "VACUUM ANALYZE",
        ),
    )


M = TypeVar("M", bound=BaseModel)


def _entries(path: Path, model: type[M], what: str) -> list[M]:
    """The YAML list in ``path``, each entry validated as ``model``; a bad one is named by its
    file and number (``what`` it is, 1-based)."""
    entries = yaml.safe_load(path.read_text()) or []
    if not isinstance(entries, list):
        raise DatasetError(f"{path}: expected a YAML list of {what}s")
    found = []
    for number, entry in enumerate(entries, 1):
        try:
            found.append(model.model_validate(entry))
        except ValidationError as e:
            raise DatasetError(f"{path}, {what} {number}: {e}") from e
    return found


def _intended(directory: Path) -> tuple[IntendedSetting, ...]:
    found = [setting for path in sorted(directory.glob("*.yaml"))
             for setting in _entries(path, IntendedSetting, "entry")]
    keys = [s.key for s in found]
    twice = sorted({"/".join(filter(None, k)) for k in keys if keys.count(k) > 1})
    if twice:
        raise DatasetError(f"{directory}: intended setting(s) declared twice: {twice}")
    return tuple(found)


def _services(directory: Path, profiles: Path) -> tuple[Service, ...]:
    """Each file of ``directory`` a service, a list of its jobs; ``profiles`` says which
    services each traffic profile but ``mixed`` runs, by application_name."""
    found: list[Service] = []
    for path in sorted(directory.glob("*.yaml")):
        # a service ran long before the incident: its jobs are at any phase
        jobs = [job.model_copy(update={"staggered": True})
                for job in _entries(path, JobStep, "job")]
        names = {job.application_name for job in jobs}
        if len(names) != 1:
            raise DatasetError(f"{path}: a service's jobs share one application_name, not"
                               f" {sorted(names) or 'none'}")
        found.append(Service(names.pop(), frozenset({Traffic.mixed}), tuple(jobs),
                             _opening_comment(path)))
    jobs = [job.name for service in found for job in service.jobs]
    twice = sorted({name for name in jobs if jobs.count(name) > 1})
    if twice:
        raise DatasetError(f"{directory}: job name(s) used twice: {twice}")
    listed = yaml.safe_load(profiles.read_text()) if profiles.exists() else {}
    known = {service.application_name for service in found}
    if not isinstance(listed or {}, dict) or not set(listed or {}) <= {Traffic.oltp.value,
                                                                       Traffic.olap.value}:
        raise DatasetError(f"{profiles}: expected a mapping of oltp and olap to application"
                           " names")
    runs_in = {name: {Traffic.mixed} for name in known}
    for profile, names in (listed or {}).items():
        for name in names or []:
            if name not in known:
                raise DatasetError(f"{profiles}: {profile} names {name!r}, which no service"
                                   f" in {directory} is (known: {sorted(known)})")
            runs_in[name].add(Traffic(profile))
    unplaced = sorted(name for name, profiles_of in runs_in.items() if len(profiles_of) == 1)
    if unplaced:
        raise DatasetError(f"{profiles}: service(s) {unplaced} are in no profile but mixed:"
                           " list each under oltp, olap or both")
    return tuple(Service(s.application_name, frozenset(runs_in[s.application_name]), s.jobs,
                         s.description) for s in found)


def _opening_comment(path: Path) -> str:
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(line for line in lines if line)


def estate(scale: int) -> Dataset:
    """A marketplace's primary database: the checkout core of ``checkout(scale)`` in public,
    and payments, identity, catalog, fulfilment, an analytics warehouse, events and jobs
    around it (docs/estate.md)."""
    text = os.environ.get(ESTATE_VOLUME, "100")
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise BadInput(f"{ESTATE_VOLUME}={text!r}: give a percent from 1 to 100, or unset it")
    return estate_at(scale, int(text))


@functools.lru_cache(maxsize=8)
def estate_at(scale: int, volume: int) -> Dataset:
    """The estate at ``volume`` percent of its full size."""
    files = sorted((ESTATE_DIR / "sql").glob("*.sql"))
    if not files:
        raise DatasetError(f"no SQL files in {ESTATE_DIR / 'sql'}")
    values = {"scale": str(scale), "volume": str(volume)}
    digest = hashlib.sha256()
    statements: list[str] = []
    sessions: list[int] = []
    for path in files:
        text = path.read_text()
        digest.update(path.name.encode() + b"\0" + text.encode() + b"\0")
        try:
            parts = [s.strip() for s in split(_VARIABLE.sub(lambda m: values[m.group(1)], text))]
        except ParseError as e:
            raise DatasetError(f"{path}: {e}") from e
        sessions.append(len(statements))
        statements += [s for s in parts if s]
    intended = _intended(ESTATE_DIR / "intended")
    for setting in intended:
        digest.update(setting.statement().encode() + b"\0")
    # the services run beside a scenario, not in its snapshot: not part of the version
    return Dataset(name="estate", version=digest.hexdigest()[:12],
                   statements=(*statements, "VACUUM ANALYZE"), sessions=tuple(sessions),
                   intended=intended, shared=True,
                   services=_services(ESTATE_DIR / "services", ESTATE_DIR / "traffic.yaml"))


DATASETS = {DatasetName.checkout: checkout, DatasetName.estate: estate}


def dataset_of(database: DatabaseSpec) -> Dataset:
    return DATASETS[database.dataset](database.scale)


def complete(scenario: Scenario) -> Scenario:
    """The scenario with its dataset's intended state ahead of its own (a setting of its own
    in the same place wins), and the jobs of its traffic's services after its own (a job of
    its own of the same name wins). Idempotent: a scenario read back from a run is not
    changed."""
    spec = scenario.spec
    dataset = dataset_of(spec.database)
    own = {s.key for s in spec.intended}
    settings = [s for s in dataset.intended if s.key not in own]
    named = {step.name for step in spec.fault.runtime if isinstance(step, JobStep)}
    jobs = [job for job in dataset.jobs(spec.database.traffic) if job.name not in named]
    if not settings and not jobs:
        return scenario
    done = scenario.model_copy(deep=True)
    done.spec.intended = [*settings, *spec.intended]
    done.spec.fault.runtime = [*spec.fault.runtime, *jobs]
    return Scenario.model_validate(done.model_dump(mode="json", by_alias=True))
