"""What a run shows the agent as it comes in, place by place: the incident's own evidence, or
the harness's footprints (``dbabench scenarios footprints``, evaluate.footprints).

A footprint is the set-up readable through the agent's tools where a real incident would not
show it: the fault program's own statements, the harness's checks or sessions, the words that
name the harness or the scenario. The fault's effects (a policy, a stored setting, dead
tuples) are the incident, wherever they are read."""

from __future__ import annotations

from datetime import datetime
from pydantic import Field

from dbabench.model.base import NameEnum, Record
from dbabench.model.workload import Server

FOOTPRINTS_VERSION = 1
"""1: the first."""


class Place(NameEnum):
    """Where the agent's tools can read something of the run."""

    STATEMENTS = "pg_stat_statements"
    ACTIVITY = "pg_stat_activity"
    SERVER_LOG = "server_log"
    BUSINESS_LOG = "business_log"
    SETTINGS = "pg_settings"
    ROLE_SETTINGS = "pg_db_role_setting"
    DEFINITIONS = "definitions"
    NAMES = "names"
    TABLE_STATS = "table_stats"
    SERVER_STATS = "server_stats"
    METRICS = "prometheus_labels"


class Kind(NameEnum):
    INCIDENT = "incident"
    """What a DBA would see in the same incident: the fault's effects, its stored settings,
    the workload and its jobs."""
    FOOTPRINT = "footprint"
    """Set-up a real incident would not show."""


class Source(NameEnum):
    """What the text came from, as the manifest and the harness tell it."""

    FAULT = "fault"
    """A statement of the fault program's SQL steps (persistent or runtime)."""
    SETUP = "setup"
    """The harness's build: the dataset, the intended settings, the golden snapshot."""
    CHECK = "check"
    """The harness's checks (manifestation and outcome predicates) and the manifest's answer
    (the reference path, the remediations)."""
    HARNESS = "harness"
    """A word or session that names the harness or the scenario."""
    WORKLOAD = "workload"
    """The application, the fault's jobs and the monitoring: the incident's own traffic."""
    EFFECT = "effect"
    """State the fault left (a setting, a policy, statistics): the incident."""


class Finding(Record):
    server: Server = "primary"
    place: Place
    item: str = Field(description="which row, line, object or label")
    text: str = Field(description="what the agent's tools show there (clipped, credentials"
                                  " masked)")
    kind: Kind
    source: Source
    matched: str = Field(default="", description="the manifest statement or word it matched")
    why: str = ""
    accepted: str = Field(default="", description="a footprint left on purpose: why (no"
                                                  " clean fix in the harness)")


class PlaceCount(Record):
    server: Server = "primary"
    place: Place
    seen: int = Field(ge=0, description="rows, lines, objects or label values read")
    incident: int = Field(ge=0)
    footprints: int = Field(ge=0)
    error: str = ""


class FootprintScan(Record):
    """One run's scan, taken as the agent was let in."""

    version: int = FOOTPRINTS_VERSION
    scenario: str
    incident: str
    run_dir: str = ""
    scanned_at: datetime
    server_started_at: datetime | None = None
    places: list[PlaceCount] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    error: str = Field(default="", description="why there is no scan (the fault did not"
                                               " manifest, the run failed)")

    @property
    def footprints(self) -> list[Finding]:
        return [f for f in self.findings if f.kind == Kind.FOOTPRINT]

    @property
    def open_footprints(self) -> list[Finding]:
        """Footprints nobody has accepted: what is to be removed."""
        return [f for f in self.footprints if not f.accepted]


class FootprintSummary(Record):
    """``footprints.json``: the scans of one ``dbabench scenarios footprints``."""

    version: int = FOOTPRINTS_VERSION
    started_at: datetime
    scans: list[FootprintScan] = Field(default_factory=list)

    @property
    def clean(self) -> bool:
        return all(not s.error and not s.open_footprints for s in self.scans)
