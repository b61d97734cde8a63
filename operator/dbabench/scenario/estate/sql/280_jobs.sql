-- Jobs functions and views: the queue's claim / complete / fail protocol, lease reaping,
-- dead-task replay, the per-job advisory lock, and health views.

CREATE TRIGGER job_definitions_updated_at BEFORE UPDATE ON jobs.job_definitions
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();

-- Claim up to p_limit due tasks of a queue. Concurrent workers skip each other's rows.
CREATE FUNCTION jobs.claim(p_queue text, p_worker text, p_limit integer DEFAULT 10)
RETURNS SETOF jobs.tasks
LANGUAGE sql AS $$
    WITH due AS (
        SELECT t.id
        FROM jobs.tasks t
        WHERE t.queue_name = p_queue AND t.state = 'ready' AND t.run_after <= now()
        ORDER BY t.priority, t.run_after, t.id
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    )
    UPDATE jobs.tasks t
       SET state = 'leased', leased_by = p_worker, attempts = t.attempts + 1,
           lease_expires_at = now() + (SELECT q.visibility_timeout FROM jobs.queues q WHERE q.name = p_queue),
           updated_at = now()
      FROM due
     WHERE t.id = due.id
    RETURNING t.*
$$;
COMMENT ON FUNCTION jobs.claim(text, text, integer) IS
    'Leases due tasks with FOR UPDATE SKIP LOCKED (index jobs.tasks_ready_idx). Workers call it in a loop; an empty result means sleep 1 s.';

CREATE FUNCTION jobs.complete(p_id bigint, p_worker text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM jobs.tasks WHERE id = p_id AND state = 'leased' AND leased_by = p_worker;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION jobs.complete(bigint, text) IS 'Finishes a leased task (deletes it). False when the lease was lost to the reaper.';

CREATE FUNCTION jobs.fail(p_id bigint, p_worker text, p_error text) RETURNS jobs.task_state
LANGUAGE plpgsql AS $$
DECLARE
    t jobs.tasks;
    max_att smallint;
BEGIN
    SELECT * INTO t FROM jobs.tasks WHERE id = p_id AND leased_by = p_worker FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT q.max_attempts INTO max_att FROM jobs.queues q WHERE q.name = t.queue_name;
    IF t.attempts >= max_att THEN
        INSERT INTO jobs.dead_tasks (id, queue_name, payload, attempts, last_error, created_at)
        VALUES (t.id, t.queue_name, t.payload, t.attempts, p_error, t.created_at);
        DELETE FROM jobs.tasks WHERE id = p_id;
        RETURN 'dead';
    END IF;
    UPDATE jobs.tasks
       SET state = 'ready', leased_by = NULL, lease_expires_at = NULL, last_error = p_error,
           run_after = now() + least(interval '1 hour', interval '10 seconds' * power(2, t.attempts)),
           updated_at = now()
     WHERE id = p_id;
    RETURN 'ready';
END
$$;
COMMENT ON FUNCTION jobs.fail(bigint, text, text) IS 'Records a failure: exponential backoff (10 s x 2^attempts, at most 1 h), or dead after the queue''s max_attempts.';

CREATE FUNCTION jobs.reap_expired_leases() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    n integer;
BEGIN
    UPDATE jobs.tasks
       SET state = 'ready', leased_by = NULL, lease_expires_at = NULL,
           last_error = coalesce(last_error, 'lease expired'), updated_at = now()
     WHERE state = 'leased' AND lease_expires_at < now();
    GET DIAGNOSTICS n = ROW_COUNT;
    DELETE FROM jobs.workers WHERE last_heartbeat_at < now() - interval '2 minutes';
    RETURN n;
END
$$;
COMMENT ON FUNCTION jobs.reap_expired_leases() IS 'Every minute: returns tasks of crashed workers to the queue and forgets dead workers.';

CREATE FUNCTION jobs.replay_dead_task(p_id bigint) RETURNS bigint
LANGUAGE sql AS $$
    WITH d AS (DELETE FROM jobs.dead_tasks WHERE id = p_id RETURNING queue_name, payload)
    INSERT INTO jobs.tasks (queue_name, payload, priority)
    SELECT queue_name, payload, 50 FROM d
    RETURNING id
$$;
COMMENT ON FUNCTION jobs.replay_dead_task(bigint) IS 'On-call tool: puts a dead task back at priority 50; returns the new task id.';

CREATE FUNCTION jobs.enqueue(p_queue text, p_payload jsonb, p_dedupe_key text DEFAULT NULL,
                             p_run_after timestamptz DEFAULT now(), p_priority smallint DEFAULT 100)
RETURNS bigint
LANGUAGE sql AS $$
    INSERT INTO jobs.tasks (queue_name, payload, dedupe_key, run_after, priority)
    VALUES (p_queue, p_payload, p_dedupe_key, p_run_after, p_priority)
    ON CONFLICT (queue_name, dedupe_key) DO NOTHING
    RETURNING id
$$;
COMMENT ON FUNCTION jobs.enqueue(text, jsonb, text, timestamptz, smallint) IS 'Adds a task; with a dedupe key, a second enqueue of the same key is a no-op (returns NULL).';

-- A scheduled run takes its job's advisory lock for the transaction; false means the previous
-- run is still going and this one is recorded as skipped.
CREATE FUNCTION jobs.try_job_lock(p_job_name text) RETURNS boolean
LANGUAGE sql AS $$
    SELECT coalesce((SELECT pg_try_advisory_xact_lock(lock_key)
                     FROM jobs.job_definitions WHERE name = p_job_name AND lock_key IS NOT NULL), true)
$$;
COMMENT ON FUNCTION jobs.try_job_lock(text) IS 'Transaction-scoped advisory lock on the job''s lock_key (true when the job has none).';

CREATE VIEW jobs.v_job_health AS
SELECT d.id, d.name, d.enabled, d.cron_expr, last.status AS last_status, last.started_at AS last_started_at,
       last.duration_ms AS last_duration_ms,
       (SELECT max(r.finished_at) FROM jobs.job_runs r WHERE r.job_id = d.id AND r.status = 'succeeded') AS last_success_at,
       (SELECT count(*) FROM jobs.job_runs r WHERE r.job_id = d.id AND r.status IN ('failed', 'timed_out')
          AND r.scheduled_for > now() - interval '24 hours') AS failures_24h
FROM jobs.job_definitions d
LEFT JOIN LATERAL (SELECT r.status, r.started_at, r.duration_ms FROM jobs.job_runs r
                   WHERE r.job_id = d.id ORDER BY r.scheduled_for DESC LIMIT 1) last ON true;
COMMENT ON VIEW jobs.v_job_health IS 'Last run and recent failures per job (the scheduler dashboard and its alert).';

CREATE VIEW jobs.v_queue_depth AS
SELECT q.name, q.is_paused,
       count(t.id) FILTER (WHERE t.state = 'ready' AND t.run_after <= now()) AS due,
       count(t.id) FILTER (WHERE t.state = 'ready' AND t.run_after > now()) AS delayed,
       count(t.id) FILTER (WHERE t.state = 'leased') AS leased,
       min(t.run_after) FILTER (WHERE t.state = 'ready') AS oldest_ready,
       (SELECT count(*) FROM jobs.dead_tasks d WHERE d.queue_name = q.name) AS dead
FROM jobs.queues q
LEFT JOIN jobs.tasks t ON t.queue_name = q.name
GROUP BY q.name, q.is_paused;
COMMENT ON VIEW jobs.v_queue_depth IS 'Backlog per queue (datadog custom check).';
