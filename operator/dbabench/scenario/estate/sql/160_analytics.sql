-- Analytics: the in-database warehouse. A star schema (facts partitioned by month, 24 monthly
-- partitions plus a default, dimensions with type-2 history), hourly ETL staging tables,
-- dbt model bookkeeping and the mart tables dbt builds. Materialised views are in
-- 460_analytics.sql (built after the data).
--
-- Conventions of the data team: no foreign keys from facts to dimensions (loads are ordered
-- by the pipeline, and a foreign key check per fact row doubled the nightly load time in
-- 2022); surrogate keys on dimensions; money as bigint cents in the order's currency plus
-- an EUR amount at the day's rate.
-- Owned by warehouse_owner (handed over at the end of the file).

CREATE TABLE analytics.dim_date (
    date_key      integer PRIMARY KEY CHECK (date_key BETWEEN 19000101 AND 21001231),
    date          date NOT NULL UNIQUE,
    year          smallint NOT NULL,
    quarter       smallint NOT NULL CHECK (quarter BETWEEN 1 AND 4),
    month         smallint NOT NULL CHECK (month BETWEEN 1 AND 12),
    month_name    text NOT NULL,
    iso_year      smallint NOT NULL,
    iso_week      smallint NOT NULL,
    day_of_week   smallint NOT NULL CHECK (day_of_week BETWEEN 1 AND 7),
    day_name      text NOT NULL,
    is_weekend    boolean NOT NULL,
    is_holiday    boolean NOT NULL DEFAULT false,
    holiday_name  text,
    fiscal_year   smallint NOT NULL,
    fiscal_period text NOT NULL
);
COMMENT ON TABLE analytics.dim_date IS 'Calendar dimension 2018-2030; fiscal year starts in February (FY named by its end year).';

CREATE TABLE analytics.dim_merchant (
    merchant_key  integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    merchant_id   integer NOT NULL,
    name          text NOT NULL,
    tier          text NOT NULL CHECK (tier IN ('enterprise', 'growth', 'standard', 'starter')),
    country_code  char(2) NOT NULL,
    vertical      text NOT NULL,
    take_rate_bps smallint NOT NULL CHECK (take_rate_bps BETWEEN 0 AND 3000),
    valid_from    timestamptz NOT NULL,
    valid_to      timestamptz,
    is_current    boolean NOT NULL,
    row_hash      text NOT NULL,
    UNIQUE (merchant_id, valid_from),
    CHECK (is_current = (valid_to IS NULL))
);
COMMENT ON TABLE analytics.dim_merchant IS 'Merchants, slowly changing (type 2): a new row when tier, vertical or take rate changes.';
COMMENT ON COLUMN analytics.dim_merchant.merchant_id IS 'public.merchants.id; no foreign key (warehouse convention).';
COMMENT ON COLUMN analytics.dim_merchant.row_hash IS 'md5 of the tracked attributes; the loader compares it to detect changes.';

CREATE TABLE analytics.dim_product (
    product_key   integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sku_id        integer NOT NULL,
    product_id    bigint NOT NULL,
    merchant_id   integer NOT NULL,
    title         text NOT NULL,
    category_l1   text,
    category_l2   text,
    brand         text,
    valid_from    timestamptz NOT NULL,
    valid_to      timestamptz,
    is_current    boolean NOT NULL,
    UNIQUE (sku_id, valid_from),
    CHECK (is_current = (valid_to IS NULL))
);
COMMENT ON TABLE analytics.dim_product IS 'SKUs with their product and category, type 2 on category and brand.';

