-- Analytics data. Facts cover the 22 months before this one and this month up to now, with
-- volume tripling over the period (row g of N lands at start + span * x, x = (sqrt(1 + 8 g / N) - 1) / 2), plus a sliver of
-- 2021 backfill in the default partitions. Hourly ETL batches: id = 1000000 + 4 * hour + pipeline.
-- u(g, k) means (hashint8extended(g, k) & 2147483647)::float8 / 2147483647.

ALTER TABLE analytics.dbt_model_runs ALTER COLUMN id RESTART WITH 150000;

INSERT INTO analytics.dim_date (date_key, date, year, quarter, month, month_name, iso_year, iso_week, day_of_week, day_name,
                                is_weekend, is_holiday, holiday_name, fiscal_year, fiscal_period)
SELECT to_char(d, 'YYYYMMDD')::integer, d, extract(year FROM d), extract(quarter FROM d), extract(month FROM d),
       to_char(d, 'FMMonth'), extract(isoyear FROM d), extract(week FROM d), extract(isodow FROM d), to_char(d, 'FMDay'),
       extract(isodow FROM d) >= 6,
       h.name IS NOT NULL, h.name,
       extract(year FROM d) + CASE WHEN extract(month FROM d) >= 2 THEN 1 ELSE 0 END,
       'FY' || (extract(year FROM d) + CASE WHEN extract(month FROM d) >= 2 THEN 1 ELSE 0 END)
           || '-P' || lpad(((extract(month FROM d)::int + 10) % 12 + 1)::text, 2, '0')
FROM generate_series(date '2018-01-01', date '2030-12-31', interval '1 day') AS t(ts)
CROSS JOIN LATERAL (SELECT t.ts::date AS d) x
LEFT JOIN (VALUES ('01-01', 'New Year''s Day'), ('05-01', 'Labour Day'), ('10-03', 'German Unity Day'),
                  ('12-25', 'Christmas Day'), ('12-26', 'St Stephen''s Day')) AS h(md, name) ON h.md = to_char(x.d, 'MM-DD');

INSERT INTO analytics.dim_geography (geo_key, country_code, country_name, region, currency, is_eu)
VALUES
    (1, 'DE', 'Germany', 'DACH', 'EUR', true), (2, 'AT', 'Austria', 'DACH', 'EUR', true),
    (3, 'CH', 'Switzerland', 'DACH', 'CHF', false), (4, 'FR', 'France', 'Western Europe', 'EUR', true),
    (5, 'BE', 'Belgium', 'Benelux', 'EUR', true), (6, 'NL', 'Netherlands', 'Benelux', 'EUR', true),
    (7, 'LU', 'Luxembourg', 'Benelux', 'EUR', true), (8, 'GB', 'United Kingdom', 'UK & Ireland', 'GBP', false),
    (9, 'IE', 'Ireland', 'UK & Ireland', 'EUR', true), (10, 'IT', 'Italy', 'Southern Europe', 'EUR', true),
    (11, 'ES', 'Spain', 'Southern Europe', 'EUR', true), (12, 'PT', 'Portugal', 'Southern Europe', 'EUR', true),
    (13, 'PL', 'Poland', 'CEE', 'PLN', true), (14, 'CZ', 'Czechia', 'CEE', 'CZK', true),
    (15, 'SE', 'Sweden', 'Nordics', 'SEK', true), (16, 'DK', 'Denmark', 'Nordics', 'DKK', true),
    (17, 'NO', 'Norway', 'Nordics', 'NOK', false), (18, 'FI', 'Finland', 'Nordics', 'EUR', true),
    (19, 'US', 'United States', 'North America', 'USD', false), (20, 'CA', 'Canada', 'North America', 'CAD', false),
    (21, 'JP', 'Japan', 'APAC', 'JPY', false), (22, 'AU', 'Australia', 'APAC', 'AUD', false),
    (99, 'XX', 'Unknown', 'Unknown', 'EUR', false);

INSERT INTO analytics.dim_channel (channel_key, code, name, is_app)
VALUES (1, 'web', 'Web storefront', false), (2, 'ios', 'iOS app', true), (3, 'android', 'Android app', true),
       (4, 'api', 'Merchant API (headless)', false), (5, 'marketplace_feed', 'Shopping feeds', false),
       (6, 'social', 'Social commerce', false), (7, 'pos', 'Point of sale', false);

