-- Payments data: five years of a marketplace's payments, deterministic (hash-derived), sized
-- by :volume. A few big merchants take most of the volume (power law over merchants 1..100;
-- merchant 101 onboarded this week and has no payments yet). Triggers (append-only ledger,
-- running balances, refund sync) and FK checks are off while loading: the data is built
-- consistent, and balances and refund totals are computed here in bulk.
SET session_replication_role = replica;

INSERT INTO payments.currencies (code, name, minor_units, enabled) VALUES
    ('USD', 'US dollar', 2, true), ('EUR', 'Euro', 2, true), ('GBP', 'Pound sterling', 2, true),
    ('CAD', 'Canadian dollar', 2, true), ('AUD', 'Australian dollar', 2, true),
    ('JPY', 'Yen', 0, true), ('CHF', 'Swiss franc', 2, true), ('SEK', 'Swedish krona', 2, true),
    ('NOK', 'Norwegian krone', 2, true), ('DKK', 'Danish krone', 2, true),
    ('PLN', 'Zloty', 2, true), ('MXN', 'Mexican peso', 2, true), ('SGD', 'Singapore dollar', 2, true),
    ('NZD', 'New Zealand dollar', 2, true), ('HKD', 'Hong Kong dollar', 2, true),
    ('BRL', 'Brazilian real', 2, false),   -- stopped processing in BRL; kept for history
    ('KWD', 'Kuwaiti dinar', 3, false);    -- three minor units: kept to test amount scaling

INSERT INTO payments.providers (id, code, name, kind, supported_currencies, enabled, onboarded_on) VALUES
    (1, 'adyen', 'Adyen', 'card_acquirer', '{USD,EUR,GBP,CAD,AUD,JPY,CHF,SEK,NOK,DKK,PLN}', true, current_date - 1826),
    (2, 'stripe', 'Stripe', 'card_acquirer', '{USD,EUR,GBP,CAD,AUD,JPY}', true, current_date - 1500),
    (3, 'braintree', 'Braintree', 'card_acquirer', '{USD,EUR,GBP}', false, current_date - 1826),
    (4, 'paypal', 'PayPal', 'wallet', '{USD,EUR,GBP,CAD,AUD}', true, current_date - 1400),
    (5, 'klarna', 'Klarna', 'bnpl', '{USD,EUR,GBP,SEK}', true, current_date - 900),
    (6, 'worldpay', 'Worldpay', 'card_acquirer', '{USD,GBP,EUR}', true, current_date - 700);

INSERT INTO payments.merchant_settings (merchant_id, settlement_currency, primary_provider_id,
    payout_schedule, payout_delay_days, statement_descriptor, mcc, manual_capture,
    payouts_paused, created_at, updated_at)
SELECT m,
    CASE WHEN m IN (42, 77) THEN 'JPY'
         WHEN m % 25 = 11 THEN 'AUD'
         WHEN m % 20 = 9 THEN 'CAD'
         WHEN m % 10 IN (3, 7) THEN 'EUR'
         WHEN m % 10 = 5 THEN 'GBP'
         ELSE 'USD' END,
    CASE WHEN m % 7 = 0 THEN 2 WHEN m % 13 = 0 THEN 6 ELSE 1 END,
    CASE WHEN m = 101 THEN 'manual' WHEN m % 17 = 0 THEN 'monthly'
         WHEN m <= 12 THEN 'daily' ELSE 'weekly' END,
    CASE WHEN m <= 10 THEN 1 WHEN m > 95 THEN 7 ELSE 2 END,
    'MKT*MERCHANT ' || m,
    (ARRAY['5411', '5732', '5651', '5999', '5812', '5942', '5499', '7011'])[1 + m % 8],
    m % 8 = 7,   -- mcc 7011 (hotels): authorise at booking, capture at check-out
    m = 63,      -- paused pending KYC refresh
    now() - make_interval(days => CASE WHEN m = 101 THEN 3 ELSE 1826 - m * 17 END),
    now() - make_interval(days => (hashint4(m) & 1023) % 400)
FROM generate_series(1, 101) m;

INSERT INTO payments.fee_schedules (id, name, provider_id, percent_bps, fixed_cents,
    international_bps, dispute_fee_cents, payout_fee_cents, currency, valid_from, valid_to) VALUES
    (1, 'standard-usd-2021', NULL, 290, 30, 150, 1500, 25, 'USD', current_date - 1826, current_date - 900),
    (2, 'standard-usd', NULL, 270, 30, 150, 1500, 25, 'USD', current_date - 900, NULL),
    (3, 'growth-usd', NULL, 240, 25, 100, 1500, 0, 'USD', current_date - 1826, NULL),
    (4, 'enterprise-usd-a', NULL, 180, 20, 80, 1000, 0, 'USD', current_date - 1826, NULL),
    (5, 'enterprise-usd-b', NULL, 205, 15, 80, 1000, 0, 'USD', current_date - 600, NULL),
    (6, 'standard-eur', NULL, 250, 25, 150, 1500, 0, 'EUR', current_date - 1826, NULL),
    (7, 'growth-eur', NULL, 210, 20, 100, 1500, 0, 'EUR', current_date - 1826, NULL),
    (8, 'standard-gbp', NULL, 250, 20, 150, 1500, 0, 'GBP', current_date - 1826, NULL),
    (9, 'standard-cad', NULL, 290, 30, 150, 1500, 0, 'CAD', current_date - 1826, NULL),
    (10, 'standard-aud', NULL, 280, 30, 150, 2500, 0, 'AUD', current_date - 1826, NULL),
    (11, 'standard-jpy', NULL, 360, 0, 150, 1500, 0, 'JPY', current_date - 1826, NULL),
    (12, 'paypal-passthrough', 4, 349, 49, 150, 2000, 0, 'USD', current_date - 1400, NULL),
    (13, 'klarna-passthrough', 5, 529, 30, 0, 0, 0, 'USD', current_date - 900, NULL),
    (14, 'nonprofit-usd', NULL, 220, 30, 150, 0, 0, 'USD', current_date - 1200, NULL);

-- Merchant fee plans: the big merchants negotiated, USD standard merchants moved from the
-- 2021 list price to the current one; everyone else on their currency's standard plan.
INSERT INTO payments.merchant_fee_plans (merchant_id, fee_schedule_id, valid_from, valid_to, negotiated_by)
SELECT s.merchant_id, p.fee_schedule_id, p.valid_from, p.valid_to, p.negotiated_by
FROM payments.merchant_settings s
CROSS JOIN LATERAL (
    SELECT * FROM (VALUES
        -- first plan
        (CASE WHEN s.merchant_id <= 3 THEN 3
              WHEN s.settlement_currency = 'USD' THEN 1
              WHEN s.settlement_currency = 'EUR' THEN 6
              WHEN s.settlement_currency = 'GBP' THEN 8
              WHEN s.settlement_currency = 'CAD' THEN 9
              WHEN s.settlement_currency = 'AUD' THEN 10
              ELSE 11 END,
         s.created_at::date,
         CASE WHEN s.merchant_id <= 3 THEN (s.created_at + interval '400 days')::date
              WHEN s.settlement_currency = 'USD' AND s.merchant_id <> 88
                   AND s.created_at::date < current_date - 900 THEN current_date - 900
              WHEN s.merchant_id IN (7, 13) THEN (s.created_at + interval '700 days')::date
              ELSE NULL END,
         NULL::text),
        -- renegotiated / repriced plan
        (CASE WHEN s.merchant_id <= 3 THEN 4 WHEN s.merchant_id IN (7, 13) THEN 7 ELSE 2 END,
         CASE WHEN s.merchant_id <= 3 THEN (s.created_at + interval '400 days')::date
              WHEN s.merchant_id IN (7, 13) THEN (s.created_at + interval '700 days')::date
              ELSE current_date - 900 END,
         NULL::date,
         CASE WHEN s.merchant_id <= 3 OR s.merchant_id IN (7, 13) THEN 'enterprise sales' END)
    ) v(fee_schedule_id, valid_from, valid_to, negotiated_by)
) p
WHERE p.valid_from IS NOT NULL
  AND (p.negotiated_by IS NOT NULL OR p.valid_from = s.created_at::date
       OR (s.settlement_currency = 'USD' AND s.merchant_id <> 88 AND s.merchant_id > 3
           AND s.merchant_id NOT IN (7, 13) AND s.created_at::date < current_date - 900));
