"""What each tool takes and what a model is told about it: one table for every surface
(the gate's validation, the tool server, native function-calling definitions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from dbabench.env.monitoring import SCRAPE_INTERVAL
from dbabench.model.base import Model
from dbabench.model.report import Report
from dbabench.model.tool import ToolName
from dbabench.tools.instance import ManageInstanceArgs
from dbabench.tools.logs import ReadLogArgs
from dbabench.tools.metrics import QueryMetricsArgs
from dbabench.tools.sql import ExecuteSqlArgs


class QueryKnowledgeArgs(Model):
    query: str = Field(min_length=1, description="free text: words, setting or view names")
    limit: int = Field(default=5, ge=1, le=20)


@dataclass(frozen=True)
class ToolSpec:
    """What a model is told about one tool: the same text for this server and for native
    function-calling definitions (OpenAI's ``name``/``description``/``parameters``)."""

    name: str
    description: str
    args: type[BaseModel]

    def parameters(self) -> dict[str, Any]:
        # snake_case, as the gate's observations and the trace spell fields
        return self.args.model_json_schema(by_alias=False)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "parameters": self.parameters()}

    def as_function(self) -> dict[str, Any]:
        """An OpenAI chat-completions tool definition."""
        return {"type": "function", "function": self.as_json()}


TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        ToolName.query_metrics,
        "Query this system's Prometheus with PromQL. It scrapes the PostgreSQL server"
        " (postgres_exporter, pg_* metrics), the host (node_exporter, node_* metrics) and the"
        f" application's own metrics every {SCRAPE_INTERVAL}, so a rate() needs a range of"
        " several scrapes (e.g. [30s]). Without range_seconds it is an instant query"
        " (the latest value of each series); with range_seconds it returns each series over the"
        " last N seconds at step_seconds resolution. Large results are cut to a bounded number"
        " of series and points, and the observation says when it was truncated.",
        QueryMetricsArgs),
    ToolSpec(
        ToolName.execute_sql,
        "Run SQL on the application database in a persistent superuser session, as a DBA's"
        " psql would: statements run in order, each in autocommit unless you open a transaction"
        " yourself, and execution stops at the first error. Session state (SET, temporary"
        " tables) persists between calls. Each statement returns its columns, rows, rowcount"
        " and command status, or an error with its SQLSTATE; server notices are included. Each"
        " statement has a timeout you cannot raise; rows and long values are capped (max_rows"
        " lowers the cap) and the observation says when anything was cut.",
        ExecuteSqlArgs),
    ToolSpec(
        ToolName.manage_instance,
        "Control the PostgreSQL server process and its configuration. status: whether it runs."
        " start, stop, restart: act on the process (mode smart, fast or immediate; default"
        " fast); stopping or restarting ends every session, including execute_sql's. reload:"
        " re-read the configuration files, and list settings still waiting for a restart."
        " config_get name: a setting's value, unit, context, source and pending_restart."
        " config_set name value: persist the value with ALTER SYSTEM, reload, and show the"
        " setting; one whose context is postmaster only takes effect after a restart.",
        ManageInstanceArgs),
    ToolSpec(
        ToolName.read_log,
        "Read recent lines of a log. source postgresql: the database server's log (errors and"
        " whatever the server is configured to log). source business: the application's own"
        " log of its requests and their outcomes. Returns the last tail lines that pass the"
        " filters, oldest first, and how many matched: since_seconds keeps only records of the"
        " last N seconds, min_level (postgresql only) a severity such as WARNING or ERROR and"
        " above, pattern lines matching a case-insensitive regular expression in RE2 syntax"
        " (linear-time matching: no backreferences or lookaround).",
        ReadLogArgs),
    ToolSpec(
        ToolName.query_knowledge_base,
        "Full-text search over the PostgreSQL 15 documentation and a set of generic operational"
        " runbooks: use it to check what a setting, view, function or command does before"
        " relying on it. Query with words or exact names (pg_stat_activity,"
        " autovacuum_vacuum_scale_factor); returns up to limit sections with their title,"
        " place in the manual and a snippet. It knows PostgreSQL in general and nothing about"
        " this particular system or incident. It also holds the report's diagnosis vocabulary,"
        " one entry per cause id with its definition: include the word vocabulary to search it"
        " first (\"vocabulary work_mem database\").",
        QueryKnowledgeArgs),
)

SUBMIT_REPORT = ToolSpec(
    "submit_report",
    "File the structured incident report when you have repaired and verified (or given up)."
    " root_cause_type is the root cause, one id of the diagnosis vocabulary (the schema lists"
    " them; query_knowledge_base \"vocabulary ...\" gives their definitions);"
    " causal_factors the other links of the causal chain, ids of the same vocabulary, only"
    " those that are true (each wrong one counts against you); affected_objects the objects"
    " involved as {kind, name} (kind: table, index, function, role, database, setting,"
    " session, ...; schema-qualify where it matters). evidence: the observations that show"
    " them (trace_seq: the seq a tool result carried); actions: what you changed;"
    " verification: how you checked that the repair holds; narrative: free text. Only the"
    " causes and objects are scored. A cause outside the vocabulary is refused with the"
    " nearest ids, and you may submit again; a valid report ends your work.",
    Report)
"""Not a tool of the gate: every surface that offers the five tools offers this beside them."""