INSERT INTO analytics.dim_payment_method (payment_method_key, code, name, family)
VALUES (1, 'card_visa', 'Visa', 'card'), (2, 'card_mastercard', 'Mastercard', 'card'), (3, 'card_amex', 'American Express', 'card'),
       (4, 'paypal', 'PayPal', 'wallet'), (5, 'apple_pay', 'Apple Pay', 'wallet'), (6, 'google_pay', 'Google Pay', 'wallet'),
       (7, 'klarna', 'Klarna Pay Later', 'bnpl'), (8, 'sepa_debit', 'SEPA Direct Debit', 'bank'), (9, 'ideal', 'iDEAL', 'bank'),
       (10, 'bancontact', 'Bancontact', 'bank'), (11, 'blik', 'BLIK', 'bank'), (12, 'bank_transfer', 'Bank transfer', 'bank'),
       (13, 'gift_card', 'Gift card', 'other');

-- Daily rates: a base rate with a slow wobble (units per EUR). The facts use the same formula.
INSERT INTO analytics.fx_rates_daily (rate_date, currency, eur_rate, source)
SELECT d::date, c.cur, round((c.base * (1 + 0.03 * sin(extract(epoch FROM d::date) / 86400 / 47 + c.k)))::numeric, 6),
       CASE WHEN extract(isodow FROM d) >= 6 THEN 'ecb-carried' ELSE 'ecb' END
FROM generate_series(date_trunc('month', now()) - interval '25 months', now(), interval '1 day') d
CROSS JOIN (VALUES ('CHF', 0.96, 1), ('GBP', 0.86, 2), ('PLN', 4.35, 3), ('CZK', 24.6, 4), ('SEK', 11.3, 5),
                   ('DKK', 7.46, 6), ('NOK', 11.5, 7), ('USD', 1.08, 8), ('CAD', 1.47, 9), ('JPY', 160.0, 10),
                   ('AUD', 1.64, 11)) AS c(cur, base, k);

-- Merchants, type 2: tiers were upgraded over time for about half of them.
INSERT INTO analytics.dim_merchant (merchant_id, name, tier, country_code, vertical, take_rate_bps, valid_from, valid_to, is_current, row_hash)
SELECT v.m, 'merchant-' || v.m, v.tier, v.country, v.vertical, v.take_rate, v.valid_from,
       lead(v.valid_from) OVER (PARTITION BY v.m ORDER BY v.ver),
       lead(v.valid_from) OVER (PARTITION BY v.m ORDER BY v.ver) IS NULL,
       md5(concat_ws('|', v.tier, v.vertical, v.take_rate))
FROM (
    SELECT m, ver,
           (ARRAY['starter', 'standard', 'growth', 'enterprise'])[greatest(1, t.final_tier - (t.versions - ver))] AS tier,
           (ARRAY['DE', 'DE', 'DE', 'FR', 'NL', 'GB', 'AT', 'PL', 'IT', 'ES'])[1 + (hashint8(m * 101) & 1023) % 10] AS country,
           (ARRAY['fashion', 'fashion', 'fashion', 'electronics', 'electronics', 'home', 'home', 'beauty', 'sports', 'toys',
                  'media', 'grocery', 'health', 'automotive', 'pets', 'office', 'fashion', 'electronics', 'home', 'sports'])[1 + (hashint8(m) & 1023) % 20] AS vertical,
           (ARRAY[1500, 1200, 1000, 800])[greatest(1, t.final_tier - (t.versions - ver))] - CASE WHEN ver = t.versions AND m = 1 THEN 150 ELSE 0 END AS take_rate,
           CASE WHEN ver = 1 THEN now() - make_interval(days => 1800 - 17 * m)
                ELSE now() - make_interval(days => 1800 - 17 * m) + make_interval(days => ((1800 - 17 * m) * ver / (t.versions + 1))) END AS valid_from
    FROM generate_series(1, 101) m
    CROSS JOIN LATERAL (SELECT CASE WHEN m <= 5 THEN 4 WHEN m <= 20 THEN 3 WHEN m <= 60 THEN 2 ELSE 1 END AS final_tier,
                               CASE WHEN m <= 5 THEN 3 WHEN m <= 60 AND (hashint8(m * 7) & 1) = 0 THEN 2 ELSE 1 END AS versions) t
    CROSS JOIN LATERAL generate_series(1, t.versions) ver
) v
ORDER BY v.m, v.ver;