-- merchant 88 is a registered charity
UPDATE payments.merchant_fee_plans SET fee_schedule_id = 14, negotiated_by = 'nonprofit programme'
WHERE merchant_id = 88;

INSERT INTO payments.reserves (merchant_id, percent_bps, hold_days, reason, valid_from, valid_to, created_by) VALUES
    (101, 1000, 90, 'new merchant: standard onboarding reserve', current_date - 3, NULL, 'onboarding'),
    (96, 1000, 90, 'new merchant: standard onboarding reserve', current_date - 190, current_date - 100, 'onboarding'),
    (97, 1000, 90, 'new merchant: standard onboarding reserve', current_date - 173, current_date - 83, 'onboarding'),
    (98, 1000, 90, 'new merchant: standard onboarding reserve', current_date - 156, current_date - 66, 'onboarding'),
    (99, 1000, 90, 'new merchant: standard onboarding reserve', current_date - 139, current_date - 49, 'onboarding'),
    (100, 1000, 90, 'new merchant: standard onboarding reserve', current_date - 122, current_date - 32, 'onboarding'),
    (31, 500, 120, 'chargeback ratio above 0.9% for two consecutive months', current_date - 820, current_date - 640, 'm.okafor'),
    (58, 1500, 180, 'ticket pre-sales: delivery up to six months after payment', current_date - 1100, NULL, 'j.lindqvist'),
    (63, 2500, 120, 'KYC refresh overdue; payouts paused', current_date - 40, NULL, 'kyc-review'),
    (84, 500, 60, 'card testing attack, March', current_date - 410, current_date - 350, 'm.okafor');

INSERT INTO payments.merchant_bank_accounts (id, merchant_id, bank_name, country, currency,
    account_last4, vault_token, is_default, verified_at, created_at, disabled_at)
SELECT row_number() OVER (ORDER BY b.created_at, b.merchant_id), b.*
FROM (
    SELECT s.merchant_id,
        (ARRAY['JPMorgan Chase', 'Bank of America', 'Wells Fargo', 'Silicon Valley Bank',
               'Deutsche Bank', 'BNP Paribas', 'Barclays', 'HSBC', 'RBC', 'Commonwealth Bank',
               'MUFG', 'ING'])[1 + (hashint4(s.merchant_id * 3 + v.k) & 2147483647) % 12],
        CASE s.settlement_currency WHEN 'USD' THEN 'US' WHEN 'EUR' THEN (ARRAY['DE', 'FR', 'NL', 'IE'])[1 + s.merchant_id % 4]
             WHEN 'GBP' THEN 'GB' WHEN 'CAD' THEN 'CA' WHEN 'AUD' THEN 'AU' ELSE 'JP' END,
        s.settlement_currency,
        lpad(((hashint4(s.merchant_id * 7 + v.k) & 2147483647) % 10000)::text, 4, '0'),
        'btok_' || substr(md5('bank' || s.merchant_id || '-' || v.k), 1, 24),
        v.k = 2 OR s.merchant_id % 6 <> 1 OR s.created_at >= now() - interval '400 days',
        CASE WHEN s.merchant_id <> 101 THEN s.created_at + make_interval(days => (v.k - 1) * 400 + 2) END,
        s.created_at + make_interval(days => (v.k - 1) * 400),
        CASE WHEN v.k = 1 AND s.merchant_id % 6 = 1 AND s.created_at < now() - interval '400 days'
             THEN s.created_at + make_interval(days => 400) END
    FROM payments.merchant_settings s
    CROSS JOIN (VALUES (1), (2)) v(k)
    -- every sixth merchant switched banks once (after ~400 days); the old account is disabled
    WHERE (v.k = 1 OR (s.merchant_id % 6 = 1 AND s.created_at < now() - interval '400 days'))
) b(merchant_id, bank_name, country, currency, account_last4, vault_token, is_default,
    verified_at, created_at, disabled_at);
-- Chart of accounts ------------------------------------------------------------------------
INSERT INTO payments.ledger_accounts (id, code, name, kind, purpose, normal_balance, currency,
    merchant_id, provider_id, parent_id, opened_at)
VALUES
    (1, '1000', 'Assets', 'asset', 'rollup', 'D', 'USD', NULL, NULL, NULL, now() - interval '1826 days'),
    (2, '2000', 'Liabilities', 'liability', 'rollup', 'C', 'USD', NULL, NULL, NULL, now() - interval '1826 days'),
    (3, '4000', 'Revenue', 'revenue', 'rollup', 'C', 'USD', NULL, NULL, NULL, now() - interval '1826 days'),
    (4, '5000', 'Expenses', 'expense', 'rollup', 'D', 'USD', NULL, NULL, NULL, now() - interval '1826 days'),
    (5, '1100', 'Provider clearing', 'asset', 'rollup', 'D', 'USD', NULL, NULL, 1, now() - interval '1826 days'),
    (6, '2100', 'Merchant payables', 'liability', 'rollup', 'C', 'USD', NULL, NULL, 2, now() - interval '1826 days');

INSERT INTO payments.ledger_accounts (id, code, name, kind, purpose, normal_balance, currency,
    merchant_id, provider_id, parent_id, opened_at)
SELECT 6 + row_number() OVER (ORDER BY a.ord, a.code), a.code, a.name, a.kind::payments.account_kind,
    a.purpose, a.normal_balance, a.currency, a.merchant_id, a.provider_id, a.parent_id, a.opened_at
FROM (
    -- platform accounts per settlement currency
    SELECT 1 AS ord, x.code_prefix || '-' || c.code AS code, x.name || ' ' || c.code AS name,
        x.kind, x.purpose, x.nb AS normal_balance, c.code AS currency, NULL::int AS merchant_id,
        NULL::smallint AS provider_id, x.parent AS parent_id, now() - interval '1826 days' AS opened_at
    FROM (VALUES ('USD'), ('EUR'), ('GBP'), ('CAD'), ('AUD'), ('JPY')) c(code)
    CROSS JOIN (VALUES
        ('1010', 'Operating cash', 'asset', 'operating_cash', 'D', 1),
        ('1900', 'Suspense', 'asset', 'suspense', 'D', 1),
        ('4010', 'Processing fee revenue', 'revenue', 'fee_revenue', 'C', 3),
        ('4020', 'Dispute fee revenue', 'revenue', 'dispute_fee_revenue', 'C', 3),
        ('5020', 'Provider processing cost', 'expense', 'processing_cost', 'D', 4),
        ('5010', 'FX gain/loss', 'expense', 'fx_gain_loss', 'D', 4)
    ) x(code_prefix, name, kind, purpose, nb, parent)
    UNION ALL
    -- provider clearing per provider and currency it settles for us
    SELECT 2, '1100-' || upper(p.code) || '-' || c, p.name || ' clearing ' || c, 'asset',
        'provider_clearing', 'D', c, NULL, p.id, 5, p.onboarded_on::timestamptz
    FROM payments.providers p
    CROSS JOIN LATERAL unnest(p.supported_currencies) c
    WHERE c IN ('USD', 'EUR', 'GBP', 'CAD', 'AUD', 'JPY')
    UNION ALL
    -- what we owe each merchant
    SELECT 3, '2100-M' || lpad(s.merchant_id::text, 4, '0') || '-' || s.settlement_currency,
        'Payable to merchant ' || s.merchant_id, 'liability', 'merchant_payable', 'C',
        s.settlement_currency, s.merchant_id, NULL, 6, s.created_at
    FROM payments.merchant_settings s
    UNION ALL
    SELECT 4, '2200-M' || lpad(r.merchant_id::text, 4, '0') || '-' || s.settlement_currency,
        'Reserve held for merchant ' || r.merchant_id, 'liability', 'merchant_reserve', 'C',
        s.settlement_currency, r.merchant_id, NULL, 2, min(r.valid_from)::timestamptz
    FROM payments.reserves r JOIN payments.merchant_settings s USING (merchant_id)
    GROUP BY r.merchant_id, s.settlement_currency
) a;

INSERT INTO payments.ledger_periods (period_start, status, closed_at, closed_by)
SELECT p::date,
    CASE WHEN p = date_trunc('month', now()) THEN 'open'
         WHEN p = date_trunc('month', now()) - interval '1 month'
              AND extract(day FROM now()) <= 6 THEN 'closing'
         ELSE 'closed' END,
    CASE WHEN p < date_trunc('month', now()) - interval '1 month'
              OR (p = date_trunc('month', now()) - interval '1 month' AND extract(day FROM now()) > 6)
         THEN p + interval '1 month' + interval '5 days 18 hours' END,
    CASE WHEN p < date_trunc('month', now()) - interval '1 month'
              OR (p = date_trunc('month', now()) - interval '1 month' AND extract(day FROM now()) > 6)
         THEN (ARRAY['a.mensah', 'r.tanaka', 'finance-close-bot'])[1 + (extract(month FROM p)::int % 3)] END
