"""What the workload process runs: the profile a scenario asks for (one model per profile, told
apart by ``profile``) and the scheduled jobs of its fault."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, model_validator

from dbabench.model.base import Model

WORKER_SERVICE = "checkout-worker"
"""The profile's own service: its sessions' application_name and its business-log name."""

Server = Literal["primary", "replica"]
"""Which server a step, predicate or tool call addresses: the primary, or its streaming replica."""


class JobStep(Model):
    """A scheduled job, re-run after it ends or is killed, as a production scheduler would.

    This is what makes "terminate the blocker" a decoy: the scheduler starts it again.
    """

    action: Literal["job"]
    name: str = Field(pattern=r"^[a-z0-9][-a-z0-9_]*$",
                      description="the job's service name in the business log and metrics")
    operation: str = Field(default="run", description="operation name in the business log")
    application_name: str = Field(description="application_name of the job's session")
    statements: list[str] = Field(min_length=1,
                                  description="run in one transaction, in order")
    interval_seconds: float = Field(default=2.0, gt=0, description="pause between runs")
    statement_timeout_ms: int = Field(
        default=0, ge=0,
        description="0: the job's session keeps the server's, database's and role's setting")
    role: str | None = Field(
        default=None, pattern=r"^[a-z_][a-z0-9_]*$",
        description="login role of the job's session (created by the fault; given the"
                    " application's password at restore); default: the application role")
    idle_in_transaction_seconds: float = Field(
        default=0.0, ge=0,
        description="keep the transaction open, idle, this long after the statements:"
                    " a leaked transaction holding its locks and snapshot")
    sessions: int = Field(default=1, ge=1, le=32,
                          description="copies of the job, each in its own session (a pool)")
    server: Server = Field(default="primary",
                           description="replica: the job queries the standby (a report there)")
    pool_validates: bool = Field(
        default=True,
        description="its pool replaces a connection the server ended while it sat idle before"
                    " handing it out, as PgBouncer and most client pools do; false: the next"
                    " request fails on it (a pool without validation, which an idle timeout"
                    " cuts)")
    staggered: bool = Field(
        default=False,
        description="the first run waits a random part of the interval, as a schedule's phase:"
                    " a service that ran long before the incident, not one started with it"
                    " (a dataset's services are)")
    connect_first: bool = Field(
        default=False,
        description="the job's sessions connect before the application's clients start: a"
                    " service that was already running, so the slots or locks it holds are"
                    " taken first rather than raced for")


class OltpCheckoutWorkload(Model):
    """The checkout service: workers place orders and bump their merchant's counter row.

    Every checkout updates ``merchants`` for the order's merchant, so a transaction that holds
    a merchant row makes checkouts for that merchant queue, then time out.
    """

    profile: Literal["oltp-checkout"]
    clients: int = Field(default=6, ge=1, le=64, description="checkout-worker sessions")
    statement_timeout_ms: int = Field(default=3000, gt=0,
                                      description="the application's timeout per statement")
    think_time_ms: int | None = Field(
        default=None, ge=0,
        description="pause after each answer before a client's next request, so a machine"
                    " that answers faster gets more of them; 50 unless requestIntervalMs is set")
    request_interval_ms: int | None = Field(
        default=None, gt=0,
        description="instead of a think time: each client starts a request this often on"
                    " average, however fast the answers come, so the traffic's rate is the"
                    " scenario's and not what the machine has to spare; a late answer is"
                    " followed by the next request at once")
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

    @model_validator(mode="after")
    def _one_pace(self) -> "OltpCheckoutWorkload":
        if self.request_interval_ms is None:
            if self.think_time_ms is None:
                self.think_time_ms = 50
        elif self.think_time_ms is not None:
            raise ValueError("thinkTimeMs and requestIntervalMs both set: a client either"
                             " pauses after each answer or starts requests at a fixed"
                             " interval; keep one")
        return self


WorkloadSpec = Annotated[Union[OltpCheckoutWorkload], Field(discriminator="profile")]
