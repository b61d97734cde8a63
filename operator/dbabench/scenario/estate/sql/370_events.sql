-- Events data: 24 months of audit history, the last week of outbox traffic (older rows are
-- purged), 30 days of inbox and webhook deliveries, CDC change streams, consumer offsets.
-- u(g, k) means (hashint8extended(g, k) & 2147483647)::float8 / 2147483647.

-- Ids continue from the history that retention already purged.
ALTER TABLE events.audit_log ALTER COLUMN id RESTART WITH 212000000;
ALTER TABLE events.outbox ALTER COLUMN id RESTART WITH 183000000;
ALTER TABLE events.webhook_deliveries ALTER COLUMN id RESTART WITH 26000000;
ALTER TABLE events.webhook_attempts ALTER COLUMN id RESTART WITH 31000000;
ALTER TABLE events.dead_letters ALTER COLUMN id RESTART WITH 4100;

ALTER TABLE events.outbox DISABLE TRIGGER USER;
ALTER TABLE events.webhook_endpoints DISABLE TRIGGER USER;

INSERT INTO events.event_types (name, schema_version, json_schema, owner_team, is_public, description, deprecated_at, created_at)
SELECT v.name, v.ver,
       jsonb_build_object('$schema', 'https://json-schema.org/draft/2020-12/schema', 'type', 'object',
                          'required', to_jsonb(v.req), 'additionalProperties', true),
       v.team, v.pub, v.descr, v.dep, now() - make_interval(days => v.age)
FROM (VALUES
    ('checkout.order_created', 2, '{order_id,merchant_id,sku,qty}'::text[], 'checkout', true, 'An order was placed.', NULL::timestamptz, 1700),
    ('checkout.order_cancelled', 1, '{order_id,merchant_id}', 'checkout', true, 'An order was cancelled before shipping.', NULL, 1650),
    ('payments.payment_captured', 3, '{payment_id,order_id,merchant_id,amount_cents,currency}', 'payments', true, 'Funds captured for an order.', NULL, 1600),
    ('payments.payment_failed', 1, '{payment_id,order_id,merchant_id,decline_code}', 'payments', false, 'An attempt was declined.', NULL, 1600),
    ('payments.refund_succeeded', 2, '{refund_id,payment_id,merchant_id,amount_cents}', 'payments', true, 'A refund reached the buyer''s method.', NULL, 1500),
    ('payments.dispute_opened', 1, '{dispute_id,payment_id,merchant_id,reason}', 'payments', true, 'The issuer opened a chargeback dispute.', NULL, 1400),
    ('payments.payout_paid', 2, '{payout_id,merchant_id,amount_cents,currency}', 'payments', true, 'A payout left the bank.', NULL, 1380),
    ('payments.ledger_posted', 1, '{entry_id}', 'payments', false, 'A journal entry was posted.', NULL, 1200),
    ('identity.user_signed_up', 1, '{user_id,tenant_id}', 'identity', false, 'A user completed sign-up.', NULL, 1680),
    ('identity.api_key_created', 1, '{api_key_id,tenant_id}', 'identity', true, 'A merchant created an API key.', NULL, 1100),
    ('identity.password_changed', 1, '{user_id}', 'identity', false, 'Triggers the security e-mail.', NULL, 1100),
    ('catalog.product_status_changed', 2, '{product_id,merchant_id,status}', 'catalog', true, 'A product was published, suspended or archived.', NULL, 1550),
    ('catalog.price_changed', 1, '{sku,price_cents}', 'pricing', false, 'The pricing engine changed a price.', NULL, 1500),
    ('catalog.product_updated', 1, '{product_id}', 'catalog', false, 'Superseded by catalog.product_status_changed and search reindexing.', now() - interval '500 days', 1600),
    ('fulfilment.shipment_status_changed', 2, '{shipment_id,order_id,merchant_id,status}', 'fulfilment', true, 'A shipment moved to a new status.', NULL, 1500),
    ('fulfilment.return_updated', 1, '{return_id,order_id,status}', 'fulfilment', true, 'A return was requested or progressed.', NULL, 1450),
    ('fulfilment.stock_low', 1, '{sku,warehouse_id,available}', 'fulfilment', true, 'Available stock fell below the reorder point.', NULL, 900),
    ('fulfilment.carrier_scan', 1, '{parcel_id,event_code}', 'fulfilment', false, 'Raw carrier scan (inbox only).', NULL, 1400),
    ('jobs.export_ready', 1, '{export_id,merchant_id,url}', 'platform', true, 'A requested report export is ready to download.', NULL, 800)
) AS v(name, ver, req, team, pub, descr, dep, age);

