-- Analytics secondary indexes (created on the partitioned parents, so every partition gets
-- them), the dashboard materialised views, sequence positions.

CREATE INDEX fact_orders_merchant_date_idx ON analytics.fact_orders (merchant_key, order_date);
CREATE INDEX fact_payments_merchant_date_idx ON analytics.fact_payments (merchant_key, payment_date);
CREATE INDEX fact_payments_order_idx ON analytics.fact_payments (order_id);
CREATE INDEX fact_sessions_merchant_date_idx ON analytics.fact_sessions (merchant_key, session_date) WHERE merchant_key IS NOT NULL;
CREATE UNIQUE INDEX dim_merchant_current_key ON analytics.dim_merchant (merchant_id) WHERE is_current;
CREATE UNIQUE INDEX dim_product_current_key ON analytics.dim_product (sku_id) WHERE is_current;
CREATE INDEX dim_customer_first_order_idx ON analytics.dim_customer (first_order_date);
CREATE INDEX etl_batches_pipeline_idx ON analytics.etl_batches (pipeline, started_at DESC);
CREATE INDEX dbt_model_runs_model_idx ON analytics.dbt_model_runs (model_name, started_at DESC);
CREATE INDEX mart_merchant_monthly_merchant_idx ON analytics.mart_merchant_monthly (merchant_id, month);

COMMENT ON INDEX analytics.dim_merchant_current_key IS 'At most one current version per merchant (the type-2 merge relies on it).';

CREATE MATERIALIZED VIEW analytics.mv_daily_merchant_revenue AS
SELECT f.order_date AS day, m.merchant_id,
       count(*) FILTER (WHERE f.status <> 'cancelled') AS orders,
       sum(f.qty) FILTER (WHERE f.status <> 'cancelled') AS units,
       coalesce(sum(f.gross_eur_cents) FILTER (WHERE f.status <> 'cancelled'), 0) AS gmv_eur_cents,
       coalesce(sum(f.gross_eur_cents) FILTER (WHERE f.status IN ('refunded', 'partially_refunded')), 0) AS refunded_eur_cents,
       count(DISTINCT f.customer_key) AS customers
FROM analytics.fact_orders f
JOIN analytics.dim_merchant m ON m.merchant_key = f.merchant_key
WHERE f.order_date >= date_trunc('month', now()) - interval '22 months'
GROUP BY f.order_date, m.merchant_id
WITH DATA;
CREATE UNIQUE INDEX mv_daily_merchant_revenue_key ON analytics.mv_daily_merchant_revenue (day, merchant_id);
CREATE INDEX mv_daily_merchant_revenue_merchant_idx ON analytics.mv_daily_merchant_revenue (merchant_id, day);
COMMENT ON MATERIALIZED VIEW analytics.mv_daily_merchant_revenue IS 'Daily GMV per merchant for the merchant dashboards and the finance daily flash.';

CREATE MATERIALIZED VIEW analytics.mv_payment_method_mix AS
SELECT date_trunc('month', f.payment_date)::date AS month, pm.code AS payment_method, pm.family,
       count(*) AS attempts,
       count(*) FILTER (WHERE f.outcome = 'captured') AS captured,
       count(*) FILTER (WHERE f.outcome = 'declined') AS declined,
       coalesce(sum(f.amount_eur_cents) FILTER (WHERE f.outcome = 'captured'), 0) AS captured_eur_cents,
       round(count(*) FILTER (WHERE f.outcome = 'declined')::numeric / count(*), 4) AS decline_rate
FROM analytics.fact_payments f
JOIN analytics.dim_payment_method pm ON pm.payment_method_key = f.payment_method_key
GROUP BY 1, 2, 3
WITH DATA;
CREATE UNIQUE INDEX mv_payment_method_mix_key ON analytics.mv_payment_method_mix (month, payment_method);
COMMENT ON MATERIALIZED VIEW analytics.mv_payment_method_mix IS 'Monthly attempts, captures and decline rate per payment method (payments steering committee deck).';

CREATE MATERIALIZED VIEW analytics.mv_conversion_funnel_daily AS
SELECT s.session_date AS day, c.code AS channel,
       count(*) AS sessions,
       count(*) FILTER (WHERE s.searches > 0) AS with_search,
       count(*) FILTER (WHERE s.added_to_cart) AS with_cart,
       count(*) FILTER (WHERE s.converted) AS converted,
       round(count(*) FILTER (WHERE s.converted)::numeric / count(*), 4) AS conversion_rate
FROM analytics.fact_sessions s
JOIN analytics.dim_channel c ON c.channel_key = s.channel_key
GROUP BY 1, 2
WITH DATA;
CREATE UNIQUE INDEX mv_conversion_funnel_daily_key ON analytics.mv_conversion_funnel_daily (day, channel);
COMMENT ON MATERIALIZED VIEW analytics.mv_conversion_funnel_daily IS 'Daily session funnel per channel (growth dashboards).';

ALTER MATERIALIZED VIEW analytics.mv_daily_merchant_revenue OWNER TO warehouse_owner;
ALTER MATERIALIZED VIEW analytics.mv_payment_method_mix OWNER TO warehouse_owner;
ALTER MATERIALIZED VIEW analytics.mv_conversion_funnel_daily OWNER TO warehouse_owner;

UPDATE analytics.dbt_models SET relation_name = 'analytics.' || model_name, row_count = NULL WHERE materialization = 'materialized_view';
UPDATE analytics.dbt_models m SET row_count = c.reltuples::bigint
FROM pg_class c WHERE m.relation_name IS NOT NULL AND c.oid = to_regclass(m.relation_name) AND c.reltuples > 0;