FROM generate_series(date_trunc('month', now() - interval '1826 days'), date_trunc('month', now()),
                     interval '1 month') p;

-- FX: daily rates USD -> 9 currencies (the settlement currencies and the main presentment ones) for five years (a smooth deterministic walk).
INSERT INTO payments.fx_rates (base, quote, valid_during, rate, source, fetched_at)
SELECT 'USD', q.code,
    tstzrange(d, d + interval '1 day'),
    round((q.mid * (1 + 0.06 * sin(extract(epoch FROM d) / 86400 / 97 + q.k)
                      + 0.015 * sin(extract(epoch FROM d) / 86400 / 11 + 2 * q.k)))::numeric, 6),
    'ecb', d - interval '8 hours'
FROM generate_series(date_trunc('day', now() - interval '1826 days'), date_trunc('day', now()),
                     interval '1 day') d
CROSS JOIN (VALUES ('EUR', 0.92, 1), ('GBP', 0.79, 2), ('CAD', 1.36, 3), ('AUD', 1.52, 4),
                   ('JPY', 149.5, 5), ('CHF', 0.88, 6), ('SEK', 10.6, 7), ('MXN', 17.4, 8),
                   ('SGD', 1.35, 9)) q(code, mid, k)
ORDER BY d, q.k;

-- Payment methods: saved cards, skewed to the big merchants; the same card (fingerprint)
-- shows up at several merchants.
INSERT INTO payments.payment_methods (id, merchant_id, fingerprint, brand, last4, exp_month,
    exp_year, wallet, billing_country, created_at)
SELECT g,
    1 + floor(least(100, greatest(1, floor((1826 - 1800 * power(1 - g::float8 / (800 * :volume), 1.7)) / 17)))
              * power((hashint8(g * 8 + 1) & 2147483647)::float8 / 2147483648, 2.5))::int,
    'fp_' || substr(md5('card' || (hashint8(g * 8 + 2) & 2147483647) % (640 * :volume)), 1, 16),
    (ARRAY['visa', 'visa', 'visa', 'visa', 'mastercard', 'mastercard', 'mastercard', 'amex',
           'discover', 'jcb', 'unionpay', 'other'])[1 + (hashint8(g * 8 + 3) & 2147483647) % 12]::payments.card_brand,
    lpad(((hashint8(g * 8 + 4) & 2147483647) % 10000)::text, 4, '0'),
    1 + (hashint8(g * 8 + 5) & 2147483647) % 12,
    extract(year FROM now() - make_interval(secs => 155520000 * power(1 - g::float8 / (800 * :volume), 1.7)))::int
        + 1 + (hashint8(g * 8 + 6) & 2147483647) % 5,
    CASE (hashint8(g * 8 + 7) & 2147483647) % 10 WHEN 0 THEN 'apple_pay' WHEN 1 THEN 'google_pay' END,
    (ARRAY['US', 'US', 'US', 'US', 'GB', 'DE', 'FR', 'CA', 'AU', 'JP', 'NL', 'IE'])[1 + (hashint8(g * 8 + 8) & 2147483647) % 12],
    now() - make_interval(secs => 155520000 * power(1 - g::float8 / (800 * :volume), 1.7))
FROM generate_series(1, 800 * :volume) g;

-- Intents, staged once with every derived decision (status, refunds, disputes) so the tables
-- below agree with each other.
CREATE TEMP TABLE seed_intents AS
WITH base AS (
    SELECT g,
        -- only merchants already onboarded at the time (merchant m joined 1826 - 17 m days ago)
        1 + floor(least(100, greatest(1, floor((1826 - 1800 * power(1 - g::float8 / (2000 * :volume), 1.7)) / 17)))
                  * power((hashint8(g * 16 + 1) & 2147483647)::float8 / 2147483648, 2.5))::int AS merchant_id,
        155520000 * power(1 - g::float8 / (2000 * :volume), 1.7) AS age_s,
        ((hashint8(g * 16 + 2) & 2147483647) + 1)::float8 / 2147483649 AS u1,
        (hashint8(g * 16 + 3) & 2147483647)::float8 / 2147483648 AS u2,
        (hashint8(g * 16 + 4) & 2147483647)::float8 / 2147483648 AS u3,
        (hashint8(g * 16 + 5) & 2147483647)::float8 / 2147483648 AS u4,
        (hashint8(g * 16 + 6) & 2147483647)::float8 / 2147483648 AS u5,
        (hashint8(g * 16 + 7) & 2147483647)::float8 / 2147483648 AS u6,
        (hashint8(g * 16 + 8) & 2147483647)::float8 / 2147483648 AS u7
    FROM generate_series(1, 2000 * :volume) g
), priced AS (
    SELECT b.*, s.settlement_currency AS currency, s.manual_capture, s.primary_provider_id,
        now() - make_interval(secs => b.age_s) AS created_at,
        greatest(50, round((1200 + (b.merchant_id * 7919) % 8800)
                           * exp(0.85 * sqrt(-2 * ln(b.u1)) * cos(2 * pi() * b.u2))
                           * CASE s.settlement_currency WHEN 'JPY' THEN 1.5 WHEN 'EUR' THEN 0.92
                                 WHEN 'GBP' THEN 0.79 WHEN 'CAD' THEN 1.36 WHEN 'AUD' THEN 1.52
                                 ELSE 1 END))::bigint AS amount
    FROM base b JOIN payments.merchant_settings s ON s.merchant_id = b.merchant_id
), decided AS (
    SELECT p.*,
        CASE WHEN p.age_s < 900 AND p.u3 < 0.25 THEN
                 (ARRAY['requires_payment_method', 'requires_confirmation', 'requires_action',
                        'processing'])[1 + floor(p.u4 * 4)::int]
             WHEN p.manual_capture AND p.age_s < 7 * 86400 AND p.u3 < 0.45 THEN 'requires_capture'
             WHEN p.u3 < 0.86 THEN 'succeeded'
             WHEN p.u3 < 0.925 THEN 'requires_payment_method'
             WHEN p.u3 < 0.975 THEN 'canceled'
             ELSE 'requires_action' END::payments.intent_status AS status,
        -- routing: wallets and BNPL by shopper choice, Braintree until its migration,
        -- a 3% failover to Stripe, otherwise the merchant's primary acquirer
        CASE WHEN p.u4 < 0.06 AND p.currency <> 'JPY' AND p.created_at > now() - interval '1400 days' THEN 4
             WHEN p.u4 < 0.10 AND p.currency IN ('USD', 'EUR', 'GBP') AND p.created_at > now() - interval '900 days' THEN 5
             WHEN p.u4 > 0.97 AND p.created_at > now() - interval '1500 days' THEN 2
             WHEN p.primary_provider_id = 1 AND p.created_at < now() - interval '1000 days'
                  AND p.currency IN ('USD', 'EUR', 'GBP') AND p.u7 < 0.3 THEN 3
             WHEN p.primary_provider_id = 6 AND (p.currency NOT IN ('USD', 'GBP', 'EUR')
                  OR p.created_at < now() - interval '700 days') THEN 1
             WHEN p.primary_provider_id = 2 AND p.created_at < now() - interval '1500 days' THEN 1
             ELSE p.primary_provider_id END::smallint AS provider_id
    FROM priced p
)
SELECT d.g AS id, d.merchant_id, d.currency, d.amount, d.status, d.provider_id, d.created_at,
    d.age_s, d.u5, d.u6, d.u7,
    CASE WHEN d.manual_capture THEN 'manual' ELSE 'automatic' END AS capture_method,
    CASE WHEN d.status = 'succeeded' THEN d.created_at
        + make_interval(secs => least(d.age_s * 0.9,
              CASE WHEN d.manual_capture THEN 3600 + d.u6 * 86400 * 3 ELSE 1 + d.u6 * 4 END))
    END AS captured_at,
    -- attempts: most succeed first time, declines retried
    CASE WHEN d.status = 'succeeded' THEN CASE WHEN d.u7 < 0.85 THEN 1 WHEN d.u7 < 0.97 THEN 2 ELSE 3 END
         WHEN d.status = 'requires_payment_method' THEN 1 + floor(d.u7 * 3)::int
         WHEN d.status IN ('requires_confirmation') THEN 0
         ELSE 1 END AS n_attempts,
    -- refunds: 4.5% of captured payments, a third of them partial, some in two parts
    CASE WHEN d.status <> 'succeeded' OR d.u5 >= 0.045 THEN 0
         WHEN d.u6 < 0.66 THEN 1 WHEN d.u6 < 0.9 THEN 2 ELSE 3 END AS refund_kind,
    -- disputes: 0.4% of captured payments older than a day (none on refunded ones)
    d.status = 'succeeded' AND d.u5 >= 0.045 AND d.u5 < 0.049 AND d.age_s > 86400 AS disputed
