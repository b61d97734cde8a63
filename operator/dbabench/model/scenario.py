"""The ``kind: Scenario`` manifest: the same file the CLI runs and ``kubectl apply`` takes."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal, Union

from psycopg import sql as pgsql
from pydantic import Field, field_validator, model_validator

from dbabench.model import taxonomy
from dbabench.model.base import Model
from dbabench.model.dataset import DatasetName, Traffic
from dbabench.model.report import ObjectRef, Report
from dbabench.model.safety import RuleId
from dbabench.model.status import ScenarioStatus
from dbabench.model.tool import ToolName
from dbabench.model.workload import JobStep, Server, WorkloadSpec

API_VERSION = "dbabench.io/v1alpha1"


class Category(str, Enum):
    query_tuning = "query-tuning"
    system_failure = "system-failure"
    health_check = "health-check"
    business_change = "business-change"
    resource_governance = "resource-governance"
    composite = "composite"
    misleading_alert = "misleading-alert"


class Comparison(str, Enum):
    lt = "<"
    le = "<="
    gt = ">"
    ge = ">="
    eq = "=="
    ne = "!="

    def holds(self, left: float, right: float) -> bool:
        return {
            "<": left < right,
            "<=": left <= right,
            ">": left > right,
            ">=": left >= right,
            "==": left == right,
            "!=": left != right,
        }[self.value]


SettingValue = Union[bool, int, float, str]

class Metadata(Model):
    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63,
                      description="DNS-1123 label: the scenario's id")
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class DatabaseSpec(Model):
    version: Literal["15"] = Field(description="PostgreSQL major version")
    name: str = Field(default="app", description="database the application uses")
    dataset: DatasetName = Field(description="schema and data loaded before the fault")
    scale: int = Field(default=1, ge=1, description="dataset size multiplier")
    traffic: Traffic = Field(
        default=Traffic.mixed,
        description="which of the dataset's own services run beside the workload (the"
                    " estate's: docs/estate.md); the checkout dataset has none")
    settings: dict[str, SettingValue] = Field(
        default_factory=dict,
        description="postgresql.conf lines added to the baseline configuration of the cluster",
    )
    replica: "ReplicaSpec | None" = Field(
        default=None,
        description="a hot standby streaming from the primary, started with it from the same"
                    " golden snapshot")


class ReplicaSpec(Model):
    slot: str | None = Field(
        default="replica1", pattern=r"^[a-z0-9_]+$",
        description="physical replication slot the standby streams through, created in the"
                    " golden snapshot; null: stream without a slot")
    settings: dict[str, SettingValue] = Field(
        default_factory=dict,
        description="postgresql.conf lines of the standby alone (hot_standby_feedback,"
                    " max_standby_streaming_delay)")


# Fault steps ---------------------------------------------------------------------------------

class SqlStep(Model):
    """Run SQL once as the superuser, in autocommit (so VACUUM and CONCURRENTLY work)."""

    action: Literal["sql"]
    sql: str = Field(min_length=1)
    database: str | None = Field(default=None, description="defaults to spec.database.name")
    server: Server = Field(default="primary",
                           description="replica: the standby (read-only: only reads run there)")
    expect_error: str | None = Field(
        default=None, pattern=r"^[0-9A-Z]{5}$",
        description="SQLSTATE the step must fail with: a failed operation is the fault"
                    " (an interrupted CREATE INDEX CONCURRENTLY leaves an invalid index)")


FaultStep = Annotated[Union[SqlStep, JobStep], Field(discriminator="action")]


class FaultSpec(Model):
    persistent: list[FaultStep] = Field(
        default_factory=list,
        description="steps baked into the golden snapshot (data, statistics, config)")
    runtime: list[FaultStep] = Field(
        default_factory=list,
        description="steps re-applied after every restore (jobs, held sessions)")

    @field_validator("persistent")
    @classmethod
    def _persistent_has_no_jobs(cls, steps: list[FaultStep]) -> list[FaultStep]:
        for step in steps:
            if isinstance(step, JobStep):
                raise ValueError("a job cannot be persistent: a snapshot holds no processes;"
                                 " move it to fault.runtime")
        return steps


# Predicates: shared by manifestation and outcome ----------------------------------------------

class _Predicate(Model):
    name: str = Field(pattern=r"^[a-z0-9][-a-z0-9_]*$")
    description: str = ""


# The value of a setting in force for a new session of each login role that may connect to the
# check's database, as the server picks it: role in database, role, database, every role, then
# the server's own (``server``: the configuration files, else the built-in value; what the
# verifier's pinned session shows is not it). A check over it sees a setting at every layer,
# and what it compares it reads through PostgreSQL's own parsing (``value::bool``;
# ``set_config(setting.name, value, true)`` gives the canonical spelling of units, for
# ``::interval`` or ``pg_size_bytes``). Catalog names are qualified: the integrity scan reads
# it in a database the agent has had its hands on.
EFFECTIVE_SETTING_CTE = """\
WITH setting(name) AS (VALUES ({name})),
stored AS (
  SELECT s.setrole, s.setdatabase, pg_catalog.substr(c, pg_catalog.strpos(c, '=') + 1) AS value
    FROM pg_catalog.pg_db_role_setting s, pg_catalog.unnest(s.setconfig) c, setting
   WHERE pg_catalog.lower(pg_catalog.split_part(c, '=', 1)) = setting.name
     AND s.setdatabase IN (0, (SELECT oid FROM pg_catalog.pg_database
                                WHERE datname = pg_catalog.current_database()))),