-- Products: one current row per SKU, and an older version where the category or brand was
-- corrected after launch.
INSERT INTO analytics.dim_product (sku_id, product_id, merchant_id, title, category_l1, category_l2, brand, valid_from, valid_to, is_current)
SELECT x.sku_id, x.product_id, x.merchant_id, x.title, x.l1, x.l2, x.brand, x.valid_from, x.valid_to, x.valid_to IS NULL
FROM (
    SELECT s.id AS sku_id, p.id AS product_id, p.merchant_id, s.title, r.name AS l1, c2.name AS l2, b.name::text AS brand,
           s.created_at AS valid_from,
           CASE WHEN (hashint8(s.id * 41) & 7) = 0 THEN s.created_at + interval '20 days' END AS valid_to
    FROM catalog.skus s
    JOIN catalog.products p ON p.id = s.product_id
    JOIN catalog.categories c ON c.id = p.category_id
    JOIN catalog.categories r ON r.path = split_part(c.path, '/', 1) || '/' || split_part(c.path, '/', 2)
    LEFT JOIN catalog.categories c2 ON c2.path = '/' || split_part(c.path, '/', 2) || '/' || split_part(c.path, '/', 3) AND c.depth >= 1
    LEFT JOIN catalog.brands b ON b.id = p.brand_id
    UNION ALL
    SELECT s.id, p.id, p.merchant_id, s.title, r.name, c2.name, b.name::text, s.created_at + interval '20 days', NULL
    FROM catalog.skus s
    JOIN catalog.products p ON p.id = s.product_id
    JOIN catalog.categories c ON c.id = p.category_id
    JOIN catalog.categories r ON r.path = split_part(c.path, '/', 1) || '/' || split_part(c.path, '/', 2)
    LEFT JOIN catalog.categories c2 ON c2.path = '/' || split_part(c.path, '/', 2) || '/' || split_part(c.path, '/', 3) AND c.depth >= 1
    LEFT JOIN catalog.brands b ON b.id = p.brand_id
    WHERE (hashint8(s.id * 41) & 7) = 0
) x
ORDER BY x.sku_id, x.valid_from;
UPDATE analytics.dim_product SET category_l2 = 'Uncategorised' WHERE NOT is_current;

-- Order lines. Facts run up to the last completed hourly batch. A merchant only sells after
-- it joined: a draw of a merchant that did not exist yet is folded onto the older ones.
INSERT INTO analytics.fact_orders (order_date, order_id, line_no, date_key, merchant_key, product_key, customer_key, channel_key, geo_key,
                                   qty, unit_price_cents, discount_cents, tax_cents, shipping_cents, currency, gross_eur_cents,
                                   status, etl_batch_id, loaded_at)
WITH p AS (
    SELECT date_trunc('month', now()) - interval '22 months' AS start,
           date_trunc('hour', now()) - interval '1 hour' - (date_trunc('month', now()) - interval '22 months') AS span,
           4000 * :volume AS n, 1500 * :volume AS n_customers
), rates AS (
    SELECT * FROM (VALUES ('CHF', 0.96, 1), ('GBP', 0.86, 2), ('PLN', 4.35, 3), ('CZK', 24.6, 4), ('SEK', 11.3, 5),
                          ('DKK', 7.46, 6), ('NOK', 11.5, 7), ('USD', 1.08, 8), ('CAD', 1.47, 9), ('JPY', 160.0, 10),
                          ('AUD', 1.64, 11)) AS c(cur, base, k)
), o AS (
    SELECT g, p.n_customers, p.start,
           CASE WHEN g % 500 = 0 THEN p.start - interval '1 day' * (1 + g % 240)
                ELSE p.start + p.span * ((sqrt(1 + 8 * g::float8 / p.n) - 1) / 2) END AS ts,
           1 + floor(100 * ((hashint8extended(g, 81) & 2147483647)::float8 / 2147483647) ^ 2.2)::int AS m0,
           (hashint8(g) & 1023) AS h,
           0.9999 * (hashint8extended(g, 82) & 2147483647)::float8 / 2147483647 AS u
    FROM generate_series(1, 4000 * :volume) g, p
), o1 AS (
    SELECT o.*, 1 + (o.m0 - 1) % least(100, floor((1800 - extract(epoch FROM now() - o.ts) / 86400 - 1) / 17)::int) AS m
    FROM o
), o2 AS (
    SELECT o1.*, 1 + (((o1.m - 1) + 100 * ((hashint8(g * 3) & 1023) % 20)) * 7919) % 2000 AS sku,
           (ARRAY[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 6, 6, 6, 6, 4, 4, 4, 5, 5, 13, 13, 8, 8, 10, 11, 12, 14, 15, 16, 19, 3, 9, 2, 18, 17, 20, 21, 22])[1 + (hashint8(g * 5) & 1023) % 40] AS geo_key,
           1 + floor(4 * ((hashint8extended(g, 83) & 2147483647)::float8 / 2147483647) ^ 3)::int AS qty
    FROM o1
), o3 AS (
    SELECT o2.*, g2.currency,
           CASE WHEN g2.currency = 'EUR' THEN 1.0
                ELSE r.base * (1 + 0.03 * sin(extract(epoch FROM o2.ts::date) / 86400 / 47 + r.k)) END AS rate,
           100 + (o2.sku * 37 + 499 * 11) % 9900 AS eur_price
    FROM o2
    JOIN analytics.dim_geography g2 ON g2.geo_key = o2.geo_key
    LEFT JOIN rates r ON r.cur = g2.currency
)
SELECT o3.ts::date, 20000000 + o3.g, 1, to_char(o3.ts, 'YYYYMMDD')::integer,
       dm.merchant_key, dp.product_key,
       CASE WHEN o3.h < 80 THEN NULL ELSE 1 + floor(o3.n_customers * o3.u ^ 1.6)::bigint END,
       (ARRAY[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 5, 6, 7])[1 + o3.h % 22],
       o3.geo_key, o3.qty,
       round(o3.eur_price * o3.rate)::integer,
       CASE WHEN o3.h % 7 = 0 THEN round(o3.eur_price * o3.rate * o3.qty * 0.10)::integer ELSE 0 END,
       round(o3.eur_price * o3.rate * o3.qty * 0.16)::integer,
       CASE WHEN o3.eur_price * o3.qty >= 5000 THEN 0 ELSE round(490 * o3.rate)::integer END,
       o3.currency, (o3.eur_price * o3.qty)::bigint,
       CASE WHEN o3.h % 25 = 3 THEN 'cancelled' WHEN o3.h % 33 = 5 THEN 'refunded' WHEN o3.h % 97 = 7 THEN 'partially_refunded' ELSE 'completed' END,
       CASE WHEN o3.ts < o3.start THEN 999001
            ELSE 1000000 + 4 * floor(extract(epoch FROM o3.ts - o3.start) / 3600)::bigint + 1 END,
       CASE WHEN o3.ts < o3.start THEN o3.start - interval '3 days' ELSE date_trunc('hour', o3.ts) + interval '1 hour 9 minutes' END