FROM decided d;

-- merchant's card for an intent: a saved payment method of the same merchant when there is one
CREATE TEMP TABLE seed_pm AS
SELECT merchant_id, id, row_number() OVER (PARTITION BY merchant_id ORDER BY id) AS n,
    count(*) OVER (PARTITION BY merchant_id) AS cnt
FROM payments.payment_methods;

INSERT INTO payments.payment_intents (id, public_id, merchant_id, order_id, amount_cents, currency,
    status, capture_method, provider_id, payment_method_id, amount_captured_cents,
    amount_refunded_cents, cancellation_reason, metadata, created_at, updated_at)
SELECT i.id, md5('pi' || i.id)::uuid, i.merchant_id,
    CASE WHEN i.u7 < 0.92 THEN 1 + (hashint8(i.id) & 2147483647) % (100 * 3000 * :scale) END,
    i.amount, i.currency, i.status, i.capture_method,
    CASE WHEN i.n_attempts > 0 THEN i.provider_id END,
    CASE WHEN i.status NOT IN ('requires_payment_method', 'requires_confirmation') THEN pm.id END,
    CASE WHEN i.status = 'succeeded' THEN i.amount ELSE 0 END,
    0,
    CASE WHEN i.status = 'canceled' THEN (ARRAY['abandoned', 'requested_by_customer', 'duplicate', 'fraudulent', 'automatic'])[1 + floor(i.u6 * 5)::int] END,
    CASE WHEN i.u6 < 0.3 THEN jsonb_build_object('channel', 'web', 'cart_id', 'c_' || substr(md5('cart' || i.id), 1, 12))
         WHEN i.u6 < 0.5 THEN jsonb_build_object('channel', 'ios', 'app_version', '7.' || (i.id % 40))
         WHEN i.u6 < 0.6 THEN jsonb_build_object('channel', 'android', 'app_version', '7.' || (i.id % 40))
         WHEN i.u6 < 0.62 THEN jsonb_build_object('channel', 'api', 'invoice', 'INV-' || i.id)
         ELSE '{}'::jsonb END,
    i.created_at,
    coalesce(i.captured_at, i.created_at + interval '2 seconds')
FROM seed_intents i
LEFT JOIN (SELECT merchant_id, max(cnt) AS cnt FROM seed_pm GROUP BY merchant_id) pc ON pc.merchant_id = i.merchant_id
LEFT JOIN seed_pm pm ON pm.merchant_id = i.merchant_id AND pm.n = 1 + (hashint8(i.id * 5) & 2147483647) % pc.cnt;

-- Attempts: earlier ones declined, the last one carries the intent's outcome.
INSERT INTO payments.payment_attempts (id, intent_id, attempt_no, provider_id, provider_ref, status,
    amount_cents, decline_code, latency_ms, created_at, completed_at, response)
SELECT row_number() OVER (ORDER BY i.id, a.n), i.id, a.n, i.provider_id,
    CASE WHEN st.status <> 'pending' THEN
        CASE i.provider_id WHEN 1 THEN upper(substr(md5('psp' || i.id || '-' || a.n), 1, 16))
                           WHEN 2 THEN 'ch_' || substr(md5('psp' || i.id || '-' || a.n), 1, 24)
                           WHEN 4 THEN upper(substr(md5('psp' || i.id || '-' || a.n), 1, 17))
                           ELSE substr(md5('psp' || i.id || '-' || a.n), 1, 20) END END,
    st.status, i.amount,
    CASE WHEN st.status = 'declined' THEN
        (ARRAY['insufficient_funds', 'insufficient_funds', 'do_not_honor', 'do_not_honor',
               'do_not_honor', 'expired_card', 'incorrect_cvc', 'card_velocity_exceeded',
               'stolen_card', 'authentication_required'])[1 + (hashint8(i.id * 31 + a.n) & 2147483647) % 10] END,
    CASE WHEN st.status = 'pending' THEN NULL
         ELSE 120 + ((hashint8(i.id * 37 + a.n) & 2147483647) % 600)
              + CASE WHEN (hashint8(i.id * 41 + a.n) & 2147483647) % 100 = 0 THEN 8000 ELSE 0 END END,
    i.created_at + make_interval(secs => (a.n - 1) * 45),
    CASE WHEN st.status <> 'pending' THEN i.created_at + make_interval(secs => (a.n - 1) * 45 + 1) END,
    CASE WHEN st.status = 'pending' THEN NULL
         ELSE jsonb_build_object('result', st.status, 'avs', (ARRAY['Y', 'Y', 'Z', 'N', 'U'])[1 + (i.id % 5)],
                                 'cvc', CASE WHEN a.n % 7 = 0 THEN 'N' ELSE 'M' END,
                                 'network_tx_id', substr(md5('ntx' || i.id || a.n), 1, 15)) END
FROM seed_intents i
CROSS JOIN LATERAL generate_series(1, i.n_attempts) a(n)
CROSS JOIN LATERAL (SELECT CASE
        WHEN a.n < i.n_attempts THEN 'declined'
        WHEN i.status = 'succeeded' THEN 'captured'
        WHEN i.status = 'requires_capture' THEN 'authorized'
        WHEN i.status = 'canceled' THEN CASE WHEN i.u6 < 0.5 THEN 'voided' ELSE 'declined' END
        WHEN i.status = 'requires_payment_method' THEN 'declined'
        WHEN i.status IN ('processing', 'requires_action') THEN 'pending'
        ELSE 'failed' END::payments.attempt_status AS status) st;

-- Refunds (kind 1: full, 2: partial, 3: two partials). Recent ones may still be pending;
-- 1.5% failed (card closed) and were not retried.
CREATE TEMP TABLE seed_refunds AS
SELECT row_number() OVER (ORDER BY r.created_at, r.intent_id, r.part) AS id, r.*
FROM (
    SELECT i.id AS intent_id, p.part, i.currency, i.merchant_id, i.provider_id,
        CASE WHEN i.refund_kind = 1 THEN i.amount
             WHEN i.refund_kind = 2 THEN greatest(1, round(i.amount * (0.2 + 0.6 * i.u7)))::bigint
             WHEN p.part = 1 THEN greatest(1, round(i.amount * 0.4))::bigint
             ELSE greatest(1, round(i.amount * 0.35))::bigint END AS amount,
        least(now() - interval '1 minute',
              i.captured_at + make_interval(secs => (86400 * (0.5 + 40 * i.u6 * i.u6) * p.part)::int)) AS created_at,
        i.u6, i.u7
    FROM seed_intents i
    CROSS JOIN LATERAL generate_series(1, CASE WHEN i.refund_kind = 3 THEN 2 ELSE 1 END) p(part)
    WHERE i.refund_kind > 0
) r;

INSERT INTO payments.refunds (id, intent_id, amount_cents, currency, reason, status, provider_ref,
    requested_by, failure_code, created_at, processed_at, updated_at)
SELECT r.id, r.intent_id, r.amount, r.currency,
    (ARRAY['requested_by_customer', 'requested_by_customer', 'requested_by_customer',
           'order_canceled', 'order_canceled', 'product_not_received', 'duplicate', 'fraudulent',
           'other'])[1 + (hashint8(r.id * 3) & 2147483647) % 9]::payments.refund_reason,
    st.status,
    CASE WHEN st.status <> 'pending' THEN 're_' || substr(md5('re' || r.id), 1, 24) END,
    (ARRAY['api', 'api', 'api', 'dashboard', 'dashboard', 'support', 'system'])[1 + (hashint8(r.id * 5) & 2147483647) % 7],
    CASE WHEN st.status = 'failed' THEN (ARRAY['charge_for_closed_account', 'expired_or_canceled_card'])[1 + r.id % 2] END,
    r.created_at,
    CASE WHEN st.status IN ('succeeded', 'failed') THEN r.created_at + interval '3 seconds' END,
    r.created_at + CASE WHEN st.status IN ('succeeded', 'failed') THEN interval '3 seconds' ELSE interval '0' END