-- Row-change audit. Volume follows the business; about 1 in 6 rows is a support agent's
-- correction. Three rows stamped 1970 by a host with a dead RTC sit in the default partition.
INSERT INTO events.audit_log (occurred_at, schema_name, table_name, op, row_pk, actor, app_user_id, txid, changed, client_addr, application_name)
SELECT a.at, a.sch, a.tbl, a.op, a.pk, a.actor,
       CASE WHEN a.actor IN ('support_console', 'catalog_api') THEN 1 + (hashint8(a.g * 3) & 2147483647) % 250000 END,
       61000000 + a.g * 37,
       a.changed,
       ('10.20.' || (a.h % 8) || '.' || (10 + a.h % 200))::inet,
       a.app
FROM (
    SELECT g, h, t.at, t.sch, t.tbl, t.op, t.pk, t.actor, t.app,
           CASE WHEN t.op = 'U' THEN
                CASE t.tbl
                    WHEN 'products' THEN CASE h % 4
                        WHEN 0 THEN jsonb_build_object('status', jsonb_build_array('active', 'suspended'))
                        WHEN 1 THEN jsonb_build_object('title', jsonb_build_array('Untitled product', 'Product ' || t.pk))
                        WHEN 2 THEN jsonb_build_object('tags', jsonb_build_array('{}'::text[], '{sale}'::text[]))
                        ELSE jsonb_build_object('status', jsonb_build_array('draft', 'active'), 'published_at', jsonb_build_array(NULL::text, t.at)) END
                    WHEN 'returns' THEN jsonb_build_object('status', jsonb_build_array('requested', (ARRAY['approved', 'received', 'refunded', 'rejected'])[1 + h % 4]))
                    WHEN 'webhook_endpoints' THEN jsonb_build_object('is_active', jsonb_build_array(true, false), 'disabled_reason', jsonb_build_array(NULL::text, 'consecutive failures'))
                    WHEN 'job_definitions' THEN jsonb_build_object('enabled', jsonb_build_array(true, false), 'paused_reason', jsonb_build_array(NULL::text, 'INC-' || (2000 + h)))
                    WHEN 'carrier_accounts' THEN jsonb_build_object('account_number', '***')
                    ELSE jsonb_build_object('capacity_units', jsonb_build_array(60000, 70000)) END
                WHEN t.op = 'I' THEN jsonb_build_object('id', t.pk::bigint, 'created_at', t.at)
                ELSE jsonb_build_object('id', t.pk::bigint) END AS changed
    FROM (
        SELECT g, (hashint8(g) & 1023) AS h,
               CASE WHEN g <= 3 THEN timestamptz '1970-01-01 00:00:00+00' + make_interval(secs => g * 17)
                    ELSE date_trunc('month', now()) - interval '22 months'
                         + (now() - (date_trunc('month', now()) - interval '22 months'))
                           * ((sqrt(1 + 8 * g::float8 / (3000 * :volume)) - 1) / 2) END AS at
        FROM generate_series(1, 3000 * :volume) g
    ) x
    CROSS JOIN LATERAL (
        SELECT x.at,
               CASE WHEN x.h < 700 THEN 'catalog' WHEN x.h < 860 THEN 'fulfilment' WHEN x.h < 960 THEN 'events' WHEN x.h < 1000 THEN 'jobs'
                    WHEN x.h < 1012 THEN 'fulfilment' ELSE 'catalog' END AS sch,
               CASE WHEN x.h < 700 THEN 'products' WHEN x.h < 860 THEN 'returns' WHEN x.h < 960 THEN 'webhook_endpoints'
                    WHEN x.h < 1000 THEN 'job_definitions' WHEN x.h < 1008 THEN 'carrier_accounts' WHEN x.h < 1012 THEN 'warehouses'
                    ELSE 'categories' END AS tbl,
               CASE WHEN x.h % 10 < 2 THEN 'I' WHEN x.h % 97 = 0 THEN 'D' ELSE 'U' END AS op,
               CASE WHEN x.h < 700 THEN (1 + (hashint8(g * 7) & 2147483647) % 1200)::text
                    WHEN x.h < 860 THEN (1 + (hashint8(g * 7) & 2147483647) % 9000)::text
                    WHEN x.h < 960 THEN (1 + (hashint8(g * 7) & 2147483647) % 150)::text
                    ELSE (1 + (hashint8(g * 7) & 2147483647) % 40)::text END AS pk,
               CASE WHEN x.h % 6 = 0 THEN 'support_console'
                    WHEN x.h < 700 THEN 'catalog_api' WHEN x.h < 860 THEN 'fulfilment_api' WHEN x.h < 960 THEN 'notifier'
                    WHEN x.h < 1000 THEN 'flyway' ELSE 'postgres' END AS actor,
               CASE WHEN x.h % 6 = 0 THEN 'support-console' WHEN x.h < 700 THEN 'catalog-api' WHEN x.h < 860 THEN 'fulfilment-api'
                    WHEN x.h < 960 THEN 'notifier' WHEN x.h < 1000 THEN 'Flyway 9.22.3' ELSE 'psql' END AS app
    ) t
) a;

