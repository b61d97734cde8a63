"""The datasets a scenario's database can start from (scenario.datasets builds them)."""

from __future__ import annotations

from dbabench.model.base import NameEnum


class DatasetName(NameEnum):
    checkout = "checkout"
    """Three tables of the checkout service."""
    estate = "estate"
    """A marketplace company's primary database, the checkout core in its public schema."""