FROM o3
JOIN analytics.dim_merchant dm ON dm.merchant_id = o3.m AND dm.valid_from <= greatest(o3.ts, o3.start) AND (dm.valid_to IS NULL OR dm.valid_to > greatest(o3.ts, o3.start))
JOIN analytics.dim_product dp ON dp.sku_id = o3.sku AND dp.is_current;

-- Payment attempts: one per order, and a declined attempt before the retry for about one in
-- eleven (payment ids are per attempt: 50000000 + 2 x order sequence + attempt).
INSERT INTO analytics.fact_payments (payment_date, payment_id, order_id, date_key, merchant_key, payment_method_key, geo_key,
                                     amount_cents, fee_cents, currency, amount_eur_cents, outcome, decline_code, is_3ds,
                                     etl_batch_id, loaded_at)
SELECT f.order_date, 50000000 + 2 * (f.order_id - 20000000) + f.k, f.order_id, f.date_key, f.merchant_key,
       CASE WHEN g.country_code = 'NL' AND f.h % 3 <> 0 THEN 9 WHEN g.country_code = 'PL' AND f.h % 2 = 0 THEN 11
            WHEN g.country_code = 'BE' AND f.h % 2 = 0 THEN 10
            WHEN g.country_code IN ('DE', 'AT') AND f.h % 4 = 0 THEN 4 WHEN g.country_code IN ('DE', 'AT', 'SE') AND f.h % 7 = 1 THEN 7
            WHEN g.country_code = 'DE' AND f.h % 13 = 2 THEN 8
            ELSE (ARRAY[1, 1, 1, 1, 2, 2, 2, 3, 5, 5, 6, 4, 13])[1 + f.h % 13] END,
       f.geo_key,
       f.gross_cents - f.discount_cents + f.shipping_cents,
       CASE WHEN f.outcome IN ('declined', 'voided') THEN 0 ELSE round((f.gross_cents - f.discount_cents + f.shipping_cents) * 0.014)::integer + 25 END,
       f.currency, f.gross_eur_cents, f.outcome,
       CASE WHEN f.outcome = 'declined' THEN (ARRAY['insufficient_funds', 'do_not_honor', 'expired_card', 'authentication_required',
                                                    'suspected_fraud', 'insufficient_funds', 'do_not_honor'])[1 + f.h % 7] END,
       f.h % 3 = 0, f.etl_batch_id + 1, f.loaded_at
FROM (
    SELECT fo.*, (hashint8(fo.order_id) & 1023) AS h, k,
           CASE WHEN k = 0 THEN 'declined'
                WHEN fo.status = 'cancelled' THEN 'voided'
                WHEN fo.status = 'refunded' THEN 'refunded'
                WHEN (hashint8(fo.order_id * 7) & 1023) = 5 THEN 'charged_back'
                ELSE 'captured' END AS outcome
    FROM analytics.fact_orders fo
    CROSS JOIN generate_series(0, 1) k
    WHERE k = 1 OR (hashint8(fo.order_id) & 1023) % 11 = 4
) f
JOIN analytics.dim_geography g ON g.geo_key = f.geo_key;

INSERT INTO analytics.fact_sessions (session_date, session_id, date_key, merchant_key, channel_key, geo_key, customer_key, started_at,
                                     duration_s, page_views, searches, added_to_cart, converted, utm_source, device_class, etl_batch_id)