INSERT INTO events.outbox (aggregate_type, aggregate_id, event_type, payload, headers, created_at, published_at, attempts, last_error)
SELECT e.agg, e.agg_id, e.event_type, e.payload,
       jsonb_build_object('txid', 98000000 + g * 3, 'producer', e.producer, 'trace_id', md5('trace:' || g)),
       e.at,
       CASE WHEN e.at > now() - interval '4 seconds' THEN NULL
            WHEN g % 5000 = 17 THEN NULL
            ELSE e.at + make_interval(secs => 0.05 + (g % 7) * 0.1) END,
       CASE WHEN g % 5000 = 17 THEN 9 WHEN e.at > now() - interval '4 seconds' THEN 0 ELSE 1 END,
       CASE WHEN g % 5000 = 17 THEN 'message too large: 1183204 bytes > max.message.bytes 1048576' END
FROM (
    SELECT g, x.at, x.h, t.event_type, t.agg, t.producer, 1 + floor(100 * x.u ^ 2.2)::int AS merchant_id,
           (100000 + (hashint8(g * 3) & 2147483647) % 900000)::text AS agg_id,
           jsonb_build_object('merchant_id', 1 + floor(100 * x.u ^ 2.2)::int, 'id', 100000 + (hashint8(g * 3) & 2147483647) % 900000,
                              'occurred_at', x.at) AS payload
    FROM (
        SELECT g, (hashint8(g) & 1023) AS h,
               now() - interval '7 days' * (1 - g::float8 / (1000 * :volume)) AS at,
               (hashint8extended(g, 101) & 2147483647)::float8 / 2147483647 AS u
        FROM generate_series(1, 1000 * :volume) g
    ) x
    CROSS JOIN LATERAL (
        SELECT CASE WHEN x.h < 300 THEN 'checkout.order_created' WHEN x.h < 560 THEN 'payments.payment_captured'
                    WHEN x.h < 600 THEN 'payments.payment_failed' WHEN x.h < 860 THEN 'fulfilment.shipment_status_changed'
                    WHEN x.h < 880 THEN 'payments.refund_succeeded' WHEN x.h < 890 THEN 'fulfilment.return_updated'
                    WHEN x.h < 940 THEN 'payments.ledger_posted' WHEN x.h < 960 THEN 'catalog.price_changed'
                    WHEN x.h < 975 THEN 'catalog.product_status_changed' WHEN x.h < 985 THEN 'identity.user_signed_up'
                    WHEN x.h < 990 THEN 'payments.payout_paid' WHEN x.h < 995 THEN 'fulfilment.stock_low'
                    WHEN x.h < 998 THEN 'payments.dispute_opened' ELSE 'jobs.export_ready' END AS event_type,
               CASE WHEN x.h < 300 THEN 'order' WHEN x.h < 600 THEN 'payment' WHEN x.h < 860 THEN 'shipment'
                    WHEN x.h < 880 THEN 'refund' WHEN x.h < 890 THEN 'return' WHEN x.h < 940 THEN 'journal_entry'
                    WHEN x.h < 960 THEN 'sku' WHEN x.h < 975 THEN 'product' WHEN x.h < 985 THEN 'user'
                    WHEN x.h < 990 THEN 'payout' WHEN x.h < 995 THEN 'stock_level' WHEN x.h < 998 THEN 'dispute' ELSE 'export' END AS agg,
               CASE WHEN x.h < 300 THEN 'queue_worker' WHEN x.h < 600 THEN 'payments_api' WHEN x.h < 860 THEN 'fulfilment_api'
                    WHEN x.h < 880 THEN 'payments_api' WHEN x.h < 890 THEN 'fulfilment_api' WHEN x.h < 940 THEN 'ledger_writer'
                    WHEN x.h < 960 THEN 'pricing_engine' WHEN x.h < 975 THEN 'catalog_api' WHEN x.h < 985 THEN 'identity_api'
                    WHEN x.h < 990 THEN 'payments_api' WHEN x.h < 995 THEN 'fulfilment_api' WHEN x.h < 998 THEN 'payments_api' ELSE 'queue_worker' END AS producer
    ) t
) e;

