-- Jobs data: the job catalogue, run history for the retention window (90 days at full volume),
-- the advisory-lock registry, queues with their current backlog, workers, maintenance windows.

-- Tasks are deleted when done; their ids show the queue's lifetime throughput.
ALTER TABLE jobs.tasks ALTER COLUMN id RESTART WITH 96000000;

ALTER TABLE jobs.job_definitions DISABLE TRIGGER USER;

INSERT INTO jobs.job_definitions (id, name, cron_expr, timezone, handler_kind, command, owner_team, enabled, max_runtime, max_attempts,
                                  concurrency_policy, lock_key, description, paused_reason, created_at, updated_at)
SELECT v.id, v.name, v.cron, v.tz, v.kind, v.cmd, v.team, v.paused IS NULL, v.maxrt::interval, v.att, v.policy,
       CASE WHEN v.policy = 'forbid' THEN hashtext('job:' || v.name)::bigint END,
       v.descr, v.paused, now() - make_interval(days => v.age), now() - make_interval(days => v.age / 3)
FROM (VALUES
    (1, 'fulfilment.release_reservations', '* * * * *', 'UTC', 'sql', 'SELECT fulfilment.release_expired_reservations()', 'fulfilment', '2 minutes', 1, 'forbid', 'Releases stock holds whose payment window expired.', NULL::text, 1400),
    (2, 'jobs.reap_expired_leases', '* * * * *', 'UTC', 'sql', 'SELECT jobs.reap_expired_leases()', 'platform', '1 minute', 1, 'forbid', 'Returns tasks of crashed workers to the queue.', NULL, 1300),
    (3, 'events.debezium_heartbeat_check', '*/5 * * * *', 'UTC', 'sql', 'SELECT now() - last_beat_at > interval ''2 minutes'' FROM events.debezium_heartbeat', 'data-platform', '30 seconds', 1, 'allow', 'Pages data-platform when the CDC connector stops beating (its slot then retains WAL).', NULL, 700),
    (4, 'catalog.search_reindex_sweep', '*/5 * * * *', 'UTC', 'worker', 'search-indexer sweep --stale-after 10m', 'catalog', '4 minutes', 1, 'forbid', 'Re-queues products whose search document is older than their last change (safety net for missed queue rows).', NULL, 1200),
    (5, 'events.webhook_retry', '*/5 * * * *', 'UTC', 'worker', 'notifier retry-due --limit 5000', 'platform', '4 minutes', 1, 'forbid', 'Re-sends failed webhook deliveries that are due.', NULL, 1150),
    (6, 'fulfilment.apply_stock_counts', '*/5 * * * *', 'UTC', 'worker', 'fulfilment apply-stock-counts --source events.cdc_erp_stock_counts', 'fulfilment', '4 minutes', 3, 'forbid', 'Reconciles 3PL cycle counts from events.cdc_erp_stock_counts into stock levels.', NULL, 500),
    (7, 'fulfilment.carrier_tracking_poll', '*/10 * * * *', 'UTC', 'worker', 'tracking-poller --carriers colissimo,correos,royal-mail', 'fulfilment', '9 minutes', 1, 'forbid', 'Polls carriers without webhooks for scans.', NULL, 1100),
    (8, 'checkout.merchant_counters', '*/10 * * * *', 'UTC', 'sql', 'UPDATE merchants m SET order_count = c.n FROM (SELECT merchant_id, count(*) n FROM orders GROUP BY 1) c WHERE c.merchant_id = m.id AND m.order_count <> c.n', 'checkout', '5 minutes', 1, 'forbid', 'Repairs drift in merchants.order_count left by checkout retries.', NULL, 1600),
    (9, 'identity.session_cleanup', '*/15 * * * *', 'UTC', 'sql', 'DELETE FROM identity.sessions WHERE expires_at < now() - interval ''1 day''', 'identity', '10 minutes', 1, 'forbid', 'Deletes expired sessions in batches.', NULL, 1500),
    (10, 'checkout.abandoned_checkout_emails', '*/30 * * * *', 'Europe/Berlin', 'worker', 'notifier abandoned-checkouts --age 2h', 'growth', '20 minutes', 1, 'forbid', 'Reminder e-mails for checkouts left unpaid.', NULL, 900),
    (11, 'events.outbox_purge', '17 * * * *', 'UTC', 'sql', 'SELECT events.purge_outbox(interval ''7 days'')', 'platform', '15 minutes', 1, 'forbid', 'Deletes published outbox events older than 7 days.', NULL, 1400),
    (12, 'events.webhook_auto_disable', '25 * * * *', 'UTC', 'worker', 'notifier auto-disable --failing-for 5d', 'platform', '10 minutes', 1, 'forbid', 'Disables endpoints that failed for 5 days and e-mails the merchant.', NULL, 1000),
    (13, 'analytics.orders_hourly', '5 * * * *', 'UTC', 'worker', 'etl run orders_hourly', 'data-platform', '40 minutes', 2, 'forbid', 'Extracts changed orders into analytics.stg_orders and merges them into fact_orders.', NULL, 700),
    (14, 'analytics.payments_hourly', '5 * * * *', 'UTC', 'worker', 'etl run payments_hourly', 'data-platform', '40 minutes', 2, 'forbid', 'Payments extract and merge into fact_payments.', NULL, 700),
    (15, 'analytics.clickstream_hourly', '5 * * * *', 'UTC', 'worker', 'etl run clickstream_hourly', 'data-platform', '40 minutes', 2, 'forbid', 'Sessionises the clickstream drop into fact_sessions.', NULL, 650),
    (16, 'catalog.rating_summary_refresh', '15 * * * *', 'UTC', 'sql', 'REFRESH MATERIALIZED VIEW CONCURRENTLY catalog.product_rating_summary', 'catalog', '10 minutes', 1, 'forbid', 'Refreshes review aggregates shown on product pages.', NULL, 800),
    (17, 'platform.vacuum_queue_tables', '45 * * * *', 'UTC', 'sql', 'VACUUM (ANALYZE) jobs.tasks, events.outbox, catalog.search_reindex_queue', 'platform', '10 minutes', 1, 'forbid', 'Belt and braces for the churn tables between autovacuum runs.', NULL, 600),
    (18, 'analytics.dims_nightly', '0 2 * * *', 'UTC', 'worker', 'etl run dims_nightly', 'data-platform', '1 hour', 2, 'forbid', 'Type-2 merge of merchants, products and customers.', NULL, 700),
    (19, 'analytics.dbt_nightly', '0 3 * * *', 'UTC', 'worker', 'dbt build --select tag:nightly --target prod', 'data-platform', '2 hours', 1, 'forbid', 'Builds the nightly dbt models.', NULL, 650),
    (20, 'analytics.refresh_mvs', '30 4 * * *', 'UTC', 'sql', 'CALL analytics.refresh_materialized_views()', 'data-platform', '1 hour', 2, 'forbid', 'Refreshes the dashboard materialised views after dbt.', NULL, 600),
    (21, 'jobs.run_history_purge', '20 0 * * *', 'UTC', 'sql', 'DELETE FROM jobs.job_runs WHERE scheduled_for < now() - interval ''90 days''', 'platform', '30 minutes', 1, 'forbid', 'Keeps 90 days of run history.', NULL, 1300),
    (22, 'catalog.search_log_purge', '40 2 * * *', 'UTC', 'sql', 'DELETE FROM catalog.search_query_log WHERE queried_at < now() - interval ''60 days''', 'catalog', '30 minutes', 1, 'forbid', 'Keeps 60 days of search queries.', NULL, 1000),
    (23, 'fulfilment.stock_reconciliation', '30 1 * * *', 'Europe/Berlin', 'worker', 'fulfilment reconcile-stock --report', 'fulfilment', '1 hour', 1, 'forbid', 'Compares stock_levels with the sum of stock_movements and reports clamps.', NULL, 1100),
    (24, 'payments.settle_merchants', '0 4 * * *', 'Europe/Berlin', 'worker', 'payments settlement-run', 'payments', '90 minutes', 1, 'forbid', 'Closes the day''s open orders per merchant into the ledger.', NULL, 1700),
    (25, 'identity.expire_api_keys', '0 0 * * *', 'UTC', 'sql', 'UPDATE identity.api_keys SET revoked_at = now() WHERE expires_at < now() AND revoked_at IS NULL', 'identity', '10 minutes', 1, 'forbid', 'Revokes expired API keys.', NULL, 1050),
    (26, 'fulfilment.late_shipment_alerts', '0 9 * * *', 'Europe/Berlin', 'worker', 'notifier late-shipments', 'fulfilment', '30 minutes', 1, 'forbid', 'E-mails merchants about shipments past their promised date.', NULL, 900),
    (27, 'payments.payout_batch', '0 6 * * 1-5', 'Europe/Berlin', 'worker', 'payments payout-batch --rail sepa', 'payments', '1 hour', 1, 'forbid', 'Builds the business day''s payout bank files.', NULL, 1600),
    (28, 'payments.reconcile_statements', '30 7 * * 1-5', 'Europe/Berlin', 'worker', 'payments reconcile --statements today', 'payments', '1 hour', 2, 'forbid', 'Matches bank statement lines to payouts and fees.', NULL, 1250),
    (29, 'payments.fx_rates_import', '15 16 * * 1-5', 'Europe/Berlin', 'http', 'POST fx-importer/v1/import?source=ecb', 'payments', '10 minutes', 5, 'forbid', 'Imports the day''s ECB euro rates (published around 16:00 CET).', NULL, 1250),
    (30, 'jobs.dead_task_report', '0 8 * * 1', 'Europe/Berlin', 'worker', 'jobs report dead-tasks --mail platform@', 'platform', '10 minutes', 1, 'allow', 'Weekly summary of dead tasks per queue.', NULL, 800),
    (31, 'platform.reindex_bloated', '0 3 * * 0', 'UTC', 'worker', 'pg_repack --only-indexes --table catalog.products --table fulfilment.shipments', 'platform', '3 hours', 1, 'forbid', 'Weekly rebuild of bloated indexes.', 'Paused after INC-2210 (repack lock queue stalled catalog writes); to be replaced with REINDEX CONCURRENTLY.', 1000),
    (32, 'analytics.partition_maintenance', '0 1 1 * *', 'UTC', 'sql', 'SELECT analytics.ensure_month_partitions(p, 2) FROM unnest(ARRAY[''analytics.fact_orders'', ''analytics.fact_payments'', ''analytics.fact_sessions'']::regclass[]) p', 'data-platform', '30 minutes', 3, 'forbid', 'Creates next months'' fact partitions; detaching old ones is a ticketed manual step.', NULL, 700),
    (33, 'events.audit_partition_maintenance', '10 1 1 * *', 'UTC', 'worker', 'partman-lite --table events.audit_log --premake 1 --retention 24m', 'platform', '30 minutes', 3, 'forbid', 'Creates next month''s audit partition and detaches the one past retention.', NULL, 1480),
    (34, 'finance.month_end_close', '0 5 2 * *', 'Europe/Berlin', 'worker', 'finance close-month --previous', 'finance', '2 hours', 1, 'forbid', 'Month-end close: freezes the previous period in the ledger.', NULL, 1350),
    (35, 'finance.vat_report', '0 6 3 * *', 'Europe/Berlin', 'worker', 'finance vat-report --oss', 'finance', '1 hour', 1, 'forbid', 'EU One-Stop-Shop VAT report for the previous month.', NULL, 900),
    (36, 'legacy.nightly_order_export', '0 23 * * *', 'Europe/Berlin', 'worker', 'legacy-export orders --sftp finance', 'finance', '1 hour', 1, 'forbid', 'CSV export of the day''s orders to the old finance SFTP.', 'Superseded by the warehouse; kept until finance signs off the decommissioning (FIN-812).', 1750)
) AS v(id, name, cron, tz, kind, cmd, team, maxrt, att, policy, descr, paused, age);