server AS (
  SELECT coalesce(
      (SELECT f.setting FROM pg_catalog.pg_file_settings f, setting
        WHERE f.name = setting.name AND f.applied ORDER BY f.seqno DESC LIMIT 1),
      (SELECT CASE WHEN p.source IN ('default', 'command line', 'environment variable', 'override')
                   THEN p.setting ELSE p.boot_val END
         FROM pg_catalog.pg_settings p, setting WHERE p.name = setting.name)) AS value),
effective AS (
  SELECT r.rolname, coalesce(
      (SELECT value FROM stored WHERE setrole = r.oid AND setdatabase <> 0),
      (SELECT value FROM stored WHERE setrole = r.oid AND setdatabase = 0),
      (SELECT value FROM stored WHERE setrole = 0 AND setdatabase <> 0),
      (SELECT value FROM stored WHERE setrole = 0 AND setdatabase = 0),
      (SELECT value FROM server)) AS value
    FROM pg_catalog.pg_roles r
   WHERE r.rolcanlogin
     AND pg_catalog.has_database_privilege(r.oid, pg_catalog.current_database(), 'CONNECT'))
"""


def effective_setting_sql(name: str, body: str) -> str:
    """``body`` after the relations of EFFECTIVE_SETTING_CTE for setting ``name`` (a setting's
    name, never text from elsewhere); a ``body`` of its own ``WITH`` joins the list."""
    head = EFFECTIVE_SETTING_CTE.format(name=f"'{name}'")
    body = body.strip()
    if body[:4].lower() == "with" and body[4:5].isspace():
        return head.rstrip("\n") + ",\n" + body[5:]
    return head + body


class SqlPredicate(_Predicate):
    """The first column of the first row must be true (``expect: true``), or the statement
    must merely finish inside the timeout (``expect: completes``): a rerun of a target operation."""

    check: Literal["sql"]
    sql: str = Field(min_length=1)
    effective_setting: str | None = Field(
        default=None, pattern=r"^[a-z][a-z0-9_.]*$",
        description="a setting whose value in force for each login role is given to `sql` as"
                    " relations `effective(rolname, value)`, `server(value)` and `setting(name)`:"
                    " the check compares meaning at every layer (docs/scenarios-authoring.md)")
    expect: Literal[True, "completes"] = True
    timeout_ms: int = Field(default=10_000, gt=0)
    server: Server = "primary"
    session: Literal["verifier", "application"] = Field(
        default="verifier",
        description="verifier: the harness's own session, its settings pinned; application: a"
                    " login of the application's role (or `role`) to the scenario's database,"
                    " with every setting that role gets there (server, database, role, role in"
                    " database), so that a settings check sees what the application runs with")
    role: str | None = Field(
        default=None, min_length=1,
        description="application session only: the login role, given the application's"
                    " password (a role the fault created for a workload job); default: the"
                    " application's role")

    @property
    def statement(self) -> str:
        """What the check runs: ``sql``, after the relations of ``effective_setting``."""
        if self.effective_setting is None:
            return self.sql
        return effective_setting_sql(self.effective_setting, self.sql)

    @model_validator(mode="after")
    def _role_needs_application(self) -> "SqlPredicate":
        if self.role is not None and self.session != "application":
            raise ValueError(f"check {self.name!r} names role {self.role!r}, which only an"
                             " application session logs in as: add `session: application` or"
                             " drop `role`")
        return self


class EstimatePredicate(_Predicate):
    """Planner estimate for ``relation`` in ``EXPLAIN (FORMAT JSON) <explain>`` divided by the
    true count from ``actual``, compared with ``value``."""

    check: Literal["estimate"]
    explain: str = Field(min_length=1)
    relation: str
    actual: str = Field(min_length=1, description="SELECT returning the true row count")
    op: Comparison
    value: float


class WorkloadPredicate(_Predicate):
    """A statistic of the business log over a trailing window (manifestation) or over the
    outcome window (outcome)."""

    check: Literal["workload"]
    stat: Literal["timeout_ratio", "error_ratio", "requests", "p99_latency_ms", "max_latency_ms"]
    service: str | None = None
    operation: str | None = None
    window_seconds: float = Field(default=15.0, gt=0,
                                  description="manifestation only: trailing window")
    op: Comparison
    value: float


LogEnabler = Literal["log_lock_waits", "log_checkpoints", "log_temp_files",
                     "log_autovacuum_min_duration", "log_min_duration_statement",
                     "deadlock_timeout", "log_statement"]
"""Settings that decide whether the server logs a kind of record (evaluate.log_settings)."""


class LogPredicate(_Predicate):
    """Count of PostgreSQL log records whose message matches ``pattern`` in the window."""

    check: Literal["log"]
    pattern: str
    window_seconds: float = Field(default=15.0, gt=0)
    op: Comparison
    value: float
    enabled_by: list[LogEnabler] | None = Field(
        default=None, description="as an outcome check that passes on few records: the settings"
        " that make the server log them; the check fails where one of them (or"
        " log_min_messages) logs less than at admission. [] when the records are errors that"
        " only log_min_messages could hide")

    @property
    def counts_absence(self) -> bool:
        """Whether fewer records make it pass."""
        return self.op in (Comparison.eq, Comparison.lt, Comparison.le)


Predicate = Annotated[
    Union[SqlPredicate, EstimatePredicate, WorkloadPredicate, LogPredicate],
    Field(discriminator="check"),
]


class ManifestationSpec(Model):
    within_seconds: float = Field(default=60.0, gt=0,
                                  description="how long to wait for all predicates to hold")
    predicates: list[Predicate] = Field(min_length=1)


class OutcomeCheck(Model):
    weight: float = Field(default=1.0, gt=0)
    predicate: Predicate


class OutcomeSpec(Model):
    settle_seconds: float = Field(
        default=10.0, ge=0,
        description="grace after the agent stops, before the verification window opens")
    window_seconds: float = Field(
        default=20.0, gt=0,
        description="the workload keeps running; workload and log checks judge this window")
    checks: list[OutcomeCheck] = Field(min_length=1)


# Intended state -------------------------------------------------------------------------------

def _literal(text: str) -> str:
    return pgsql.Literal(text).as_string(None)


def _identifier(name: str) -> str:
    return pgsql.Identifier(name).as_string(None)


class IntendedSetting(Model):
    """A setting the business relies on, in the layer where it lives: a role's, a database's,
    a role's in one database, the server's (none given: ALTER SYSTEM), or a table's storage
    parameter (``table``, schema-qualified: ALTER TABLE ... SET). It is baked into the golden
    around the persistent fault, and the outcome checks it is still in force: the narrow fix
    leaves it alone, a blanket reset of its layer destroys it."""

    role: str | None = Field(default=None, min_length=1)
    database: str | None = Field(default=None, min_length=1)
    table: str | None = Field(default=None, pattern=r"^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$",
                              description="schema.table, for a storage parameter (reloption)")
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")
    value: str | list[str] = Field(
        description="the value; a list for list settings (search_path), one element each")
    purpose: str = Field(min_length=1, description="who relies on it, and for what")
    weight: float = Field(default=1.0, gt=0)

    @model_validator(mode="after")
    def _one_layer(self) -> "IntendedSetting":
        if self.table is not None and (self.role is not None or self.database is not None):
            raise ValueError("a table's storage parameter has no role or database: give table"
                             " alone, or role and/or database alone")
        return self

    @property
    def layer(self) -> str:
        """The layer in words: role bi, database app, role bi in database app, table
        analytics.stage_orders, server."""
        if self.table is not None:
            return f"table {self.table}"
        parts = [f"role {self.role}" if self.role else "",
                 f"database {self.database}" if self.database else ""]
        return " in ".join(p for p in parts if p) or "server"

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Where it is stored and its name: two entries with one key are one setting."""
        return ((self.role or "").lower(), (self.database or "").lower(),
                (self.table or "").lower(), self.name.lower())

    @property
    def stored_value(self) -> str:
        """The value as PostgreSQL writes it back (pg_db_role_setting, postgresql.auto.conf,
        reloptions)."""
        return ", ".join(self.value) if isinstance(self.value, list) else self.value

    def statement(self) -> str:
        """The SQL that sets it."""
        value = (", ".join(map(_literal, self.value)) if isinstance(self.value, list)
                 else _literal(self.value))
        if self.table is not None:
            schema, table = self.table.split(".")
            return (f"ALTER TABLE {_identifier(schema)}.{_identifier(table)}"
                    f" SET ({self.name} = {value})")
        if self.role is None and self.database is None:
            return f"ALTER SYSTEM SET {self.name} = {value}"
        target = (f"ROLE {_identifier(self.role)}" if self.role else
                  f"DATABASE {_identifier(self.database or '')}")
        if self.role and self.database:
            target += f" IN DATABASE {_identifier(self.database)}"
        return f"ALTER {target} SET {self.name} = {value}"

    def reset(self) -> str:
        """The SQL that removes it from its layer."""
        if self.table is not None:
            schema, table = self.table.split(".")
            return f"ALTER TABLE {_identifier(schema)}.{_identifier(table)} RESET ({self.name})"
        if self.role is None and self.database is None:
            return f"ALTER SYSTEM RESET {self.name}"
        stored = self.statement()
        return stored[:stored.rindex(" SET ")] + f" RESET {self.name}"

    def check(self) -> OutcomeCheck:
        """The outcome check that it is still in force: still stored in its own layer."""
        name, stored = _literal(self.name.lower()), _literal(self.stored_value.lower())
        slug = "-".join(w for w in (self.role, self.database, self.table, self.name) if w)
        slug = "".join(ch if ch.isalnum() else "-" for ch in slug.lower())
        if self.table is not None:
            sql = ("SELECT EXISTS (SELECT 1 FROM pg_class c, unnest(c.reloptions) o"
                   f" WHERE c.oid = to_regclass({_literal(self.table)})"
                   f" AND lower(split_part(o, '=', 1)) = {name}"
                   f" AND lower(substr(o, strpos(o, '=') + 1)) = {stored})")
        elif self.role is None and self.database is None:
            # stored and valid; one that needs a restart is stored all the same
            sql = ("SELECT EXISTS (SELECT 1 FROM pg_file_settings WHERE (error IS NULL"
                   " OR error = 'setting could not be applied')"
                   " AND sourcefile LIKE '%/postgresql.auto.conf'"
                   f" AND lower(name) = {name} AND lower(setting) = {stored})")
        else:
            role = (f"(SELECT oid FROM pg_roles WHERE rolname = {_literal(self.role)})"
                    if self.role else "0")
            database = (f"(SELECT oid FROM pg_database WHERE datname = {_literal(self.database)})"
                        if self.database else "0")
            sql = ("SELECT EXISTS (SELECT 1 FROM pg_db_role_setting s, unnest(s.setconfig) c"
                   f" WHERE s.setrole = {role} AND s.setdatabase = {database}"
                   f" AND lower(split_part(c, '=', 1)) = {name}"
                   f" AND lower(substr(c, strpos(c, '=') + 1)) = {stored})")
        return OutcomeCheck(weight=self.weight, predicate=SqlPredicate(
            name=f"intended-{slug}", check="sql", sql=sql,
            description=f"{self.name} of {self.layer} is still {self.stored_value}: {self.purpose}"))


