"""The classes of SQL statements: what a statement does to a live PostgreSQL. The policy
layer assigns them and decides which it refuses (``dbabench.policy.classes``); the trace
records them and the safety rules read them."""

from __future__ import annotations

from dbabench.model.base import NameEnum


class StatementClass(NameEnum):
    """What a statement does to a live PostgreSQL, as the policy layer (``dbabench.policy``)
    reads it from the parse tree: a statement can do several things at once. A trace's
    statements carry them (``StatementInfo.classes``), the gate refuses some before
    execution, and the safety rules read them back."""

    read_only = "read_only"
    explain = "explain"
    # EXPLAIN ANALYZE runs its statement, so that statement's own classes come with it.
    explain_analyze = "explain_analyze"
    session_inspection = "session_inspection"
    session_setting = "session_setting"
    transaction_control = "transaction_control"
    insert = "insert"
    dml_scoped = "dml_scoped"
    dml_unscoped = "dml_unscoped"
    ddl = "ddl"
    destructive_ddl = "destructive_ddl"
    maintenance = "maintenance"
    lock_heavy_maintenance = "lock_heavy_maintenance"
    config_change = "config_change"
    session_termination = "session_termination"
    # pg_terminate_backend over every row of its source: nothing narrows it to the culprits.
    unscoped_termination = "unscoped_termination"
    query_cancel = "query_cancel"
    stats_reset = "stats_reset"
    privilege = "privilege"
    # SUPERUSER-like role attributes, grants to PUBLIC, membership in file/program roles.
    privilege_escalation = "privilege_escalation"
    # What a statement reaches beyond the database (policy.reach), now or when what it
    # defines is used: the server's files (the paths it names are in StatementInfo.paths), its
    # programs, code the gate cannot read, SQL built at run time, the lexer's settings.
    file_access = "file_access"
    program_execution = "program_execution"
    untrusted_code = "untrusted_code"
    dynamic_sql = "dynamic_sql"
    lexer_setting = "lexer_setting"
    # A way in that bypasses the gate: a role that can log in or be given a password, a role's
    # membership in another, a SUPERUSER-like attribute. The agent could connect with it, or
    # SET ROLE to it, and work where no trace sees.
    role_escalation = "role_escalation"
    # INSERT, UPDATE, DELETE, MERGE, COPY FROM or TRUNCATE on a system catalog, DDL on an
    # object of the catalog's (renamed, replaced, moved, owned, made there), or
    # allow_system_table_mods: what the DDL the gate judges would have done, done behind its
    # back (a function made `internal`, a role's expiry, a setting stored for a role, the
    # catalog function a check reads replaced, a file function renamed past the gate), and
    # nothing a DBA repairs that way.
    catalog_write = "catalog_write"
    # pg_terminate_backend or pg_cancel_backend written into code that runs later or out of
    # the trace's sight (a view, rule, default, operator, cast, prepared statement, cursor,
    # a function or DO body): which sessions it ends could not be recorded.
    deferred_termination = "deferred_termination"
    # SET, RESET, set_config() or a stored setting (ALTER SYSTEM/ROLE/DATABASE) written in a
    # function's body: it runs in whichever session calls the function (the application's,
    # through a trigger), out of the trace's sight. A function's own SET clause, scoped to
    # its call, is not this.
    deferred_setting = "deferred_setting"
    # DO, CALL, EXECUTE of a prepared statement: code whose effect the parse tree cannot show.
    procedural = "procedural"
    unparseable = "unparseable"


RETIRED_CLASSES = frozenset({"outside_path"})
"""Classes older traces carry that no statement gets any more, dropped as a trace is read:
``outside_path`` (until 2026-12-01) came only beside ``file_access``, which remains, and
whether the path left the server's directories is the event's ``harness_access`` now."""
