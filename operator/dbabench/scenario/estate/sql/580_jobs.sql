-- Jobs grants. queue_worker runs both the scheduler and the queue consumers; services enqueue.

GRANT USAGE ON SCHEMA jobs TO readonly, queue_worker, datadog, catalog_api, fulfilment_api, notifier, payments_api,
    identity_api;

GRANT SELECT ON ALL TABLES IN SCHEMA jobs TO readonly;
GRANT SELECT ON jobs.v_queue_depth, jobs.v_job_health TO datadog;

GRANT SELECT ON jobs.job_definitions, jobs.job_dependencies, jobs.queues, jobs.advisory_locks, jobs.maintenance_windows TO queue_worker;
GRANT SELECT, INSERT, UPDATE ON jobs.job_runs TO queue_worker;
GRANT SELECT, INSERT ON jobs.job_run_logs TO queue_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON jobs.tasks, jobs.dead_tasks, jobs.workers, jobs.scheduler_leases TO queue_worker;
GRANT EXECUTE ON FUNCTION jobs.claim(text, text, integer), jobs.complete(bigint, text), jobs.fail(bigint, text, text),
    jobs.reap_expired_leases(), jobs.try_job_lock(text) TO queue_worker;

GRANT EXECUTE ON FUNCTION jobs.enqueue(text, jsonb, text, timestamptz, smallint)
    TO queue_worker, catalog_api, fulfilment_api, notifier, payments_api, identity_api;
GRANT INSERT ON jobs.tasks TO catalog_api, fulfilment_api, notifier, payments_api, identity_api;

-- On-call and support pause jobs and replay dead tasks.
GRANT UPDATE (enabled, paused_reason) ON jobs.job_definitions TO readwrite;
GRANT UPDATE (is_paused) ON jobs.queues TO readwrite;
GRANT SELECT, DELETE ON jobs.dead_tasks TO readwrite;
GRANT INSERT ON jobs.tasks TO readwrite;
GRANT EXECUTE ON FUNCTION jobs.replay_dead_task(bigint) TO readwrite;

ALTER DEFAULT PRIVILEGES IN SCHEMA jobs GRANT SELECT ON TABLES TO readonly;