INSERT INTO events.inbox (message_id, source, event_type, payload, received_at, processed_at, handler, attempts, error)
SELECT md5('inbox:' || g)::uuid, s.source, s.event_type,
       jsonb_build_object('id', s.source || '_' || substr(md5('evt' || g), 1, 20), 'type', s.event_type),
       x.at,
       CASE WHEN g % 997 = 5 THEN NULL WHEN x.at > now() - interval '3 seconds' THEN NULL ELSE x.at + make_interval(secs => 0.2 + (g % 5) * 0.3) END,
       s.handler,
       CASE WHEN g % 997 = 5 THEN 6 WHEN g % 61 = 0 THEN 2 ELSE 1 END,
       CASE WHEN g % 997 = 5 THEN 'handler raised: shipment not found for parcel' END
FROM (
    SELECT g, (hashint8(g) & 1023) AS h, now() - interval '30 days' * (1 - g::float8 / (600 * :volume)) AS at
    FROM generate_series(1, 600 * :volume) g
) x
CROSS JOIN LATERAL (
    SELECT CASE WHEN x.h < 450 THEN 'carrier:dhl' WHEN x.h < 600 THEN 'carrier:ups' WHEN x.h < 650 THEN 'carrier:postnl'
                WHEN x.h < 900 THEN 'psp:adyen' WHEN x.h < 1000 THEN 'psp:paypal' ELSE 'bus:identity' END AS source,
           CASE WHEN x.h < 650 THEN 'fulfilment.carrier_scan' WHEN x.h < 1000 THEN 'payments.payment_captured' ELSE 'identity.user_signed_up' END AS event_type,
           CASE WHEN x.h < 650 THEN 'fulfilment.tracking_ingest' WHEN x.h < 1000 THEN 'payments.provider_notification' ELSE 'notifier.welcome_email' END AS handler
) s;