FROM seed_refunds r
CROSS JOIN LATERAL (SELECT CASE
        WHEN r.created_at > now() - interval '2 hours' AND (hashint8(r.id * 7) & 3) = 0 THEN 'pending'
        WHEN (hashint8(r.id * 11) & 2147483647) % 1000 < 15 THEN 'failed'
        ELSE 'succeeded' END::payments.refund_status AS status) st;

UPDATE payments.payment_intents i SET amount_refunded_cents = r.total
FROM (SELECT intent_id, sum(amount_cents) AS total FROM payments.refunds
      WHERE status = 'succeeded' GROUP BY intent_id) r
WHERE i.id = r.intent_id;

-- Disputes and chargebacks.
CREATE TEMP TABLE seed_disputes AS
SELECT row_number() OVER (ORDER BY x.opened_at, x.intent_id) AS id, x.*
FROM (
    SELECT i.id AS intent_id, i.provider_id, i.currency, i.amount, i.merchant_id, i.u6, i.u7,
        least(now() - interval '1 hour', i.captured_at + make_interval(days => 3 + floor(75 * i.u6)::int)) AS opened_at,
        CASE WHEN i.u7 < 0.45 THEN 'fraud' WHEN i.u7 < 0.7 THEN 'product_not_received'
             WHEN i.u7 < 0.85 THEN 'not_as_described' WHEN i.u7 < 0.9 THEN 'duplicate'
             WHEN i.u7 < 0.96 THEN 'credit_not_processed' ELSE 'general' END AS category
    FROM seed_intents i WHERE i.disputed
) x;

INSERT INTO payments.disputes (id, intent_id, provider_id, provider_ref, reason_code, category,
    status, amount_cents, currency, evidence_due_by, opened_at, closed_at, updated_at)
SELECT d.id, d.intent_id, d.provider_id, 'dp_' || substr(md5('dp' || d.id), 1, 24),
    CASE d.category WHEN 'fraud' THEN (ARRAY['10.4', '4837', '10.4', 'F29'])[1 + d.id % 4]
                    WHEN 'product_not_received' THEN (ARRAY['13.1', '4855'])[1 + d.id % 2]
                    WHEN 'not_as_described' THEN (ARRAY['13.3', '4853'])[1 + d.id % 2]
                    WHEN 'duplicate' THEN (ARRAY['12.6.1', '4834'])[1 + d.id % 2]
                    WHEN 'credit_not_processed' THEN (ARRAY['13.6', '4860'])[1 + d.id % 2]
                    ELSE '4853' END,
    d.category, st.status, d.amount, d.currency,
    d.opened_at + interval '18 days', d.opened_at,
    CASE WHEN st.status IN ('won', 'lost', 'accepted') THEN d.opened_at + make_interval(days => 20 + (d.id % 50)::int) END,
    CASE WHEN st.status IN ('won', 'lost', 'accepted') THEN d.opened_at + make_interval(days => 20 + (d.id % 50)::int)
         ELSE d.opened_at END
FROM seed_disputes d
CROSS JOIN LATERAL (SELECT CASE
        WHEN d.opened_at > now() - interval '70 days' AND d.opened_at + make_interval(days => 20 + (d.id % 50)::int) > now() THEN
             CASE WHEN d.opened_at > now() - interval '18 days' THEN
                       CASE WHEN d.u6 < 0.15 THEN 'warning_needs_response' ELSE 'needs_response' END
                  ELSE 'under_review' END
        WHEN d.u6 < 0.38 THEN 'won'
        WHEN d.u6 < 0.85 THEN 'lost'
        ELSE 'accepted' END::payments.dispute_status AS status) st;

INSERT INTO payments.dispute_evidence (dispute_id, kind, storage_key, submitted_by, submitted_at)
SELECT d.id, k.kind, 'disputes/' || d.id || '/' || k.kind || '-' || substr(md5('ev' || d.id || k.kind), 1, 8) || '.pdf',
    CASE WHEN d.id % 3 = 0 THEN 'support_console' ELSE 'merchant_dashboard' END,
    d.opened_at + make_interval(hours => 20 + k.n * 7)
FROM payments.disputes d
CROSS JOIN LATERAL (SELECT n, (ARRAY['receipt', 'shipping_proof', 'customer_communication', 'refund_policy'])[n] AS kind
                    FROM generate_series(1, 1 + (d.id % 4)::int) n) k
WHERE d.status IN ('under_review', 'won', 'lost')
ORDER BY 5, 1, 2;

-- the network debits every dispute except early warnings; won disputes are credited back
INSERT INTO payments.chargebacks (id, dispute_id, amount_cents, fee_cents, currency, debited_at, reversed_at)
SELECT d.id, d.id, d.amount_cents,
    CASE d.currency WHEN 'JPY' THEN 2250 ELSE 1500 END * CASE WHEN d.merchant_id = 88 THEN 0 ELSE 1 END,
    d.currency, d.opened_at + interval '1 hour',
    CASE WHEN d.status = 'won' THEN d.closed_at END
FROM (SELECT d.*, i.merchant_id FROM payments.disputes d JOIN payments.payment_intents i ON i.id = d.intent_id) d
WHERE d.status <> 'warning_needs_response';
-- (fee 0 for the charity, as its fee plan says)

-- Payouts: what merchants earned (captures less fees, refunds, chargebacks), paid out on
-- their schedule after their delay. Merchant 63's payouts are paused; merchant 101 is new.
CREATE TEMP TABLE seed_fee_rates AS
SELECT s.merchant_id, f.percent_bps, f.fixed_cents, f.payout_fee_cents, p.valid_from, p.valid_to, f.id AS fee_schedule_id
FROM payments.merchant_settings s
JOIN payments.merchant_fee_plans p ON p.merchant_id = s.merchant_id
JOIN payments.fee_schedules f ON f.id = p.fee_schedule_id;

CREATE TEMP TABLE seed_captures AS
SELECT i.id AS intent_id, i.merchant_id, i.currency, i.provider_id, i.amount, i.captured_at,
    coalesce(f.fee_schedule_id, 2) AS fee_schedule_id,
    greatest(1, round(i.amount * coalesce(f.percent_bps, 270) / 10000.0)
                + CASE WHEN i.currency = 'JPY' THEN 0 ELSE coalesce(f.fixed_cents, 30) END)::bigint AS fee
FROM seed_intents i
LEFT JOIN seed_fee_rates f ON f.merchant_id = i.merchant_id
    AND i.captured_at::date >= f.valid_from AND (f.valid_to IS NULL OR i.captured_at::date < f.valid_to)
WHERE i.status = 'succeeded';

CREATE TEMP TABLE seed_flows AS
SELECT merchant_id, currency, flow_date, sum(amount) AS amount
FROM (
    SELECT merchant_id, currency, captured_at::date AS flow_date, amount - fee AS amount FROM seed_captures
    UNION ALL
    SELECT r.merchant_id, r.currency, r.created_at::date, -r.amount_cents
    FROM (SELECT r.*, i.merchant_id FROM payments.refunds r JOIN payments.payment_intents i ON i.id = r.intent_id
          WHERE r.status = 'succeeded') r
    UNION ALL
    SELECT i.merchant_id, c.currency, c.debited_at::date, -(c.amount_cents + c.fee_cents)
    FROM payments.chargebacks c JOIN payments.disputes d ON d.id = c.dispute_id
    JOIN payments.payment_intents i ON i.id = d.intent_id
    UNION ALL
    SELECT i.merchant_id, c.currency, c.reversed_at::date, c.amount_cents
    FROM payments.chargebacks c JOIN payments.disputes d ON d.id = c.dispute_id
    JOIN payments.payment_intents i ON i.id = d.intent_id
    WHERE c.reversed_at IS NOT NULL
) f
GROUP BY 1, 2, 3;