INSERT INTO jobs.job_dependencies (job_id, depends_on_job_id, within)
VALUES (19, 18, '12 hours'), (19, 13, '2 hours'), (19, 14, '2 hours'), (20, 19, '6 hours'), (34, 24, '2 days'),
       (34, 28, '3 days'), (35, 34, '2 days'), (27, 24, '12 hours'), (28, 27, '1 day');

INSERT INTO jobs.advisory_locks (lock_key, name, scope, component, description, created_at)
SELECT lock_key, 'job:' || name, 'transaction', 'scheduler', 'Held by each run of ' || name || ' (concurrency_policy forbid).', created_at
FROM jobs.job_definitions WHERE lock_key IS NOT NULL;

INSERT INTO jobs.advisory_locks (lock_key, name, scope, component, description, created_at)
VALUES
    (hashtext('scheduler:leader'), 'scheduler:leader', 'session', 'scheduler', 'Fallback leader election when scheduler_leases is unavailable.', now() - interval '1300 days'),
    (hashtext('outbox_relay:partition-0'), 'outbox_relay:partition-0', 'session', 'outbox_relay', 'Keeps relay ordering per aggregate type group (one holder per group).', now() - interval '1100 days'),
    (hashtext('outbox_relay:partition-1'), 'outbox_relay:partition-1', 'session', 'outbox_relay', 'Second relay group.', now() - interval '1100 days'),
    (hashtext('search_indexer:full_rebuild'), 'search_indexer:full_rebuild', 'session', 'search_indexer', 'Only one full search rebuild at a time.', now() - interval '1000 days'),
    (hashtext('pricing_engine:publish'), 'pricing_engine:publish', 'transaction', 'pricing_engine', 'Serialises price list publishes (price_history rows close and open together).', now() - interval '1400 days'),
    (hashtext('ledger:posting'), 'ledger:posting', 'transaction', 'ledger_writer', 'Serialises postings per ledger period close.', now() - interval '1350 days'),
    (1001, 'legacy:payout_cron', 'session', 'payments', 'Hard-coded key of the 2020 payout cron script; kept reserved so nothing else takes it.', now() - interval '1780 days'),
    (1002, 'legacy:settlement_cron', 'session', 'payments', 'Hard-coded key of the 2020 settlement script; reserved.', now() - interval '1780 days'),
    (hashtext('fulfilment:relayout'), 'fulfilment:relayout', 'session', 'fulfilment_api', 'Quarterly bin relayout of a warehouse (blocks picks for that warehouse).', now() - interval '600 days'),
    (hashtext('dbt:prod'), 'dbt:prod', 'session', 'dbt_runner', 'One dbt invocation against prod at a time.', now() - interval '650 days');