INSERT INTO events.consumer_offsets (consumer_group, topic, partition_no, committed_offset, updated_at)
SELECT c.grp, c.topic, p, c.base + (hashint8(p * 31 + c.base::int) & 1048575) * 3, now() - make_interval(secs => (p % 5) + 1)
FROM (VALUES ('fulfilment-tracking', 'carrier.scans', 5000000::bigint, 12), ('payments-notifications', 'psp.notifications', 91000000, 6),
             ('notifier-emails', 'identity.events', 2200000, 6), ('search-indexer', 'catalog.events', 8800000, 3),
             ('warehouse-cdc', 'erp.changes', 340000, 3)) AS c(grp, topic, base, parts)
CROSS JOIN LATERAL generate_series(0, c.parts - 1) p;

INSERT INTO events.dead_letters (source, message_id, event_type, payload, error, failed_at, replayed_at, replayed_by)
SELECT (ARRAY['outbox', 'inbox', 'webhook', 'cdc'])[1 + g % 4], md5('dl:' || g),
       (ARRAY['payments.payment_captured', 'fulfilment.carrier_scan', 'fulfilment.shipment_status_changed', NULL])[1 + g % 4],
       jsonb_build_object('attempts', 6 + g % 6),
       (ARRAY['message too large', 'handler raised: shipment not found for parcel', 'endpoint returned 410 Gone', 'unknown column in source: po_line_ref2'])[1 + g % 4],
       now() - interval '60 days' * ((hashint8extended(g, 111) & 2147483647)::float8 / 2147483647),
       CASE WHEN g % 3 = 0 THEN now() - interval '1 day' * (g % 20) END,
       CASE WHEN g % 3 = 0 THEN (ARRAY['oncall:mkraus', 'oncall:sfernandes', 'oncall:tleroy'])[1 + g % 3] END
FROM generate_series(1, 20 * :volume) g;
UPDATE events.dead_letters SET replayed_at = greatest(replayed_at, failed_at + interval '2 hours') WHERE replayed_at IS NOT NULL;

INSERT INTO events.debezium_heartbeat (id, last_beat_at) VALUES (1, now() - interval '4 seconds');

-- CDC from the ERP (SQL Server LSNs) and the CRM.
INSERT INTO events.cdc_erp_purchase_orders (source_lsn, source_seq, op, po_number, before, after, source_ts, ingested_at, applied_at)
SELECT upper(lpad(to_hex(40000 + g / 3), 8, '0') || ':' || lpad(to_hex((hashint8(g) & 65535)), 8, '0') || ':' || lpad(to_hex(g % 3 + 1), 4, '0')),
       0, x.op, 'PO-' || (230000 + g / 4),
       CASE WHEN x.op IN ('u', 'd') THEN jsonb_build_object('po_number', 'PO-' || (230000 + g / 4), 'status', 'open', 'lines', 1 + g % 9) END,
       CASE WHEN x.op <> 'd' THEN jsonb_build_object('po_number', 'PO-' || (230000 + g / 4),
                                                   'status', CASE x.op WHEN 'c' THEN 'open' ELSE (ARRAY['confirmed', 'shipped', 'received'])[1 + g % 3] END,
                                                   'supplier', 'SUP-' || (100 + g % 80), 'warehouse', (ARRAY['BER1', 'LEJ1', 'WAW1', 'PRG1', 'LYS1'])[1 + g % 5],
                                                   'lines', 1 + g % 9) END,
       x.at, x.at + interval '2 seconds',
       CASE WHEN x.at < now() - interval '5 minutes' THEN x.at + interval '30 seconds' END
FROM (
    SELECT g, CASE WHEN g % 4 = 0 THEN 'c' WHEN g % 53 = 0 THEN 'd' ELSE 'u' END AS op,
           now() - interval '400 days' * (1 - g::float8 / (600 * :volume)) AS at
    FROM generate_series(1, 600 * :volume) g
) x;