WITH p AS (
    SELECT date_trunc('month', now()) - interval '22 months' AS start,
           date_trunc('hour', now()) - interval '1 hour' - (date_trunc('month', now()) - interval '22 months') AS span
), s AS (
    SELECT g, p.start, p.start + p.span * ((sqrt(1 + 8 * g::float8 / (5000 * :volume)) - 1) / 2) AS ts,
           (hashint8(g) & 1023) AS h,
           (hashint8extended(g, 91) & 2147483647)::float8 / 2147483647 AS u
    FROM generate_series(1, 5000 * :volume) g, p
), s1 AS (
    SELECT s.*, 1 + floor(100 * s.u ^ 2.2)::int % least(100, floor((1800 - extract(epoch FROM now() - s.ts) / 86400 - 1) / 17)::int) AS m
    FROM s
)
SELECT s1.ts::date, md5('session:' || s1.g)::uuid, to_char(s1.ts, 'YYYYMMDD')::integer,
       CASE WHEN s1.h % 10 < 7 THEN dm.merchant_key END,
       (ARRAY[1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 6])[1 + s1.h % 13],
       (ARRAY[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 6, 6, 6, 4, 4, 4, 8, 8, 2, 5, 13, 10, 11, 99])[1 + (s1.h >> 2) % 24],
       CASE WHEN s1.h % 20 < 7 THEN 1 + floor(0.9999 * 1500 * :volume * ((hashint8extended(s1.g, 92) & 2147483647)::float8 / 2147483647) ^ 1.6)::bigint END,
       s1.ts, floor(1800 * s1.u ^ 3)::int, 1 + floor(30 * s1.u ^ 3)::int, floor(4 * s1.u ^ 2)::int,
       s1.h % 11 = 0 OR s1.h % 37 = 0, s1.h % 37 = 0,
       (ARRAY[NULL, NULL, NULL, 'google', 'google', 'newsletter', 'instagram', 'tiktok', 'affiliate', 'bing'])[1 + (s1.h >> 3) % 10],
       CASE WHEN s1.h % 13 IN (6, 7, 8) THEN 'app' ELSE (ARRAY['mobile', 'mobile', 'desktop', 'desktop', 'tablet', 'mobile'])[1 + s1.h % 6] END,
       1000000 + 4 * floor(extract(epoch FROM s1.ts - s1.start) / 3600)::bigint + 3
FROM s1
JOIN analytics.dim_merchant dm ON dm.merchant_id = s1.m AND dm.valid_from <= s1.ts AND (dm.valid_to IS NULL OR dm.valid_to > s1.ts);

-- Customers: keys as used by the facts; first order from the facts themselves.
INSERT INTO analytics.dim_customer (customer_key, customer_hash, country_code, first_order_date, segment, is_guest, loaded_at)
OVERRIDING SYSTEM VALUE
SELECT k, encode(sha256(convert_to('customer:' || k, 'UTF8')), 'hex'),
       (ARRAY['DE', 'DE', 'DE', 'FR', 'NL', 'GB', 'AT', 'BE', 'PL', 'IT', 'ES', 'SE'])[1 + (hashint8(k) & 1023) % 12],
       f.first_date,
       CASE WHEN f.first_date IS NULL THEN 'new' WHEN f.orders >= 12 THEN 'vip'
            WHEN f.last_date < current_date - 180 THEN 'lapsed' WHEN f.orders >= 2 THEN 'active' ELSE 'new' END,
       (hashint8(k * 3) & 63) = 0,
       coalesce(f.first_date::timestamptz, now() - interval '3 days') + interval '1 day'
FROM generate_series(1, 1500 * :volume) k
LEFT JOIN (SELECT customer_key, min(order_date) AS first_date, max(order_date) AS last_date, count(*) AS orders
           FROM analytics.fact_orders WHERE customer_key IS NOT NULL GROUP BY customer_key) f ON f.customer_key = k;

-- ETL bookkeeping: hourly runs of three pipelines (batch i covers hour i of the fact range and
-- starts five minutes after it ends), the nightly dimension run, and the 2021 backfill. Batches
-- are kept 90 days (0.9 x volume days here); facts keep the ids of purged batches.
INSERT INTO analytics.etl_batches (batch_id, pipeline, started_at, finished_at, status, rows_extracted, rows_loaded,
                                   low_watermark, high_watermark, error)