INSERT INTO jobs.scheduler_leases (name, holder, acquired_at, expires_at)
VALUES ('scheduler', 'scheduler-6f8c9d7b5-x2kqp', now() - interval '3 days 4 hours', now() + interval '22 seconds'),
       ('tracking-poller', 'tracking-poller-75d4f9-9wzrt', now() - interval '6 hours', now() + interval '17 seconds');

-- Run history. The retention window shrinks with the volume (0.9 x volume days); every run
-- of a job is at its cron time, a second or two late, with job-specific durations.
INSERT INTO jobs.job_runs (id, job_id, scheduled_for, started_at, finished_at, status, attempt, worker_id, rows_affected, message)
WITH j AS (
    SELECT d.*, split_part(cron_expr, ' ', 1) AS f_min, split_part(cron_expr, ' ', 2) AS f_hour,
           split_part(cron_expr, ' ', 3) AS f_dom, split_part(cron_expr, ' ', 5) AS f_dow
    FROM jobs.job_definitions d WHERE d.enabled
), p AS (
    SELECT j.*,
           CASE WHEN f_min = '*' THEN 1 WHEN f_min LIKE '*/%' THEN substr(f_min, 3)::int WHEN f_hour = '*' THEN 60 ELSE 1440 END AS period_min,
           CASE WHEN f_min = '*' OR f_min LIKE '*/%' THEN date_trunc('hour', now())
                WHEN f_hour = '*' THEN date_trunc('hour', now()) + make_interval(mins => f_min::int)
                ELSE date_trunc('day', now()) + make_interval(hours => f_hour::int, mins => f_min::int) END AS anchor
    FROM j
), r AS (
    SELECT p.id AS job_id, p.name, p.handler_kind, p.f_dom, p.f_dow, p.max_runtime,
           p.anchor + interval '1 day' - make_interval(mins => p.period_min * k) AS at, k
    FROM p
    CROSS JOIN LATERAL generate_series(0, (0.9 * :volume * 1440 / p.period_min)::int + 1440 / p.period_min) k
), rr AS (
    SELECT r.*, (hashint8(r.job_id * 1000003 + r.k) & 1023) AS h,
           CASE r.name
               WHEN 'analytics.dbt_nightly' THEN 2400000 WHEN 'analytics.refresh_mvs' THEN 420000 WHEN 'payments.settle_merchants' THEN 1900000
               WHEN 'analytics.orders_hourly' THEN 95000 WHEN 'analytics.payments_hourly' THEN 80000 WHEN 'analytics.clickstream_hourly' THEN 260000
               WHEN 'analytics.dims_nightly' THEN 240000 WHEN 'fulfilment.stock_reconciliation' THEN 610000 WHEN 'payments.payout_batch' THEN 780000
               WHEN 'jobs.run_history_purge' THEN 38000 WHEN 'catalog.search_log_purge' THEN 51000 WHEN 'platform.vacuum_queue_tables' THEN 7000
               WHEN 'catalog.search_reindex_sweep' THEN 2100 WHEN 'events.outbox_purge' THEN 4200
               ELSE 40 + (r.job_id * 37) % 900 END AS typical_ms
    FROM r
    WHERE r.at <= now() - interval '20 seconds' AND r.at > now() - make_interval(days => 1) * (0.9 * :volume)
      AND (r.f_dom = '*' OR extract(day FROM r.at) = r.f_dom::int)
      AND (r.f_dow = '*' OR (r.f_dow = '1-5' AND extract(isodow FROM r.at) <= 5) OR (r.f_dow ~ '^[0-7]$' AND extract(dow FROM r.at) = r.f_dow::int))
)
SELECT 41000000 + row_number() OVER (ORDER BY rr.at, rr.job_id), rr.job_id, rr.at,
       rr.at + make_interval(secs => 0.2 + (rr.h % 30) * 0.1),
       CASE WHEN rr.at > now() - interval '50 seconds' AND rr.typical_ms > 1000 THEN NULL
            WHEN rr.name = 'platform.vacuum_queue_tables' AND rr.h % 50 = 0 THEN rr.at + make_interval(secs => 0.2 + (rr.h % 30) * 0.1)
            ELSE rr.at + make_interval(secs => 0.2 + (rr.h % 30) * 0.1 + rr.typical_ms * (0.6 + (rr.h % 80) / 100.0) / 1000.0
                                              * CASE WHEN rr.h = 1000 THEN 8 ELSE 1 END) END,
       (CASE WHEN rr.at > now() - interval '50 seconds' AND rr.typical_ms > 1000 THEN 'running'
             WHEN rr.name = 'platform.vacuum_queue_tables' AND rr.h % 50 = 0 THEN 'skipped'
             WHEN rr.name = 'payments.fx_rates_import' AND rr.h % 16 = 0 THEN 'failed'
             WHEN rr.h = 1000 AND rr.typical_ms > 60000 THEN 'timed_out'
             WHEN rr.h % 250 = 7 THEN 'failed'
             ELSE 'succeeded' END)::jobs.run_status,
       1,
       CASE WHEN rr.handler_kind = 'sql' THEN 'scheduler-6f8c9d7b5-' || (ARRAY['x2kqp', 'b7mzn', 'q9lrt'])[1 + (rr.k / 500)::int % 3]
            ELSE 'worker-' || (ARRAY['etl', 'notifier', 'payments', 'fulfilment', 'dbt'])[1 + rr.job_id % 5] || '-' || (rr.h % 4) END,
       CASE WHEN rr.handler_kind = 'sql' THEN (hashint8(rr.k * 7 + rr.job_id) & 4095) END,
       CASE WHEN rr.name = 'payments.fx_rates_import' AND rr.h % 16 = 0 THEN 'HTTP 404 from ECB feed: rates for today not published yet'
            WHEN rr.h % 250 = 7 THEN (ARRAY['canceling statement due to lock timeout', 'could not obtain lock on relation', 'worker lost (OOMKilled)',
                                            'deadlock detected'])[1 + rr.k % 4]
            WHEN rr.name = 'platform.vacuum_queue_tables' AND rr.h % 50 = 0 THEN 'previous run still holds job lock'
            WHEN rr.h = 1000 AND rr.typical_ms > 60000 THEN 'max_runtime exceeded' END