-- A payout pays the balance accrued up to its cut-off, netting earlier negative periods
-- (refunds exceeding sales): cumulative payouts = running maximum of cumulative earnings.
CREATE TEMP TABLE seed_payouts AS
SELECT row_number() OVER (ORDER BY p.arrival_date, p.merchant_id) AS id, p.*
FROM (
    SELECT c.merchant_id, c.currency, c.arrival_date, c.payout_fee,
        c.paid_through - coalesce(lag(c.paid_through) OVER (PARTITION BY c.merchant_id ORDER BY c.arrival_date), 0) AS amount
    FROM (
        SELECT b.*, greatest(0, max(b.cum) OVER (PARTITION BY b.merchant_id ORDER BY b.arrival_date)) AS paid_through
        FROM (
            SELECT a.*, sum(a.flow) OVER (PARTITION BY a.merchant_id ORDER BY a.arrival_date) AS cum
            FROM (
                SELECT f.merchant_id, f.currency,
                    CASE s.payout_schedule
                        WHEN 'daily' THEN f.flow_date + s.payout_delay_days
                        WHEN 'weekly' THEN date_trunc('week', f.flow_date)::date + 7 + s.payout_delay_days
                        ELSE (date_trunc('month', f.flow_date) + interval '1 month')::date + s.payout_delay_days END AS arrival_date,
                    sum(f.amount) AS flow,
                    max(fr.payout_fee_cents) AS payout_fee
                FROM seed_flows f
                JOIN payments.merchant_settings s ON s.merchant_id = f.merchant_id
                LEFT JOIN seed_fee_rates fr ON fr.merchant_id = f.merchant_id AND fr.valid_to IS NULL
                WHERE s.payout_schedule <> 'manual'
                GROUP BY 1, 2, 3
            ) a
        ) b
    ) c
) p
WHERE p.amount > 0
  AND p.arrival_date <= current_date + 1
  AND NOT (p.merchant_id = 63 AND p.arrival_date > current_date - 40);

INSERT INTO payments.payout_batches (id, rail, currency, batch_date, status, file_name, payout_count, total_cents, submitted_at)
SELECT row_number() OVER (ORDER BY b.batch_date, b.currency), b.rail, b.currency, b.batch_date,
    CASE WHEN b.batch_date < current_date THEN 'settled' WHEN b.batch_date = current_date THEN 'submitted' ELSE 'building' END,
    CASE WHEN b.batch_date <= current_date THEN upper(b.rail) || '_' || b.currency || '_' || to_char(b.batch_date, 'YYYYMMDD') || '.xml' END,
    b.n, b.total,
    CASE WHEN b.batch_date <= current_date THEN b.batch_date - interval '1 day' + interval '17 hours' END
FROM (
    SELECT p.arrival_date - 1 AS batch_date, p.currency,
        CASE p.currency WHEN 'USD' THEN 'ach' WHEN 'EUR' THEN 'sepa' WHEN 'GBP' THEN 'bacs'
                        WHEN 'CAD' THEN 'eft' WHEN 'AUD' THEN 'npp' ELSE 'zengin' END AS rail,
        count(*) AS n, sum(p.amount) AS total
    FROM seed_payouts p GROUP BY 1, 2
) b;

INSERT INTO payments.payouts (id, merchant_id, bank_account_id, batch_id, amount_cents, fee_cents,
    currency, status, arrival_date, provider_ref, failure_code, created_at, paid_at, updated_at)
SELECT p.id, p.merchant_id, ba.id,
    CASE WHEN st.status <> 'pending' THEN b.id END,
    p.amount, CASE WHEN p.amount > 1000 THEN coalesce(p.payout_fee, 0) ELSE 0 END,
    p.currency, st.status, p.arrival_date,
    CASE WHEN st.status <> 'pending' THEN 'po_' || substr(md5('po' || p.id), 1, 20) END,
    CASE WHEN st.status = 'failed' THEN (ARRAY['account_closed', 'invalid_account_number', 'could_not_process'])[1 + p.id % 3] END,
    least(now() - interval '1 minute', (p.arrival_date - 1) + interval '16 hours'),
    CASE WHEN st.status = 'paid' THEN p.arrival_date + interval '9 hours' END,
    CASE WHEN st.status IN ('paid', 'failed') THEN p.arrival_date + interval '9 hours'
         ELSE least(now() - interval '1 minute', (p.arrival_date - 1) + interval '16 hours') END
FROM seed_payouts p
CROSS JOIN LATERAL (SELECT CASE
        WHEN p.arrival_date > current_date THEN 'pending'
        WHEN p.arrival_date = current_date THEN 'in_transit'
        WHEN (hashint8(p.id * 13) & 2147483647) % 1000 < 4 THEN 'failed'
        ELSE 'paid' END::payments.payout_status AS status) st
JOIN payments.payout_batches b ON b.batch_date = p.arrival_date - 1 AND b.currency = p.currency
JOIN LATERAL (SELECT ba.id FROM payments.merchant_bank_accounts ba
              WHERE ba.merchant_id = p.merchant_id
                AND ba.created_at <= (p.arrival_date - 1) + interval '16 hours'
              ORDER BY ba.created_at DESC LIMIT 1) ba ON true;

-- Providers settle to our operating account at T+2: everything that went through clearing
-- that day (captures less refunds and chargebacks), less their processing cost; on a day
-- when refunds exceed captures the provider debits us instead.
CREATE TEMP TABLE seed_settlements AS
SELECT row_number() OVER (ORDER BY x.day, x.provider_id, x.currency) AS id, x.*
FROM (
    SELECT f.provider_id, f.currency, f.day, sum(f.amount) AS amount,
        round(sum(f.gross) * CASE WHEN f.provider_id IN (4, 5) THEN 0.029 ELSE 0.019 END)::bigint AS cost
    FROM (
        SELECT provider_id, currency, captured_at::date AS day, amount, amount AS gross FROM seed_captures
        UNION ALL
        SELECT i.provider_id, r.currency, r.processed_at::date, -r.amount_cents, 0
        FROM payments.refunds r JOIN payments.payment_intents i ON i.id = r.intent_id WHERE r.status = 'succeeded'
        UNION ALL
        SELECT d.provider_id, c.currency, c.debited_at::date, -c.amount_cents, 0
        FROM payments.chargebacks c JOIN payments.disputes d ON d.id = c.dispute_id
        UNION ALL
        SELECT d.provider_id, c.currency, c.reversed_at::date, c.amount_cents, 0
        FROM payments.chargebacks c JOIN payments.disputes d ON d.id = c.dispute_id WHERE c.reversed_at IS NOT NULL
    ) f
    WHERE f.day <= current_date - 2
    GROUP BY 1, 2, 3
) x
WHERE x.amount <> 0;

-- Journal: one entry per business event, ids in posting order --------------------------------
CREATE TEMP TABLE seed_entries AS
SELECT row_number() OVER (ORDER BY e.posted_at, e.entry_type, e.source_id, e.provider_id, e.currency) AS id, e.*
FROM (
    SELECT 'capture'::payments.entry_type AS entry_type, c.captured_at AS posted_at,
        'payment_intents' AS source_table, c.intent_id AS source_id, c.merchant_id, c.provider_id,
        c.currency, c.amount, c.fee
    FROM seed_captures c
    UNION ALL
    SELECT 'refund', r.processed_at, 'refunds', r.id, i.merchant_id, i.provider_id, r.currency, r.amount_cents, 0
    FROM payments.refunds r JOIN payments.payment_intents i ON i.id = r.intent_id
    WHERE r.status = 'succeeded'
    UNION ALL
    SELECT 'chargeback', c.debited_at, 'chargebacks', c.id, i.merchant_id, d.provider_id, c.currency, c.amount_cents, c.fee_cents
    FROM payments.chargebacks c JOIN payments.disputes d ON d.id = c.dispute_id
    JOIN payments.payment_intents i ON i.id = d.intent_id
    UNION ALL
    SELECT 'chargeback_reversal', c.reversed_at, 'chargebacks', c.id, i.merchant_id, d.provider_id, c.currency, c.amount_cents, 0
    FROM payments.chargebacks c JOIN payments.disputes d ON d.id = c.dispute_id
    JOIN payments.payment_intents i ON i.id = d.intent_id
    WHERE c.reversed_at IS NOT NULL
    UNION ALL
    SELECT 'payout', p.created_at + interval '1 hour', 'payouts', p.id, p.merchant_id, NULL, p.currency, p.amount_cents, p.fee_cents
    FROM payments.payouts p WHERE p.status IN ('in_transit', 'paid', 'failed')
    UNION ALL
    SELECT 'payout_reversal', p.updated_at, 'payouts', p.id, p.merchant_id, NULL, p.currency, p.amount_cents, p.fee_cents
    FROM payments.payouts p WHERE p.status = 'failed'
    UNION ALL
    SELECT 'provider_settlement', (st.day + 2) + interval '7 hours', NULL, NULL, NULL, st.provider_id, st.currency, st.amount, st.cost
    FROM seed_settlements st
) e;