SELECT 1000000 + 4 * i + p.k, p.pipeline, b.run_start,
       CASE WHEN b.run_start + interval '3 minutes' > now() THEN NULL
            ELSE b.run_start + make_interval(mins => 2, secs => (hashint8(i * 4 + p.k) & 63)::int) END,
       CASE WHEN b.run_start + interval '3 minutes' > now() THEN 'running'
            WHEN (hashint8(i * 4 + p.k) & 1023) < 4 THEN 'failed' ELSE 'succeeded' END,
       CASE WHEN p.k = 3 THEN 2000 ELSE 400 END + (hashint8(i * 4 + p.k + 1) & 1023),
       CASE WHEN b.run_start + interval '3 minutes' > now() THEN NULL
            WHEN (hashint8(i * 4 + p.k) & 1023) < 4 THEN 0 ELSE CASE WHEN p.k = 3 THEN 2000 ELSE 400 END + (hashint8(i * 4 + p.k + 1) & 1023) END,
       b.hour_start, b.hour_start + interval '1 hour',
       CASE WHEN (hashint8(i * 4 + p.k) & 1023) < 4 AND b.run_start + interval '3 minutes' <= now() THEN
            (ARRAY['canceling statement due to statement timeout', 'could not serialize access due to concurrent update',
                   'connection to source lost (SSL SYSCALL error: EOF detected)', 'duplicate key value violates unique constraint "fact_orders_pkey"'])[1 + (i % 4)::int] END
FROM generate_series(0, (extract(epoch FROM date_trunc('hour', now()) - (date_trunc('month', now()) - interval '22 months')) / 3600)::int - 1) i
CROSS JOIN LATERAL (SELECT date_trunc('month', now()) - interval '22 months' + make_interval(hours => i) AS hour_start,
                           date_trunc('month', now()) - interval '22 months' + make_interval(hours => i + 1, mins => 5) AS run_start) b
CROSS JOIN (VALUES (1, 'orders_hourly'), (2, 'payments_hourly'), (3, 'clickstream_hourly')) AS p(k, pipeline)
WHERE b.run_start <= now() AND b.run_start > now() - interval '1 day' * (0.9 * :volume);

INSERT INTO analytics.etl_batches (batch_id, pipeline, started_at, finished_at, status, rows_extracted, rows_loaded,
                                   low_watermark, high_watermark, error)
SELECT 1000000 + 4 * (d * 24 + 2), 'dims_nightly',
       b.day_start + interval '2 hours', b.day_start + interval '2 hours 4 minutes', 'succeeded',
       2101 + (hashint8(d) & 255), 2101 + (hashint8(d) & 255), b.day_start - interval '1 day', b.day_start, NULL
FROM generate_series(0, (extract(epoch FROM now() - (date_trunc('month', now()) - interval '22 months')) / 86400)::int) d
CROSS JOIN LATERAL (SELECT date_trunc('month', now()) - interval '22 months' + make_interval(days => d) AS day_start) b
WHERE b.day_start + interval '2 hours 4 minutes' < now() AND b.day_start > now() - interval '1 day' * (0.9 * :volume);

INSERT INTO analytics.etl_batches (batch_id, pipeline, started_at, finished_at, status, rows_extracted, rows_loaded,
                                   low_watermark, high_watermark, error)
SELECT 999000 + k, p, date_trunc('month', now()) - interval '22 months' - interval '3 days',
       date_trunc('month', now()) - interval '22 months' - interval '3 days' + interval '47 minutes', 'succeeded',
       (SELECT count(*) FROM analytics.fact_orders_default), (SELECT count(*) FROM analytics.fact_orders_default),
       timestamptz '2021-01-01 00:00+00', date_trunc('month', now()) - interval '22 months', NULL
FROM (VALUES (1, 'orders_hourly'), (2, 'payments_hourly')) AS v(k, p);

INSERT INTO analytics.etl_watermarks (pipeline, high_watermark, last_batch_id, updated_at)
SELECT pipeline, max(high_watermark), max(batch_id), max(finished_at)
FROM analytics.etl_batches WHERE status = 'succeeded' GROUP BY pipeline;

-- The current hour's staging contents.
INSERT INTO analytics.stg_orders (order_id, merchant_id, sku, qty, status, created_at, payload, _batch_id, _extracted_at)
SELECT o.id, o.merchant_id, o.sku, o.qty, o.status, o.created_at,
       jsonb_build_object('id', o.id, 'merchant_id', o.merchant_id, 'sku', o.sku, 'qty', o.qty, 'status', o.status,
                          'created_at', o.created_at),
       (SELECT max(batch_id) FROM analytics.etl_batches WHERE pipeline = 'orders_hourly'), date_trunc('hour', now()) + interval '6 minutes'
FROM public.orders o
WHERE o.created_at >= date_trunc('hour', now()) - interval '1 hour' AND o.created_at < date_trunc('hour', now());

INSERT INTO analytics.stg_payments (payment_id, order_id, merchant_id, method, amount_cents, currency, outcome, decline_code,
                                    occurred_at, _batch_id, _extracted_at)