FROM rr;

-- Runs finishing after now() are still running.
UPDATE jobs.job_runs SET finished_at = NULL, status = 'running', message = NULL WHERE finished_at > now();

INSERT INTO jobs.job_run_logs (run_id, seq, logged_at, level, message)
SELECT r.id, s, r.started_at + make_interval(secs => s),
       CASE s WHEN 1 THEN 'warning' ELSE 'error' END,
       CASE s WHEN 1 THEN 'retrying after transient error' ELSE r.message END
FROM jobs.job_runs r CROSS JOIN generate_series(1, 2) s
WHERE r.status IN ('failed', 'timed_out');

INSERT INTO jobs.queues (name, description, max_concurrency, visibility_timeout, max_attempts, is_paused, created_at)
VALUES
    ('emails', 'Transactional e-mails (order confirmations, password resets).', 16, '2 minutes', 8, false, now() - interval '1500 days'),
    ('webhooks', 'Merchant webhook deliveries handed over from notifier.', 24, '1 minute', 12, false, now() - interval '1150 days'),
    ('search_reindex', 'Per-product search document rebuilds.', 8, '5 minutes', 5, false, now() - interval '1200 days'),
    ('image_processing', 'Thumbnail and WebP variants of uploaded product images.', 6, '10 minutes', 5, false, now() - interval '1100 days'),
    ('exports', 'Merchant-requested CSV exports.', 2, '30 minutes', 3, false, now() - interval '800 days'),
    ('stock_sync', 'Stock pushes to merchants'' external shops.', 4, '5 minutes', 10, false, now() - interval '700 days'),
    ('label_printing', 'Carrier label purchase for new shipments.', 8, '2 minutes', 6, false, now() - interval '1000 days'),
    ('legacy_feeds', 'Old XML product feeds; paused while the feed partner migrates.', 1, '15 minutes', 3, true, now() - interval '1600 days');

