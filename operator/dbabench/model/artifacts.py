"""The name of every file dbabench keeps: a run directory's, a campaign directory's, a
battery's and the pods' ConfigMap keys. Nothing else spells one (tests/unit/test_records.py);
``dbabench.records`` reads and writes them through their models."""

from __future__ import annotations

from enum import StrEnum


class RunArtifact(StrEnum):
    """A run directory's files, in the order a run writes them."""

    RUN = "run.json"
    """``RunRecord``: which scenario and agent, the incident id; written first."""
    MANIFEST = "scenario.yaml"
    """The manifest as it was run (rescore and the judge read it back)."""
    PIDS = "pids.json"
    """What the run started, so a later ``dbabench reap`` can stop it if the run died."""
    WORKLOAD_CONFIG = "workload.json"
    WORKLOAD_LOG = "workload.log"
    BUSINESS_LOG = "business.jsonl"
    """The workload's business events: the outcome and the safety judge read them."""
    ADMISSION = "admission.json"
    TASK = "task.md"
    """What the agent was told, as it read it."""
    TASK_JSON = "task.json"
    """The same task for an external agent (and the tools pod's ConfigMap key)."""
    CONNECTION = "tools.json"
    """The run's tool server: address and bearer token, for ``dbabench tools serve``."""
    AGENT = "agent.json"
    """A model agent's ``AgentRecord``: model, prompt digest, prices."""
    AGENT_LOG = "agent.log"
    TRACE = "trace.jsonl"
    REPORT = "report.json"
    OUTCOME = "outcome.json"
    """``AgentOutcome`` handed from the tools pod to the evaluator (ConfigMap key only)."""
    EVALUATION = "evaluation.json"
    """The verdict, written last: its presence means the run finished."""


class MonitoringArtifact(StrEnum):
    """A run's ``monitoring/`` directory."""

    PROMETHEUS_CONFIG = "prometheus.yml"
    PROMETHEUS_LOG = "prometheus.log"
    NODE_EXPORTER_LOG = "node_exporter.log"


EXPORTER_QUERIES = "exporter_queries.yaml"
"""postgres_exporter's extra queries, shipped beside env/monitoring.py (not a run's file)."""


def exporter_log(job: str) -> str:
    return f"{job}_exporter.log"


def rescored_evaluation(stamp: str) -> str:
    """A re-score beside the original verdict, which is never overwritten."""
    return f"evaluation.rescored-{stamp}.json"


class CampaignArtifact(StrEnum):
    """A campaign directory's records; every table, plot and page is built from these."""

    CAMPAIGN = "campaign.json"
    RESULTS = "results.jsonl"
    EVENTS = "events.jsonl"
    JUDGE = "judge.jsonl"


class CampaignOutput(StrEnum):
    """What a campaign directory derives from its records (rebuilt at will)."""

    LEADERBOARD = "leaderboard.md"
    CSV = "results.csv"
    REPORT_DIR = "report"
    PLOTS_DIR = "plots"
    INDEX = "index.html"
    RUNBOOK = "runbook.md"
    """A cell's agent's runbook, beside its runs."""


class StoreArtifact(StrEnum):
    """Files of the golden snapshot store and the scenarios' measurements."""

    GOLDEN_META = "golden.json"
    OWNER = ".owner"
    DIFFICULTY = "difficulty.json"
    PROVE = "prove.json"
    FOOTPRINTS = "footprints.json"
    """``FootprintSummary``: what ``dbabench scenarios footprints`` found."""