SELECT 90000000 + o.id, o.id, o.merchant_id,
       (ARRAY['card_visa', 'card_mastercard', 'paypal', 'klarna', 'apple_pay', 'ideal'])[1 + (hashint8(o.id) & 1023) % 6],
       o.qty * (100 + (o.sku * 37 + 499 * 11) % 9900), 'EUR',
       CASE WHEN (hashint8(o.id * 3) & 15) = 0 THEN 'declined' ELSE 'captured' END,
       CASE WHEN (hashint8(o.id * 3) & 15) = 0 THEN 'insufficient_funds' END,
       o.created_at + interval '40 seconds',
       (SELECT max(batch_id) FROM analytics.etl_batches WHERE pipeline = 'payments_hourly'), date_trunc('hour', now()) + interval '7 minutes'
FROM public.orders o
WHERE o.created_at >= date_trunc('hour', now()) - interval '1 hour' AND o.created_at < date_trunc('hour', now())
  AND (hashint8(o.id) & 1023) < 6 * :volume;

INSERT INTO analytics.stg_clickstream (event_id, session_id, event_name, occurred_at, properties, _batch_id, _extracted_at)
SELECT md5('evt:' || g)::uuid, md5('live-session:' || (g / 6))::uuid,
       (ARRAY['page_view', 'page_view', 'page_view', 'search', 'product_view', 'add_to_cart', 'checkout_started'])[1 + (hashint8(g) & 1023) % 7],
       date_trunc('hour', now()) - interval '1 hour' + make_interval(secs => (g % 3600)::int),
       jsonb_build_object('path', '/p/' || (1 + (hashint8(g) & 1023) % 1100), 'referrer',
                          (ARRAY['google', 'direct', 'instagram', 'newsletter'])[1 + (hashint8(g * 3) & 3)]),
       (SELECT max(batch_id) FROM analytics.etl_batches WHERE pipeline = 'clickstream_hourly'), date_trunc('hour', now()) + interval '8 minutes'
FROM generate_series(1, 400 * :volume) g;

-- dbt project.
INSERT INTO analytics.dbt_models (model_name, materialization, relation_name, depends_on, owner_team, sql_checksum, schedule, tags,
                                  last_run_at, last_run_status, row_count, description)
SELECT v.name, v.mat, v.rel, v.deps, v.team, md5(v.name || ':v' || v.rev), v.sched, v.tags,
       date_trunc('day', now() - interval '3 hours 30 minutes') + interval '3 hours 10 minutes',
       CASE WHEN v.name = 'int_sessions_attributed' THEN 'error' ELSE 'success' END, NULL, v.descr
FROM (VALUES
    ('stg_orders', 'view', NULL, '{}'::text[], 'data-platform', 3, 'hourly', '{staging}'::text[], 'Typed view over the orders extract.'),
    ('stg_payments', 'view', NULL, '{}', 'data-platform', 2, 'hourly', '{staging}', 'Typed view over the payments extract.'),
    ('stg_clickstream', 'view', NULL, '{}', 'data-platform', 5, 'hourly', '{staging}', 'Typed view over the clickstream drop.'),
    ('int_orders_deduped', 'ephemeral', NULL, '{stg_orders}', 'data-platform', 4, 'hourly', '{}', 'Latest version of each order line.'),
    ('int_sessions_attributed', 'ephemeral', NULL, '{stg_clickstream}', 'growth', 7, 'hourly', '{attribution}', 'Sessions with last-touch UTM attribution.'),
    ('dim_date', 'table', 'analytics.dim_date', '{}', 'data-platform', 1, 'manual', '{core}', 'Calendar.'),
    ('dim_merchant', 'incremental', 'analytics.dim_merchant', '{}', 'data-platform', 6, 'nightly', '{core,scd2}', 'Merchants, type 2.'),
    ('dim_product', 'incremental', 'analytics.dim_product', '{}', 'data-platform', 4, 'nightly', '{core,scd2}', 'SKUs, type 2.'),
    ('dim_customer', 'incremental', 'analytics.dim_customer', '{}', 'data-platform', 3, 'nightly', '{core,pseudonymised}', 'Buyers, pseudonymised.'),
    ('fct_orders', 'incremental', 'analytics.fact_orders', '{int_orders_deduped,dim_merchant,dim_product,dim_customer}', 'data-platform', 9, 'hourly', '{core,finance}', 'Order lines.'),
    ('fct_payments', 'incremental', 'analytics.fact_payments', '{stg_payments,dim_merchant}', 'payments-data', 6, 'hourly', '{core,finance}', 'Payment attempts.'),
    ('fct_sessions', 'incremental', 'analytics.fact_sessions', '{int_sessions_attributed}', 'growth', 5, 'hourly', '{growth}', 'Sessions.'),
    ('mart_merchant_monthly', 'incremental', 'analytics.mart_merchant_monthly', '{fct_orders,fct_payments,dim_merchant}', 'finance-data', 8, 'nightly', '{finance}', 'Merchant GMV and fees per month.'),
    ('mart_customer_cohorts', 'table', 'analytics.mart_customer_cohorts', '{fct_orders,dim_customer}', 'growth', 3, 'nightly', '{growth}', 'Retention cohorts.'),
    ('mv_daily_merchant_revenue', 'materialized_view', NULL, '{fct_orders,dim_merchant}', 'finance-data', 2, 'nightly', '{dashboards}', 'Daily revenue per merchant.'),
    ('mv_payment_method_mix', 'materialized_view', NULL, '{fct_payments}', 'payments-data', 2, 'nightly', '{dashboards}', 'Monthly payment method mix.'),
    ('mv_conversion_funnel_daily', 'materialized_view', NULL, '{fct_sessions}', 'growth', 4, 'nightly', '{dashboards}', 'Daily session funnel.')
) AS v(name, mat, rel, deps, team, rev, sched, tags, descr);