-- The live backlog: mostly due or delayed retries, a handful leased right now, and the
-- paused queue's pile.
INSERT INTO jobs.tasks (queue_name, payload, priority, state, run_after, attempts, leased_by, lease_expires_at, last_error, dedupe_key, created_at, updated_at)
SELECT q.name,
       CASE q.name WHEN 'emails' THEN jsonb_build_object('template', (ARRAY['order_confirmation', 'shipping_update', 'password_reset'])[1 + g % 3], 'user_id', 1 + g * 7 % 250000)
                   WHEN 'webhooks' THEN jsonb_build_object('delivery_id', 900000 + g)
                   WHEN 'search_reindex' THEN jsonb_build_object('product_id', 1 + g % 1100)
                   WHEN 'image_processing' THEN jsonb_build_object('image_id', 200000 + g, 'variants', '["thumb","webp"]'::jsonb)
                   WHEN 'exports' THEN jsonb_build_object('merchant_id', 1 + g % 100, 'kind', 'orders', 'from', current_date - 30)
                   WHEN 'stock_sync' THEN jsonb_build_object('sku', 1 + g % 2000)
                   WHEN 'label_printing' THEN jsonb_build_object('shipment_id', 5100000 + g)
                   ELSE jsonb_build_object('feed', 'partner-' || (g % 3), 'merchant_id', 1 + g % 100) END,
       CASE WHEN q.name = 'emails' AND g % 3 = 2 THEN 10 ELSE 100 END,
       CASE WHEN g % 40 = 0 AND NOT q.is_paused THEN 'leased' ELSE 'ready' END::jobs.task_state,
       CASE WHEN g % 7 = 0 THEN now() + make_interval(secs => 10 * (g % 60)) ELSE now() - make_interval(secs => (g % 90)) END,
       CASE WHEN g % 7 = 0 THEN 1 + g % 3 WHEN g % 40 = 0 THEN 1 ELSE 0 END,
       CASE WHEN g % 40 = 0 AND NOT q.is_paused THEN 'worker-' || q.name || '-' || (g % 4) END,
       CASE WHEN g % 40 = 0 AND NOT q.is_paused THEN now() + q.visibility_timeout - make_interval(secs => g % 30) END,
       CASE WHEN g % 7 = 0 THEN (ARRAY['smtp 451 try again later', 'endpoint timeout', 'upstream 503'])[1 + g % 3] END,
       CASE WHEN q.name IN ('search_reindex', 'stock_sync') THEN q.name || ':' || (g % 1000) || ':' || g END,
       CASE WHEN q.is_paused THEN now() - interval '40 days' + make_interval(mins => g) ELSE now() - make_interval(secs => (g % 90) + 5) END,
       now() - make_interval(secs => g % 60)
