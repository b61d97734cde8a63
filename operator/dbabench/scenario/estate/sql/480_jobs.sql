-- Jobs secondary indexes and sequence positions.

CREATE INDEX job_runs_job_scheduled_idx ON jobs.job_runs (job_id, scheduled_for DESC);
CREATE INDEX job_runs_scheduled_idx ON jobs.job_runs (scheduled_for);
CREATE INDEX job_runs_running_idx ON jobs.job_runs (job_id) WHERE status = 'running';
CREATE INDEX job_dependencies_depends_on_idx ON jobs.job_dependencies (depends_on_job_id);
CREATE INDEX tasks_ready_idx ON jobs.tasks (queue_name, priority, run_after, id) WHERE state = 'ready';
CREATE INDEX tasks_leased_idx ON jobs.tasks (lease_expires_at) WHERE state = 'leased';
CREATE INDEX dead_tasks_queue_idx ON jobs.dead_tasks (queue_name, died_at);

COMMENT ON INDEX jobs.tasks_ready_idx IS 'jobs.claim(): the ready rows of one queue in claim order. Partial, so it stays small however many leased rows churn.';