# Reference path, remediation ----------------------------------------------------------------

class ToolCall(Model):
    tool: ToolName
    args: dict[str, SettingValue | list[str] | None] = Field(default_factory=dict)


class Signal(Model):
    """Which units of a hop's observation support the causal path; the rest are noise.

    Units (paper §4.2): a row of each SQL statement, a log line, a knowledge-base hit, a point
    of a time series. Environmental complexity C = 1 - signal units / all units over the path.
    """

    match: str = Field(
        min_length=1,
        description="regular expression, searched case-insensitively in a unit's text: a row's"
                    " cells joined by ' | ', a log line, a hit's title and snippet, a series'"
                    " labels as name=value joined by ', '")
    op: Comparison | None = Field(
        default=None, description="time series only: a point is signal when its series matches"
                                  " and its value satisfies op value (inside the causal window)")
    value: float | None = None

    @model_validator(mode="after")
    def _op_with_value(self) -> "Signal":
        if (self.op is None) != (self.value is None):
            raise ValueError("op and value go together")
        return self


class Hop(Model):
    state: str = Field(description="the diagnostic state reached")
    evidence: str = Field(description="what in the observation supports it")
    call: ToolCall
    expect: str | None = Field(
        default=None,
        description="regular expression the observation must match for the hop to count")
    signal: Signal | None = Field(
        default=None,
        description="the units of this call's observation that are evidence; required to"
                    " measure the scenario's complexity C")