INSERT INTO events.cdc_erp_stock_counts (source_lsn, source_seq, op, warehouse_code, sku_id, counted_qty, before, after, source_ts, ingested_at, applied_at)
SELECT upper(lpad(to_hex(52000 + g / 5), 8, '0') || ':' || lpad(to_hex((hashint8(g * 7) & 65535)), 8, '0') || ':' || lpad(to_hex(g % 5 + 1), 4, '0')),
       0, 'c', (ARRAY['AMS1', 'PAR1', 'MAD1', 'MIL1', 'LHR1', 'VIE1', 'CPH1'])[1 + g % 7], 1 + (hashint8(g) & 2147483647) % 2000,
       (hashint8(g * 3) & 255),
       NULL, jsonb_build_object('counted_qty', (hashint8(g * 3) & 255), 'counted_by', '3pl-wms', 'count_type', CASE WHEN g % 10 = 0 THEN 'full' ELSE 'cycle' END),
       x.at, x.at + interval '3 seconds',
       CASE WHEN g % 211 = 0 THEN NULL ELSE x.at + interval '1 minute' END
FROM (SELECT g, now() - interval '180 days' * (1 - g::float8 / (600 * :volume)) AS at FROM generate_series(1, 600 * :volume) g) x;

INSERT INTO events.cdc_crm_accounts (source_lsn, source_seq, op, crm_account_id, merchant_id, before, after, source_ts, ingested_at)
SELECT lpad(to_hex(1000 + n), 8, '0') || '/' || lpad(to_hex(n * 977 % 65536), 8, '0'), 0, v.op, '001' || lpad(v.m::text, 12, '0') || 'AAA', v.m,
       CASE WHEN v.op = 'u' THEN jsonb_build_object('owner', 'am-' || (1 + v.m % 7), 'tier', 'standard') END,
       jsonb_build_object('owner', 'am-' || (1 + (v.m + v.k) % 7), 'tier', CASE WHEN v.m <= 5 THEN 'enterprise' WHEN v.m <= 20 THEN 'growth' ELSE 'standard' END,
                          'name', 'merchant-' || v.m),
       v.at, v.at + interval '5 seconds'
FROM (
    SELECT row_number() OVER (ORDER BY at) AS n, *
    FROM (
        SELECT m, 0 AS k, 'r' AS op, now() - interval '400 days' AS at FROM generate_series(1, 100) m
        UNION ALL
        SELECT 1 + (k * 37) % 101, k, 'u', now() - interval '399 days' + interval '1 day' * (k * 399.0 / 300) FROM generate_series(1, 300) k
    ) s
) v;

-- Merchant webhooks: about 60 % of merchants have one to three endpoints.
INSERT INTO events.webhook_endpoints (id, merchant_id, url, event_types, secret_name, api_version, is_active, consecutive_failures,
                                      disabled_at, disabled_reason, contact_email, created_at, updated_at)
SELECT 100 * m + k, m,
       'https://' || (ARRAY['hooks', 'api', 'integrations', 'erp'])[1 + k] || '.merchant-' || m || '.example.com/marketplace/' || (ARRAY['events', 'orders', 'shipping', 'sync'])[1 + k],
       CASE k WHEN 0 THEN '{checkout.order_created,payments.payment_captured,payments.refund_succeeded}'::text[]
              WHEN 1 THEN '{fulfilment.shipment_status_changed,fulfilment.return_updated}'::text[]
              WHEN 2 THEN '{payments.payout_paid,payments.dispute_opened}'::text[]
              ELSE '{catalog.product_status_changed,fulfilment.stock_low}'::text[] END,
       'events/webhooks/merchant-' || m || '/' || k,
       (ARRAY['2021-06-01', '2022-09-15', '2023-10-01', '2023-10-01'])[1 + (hashint8(m * 10 + k) & 3)],
       NOT (m % 17 = 3 AND k = 1),
       CASE WHEN m % 17 = 3 AND k = 1 THEN 412 WHEN m % 23 = 4 THEN 3 ELSE 0 END,
       CASE WHEN m % 17 = 3 AND k = 1 THEN now() - interval '20 days' END,
       CASE WHEN m % 17 = 3 AND k = 1 THEN 'auto-disabled: failing for 5 days (last status 503)' END,
       'dev+' || m || '@merchant-' || m || '.example.com',
       now() - make_interval(days => 1700 - 17 * m) + make_interval(days => 30 * k),
       now() - make_interval(days => (m * 13 + k) % 300)