FROM generate_series(1, 20 * :volume) g
CROSS JOIN LATERAL (SELECT * FROM jobs.queues ORDER BY name OFFSET (g % 8) LIMIT 1) q;

INSERT INTO jobs.dead_tasks (id, queue_name, payload, attempts, last_error, created_at, died_at)
SELECT 700000000 + g * 13, (ARRAY['emails', 'webhooks', 'image_processing', 'stock_sync', 'exports'])[1 + g % 5],
       jsonb_build_object('n', g), (ARRAY[8, 12, 5, 10, 3])[1 + g % 5],
       (ARRAY['550 mailbox unavailable', 'endpoint returned 410 Gone', 'unsupported image format: heic', 'merchant shop API token revoked',
              'export exceeds 1,000,000 rows'])[1 + g % 5],
       now() - interval '60 days' * ((hashint8extended(g, 131) & 2147483647)::float8 / 2147483647) - interval '1 day',
       now() - interval '60 days' * ((hashint8extended(g, 131) & 2147483647)::float8 / 2147483647)
FROM generate_series(1, 3 * :volume) g;

INSERT INTO jobs.workers (worker_id, hostname, pid, queues, version, started_at, last_heartbeat_at)
SELECT 'worker-' || q || '-' || n, 'worker-' || q || '-' || substr(md5(q || n), 1, 10) || '-' || substr(md5(n || q), 1, 5),
       1, ARRAY[q], CASE WHEN n = 3 THEN '2024.11.2' ELSE '2024.12.0' END,
       now() - make_interval(hours => 2 + n * 5), now() - make_interval(secs => n * 3)
FROM unnest(ARRAY['emails', 'webhooks', 'search_reindex', 'label_printing']) q, generate_series(0, 3) n;

INSERT INTO jobs.maintenance_windows (starts_at, ends_at, reason, paused_jobs, created_by)
SELECT date_trunc('day', now()) - make_interval(days => 7 * k) + interval '2 hours',
       date_trunc('day', now()) - make_interval(days => 7 * k) + interval '3 hours',
       (ARRAY['PostgreSQL minor upgrade (failover)', 'Storage expansion', 'Network maintenance (provider)', 'Certificate rotation'])[1 + k % 4],
       CASE WHEN k % 2 = 0 THEN '{}'::text[] ELSE '{analytics.dims_nightly,analytics.dbt_nightly}'::text[] END,
       (ARRAY['dba:ohanlon', 'dba:pmeyer', 'sre:akim'])[1 + k % 3]
FROM generate_series(1, 15) k
UNION ALL
SELECT date_trunc('day', now()) + interval '6 days 2 hours', date_trunc('day', now()) + interval '6 days 3 hours 30 minutes',
       'PostgreSQL minor upgrade (failover)', '{}', 'dba:ohanlon';

ALTER TABLE jobs.job_definitions ENABLE TRIGGER USER;
