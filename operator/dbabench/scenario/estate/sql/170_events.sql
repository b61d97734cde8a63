-- Events: the row-change audit log (monthly partitions, 24 plus a default), the transactional
-- outbox and the idempotent inbox, CDC-fed tables from systems outside this database,
-- merchant webhooks and their deliveries. Owned by postgres.

CREATE TYPE events.delivery_status AS ENUM ('pending', 'delivering', 'delivered', 'failed', 'abandoned');
COMMENT ON TYPE events.delivery_status IS 'Webhook delivery state: failed is retried with backoff, abandoned after 12 attempts or 72 hours.';

CREATE TABLE events.audit_log (
    id               bigint GENERATED ALWAYS AS IDENTITY,
    occurred_at      timestamptz NOT NULL DEFAULT now(),
    schema_name      text NOT NULL,
    table_name       text NOT NULL,
    op               char(1) NOT NULL CHECK (op IN ('I', 'U', 'D')),
    row_pk           text NOT NULL,
    actor            text NOT NULL DEFAULT current_user,
    app_user_id      bigint,
    txid             bigint NOT NULL DEFAULT txid_current(),
    changed          jsonb,
    client_addr      inet,
    application_name text,
    PRIMARY KEY (id, occurred_at)
) PARTITION BY RANGE (occurred_at);
COMMENT ON TABLE events.audit_log IS
    'Row changes of audited tables (trigger events.audit_row_change). Kept 24 months for SOX; older partitions are detached and archived.';
COMMENT ON COLUMN events.audit_log.changed IS 'For U: the changed columns as {"col": [old, new]}; for I/D the whole row. Secrets and PII columns are masked by the trigger.';
COMMENT ON COLUMN events.audit_log.app_user_id IS 'End user behind the service call, from the app.user_id setting the services set per transaction.';

DO $$
DECLARE
    first_month timestamp := date_trunc('month', now() AT TIME ZONE 'UTC') - interval '22 months';
    m timestamp;
BEGIN
    FOR i IN 0..23 LOOP
        m := first_month + make_interval(months => i);
        EXECUTE format('CREATE TABLE events.%I PARTITION OF events.audit_log FOR VALUES FROM (%L) TO (%L)',
                       'audit_log_p' || to_char(m, 'YYYY_MM'),
                       m AT TIME ZONE 'UTC', (m + interval '1 month') AT TIME ZONE 'UTC');
    END LOOP;
END
$$;
CREATE TABLE events.audit_log_default PARTITION OF events.audit_log DEFAULT;
COMMENT ON TABLE events.audit_log_default IS 'Audit rows outside the monthly partitions (clock-skewed writers). Checked weekly, should stay near empty.';

CREATE TABLE events.event_types (
    name           text PRIMARY KEY CHECK (name ~ '^[a-z_]+\.[a-z_]+(\.v[0-9]+)?$'),
    schema_version smallint NOT NULL DEFAULT 1,
    json_schema    jsonb NOT NULL,
    owner_team     text NOT NULL,
    is_public      boolean NOT NULL DEFAULT false,
    description    text,
    deprecated_at  timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE events.event_types IS 'Registry of domain event types; public ones may be subscribed to by merchant webhooks.';

CREATE TABLE events.outbox (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    aggregate_type text NOT NULL,
    aggregate_id   text NOT NULL,
    event_type     text NOT NULL REFERENCES events.event_types (name),
    payload        jsonb NOT NULL,
    headers        jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at     timestamptz NOT NULL DEFAULT now(),
    published_at   timestamptz,
    attempts       smallint NOT NULL DEFAULT 0,
    last_error     text
);
COMMENT ON TABLE events.outbox IS
    'Transactional outbox: written in the same transaction as the change, relayed to the bus by outbox_relay (oldest unpublished first), purged 7 days after publishing.';
COMMENT ON COLUMN events.outbox.event_type IS 'Foreign key kept deliberately: an unregistered event type must fail the writer''s transaction, not the relay. Not indexed: event types are deprecated, never deleted.';
COMMENT ON COLUMN events.outbox.aggregate_id IS 'Text: aggregates are keyed by bigint, uuid or natural keys depending on the domain.';

CREATE TABLE events.inbox (
    message_id   uuid PRIMARY KEY,
    source       text NOT NULL,
    event_type   text NOT NULL,
    payload      jsonb NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    processed_at timestamptz,
    handler      text NOT NULL,
    attempts     smallint NOT NULL DEFAULT 0,
    error        text
);
COMMENT ON TABLE events.inbox IS
    'Idempotent consumer inbox: messages from the bus and from carriers and payment providers, deduplicated by message_id (ON CONFLICT DO NOTHING). 30 days kept.';

CREATE TABLE events.consumer_offsets (
    consumer_group text NOT NULL,
    topic          text NOT NULL,
    partition_no   integer NOT NULL CHECK (partition_no >= 0),
    committed_offset bigint NOT NULL CHECK (committed_offset >= 0),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic, partition_no)
);
COMMENT ON TABLE events.consumer_offsets IS 'Offsets committed in the database together with the inbox write (exactly-once for the handlers that need it).';

CREATE TABLE events.dead_letters (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source      text NOT NULL CHECK (source IN ('outbox', 'inbox', 'webhook', 'cdc')),
    message_id  text NOT NULL,
    event_type  text,
    payload     jsonb,
    error       text NOT NULL,
    failed_at   timestamptz NOT NULL DEFAULT now(),
    replayed_at timestamptz,
    replayed_by text
);
COMMENT ON TABLE events.dead_letters IS 'Messages given up on, for on-call to inspect and replay.';