class RemediationStep(Model):
    call: ToolCall
    why: str = ""
    then_wait_seconds: float = Field(default=0.0, ge=0,
                                     description="time this step needs to take effect")


class Remediation(Model):
    name: str
    steps: list[RemediationStep] = Field(min_length=1)


# Diagnosis ------------------------------------------------------------------------------------

def _vocabulary_ids(causes: list[str]) -> list[str]:
    """Manifests name causes by their ids (a synonym is for agents): say which id is meant."""
    vocabulary = taxonomy.taxonomy()
    for cause in causes:
        resolved = vocabulary.resolve(cause)
        if resolved is None:
            taxonomy.resolve_cause(cause)
        elif resolved != cause:
            raise ValueError(f"{cause!r} is a synonym: write its id {resolved!r}")
    return causes


class Condition(Model):
    """One thing a right diagnosis names: a cause (the root cause or a causal factor, wherever
    the report files it) or an affected object. Any one of the listed causes or objects
    satisfies it."""

    id: str
    causes: list[str] = Field(default_factory=list,
                              description="ids of the diagnosis vocabulary (model/taxonomy.yaml)")
    objects: list[ObjectRef] = Field(default_factory=list)
    critical: bool = Field(default=False,
                           description="a report that misses it fails, whatever its F1")

    _ids = field_validator("causes")(_vocabulary_ids)

    @model_validator(mode="after")
    def _one_kind(self) -> "Condition":
        if bool(self.causes) == bool(self.objects):
            raise ValueError(f"condition {self.id}: give causes or objects, one of them")
        return self


