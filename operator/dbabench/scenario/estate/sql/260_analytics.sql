-- Analytics functions and views.

-- Monthly partition upkeep for the facts (jobs: analytics.partition_maintenance, 1st of the
-- month): creates the partitions for the coming months if missing. Rows already sitting in
-- the default partition for such a month must be moved first, which this refuses to guess.
CREATE FUNCTION analytics.ensure_month_partitions(p_parent regclass, p_months_ahead integer DEFAULT 2)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    m date;
    part text;
    made integer := 0;
    base text := (SELECT relname FROM pg_class WHERE oid = p_parent);
BEGIN
    FOR i IN 0..p_months_ahead LOOP
        m := (date_trunc('month', now()) + make_interval(months => i))::date;
        part := base || '_p' || to_char(m, 'YYYY_MM');
        IF to_regclass(format('analytics.%I', part)) IS NULL THEN
            EXECUTE format('CREATE TABLE analytics.%I PARTITION OF %s FOR VALUES FROM (%L) TO (%L)',
                           part, p_parent, m, (m + interval '1 month')::date);
            made := made + 1;
        END IF;
    END LOOP;
    RETURN made;
END
$$;
COMMENT ON FUNCTION analytics.ensure_month_partitions(regclass, integer) IS
    'Creates missing monthly partitions from this month to p_months_ahead ahead; returns how many it made.';

CREATE FUNCTION analytics.date_key(d date) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT (to_char(d, 'YYYYMMDD'))::integer $$;
COMMENT ON FUNCTION analytics.date_key(date) IS 'yyyymmdd surrogate key of dim_date.';

-- Refresh the materialised views in dependency order (jobs: analytics.refresh_mvs, after the
-- nightly load). CONCURRENTLY: dashboards read them all day.
CREATE PROCEDURE analytics.refresh_materialized_views()
LANGUAGE plpgsql AS $$
BEGIN
    REFRESH MATERIALIZED VIEW CONCURRENTLY analytics.mv_daily_merchant_revenue;
    COMMIT;
    REFRESH MATERIALIZED VIEW CONCURRENTLY analytics.mv_payment_method_mix;
    COMMIT;
    REFRESH MATERIALIZED VIEW CONCURRENTLY analytics.mv_conversion_funnel_daily;
    COMMIT;
END
$$;
COMMENT ON PROCEDURE analytics.refresh_materialized_views() IS 'Nightly refresh of the dashboard materialised views, one transaction each.';

CREATE VIEW analytics.v_current_merchants AS
SELECT merchant_key, merchant_id, name, tier, country_code, vertical, take_rate_bps, valid_from
FROM analytics.dim_merchant WHERE is_current;
COMMENT ON VIEW analytics.v_current_merchants IS 'Current version of each merchant.';

CREATE VIEW analytics.v_orders_enriched AS
SELECT f.order_date, f.order_id, f.line_no, m.merchant_id, m.name AS merchant_name, m.tier,
       p.sku_id, p.category_l1, p.brand, c.code AS channel, g.country_code, g.region,
       f.qty, f.gross_cents, f.currency, f.gross_eur_cents, f.status
FROM analytics.fact_orders f
JOIN analytics.dim_merchant m ON m.merchant_key = f.merchant_key
JOIN analytics.dim_product p ON p.product_key = f.product_key
JOIN analytics.dim_channel c ON c.channel_key = f.channel_key
JOIN analytics.dim_geography g ON g.geo_key = f.geo_key;
COMMENT ON VIEW analytics.v_orders_enriched IS 'Order lines with their dimensions, as of the order (type-2 keys); the BI tool''s main explore.';

CREATE VIEW analytics.v_etl_lag AS
SELECT w.pipeline, w.high_watermark, now() - w.high_watermark AS lag,
       b.status AS last_status, b.finished_at AS last_finished_at
FROM analytics.etl_watermarks w
LEFT JOIN analytics.etl_batches b ON b.batch_id = w.last_batch_id;
COMMENT ON VIEW analytics.v_etl_lag IS 'How far each pipeline is behind (alert when orders_hourly lags more than 3 hours).';

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT p.oid::regprocedure AS fn, p.prokind FROM pg_proc p WHERE p.pronamespace = 'analytics'::regnamespace LOOP
        EXECUTE format('ALTER %s %s OWNER TO warehouse_owner', CASE r.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, r.fn);
    END LOOP;
    FOR r IN SELECT c.oid::regclass AS rel FROM pg_class c WHERE c.relnamespace = 'analytics'::regnamespace AND c.relkind = 'v' LOOP
        EXECUTE format('ALTER VIEW %s OWNER TO warehouse_owner', r.rel);
    END LOOP;
END
$$;