-- Debezium heartbeat: the connector updates this row every 10 s (heartbeat.action.query) so the
-- replication slot's confirmed LSN advances even when no captured table changes.
CREATE TABLE events.debezium_heartbeat (
    id          smallint PRIMARY KEY CHECK (id = 1),
    last_beat_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE events.debezium_heartbeat IS 'Single row updated by the debezium connector every 10 seconds to keep its slot advancing.';

-- CDC-fed tables: change streams of systems outside this database (the ERP and the CRM),
-- landed here by a sink connector, consumed by fulfilment (purchase orders, stock counts) and
-- identity (merchant accounts). Keyed by the source log position.
CREATE TABLE events.cdc_erp_purchase_orders (
    source_lsn     text NOT NULL,
    source_seq     integer NOT NULL DEFAULT 0,
    op             char(1) NOT NULL CHECK (op IN ('c', 'u', 'd', 'r')),
    po_number      text NOT NULL,
    before         jsonb,
    after          jsonb,
    source_ts      timestamptz NOT NULL,
    ingested_at    timestamptz NOT NULL DEFAULT now(),
    applied_at     timestamptz,
    PRIMARY KEY (source_lsn, source_seq),
    CHECK (op = 'd' OR after IS NOT NULL)
);
COMMENT ON TABLE events.cdc_erp_purchase_orders IS 'Purchase orders from the ERP (SQL Server CDC via the sink connector); applied to fulfilment receipts.';

CREATE TABLE events.cdc_erp_stock_counts (
    source_lsn     text NOT NULL,
    source_seq     integer NOT NULL DEFAULT 0,
    op             char(1) NOT NULL CHECK (op IN ('c', 'u', 'd', 'r')),
    warehouse_code text NOT NULL,
    sku_id         integer NOT NULL,
    counted_qty    integer,
    before         jsonb,
    after          jsonb,
    source_ts      timestamptz NOT NULL,
    ingested_at    timestamptz NOT NULL DEFAULT now(),
    applied_at     timestamptz,
    PRIMARY KEY (source_lsn, source_seq)
);
COMMENT ON TABLE events.cdc_erp_stock_counts IS '3PL cycle counts as the ERP records them; reconciled into fulfilment.stock_levels.';

CREATE TABLE events.cdc_crm_accounts (
    source_lsn     text NOT NULL,
    source_seq     integer NOT NULL DEFAULT 0,
    op             char(1) NOT NULL CHECK (op IN ('c', 'u', 'd', 'r')),
    crm_account_id text NOT NULL,
    merchant_id    integer,
    before         jsonb,
    after          jsonb,
    source_ts      timestamptz NOT NULL,
    ingested_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_lsn, source_seq)
);
COMMENT ON TABLE events.cdc_crm_accounts IS 'Merchant account changes from the CRM (account manager, tier); read by the nightly dimension load.';

CREATE TABLE events.webhook_endpoints (
    id            bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    merchant_id   integer NOT NULL REFERENCES public.merchants (id),
    url           text NOT NULL CHECK (url ~ '^https://'),
    event_types   text[] NOT NULL CHECK (cardinality(event_types) > 0),
    secret_name   text NOT NULL,
    api_version   text NOT NULL DEFAULT '2023-10-01',
    is_active     boolean NOT NULL DEFAULT true,
    consecutive_failures integer NOT NULL DEFAULT 0,
    disabled_at   timestamptz,
    disabled_reason text,
    contact_email citext,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (is_active OR disabled_at IS NOT NULL)
);
COMMENT ON TABLE events.webhook_endpoints IS 'Merchant webhook subscriptions; disabled automatically after 5 days of consecutive failures.';
COMMENT ON COLUMN events.webhook_endpoints.secret_name IS 'Signing secret''s name in the secrets manager (HMAC-SHA256); the secret itself is not stored here.';

CREATE TABLE events.webhook_deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id     bigint NOT NULL REFERENCES events.webhook_endpoints (id),
    outbox_id       bigint,
    event_type      text NOT NULL,
    payload_sha256  bytea NOT NULL,
    status          events.delivery_status NOT NULL DEFAULT 'pending',
    attempt_count   smallint NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_status_code smallint,
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    CHECK (status <> 'delivered' OR delivered_at IS NOT NULL)
);
COMMENT ON TABLE events.webhook_deliveries IS 'One row per event and endpoint; notifier claims due rows (status, next_attempt_at). 30 days kept.';
COMMENT ON COLUMN events.webhook_deliveries.outbox_id IS 'The outbox event delivered. No foreign key: outbox rows are purged after 7 days, deliveries kept 30.';

CREATE TABLE events.webhook_attempts (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id   bigint NOT NULL REFERENCES events.webhook_deliveries (id) ON DELETE CASCADE,
    attempt_no    smallint NOT NULL,
    attempted_at  timestamptz NOT NULL,
    status_code   smallint,
    duration_ms   integer NOT NULL,
    error         text,
    response_excerpt text CHECK (length(response_excerpt) <= 512),
    UNIQUE (delivery_id, attempt_no)
);
COMMENT ON TABLE events.webhook_attempts IS 'Each HTTP attempt of a delivery (shown to merchants in the developer dashboard).';