FROM generate_series(1, 101) m, generate_series(0, 3) k
WHERE (hashint8(m * 5) & 1023) < 620 AND k < 1 + (hashint8(m * 9) & 1023) % 3;

-- Deliveries of the last 30 days, skewed to the big merchants' endpoints.
INSERT INTO events.webhook_deliveries (endpoint_id, outbox_id, event_type, payload_sha256, status, attempt_count, next_attempt_at,
                                       last_status_code, created_at, delivered_at)
WITH ep AS (
    SELECT id, event_types, is_active, disabled_at, row_number() OVER (ORDER BY id) AS rn FROM events.webhook_endpoints
)
SELECT e.id, 180000000 + x.g, e.event_types[1 + (x.h % cardinality(e.event_types))],
       sha256(convert_to('delivery:' || x.g, 'UTF8')),
       x.status::events.delivery_status,
       CASE x.status WHEN 'delivered' THEN CASE WHEN x.h % 19 = 0 THEN 2 ELSE 1 END WHEN 'failed' THEN 1 + x.h % 5 WHEN 'abandoned' THEN 12 ELSE 0 END,
       CASE WHEN x.status IN ('pending', 'failed') THEN now() + make_interval(secs => (x.h % 600)::int) END,
       CASE x.status WHEN 'delivered' THEN 200 WHEN 'failed' THEN (ARRAY[500, 502, 503, 504, 404])[1 + x.h % 5] WHEN 'abandoned' THEN 503 END,
       x.at,
       CASE WHEN x.status = 'delivered' THEN x.at + make_interval(secs => 0.3 + (x.h % 10) * 0.1 + CASE WHEN x.h % 19 = 0 THEN 30 ELSE 0 END) END
FROM (
    SELECT g, (hashint8(g) & 1023) AS h,
           now() - interval '30 days' * (1 - g::float8 / (1600 * :volume)) AS at,
           1 + floor(0.9999 * (SELECT count(*) FROM events.webhook_endpoints)
                     * ((hashint8extended(g, 121) & 2147483647)::float8 / 2147483647) ^ 2)::bigint AS pick,
           CASE WHEN g > 1600 * :volume - 3 THEN 'pending' WHEN (hashint8(g) & 1023) < 1000 THEN 'delivered'
                WHEN (hashint8(g) & 1023) < 1015 THEN 'failed' ELSE 'abandoned' END AS status
    FROM generate_series(1, 1600 * :volume) g
) x
JOIN ep e ON e.rn = x.pick
WHERE e.is_active OR x.at < e.disabled_at;

INSERT INTO events.webhook_attempts (delivery_id, attempt_no, attempted_at, status_code, duration_ms, error, response_excerpt)
SELECT d.id, a, d.created_at + make_interval(secs => CASE WHEN a = 1 THEN 0.2 ELSE 30 * power(2, a - 2) END),
       CASE WHEN a < d.attempt_count OR d.status <> 'delivered' THEN (ARRAY[500, 502, 503, 504, NULL])[1 + (d.id % 5)::int] ELSE 200 END,
       40 + (hashint8(d.id * 10 + a) & 511),
       CASE WHEN (a < d.attempt_count OR d.status <> 'delivered') AND d.id % 5 = 4 THEN 'timeout after 10000 ms' END,
       CASE WHEN a = d.attempt_count AND d.status = 'delivered' THEN '{"received": true}' END
FROM events.webhook_deliveries d
CROSS JOIN LATERAL generate_series(1, d.attempt_count) a;

ALTER TABLE events.outbox ENABLE TRIGGER USER;
ALTER TABLE events.webhook_endpoints ENABLE TRIGGER USER;