CREATE TABLE analytics.dim_customer (
    customer_key   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_hash  text NOT NULL UNIQUE CHECK (customer_hash ~ '^[0-9a-f]{64}$'),
    country_code   char(2),
    first_order_date date,
    segment        text NOT NULL DEFAULT 'new' CHECK (segment IN ('new', 'active', 'lapsed', 'vip', 'guest')),
    is_guest       boolean NOT NULL DEFAULT false,
    loaded_at      timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE analytics.dim_customer IS 'Buyers, pseudonymised: customer_hash = sha256 of the identity user id with the warehouse salt. No PII in the warehouse.';

CREATE TABLE analytics.dim_channel (
    channel_key smallint PRIMARY KEY,
    code        text NOT NULL UNIQUE,
    name        text NOT NULL,
    is_app      boolean NOT NULL DEFAULT false
);
COMMENT ON TABLE analytics.dim_channel IS 'Sales channels (web, apps, API partners, point of sale).';

CREATE TABLE analytics.dim_payment_method (
    payment_method_key smallint PRIMARY KEY,
    code        text NOT NULL UNIQUE,
    name        text NOT NULL,
    family      text NOT NULL CHECK (family IN ('card', 'wallet', 'bnpl', 'bank', 'other'))
);
COMMENT ON TABLE analytics.dim_payment_method IS 'Payment methods as the payments domain reports them.';

CREATE TABLE analytics.dim_geography (
    geo_key      smallint PRIMARY KEY,
    country_code char(2) NOT NULL UNIQUE,
    country_name text NOT NULL,
    region       text NOT NULL,
    currency     char(3) NOT NULL,
    is_eu        boolean NOT NULL
);
COMMENT ON TABLE analytics.dim_geography IS 'Buyer countries with region and local currency.';

CREATE TABLE analytics.fx_rates_daily (
    rate_date  date NOT NULL,
    currency   char(3) NOT NULL,
    eur_rate   numeric(18, 8) NOT NULL CHECK (eur_rate > 0),
    source     text NOT NULL DEFAULT 'ecb',
    PRIMARY KEY (rate_date, currency)
);
COMMENT ON TABLE analytics.fx_rates_daily IS 'Daily EUR central bank rates (units of currency per EUR); weekends carry Friday''s rate.';

-- Facts. Partitioned by month on the business date; the partitions are created below for the
-- 22 months before this one, this one and the next (jobs: analytics.partition_maintenance
-- adds one ahead each month and detaches those older than 24 months to the archive).
CREATE TABLE analytics.fact_orders (
    order_date        date NOT NULL,
    order_id          bigint NOT NULL,
    line_no           smallint NOT NULL DEFAULT 1,
    date_key          integer NOT NULL,
    merchant_key      integer NOT NULL,
    product_key       integer NOT NULL,
    customer_key      bigint,
    channel_key       smallint NOT NULL,
    geo_key           smallint NOT NULL,
    qty               integer NOT NULL CHECK (qty > 0),
    unit_price_cents  integer NOT NULL CHECK (unit_price_cents >= 0),
    gross_cents       bigint GENERATED ALWAYS AS (qty::bigint * unit_price_cents) STORED,
    discount_cents    integer NOT NULL DEFAULT 0,
    tax_cents         integer NOT NULL DEFAULT 0,
    shipping_cents    integer NOT NULL DEFAULT 0,
    currency          char(3) NOT NULL,
    gross_eur_cents   bigint NOT NULL,
    status            text NOT NULL CHECK (status IN ('completed', 'cancelled', 'refunded', 'partially_refunded')),
    etl_batch_id      bigint NOT NULL,
    loaded_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (order_id, line_no, order_date)
) PARTITION BY RANGE (order_date);
COMMENT ON TABLE analytics.fact_orders IS 'One row per order line, loaded nightly from the checkout and payments domains. Monthly partitions.';

CREATE TABLE analytics.fact_payments (
    payment_date       date NOT NULL,
    payment_id         bigint NOT NULL,
    order_id           bigint,
    date_key           integer NOT NULL,
    merchant_key       integer NOT NULL,
    payment_method_key smallint NOT NULL,
    geo_key            smallint NOT NULL,
    amount_cents       bigint NOT NULL,
    fee_cents          integer NOT NULL DEFAULT 0,
    net_cents          bigint GENERATED ALWAYS AS (amount_cents - fee_cents) STORED,
    currency           char(3) NOT NULL,
    amount_eur_cents   bigint NOT NULL,
    outcome            text NOT NULL CHECK (outcome IN ('captured', 'declined', 'refunded', 'charged_back', 'voided')),
    decline_code       text,
    is_3ds             boolean NOT NULL DEFAULT false,
    etl_batch_id       bigint NOT NULL,
    loaded_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (payment_id, payment_date),
    CHECK ((outcome = 'declined') = (decline_code IS NOT NULL))
) PARTITION BY RANGE (payment_date);
COMMENT ON TABLE analytics.fact_payments IS 'Payment attempts and their outcome (captures, declines, refunds, chargebacks). Monthly partitions.';

CREATE TABLE analytics.fact_sessions (
    session_date   date NOT NULL,
    session_id     uuid NOT NULL,
    date_key       integer NOT NULL,
    merchant_key   integer,
    channel_key    smallint NOT NULL,
    geo_key        smallint NOT NULL,
    customer_key   bigint,
    started_at     timestamptz NOT NULL,
    duration_s     integer NOT NULL CHECK (duration_s >= 0),
    page_views     smallint NOT NULL CHECK (page_views >= 1),
    searches       smallint NOT NULL DEFAULT 0,
    added_to_cart  boolean NOT NULL DEFAULT false,
    converted      boolean NOT NULL DEFAULT false,
    utm_source     text,
    device_class   text CHECK (device_class IN ('desktop', 'mobile', 'tablet', 'app')),
    etl_batch_id   bigint NOT NULL,
    PRIMARY KEY (session_id, session_date)
) PARTITION BY RANGE (session_date);
COMMENT ON TABLE analytics.fact_sessions IS 'Storefront sessions from the clickstream (anonymous sessions have no customer_key). Monthly partitions.';
COMMENT ON COLUMN analytics.fact_sessions.merchant_key IS 'The shop the session landed on; NULL for marketplace-wide pages.';

DO $$
DECLARE
    parent text;
    m date;
    first_month date := date_trunc('month', now())::date - interval '22 months';
BEGIN
    FOREACH parent IN ARRAY ARRAY['fact_orders', 'fact_payments', 'fact_sessions'] LOOP
        FOR i IN 0..23 LOOP
            m := first_month + make_interval(months => i);
            EXECUTE format('CREATE TABLE analytics.%I PARTITION OF analytics.%I FOR VALUES FROM (%L) TO (%L)',
                           parent || '_p' || to_char(m, 'YYYY_MM'), parent, m, m + interval '1 month');
        END LOOP;
        EXECUTE format('CREATE TABLE analytics.%I PARTITION OF analytics.%I DEFAULT', parent || '_default', parent);
        EXECUTE format('COMMENT ON TABLE analytics.%I IS %L', parent || '_default',
                       'Rows outside the monthly partitions: late corrections to archived months and the 2021 backfill. Should stay small.');
    END LOOP;
END
$$;

-- ETL staging: raw extracts, truncated and reloaded by warehouse_loader every hour, then
-- merged into the facts. UNLOGGED: a crash loses at most the current hour, which the next
-- run re-extracts from the watermark.
CREATE UNLOGGED TABLE analytics.stg_orders (
    order_id      bigint,
    merchant_id   integer,
    sku           integer,
    qty           integer,
    status        text,
    created_at    timestamptz,
    payload       jsonb,
    _batch_id     bigint NOT NULL,
    _extracted_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE analytics.stg_orders IS 'Hourly raw extract of public.orders (rows changed since the watermark). Truncated each run.';

CREATE UNLOGGED TABLE analytics.stg_payments (
    payment_id    bigint,
    order_id      bigint,
    merchant_id   integer,
    method        text,
    amount_cents  bigint,
    currency      text,
    outcome       text,
    decline_code  text,
    occurred_at   timestamptz,
    _batch_id     bigint NOT NULL,
    _extracted_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE analytics.stg_payments IS 'Hourly raw extract of payments attempts. Truncated each run.';

CREATE UNLOGGED TABLE analytics.stg_clickstream (
    event_id      uuid,
    session_id    uuid,
    event_name    text,
    occurred_at   timestamptz,
    properties    jsonb,
    _batch_id     bigint NOT NULL,
    _extracted_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE analytics.stg_clickstream IS 'Hourly clickstream drop from the collector (JSON lines); sessionised into fact_sessions.';

CREATE TABLE analytics.etl_batches (
    batch_id       bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    pipeline       text NOT NULL CHECK (pipeline IN ('orders_hourly', 'payments_hourly', 'clickstream_hourly', 'dims_nightly')),
    started_at     timestamptz NOT NULL,
    finished_at    timestamptz,
    status         text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    rows_extracted integer,
    rows_loaded    integer,
    low_watermark  timestamptz,
    high_watermark timestamptz,
    error          text,
    CHECK (status = 'running' OR finished_at IS NOT NULL),
    CHECK (status <> 'failed' OR error IS NOT NULL)
);
COMMENT ON TABLE analytics.etl_batches IS 'One row per pipeline run (hourly extracts, nightly dimension refresh); facts carry the batch that loaded them. 90 days kept, plus the 2021 backfill batches.';

CREATE TABLE analytics.etl_watermarks (
    pipeline       text PRIMARY KEY,
    high_watermark timestamptz NOT NULL,
    last_batch_id  bigint REFERENCES analytics.etl_batches (batch_id),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE analytics.etl_watermarks IS 'Where each pipeline will resume; advanced only when a batch succeeds.';
COMMENT ON COLUMN analytics.etl_watermarks.last_batch_id IS 'Not indexed: four rows, and batches are purged only after the watermark has moved on.';

CREATE TABLE analytics.dbt_models (
    model_name      text PRIMARY KEY CHECK (model_name ~ '^(stg|int|fct|dim|mart|mv)_[a-z0-9_]+$'),
    materialization text NOT NULL CHECK (materialization IN ('table', 'view', 'incremental', 'materialized_view', 'ephemeral')),
    relation_name   text,
    depends_on      text[] NOT NULL DEFAULT '{}',
    owner_team      text NOT NULL,
    sql_checksum    text NOT NULL,
    schedule        text NOT NULL DEFAULT 'nightly',
    tags            text[] NOT NULL DEFAULT '{}',
    last_run_at     timestamptz,
    last_run_status text CHECK (last_run_status IN ('success', 'error', 'skipped')),
    row_count       bigint,
    description     text
);
COMMENT ON TABLE analytics.dbt_models IS 'The dbt project''s models as of the last deploy (written by dbt_runner''s on-run-end hook).';
COMMENT ON COLUMN analytics.dbt_models.relation_name IS 'The built relation; NULL for ephemeral models and views in other databases.';

CREATE TABLE analytics.dbt_model_runs (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    invocation_id   uuid NOT NULL,
    model_name      text NOT NULL REFERENCES analytics.dbt_models (model_name) ON DELETE CASCADE,
    started_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    status          text NOT NULL CHECK (status IN ('success', 'error', 'skipped')),
    rows_affected   bigint,
    message         text,
    UNIQUE (invocation_id, model_name)
);
COMMENT ON TABLE analytics.dbt_model_runs IS 'Per-model results of every dbt invocation, 180 days kept.';

-- dbt-built tables (materialization = table / incremental).
CREATE TABLE analytics.mart_merchant_monthly (
    month          date NOT NULL CHECK (extract(day FROM month) = 1),
    merchant_id    integer NOT NULL,
    orders         integer NOT NULL,
    units          integer NOT NULL,
    gmv_eur_cents  bigint NOT NULL,
    refunded_eur_cents bigint NOT NULL DEFAULT 0,
    take_rate_bps  smallint NOT NULL,
    fees_eur_cents bigint NOT NULL,
    active_skus    integer NOT NULL,
    built_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (month, merchant_id)
);
COMMENT ON TABLE analytics.mart_merchant_monthly IS 'dbt model mart_merchant_monthly (incremental on month): GMV and fees per merchant for the finance close.';

CREATE TABLE analytics.mart_customer_cohorts (
    cohort_month   date NOT NULL,
    months_since   smallint NOT NULL CHECK (months_since >= 0),
    customers      integer NOT NULL,
    orders         integer NOT NULL,
    revenue_eur_cents bigint NOT NULL,
    built_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (cohort_month, months_since)
);
COMMENT ON TABLE analytics.mart_customer_cohorts IS 'dbt model mart_customer_cohorts (table, rebuilt nightly): retention by first-order month.';

-- Hand the schema's objects to warehouse_owner.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT c.oid::regclass AS rel FROM pg_class c
             WHERE c.relnamespace = 'analytics'::regnamespace AND c.relkind IN ('r', 'p')
    LOOP
        EXECUTE format('ALTER TABLE %s OWNER TO warehouse_owner', r.rel);
    END LOOP;
END
$$;
