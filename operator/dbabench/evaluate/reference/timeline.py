"""A run's timeline, in order (runner/run.py ``run_scenario``: prose the test holds to the run),
with the fields of the reference path and remediations."""

from __future__ import annotations

from dbabench.evaluate.reference.manifest_fields import fields_table
from dbabench.model.scenario import Hop, ManifestationSpec, OutcomeSpec, RemediationStep
from dbabench.workload import engine


def section() -> list[str]:
    within = ManifestationSpec.model_fields["within_seconds"].default
    settle = OutcomeSpec.model_fields["settle_seconds"].default
    window = OutcomeSpec.model_fields["window_seconds"].default
    return [
        "## A run, in order",
        "",
        "What happens when, in a run of any agent (runner/run.py `run_scenario`); the times are"
        " the manifest's.",
        "",
        "1. **Restore**: a clone of the golden snapshot (dataset, intended settings,"
        " `fault.persistent`) starts; statistics are as the golden's clean shutdown left them.",
        "2. **Runtime fault**: `fault.runtime` SQL steps run in order, as the superuser in"
        " autocommit; its jobs are handed to the workload.",
        "3. **Workload**: the workload process starts its jobs that `connectFirst` (and waits"
        f" up to {engine.FIRST_CONNECTION_SECONDS:g} s for their first login), then the"
        " checkout workers and the other jobs.",
        "4. **Admission**: while Prometheus and the exporters start, the manifestation"
        " predicates are checked together, and again 0.5 s (`ADMISSION_POLL_SECONDS`) after"
        " each poll that is not all true, until all hold at one poll (then the agent is let"
        " in) or `manifestation.withinSeconds`"
        f" (default {within:g}) have passed (then the run is an infrastructure error and no"
        " agent runs). Workload and log predicates read the trailing `windowSeconds` of the"
        " logs at each poll. On admission the protected tables' rows are counted, the logging"
        " settings are recorded for `enabledBy`, and `pg_stat_statements` is emptied: what the"
        " harness ran to get here is no incident's history.",
        "5. **The agent's turn**, under `budget` (`maxSteps`, `timeoutSeconds`)."
        " The reference agent (`--agent reference`, the battery's reference and alternative"
        " runs, `scenarios measure`) makes the `referencePath` calls first, in order, back to"
        " back through the same tool gate as any agent, right after admission: each hop sees"
        " the fault as admitted, with the workload running. A hop whose `expect` does not match"
        " is noted in the trace and the walk goes on. Then it applies the remediation's steps,"
        " each followed by its `thenWaitSeconds`, makes the `verification` calls and files the"
        " canonical report. `scenarios measure` counts the units of the run's first tool"
        " calls, one per hop.",
        f"6. **Settle** `outcome.settleSeconds` (default {settle:g}), then the **window**"
        f" `outcome.windowSeconds` (default {window:g}); the workload and its jobs run"
        " throughout.",
        "7. **Checks**, all at once when the window has ended: workload and log checks count"
        " the window; SQL and estimate checks read the state at that moment.",
        "",
        "The workload runs from step 3 to the end of step 7, whatever the agent does: nothing"
        " restarts it and nothing stops it early.",
        "",
        "### A killed job comes back",
        "",
        "A job is a scheduler's (workload/engine.py `scheduled_job`): it runs its request, then"
        " waits `intervalSeconds`, for ever, whatever the request's outcome. So:",
        "",
        "* **Terminated** (`pg_terminate_backend`, a restart): the request in flight ends"
        " `terminated` (or `connection_error` when the client finds the connection gone), the"
        " session is dropped, and after `intervalSeconds` (plus"
        f" {engine.RECONNECT_DELAY:g} s after a connection error) the next run logs in anew: a"
        " new backend, the same `applicationName`, `role` and statements. A session killed"
        " while the job waited between runs fails the next run the same way, and the run"
        " after it logs in anew. A job killed while it holds its transaction open"
        " (`idleInTransactionSeconds`) finds out only when it commits, at the end of that"
        " hold; `intervalSeconds` later it runs again.",
        "* **Cancelled** (`pg_cancel_backend`, its own `statementTimeoutMs`): the run ends"
        " `canceled` (or `timeout`), its transaction is rolled back on the same session, and"
        " the next run starts `intervalSeconds` later.",
        "* **Server down or restarting**: each attempt to log in fails with"
        " `connection_error`, and each session tries again at its next request until the"
        " server accepts it.",
        "",
        "Killing a job is therefore never a fix: it buys `intervalSeconds`. A fix changes what"
        " the job's next run meets (a plan, a setting of its role, an index), or the job's"
        " own session settings through its role or database, which a new session picks up.",
        "",
        "### Reference path and remediation fields",
        "",
        "`referencePath` is a list of hops; `reference`, `alternatives` and `decoy` are"
        " remediations (`name`, `steps`).",
        "",
        *fields_table(Hop),
        "",
        *fields_table(RemediationStep),
    ]