INSERT INTO analytics.dbt_model_runs (invocation_id, model_name, started_at, finished_at, status, rows_affected, message)
SELECT md5('dbt-invocation:' || d)::uuid, m.model_name,
       b.run_start + make_interval(secs => m.n * 20),
       b.run_start + make_interval(secs => m.n * 20 + 5 + (hashint8(d * 31 + m.n) & 63)::int),
       CASE WHEN m.model_name = 'int_sessions_attributed' AND d = 0 THEN 'error'
            WHEN (hashint8(d * 131 + m.n) & 255) = 0 THEN 'error' ELSE 'success' END,
       CASE WHEN m.materialization IN ('table', 'incremental') THEN (hashint8(d * 7 + m.n) & 65535) END,
       CASE WHEN m.model_name = 'int_sessions_attributed' AND d = 0 THEN 'Database Error: column "utm_campaign" does not exist'
            WHEN (hashint8(d * 131 + m.n) & 255) = 0 THEN 'Database Error: canceling statement due to lock timeout' END
FROM generate_series(0, 179) d
CROSS JOIN LATERAL (SELECT date_trunc('day', now() - interval '3 hours 30 minutes') + interval '3 hours' - make_interval(days => d) AS run_start) b
CROSS JOIN (SELECT model_name, materialization, row_number() OVER (ORDER BY model_name)::int AS n
            FROM analytics.dbt_models WHERE schedule <> 'manual') m;

UPDATE analytics.dbt_models m SET row_count = c.n
FROM (VALUES ('dim_date', (SELECT count(*) FROM analytics.dim_date)),
             ('dim_merchant', (SELECT count(*) FROM analytics.dim_merchant)),
             ('dim_product', (SELECT count(*) FROM analytics.dim_product))) AS c(name, n)
WHERE m.model_name = c.name;

-- dbt tables built from the facts.
INSERT INTO analytics.mart_merchant_monthly (month, merchant_id, orders, units, gmv_eur_cents, refunded_eur_cents, take_rate_bps,
                                             fees_eur_cents, active_skus, built_at)
SELECT date_trunc('month', f.order_date)::date AS month, m.merchant_id, count(DISTINCT f.order_id), sum(f.qty),
       sum(f.gross_eur_cents) FILTER (WHERE f.status <> 'cancelled'),
       coalesce(sum(f.gross_eur_cents) FILTER (WHERE f.status IN ('refunded', 'partially_refunded')), 0),
       max(m.take_rate_bps),
       (sum(f.gross_eur_cents) FILTER (WHERE f.status <> 'cancelled') * max(m.take_rate_bps) / 10000)::bigint,
       count(DISTINCT f.product_key),
       date_trunc('month', f.order_date)::date + interval '1 month 1 day 3 hours'
FROM analytics.fact_orders f JOIN analytics.dim_merchant m ON m.merchant_key = f.merchant_key
WHERE f.order_date < date_trunc('month', now()) AND f.order_date >= date_trunc('month', now()) - interval '22 months'
GROUP BY 1, 2
HAVING sum(f.gross_eur_cents) FILTER (WHERE f.status <> 'cancelled') IS NOT NULL;

INSERT INTO analytics.mart_customer_cohorts (cohort_month, months_since, customers, orders, revenue_eur_cents, built_at)
SELECT date_trunc('month', c.first_order_date)::date,
       ((extract(year FROM f.order_date) - extract(year FROM c.first_order_date)) * 12
         + extract(month FROM f.order_date) - extract(month FROM c.first_order_date))::smallint,
       count(DISTINCT f.customer_key), count(*), sum(f.gross_eur_cents),
       date_trunc('day', now()) + interval '3 hours'
FROM analytics.fact_orders f JOIN analytics.dim_customer c ON c.customer_key = f.customer_key
WHERE f.status <> 'cancelled' AND c.first_order_date >= date_trunc('month', now()) - interval '22 months'
GROUP BY 1, 2;
