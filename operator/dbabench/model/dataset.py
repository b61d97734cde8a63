"""The datasets a scenario's database can start from (scenario.datasets builds them)."""

from __future__ import annotations

from dbabench.model.base import NameEnum


class DatasetName(NameEnum):
    checkout = "checkout"
    """Three tables of the checkout service."""
    estate = "estate"
    """A marketplace company's primary database, the checkout core in its public schema."""


class Traffic(NameEnum):
    """Which of a dataset's services run beside the scenario's own workload and jobs."""

    mixed = "mixed"
    """Every service: the transactional APIs and queues, and the warehouse, reports and BI."""
    oltp = "oltp"
    """The transactional services: APIs, queue consumers, the outbox relay."""
    olap = "olap"
    """The analytical ones: BI dashboards, warehouse loads, materialised views, reports."""
    none = "none"
    """None of them: the scenario's own workload alone."""