INSERT INTO payments.journal_entries (id, entry_type, effective_date, posted_at, description,
    source_table, source_id, idempotency_key, reversal_of, posted_by)
SELECT e.id, e.entry_type, e.posted_at::date, e.posted_at,
    CASE e.entry_type WHEN 'capture' THEN 'Capture of payment intent ' || e.source_id
                      WHEN 'refund' THEN 'Refund ' || e.source_id
                      WHEN 'chargeback' THEN 'Chargeback ' || e.source_id
                      WHEN 'chargeback_reversal' THEN 'Dispute won, chargeback ' || e.source_id || ' reversed'
                      WHEN 'payout' THEN 'Payout ' || e.source_id
                      WHEN 'provider_settlement' THEN 'Settlement from provider ' || e.provider_id || ' for ' || (e.posted_at - interval '2 days')::date
                      ELSE 'Payout ' || e.source_id || ' returned by bank' END,
    e.source_table, e.source_id,
    md5(e.entry_type || ':' || coalesce(e.source_table || ':' || e.source_id,
                                        e.provider_id || ':' || e.currency || ':' || e.posted_at::date))::uuid,
    r.id,
    CASE WHEN e.entry_type IN ('payout', 'payout_reversal') THEN 'payouts_runner' ELSE 'ledger_writer' END
FROM seed_entries e
LEFT JOIN seed_entries r ON e.entry_type IN ('payout_reversal', 'chargeback_reversal')
    AND r.entry_type = CASE e.entry_type WHEN 'payout_reversal' THEN 'payout' ELSE 'chargeback' END::payments.entry_type
    AND r.source_table = e.source_table AND r.source_id = e.source_id;

CREATE TEMP TABLE seed_accounts AS
SELECT a.id, a.purpose, a.currency, a.merchant_id, a.provider_id FROM payments.ledger_accounts a;

INSERT INTO payments.journal_lines (entry_id, line_no, account_id, direction, amount_cents, currency, memo)
SELECT e.id, l.line_no,
    CASE l.acct WHEN 'payable' THEN mp.id WHEN 'clearing' THEN pc.id WHEN 'fees' THEN fr.id
                WHEN 'dispute_fees' THEN dfr.id WHEN 'cost' THEN cost.id ELSE cash.id END,
    l.direction, l.amount, e.currency, l.memo
FROM seed_entries e
CROSS JOIN LATERAL (VALUES
    -- capture: provider owes us the gross, we owe the merchant gross less our fee
    ('capture'::payments.entry_type, 1, 'clearing', 'D', e.amount, NULL::text),
    ('capture', 2, 'payable', 'C', e.amount, NULL),
    ('capture', 3, 'payable', 'D', e.fee, 'processing fee'),
    ('capture', 4, 'fees', 'C', e.fee, 'processing fee'),
    ('refund', 1, 'payable', 'D', e.amount, NULL),
    ('refund', 2, 'clearing', 'C', e.amount, NULL),
    ('chargeback', 1, 'payable', 'D', e.amount + e.fee, NULL),
    ('chargeback', 2, 'clearing', 'C', e.amount, NULL),
    ('chargeback', 3, 'dispute_fees', 'C', e.fee, 'dispute fee'),
    ('chargeback_reversal', 1, 'clearing', 'D', e.amount, NULL),
    ('chargeback_reversal', 2, 'payable', 'C', e.amount, NULL),
    ('payout', 1, 'payable', 'D', e.amount, NULL),
    ('payout', 2, 'cash', 'C', e.amount - e.fee, NULL),
    ('payout', 3, 'fees', 'C', e.fee, 'payout fee'),
    ('payout_reversal', 1, 'cash', 'D', e.amount - e.fee, 'returned by bank'),
    ('payout_reversal', 2, 'fees', 'D', e.fee, 'payout fee refunded'),
    ('payout_reversal', 3, 'payable', 'C', e.amount, 'returned by bank'),
    ('provider_settlement', 1, 'cash', CASE WHEN e.amount - e.fee > 0 THEN 'D' ELSE 'C' END, abs(e.amount - e.fee), NULL),
    ('provider_settlement', 2, 'cost', 'D', e.fee, 'interchange and scheme fees'),
    ('provider_settlement', 3, 'clearing', CASE WHEN e.amount > 0 THEN 'C' ELSE 'D' END, abs(e.amount), NULL)
) l(entry_type, line_no, acct, direction, amount, memo)
LEFT JOIN seed_accounts mp ON mp.purpose = 'merchant_payable' AND mp.merchant_id = e.merchant_id
LEFT JOIN seed_accounts pc ON pc.purpose = 'provider_clearing' AND pc.provider_id = e.provider_id AND pc.currency = e.currency
LEFT JOIN seed_accounts fr ON fr.purpose = 'fee_revenue' AND fr.currency = e.currency
LEFT JOIN seed_accounts dfr ON dfr.purpose = 'dispute_fee_revenue' AND dfr.currency = e.currency
LEFT JOIN seed_accounts cash ON cash.purpose = 'operating_cash' AND cash.currency = e.currency
LEFT JOIN seed_accounts cost ON cost.purpose = 'processing_cost' AND cost.currency = e.currency
WHERE l.entry_type = e.entry_type AND l.amount > 0;

INSERT INTO payments.fees (intent_id, merchant_id, kind, amount_cents, currency, fee_schedule_id, journal_entry_id, created_at)
SELECT f.intent_id, f.merchant_id, f.kind, f.amount, f.currency, f.fee_schedule_id, f.entry_id, f.created_at
FROM (
    SELECT c.intent_id, c.merchant_id, 'processing'::payments.fee_kind AS kind, c.fee AS amount, c.currency,
        c.fee_schedule_id, e.id AS entry_id, c.captured_at AS created_at
    FROM seed_captures c
    JOIN seed_entries e ON e.entry_type = 'capture' AND e.source_id = c.intent_id
    UNION ALL
    SELECT d.intent_id, e.merchant_id, 'dispute', e.fee, e.currency,
        coalesce((SELECT fr.fee_schedule_id FROM seed_fee_rates fr WHERE fr.merchant_id = e.merchant_id AND fr.valid_to IS NULL LIMIT 1), 2),
        e.id, e.posted_at
    FROM seed_entries e JOIN payments.chargebacks c ON c.id = e.source_id
    JOIN payments.disputes d ON d.id = c.dispute_id
    WHERE e.entry_type = 'chargeback' AND e.fee > 0
    UNION ALL
    SELECT NULL, e.merchant_id, 'payout', e.fee, e.currency,
        coalesce((SELECT fr.fee_schedule_id FROM seed_fee_rates fr WHERE fr.merchant_id = e.merchant_id AND fr.valid_to IS NULL LIMIT 1), 2),
        e.id, e.posted_at
    FROM seed_entries e WHERE e.entry_type = 'payout' AND e.fee > 0
) f
ORDER BY f.created_at, f.intent_id, f.entry_id, f.kind;

-- Balances: running totals per account and end-of-day history, in the normal direction.
INSERT INTO payments.account_balances (account_id, balance_cents, last_entry_id, updated_at)
SELECT a.id,
    coalesce(sum(CASE a.normal_balance WHEN 'D' THEN l.signed_cents ELSE -l.signed_cents END), 0),
    max(l.entry_id),
    coalesce(max(e.posted_at), a.opened_at)
FROM payments.ledger_accounts a
LEFT JOIN payments.journal_lines l ON l.account_id = a.id
LEFT JOIN payments.journal_entries e ON e.id = l.entry_id
GROUP BY a.id;

INSERT INTO payments.daily_balances (account_id, balance_date, debits_cents, credits_cents, closing_cents)
SELECT d.account_id, d.day, coalesce(d.debits, 0), coalesce(d.credits, 0),
    sum(d.net) OVER (PARTITION BY d.account_id ORDER BY d.day)
