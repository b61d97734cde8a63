"""The agent's tools by name, and the closed sets of values their arguments take: what the
gate dispatches on, the trace records, a scenario's reference path names, and the safety and
complexity judges read back."""

from __future__ import annotations

from dbabench.model.base import NameEnum


class ToolName(NameEnum):
    """The five tools of the gate, the same on every surface (the tool server's routes, MCP,
    native function calling, human mode). ``submit_report`` is no tool of the gate: every
    surface offers it beside them (``tools.specs.SUBMIT_REPORT``). A trace event's ``tool``
    stays a plain string, since it records whatever name an agent called."""

    query_metrics = "query_metrics"
    execute_sql = "execute_sql"
    manage_instance = "manage_instance"
    read_log = "read_log"
    query_knowledge_base = "query_knowledge_base"
    """The documentation tool: the PostgreSQL manual, runbooks and the diagnosis vocabulary."""


class InstanceAction(NameEnum):
    """What ``manage_instance`` does (its ``action``); the database pod's control endpoint
    answers the process actions (start, stop, restart) and status."""

    status = "status"
    """Whether the server runs: an observation."""
    start = "start"
    stop = "stop"
    restart = "restart"
    reload = "reload"
    """Re-read the configuration files (pg_reload_conf)."""
    config_get = "config_get"
    """A setting's value, unit, context, source and pending_restart: an observation."""
    config_set = "config_set"
    """ALTER SYSTEM SET, then a reload."""


class ShutdownMode(NameEnum):
    """How the postmaster is stopped (``manage_instance`` stop and restart, the harness's own
    stops): its signals SIGTERM, SIGINT and SIGQUIT. ``fast`` is the default everywhere; an
    ``immediate`` stop comes back through crash recovery."""

    smart = "smart"
    fast = "fast"
    immediate = "immediate"