class AlsoTrue(Model):
    """True of the incident but not required: naming these is no false positive."""

    causes: list[str] = Field(default_factory=list)
    objects: list[ObjectRef] = Field(default_factory=list)

    _ids = field_validator("causes")(_vocabulary_ids)


class Contradiction(Model):
    """Root causes (or affected objects) a right diagnosis cannot name: a report whose root
    cause is one of ``causes`` or more specific than one, or that names one of ``objects``
    anywhere, fails."""

    causes: list[str] = Field(default_factory=list)
    objects: list[ObjectRef] = Field(default_factory=list)
    why: str = ""

    _ids = field_validator("causes")(_vocabulary_ids)

    @model_validator(mode="after")
    def _one_kind(self) -> "Contradiction":
        if bool(self.causes) == bool(self.objects):
            raise ValueError("a contradiction gives causes or objects, one of them")
        return self


class DiagnosisSpec(Model):
    conditions: list[Condition] = Field(min_length=1)
    also_true: AlsoTrue = Field(default_factory=AlsoTrue)
    contradictions: list[Contradiction] = Field(default_factory=list)
    pass_threshold: float = Field(default=0.8, gt=0, le=1)

    @model_validator(mode="after")
    def _consistent(self) -> "DiagnosisSpec":
        ids = [c.id for c in self.conditions]
        if len(ids) != len(set(ids)):
            raise ValueError(f"condition ids must be unique: {ids}")
        vocabulary = taxonomy.taxonomy()
        right = [c for cond in self.conditions for c in cond.causes]
        for wrong in (c for contradiction in self.contradictions for c in contradiction.causes):
            # a root cause is contradicted by this cause and every more specific one: one of
            # them cannot be what a condition asks for (as a factor, a contradiction may be
            # true of the incident: alsoTrue)
            if any(vocabulary.within(c, wrong) for c in right):
                raise ValueError(f"contradiction {wrong} is a condition's cause or more general"
                                 " than one: the right diagnosis would contradict itself")
        if not any(c.critical and c.causes for c in self.conditions):
            raise ValueError("a critical cause condition is required: the root cause")
        return self

    def canonical(self) -> Report:
        """The diagnosis in the manifest author's words: the first critical cause as the
        root, every other condition's first cause or object (what the reference agent files)."""
        causes = [c.causes[0] for c in sorted(self.conditions, key=lambda c: not c.critical)
                  if c.causes]
        return Report(root_cause_type=causes[0], causal_factors=causes[1:],
                      affected_objects=[c.objects[0] for c in self.conditions if c.objects])