FROM (
    SELECT l.account_id, e.effective_date AS day,
        sum(l.amount_cents) FILTER (WHERE l.direction = 'D') AS debits,
        sum(l.amount_cents) FILTER (WHERE l.direction = 'C') AS credits,
        sum(CASE a.normal_balance WHEN 'D' THEN l.signed_cents ELSE -l.signed_cents END) AS net
    FROM payments.journal_lines l
    JOIN payments.journal_entries e ON e.id = l.entry_id
    JOIN payments.ledger_accounts a ON a.id = l.account_id
    WHERE e.effective_date < current_date
    GROUP BY l.account_id, e.effective_date
) d;

-- Provider side ---------------------------------------------------------------------------------
-- Webhooks of the last 30 days (older ones are pruned nightly: ids start high).
INSERT INTO payments.provider_webhooks (id, provider_id, event_id, event_type, received_at,
    signature_valid, payload, attempts, processed_at, processing_error)
SELECT 52000 * :volume + row_number() OVER (ORDER BY w.received_at, w.k, w.src), w.provider_id,
    'evt_' || substr(md5('evt' || w.k || w.src), 1, 24), w.event_type, w.received_at,
    w.bad_sig = false,
    jsonb_build_object('id', 'evt_' || substr(md5('evt' || w.k || w.src), 1, 24), 'type', w.event_type,
        'created', extract(epoch FROM w.received_at)::bigint,
        'data', jsonb_build_object('object', jsonb_build_object('id', w.provider_ref, 'amount', w.amount,
            'currency', lower(w.currency), 'status', w.status))),
    CASE WHEN w.err THEN 3 ELSE 1 END,
    CASE WHEN w.bad_sig OR w.received_at > now() - interval '5 seconds' THEN NULL
         ELSE w.received_at + make_interval(secs => CASE WHEN w.err THEN 600 ELSE 0.05 + (w.src % 100) / 200.0 END) END,
    CASE WHEN w.err THEN 'payment intent locked by another transaction; retried'
         WHEN w.bad_sig THEN 'signature mismatch' END
FROM (
    SELECT 1 AS k, a.id AS src, a.provider_id, a.completed_at + interval '2 seconds' AS received_at,
        CASE a.status WHEN 'captured' THEN 'payment.captured' WHEN 'authorized' THEN 'payment.authorized'
                      WHEN 'declined' THEN 'payment.declined' WHEN 'voided' THEN 'payment.voided'
                      ELSE 'payment.failed' END AS event_type,
        a.provider_ref, a.amount_cents AS amount, i.currency, a.status::text AS status,
        (hashint8(a.id * 17) & 2147483647) % 10000 < 3 AS bad_sig,
        (hashint8(a.id * 19) & 2147483647) % 1000 < 2 AS err
    FROM payments.payment_attempts a JOIN payments.payment_intents i ON i.id = a.intent_id
    WHERE a.completed_at > now() - interval '30 days' AND a.provider_ref IS NOT NULL
    UNION ALL
    SELECT 2, r.id, i.provider_id, r.processed_at + interval '4 seconds',
        CASE r.status WHEN 'succeeded' THEN 'refund.succeeded' ELSE 'refund.failed' END,
        r.provider_ref, r.amount_cents, r.currency, r.status::text, false, false
    FROM payments.refunds r JOIN payments.payment_intents i ON i.id = r.intent_id
    WHERE r.processed_at > now() - interval '30 days'
    UNION ALL
    SELECT 3, d.id, d.provider_id, d.opened_at, 'dispute.created', d.provider_ref, d.amount_cents,
        d.currency, 'needs_response', false, false
    FROM payments.disputes d WHERE d.opened_at > now() - interval '30 days'
) w;

-- Reconciliation of the last 90 days: the provider's daily statement against our attempts.
CREATE TEMP TABLE seed_statement AS
SELECT a.provider_id, a.completed_at::date AS statement_date, a.id AS attempt_id, a.provider_ref,
    'charge' AS line_type, a.amount_cents AS amount, i.currency,
    round(a.amount_cents * 0.019)::bigint AS fee,
    (hashint8(a.id * 23) & 2147483647) % 10000 < 5 AS unmatched
FROM payments.payment_attempts a JOIN payments.payment_intents i ON i.id = a.intent_id
WHERE a.status = 'captured' AND a.completed_at >= current_date - 90 AND a.completed_at < current_date
UNION ALL
SELECT i.provider_id, r.processed_at::date, NULL, r.provider_ref, 'refund', -r.amount_cents, r.currency, 0,
    (hashint8(r.id * 29) & 2147483647) % 10000 < 5
FROM payments.refunds r JOIN payments.payment_intents i ON i.id = r.intent_id
WHERE r.status = 'succeeded' AND r.processed_at >= current_date - 90 AND r.processed_at < current_date;

INSERT INTO payments.reconciliation_runs (id, provider_id, statement_date, status, started_at,
    finished_at, lines_total, lines_matched, amount_total_cents)
SELECT row_number() OVER (ORDER BY s.statement_date, s.provider_id), s.provider_id, s.statement_date,
    CASE WHEN count(*) FILTER (WHERE s.unmatched) > 0 THEN 'exceptions' ELSE 'matched' END::payments.recon_status,
    s.statement_date + interval '1 day 6 hours',
    s.statement_date + interval '1 day 6 hours' + make_interval(secs => 20 + count(*) / 50),
    count(*), count(*) FILTER (WHERE NOT s.unmatched), sum(s.amount)
FROM seed_statement s
GROUP BY s.provider_id, s.statement_date;

INSERT INTO payments.statement_lines (run_id, line_no, provider_ref, line_type, amount_cents,
    fee_cents, currency, attempt_id, matched_at)
SELECT r.id, row_number() OVER (PARTITION BY r.id ORDER BY s.provider_ref), s.provider_ref, s.line_type,
    s.amount, s.fee, s.currency,
    CASE WHEN NOT s.unmatched THEN s.attempt_id END,
    CASE WHEN NOT s.unmatched THEN r.finished_at END
FROM seed_statement s
JOIN payments.reconciliation_runs r ON r.provider_id = s.provider_id AND r.statement_date = s.statement_date
ORDER BY r.id, s.provider_ref;

INSERT INTO payments.reconciliation_exceptions (run_id, statement_line_id, kind, detail, opened_at,
    resolved_at, resolved_by, resolution_note)
SELECT l.run_id, l.id,
    CASE WHEN l.line_type = 'refund' THEN 'missing_in_ledger' ELSE 'amount_mismatch' END,
    jsonb_build_object('provider_ref', l.provider_ref, 'statement_amount', l.amount_cents,
                       'ledger_amount', CASE WHEN l.line_type = 'refund' THEN NULL ELSE l.amount_cents - 1 END),
    r.finished_at,
    CASE WHEN r.statement_date < current_date - 7 THEN r.finished_at + interval '2 days' END,
    CASE WHEN r.statement_date < current_date - 7 THEN (ARRAY['a.mensah', 'p.novak', 'r.tanaka'])[1 + l.id % 3] END,
    CASE WHEN r.statement_date < current_date - 7 THEN
         CASE WHEN l.line_type = 'refund' THEN 'refund booked next day; timing difference'
              ELSE 'rounding on provider FX leg; written off to fx_gain_loss' END END
FROM payments.statement_lines l JOIN payments.reconciliation_runs r ON r.id = l.run_id
WHERE l.matched_at IS NULL
ORDER BY l.id;

-- Idempotency keys of the last 24 hours.
INSERT INTO payments.idempotency_keys (merchant_id, key, request_path, request_hash, response_status,
    response_body, created_at, locked_until)
SELECT i.merchant_id, 'idem_' || substr(md5('idem' || i.id), 1, 28),
    CASE WHEN i.capture_method = 'manual' AND i.status = 'succeeded' THEN '/v1/payment_intents/' || i.id || '/capture'
         ELSE '/v1/payment_intents' END,
    decode(md5('req' || i.id), 'hex'),
    CASE WHEN i.status = 'processing' THEN NULL ELSE 200 END,
    CASE WHEN i.status = 'processing' THEN NULL
         ELSE jsonb_build_object('id', 'pi_' || replace(md5('pi' || i.id)::uuid::text, '-', ''), 'status', i.status) END,
    i.created_at,
    CASE WHEN i.status = 'processing' THEN i.created_at + interval '30 seconds' END
FROM seed_intents i
WHERE i.created_at > now() - interval '24 hours' AND i.u6 < 0.7;

DROP TABLE seed_intents, seed_pm, seed_refunds, seed_disputes, seed_fee_rates, seed_captures,
    seed_flows, seed_payouts, seed_settlements, seed_entries, seed_accounts, seed_statement;

RESET session_replication_role;
