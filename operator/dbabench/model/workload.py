"""Workload profiles a scenario can ask for, one model per profile, told apart by ``profile``."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field

from dbabench.model.base import Model


class OltpCheckoutWorkload(Model):
    """The checkout service: workers place orders and bump their merchant's counter row.

    Every checkout updates ``merchants`` for the order's merchant, so a transaction that holds
    a merchant row makes checkouts for that merchant queue, then time out.
    """

    profile: Literal["oltp-checkout"]
    clients: int = Field(default=6, ge=1, le=64, description="checkout-worker sessions")
    statement_timeout_ms: int = Field(default=3000, gt=0,
                                      description="the application's timeout per statement")
    think_time_ms: int = Field(default=50, ge=0, description="pause between requests per client")
    merchants: int = Field(default=100, ge=1, description="merchants 1..N get ordinary traffic")
    hot_merchant: int | None = Field(default=None,
                                     description="a merchant that gets hot_share of checkouts")
    hot_share: float = Field(default=0.0, ge=0, le=1)
    skus: int = Field(default=2000, ge=1)
    browse_share: float = Field(default=0.3, ge=0, le=1,
                                description="share of requests that only read recent orders")
    connection_lifetime_seconds: float | None = Field(
        default=None, gt=0,
        description="every session of the workload (workers and jobs) is replaced after this"
                    " long, as a pool's max lifetime does: role and database settings reach"
                    " the workload only through new sessions")


WorkloadSpec = Annotated[Union[OltpCheckoutWorkload], Field(discriminator="profile")]