# Safety ---------------------------------------------------------------------------------------

class ProtectedSpec(Model):
    tables: list[str] = Field(default_factory=list,
                              description="relations that must not be dropped, truncated,"
                                          " rewritten or bulk-deleted")
    application_names: list[str] = Field(
        default_factory=list,
        description="sessions that must never be terminated (the healthy workload)")


class SafetyException(Model):
    rule: RuleId
    reason: str = Field(min_length=1)


class SafetySpec(Model):
    protected: ProtectedSpec = Field(default_factory=ProtectedSpec)
    restart_allowed: bool = False
    weights: dict[RuleId, float] = Field(default_factory=dict,
                                      description="override a rule's severity weight")
    exceptions: list[SafetyException] = Field(default_factory=list)


class BudgetSpec(Model):
    max_steps: int = Field(default=40, gt=0)
    timeout_seconds: float = Field(default=900, gt=0)
    max_cost_usd: float | None = Field(default=None, gt=0)


class ScenarioSpec(Model):
    category: Category
    description: str = ""
    database: DatabaseSpec
    workload: WorkloadSpec
    fault: FaultSpec
    manifestation: ManifestationSpec
    symptom: str = Field(min_length=1, description="the alert or ticket the agent receives")
    reference_path: list[Hop] = Field(min_length=1)
    reference: Remediation
    verification: list[ToolCall] = Field(
        default_factory=list, description="calls the reference agent makes to check its fix")
    alternatives: list[Remediation] = Field(default_factory=list)
    decoy: Remediation
    decoy_report: "ReportStub"
    decoy_fails: Literal["outcome", "safety"] = Field(
        default="outcome",
        description="what the decoy must fail in the self-proof: outcome (the symptom returns)"
                    " or safety (it restores service by an unsafe action: no Safe Pass)")
    sweep_fixes: str | None = Field(
        default=None, min_length=1,
        description="where one step of the generic sweep (ANALYZE, VACUUM, ending stuck"
                    " sessions, resetting settings) is this scenario's real fix: which, and"
                    " why. The sweep control must then fail Safe Pass instead of Outcome Pass")
    reset_fixes: str | None = Field(
        default=None, min_length=1,
        description="where resetting the fault's setting by name, lifting its limit or its"
                    " expiry (what the targeted-reset control does, blind) is this scenario's"
                    " real fix and no intended state stands in its way: why. The reset control"
                    " must then fail Safe Pass instead of Outcome Pass")
    diagnosis: DiagnosisSpec
    intended: list[IntendedSetting] = Field(
        default_factory=list,
        description="settings the business relies on, beside the fault: checked by the outcome")
    outcome: OutcomeSpec
    safety: SafetySpec = Field(default_factory=SafetySpec)
    budget: BudgetSpec = Field(default_factory=BudgetSpec)

    @property
    def outcome_checks(self) -> list[OutcomeCheck]:
        """What the outcome judges: the manifest's checks, then the intended state's."""
        return [*self.outcome.checks, *(setting.check() for setting in self.intended)]

    @model_validator(mode="after")
    def _absence_says_what_logs_it(self) -> "ScenarioSpec":
        for check in self.outcome.checks:
            pred = check.predicate
            if isinstance(pred, LogPredicate) and pred.counts_absence and pred.enabled_by is None:
                raise ValueError(
                    f"outcome check {pred.name} passes on few log records: name the settings"
                    " that make the server log them in enabledBy (log_lock_waits and"
                    " deadlock_timeout for lock waits; an empty list for errors, which only"
                    " log_min_messages could hide), or turning the logging down would pass it")
        return self

    @model_validator(mode="after")
    def _checks_named_once(self) -> "ScenarioSpec":
        names = [c.predicate.name for c in self.outcome_checks]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"outcome check name(s) {twice} appear twice (an intended setting's"
                             " check is named intended-ROLE-DATABASE-NAME)")
        return self

    @model_validator(mode="after")
    def _replica_declared(self) -> "ScenarioSpec":
        for step in self.fault.persistent:
            if step.server == "replica":
                raise ValueError("fault.persistent: a persistent step runs on the primary (the"
                                 " golden snapshot has no standby); use fault.runtime")
        if self.database.replica is not None:
            return self
        steps: list[FaultStep] = self.fault.runtime
        preds = [*self.manifestation.predicates, *(c.predicate for c in self.outcome_checks)]
        calls = [h.call for h in self.reference_path] + [
            s.call for r in (self.reference, self.decoy, *self.alternatives) for s in r.steps]
        uses = ([f"fault.runtime step {getattr(s, 'name', None) or i}"
                 for i, s in enumerate(steps) if s.server == "replica"]
                + [f"predicate {p.name}" for p in preds
                   if isinstance(p, SqlPredicate) and p.server == "replica"]
                + [f"{c.tool} call" for c in calls if c.args.get("server") == "replica"])
        if uses:
            raise ValueError(f"{uses[0]} addresses the replica, but database.replica is not set:"
                             " declare one (database.replica: {}) or address the primary")
        return self


class ReportStub(Model):
    """What the decoy agent files: the symptom dressed up as the cause."""

    root_cause_type: str
    affected_objects: list[ObjectRef] = Field(default_factory=list)
    causal_factors: list[str] = Field(default_factory=list)

    _root = field_validator("root_cause_type")(lambda v: _vocabulary_ids([v])[0])
    _factors = field_validator("causal_factors")(_vocabulary_ids)


class Scenario(Model):
    api_version: Literal["dbabench.io/v1alpha1"]
    kind: Literal["Scenario"]
    metadata: Metadata
    spec: ScenarioSpec
    status: ScenarioStatus | None = None

    @property
    def name(self) -> str:
        return self.metadata.name


ScenarioSpec.model_rebuild()
