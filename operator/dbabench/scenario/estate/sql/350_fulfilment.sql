-- Fulfilment data. Shipments exist for orders still in public.orders (the last 24 hours of
-- checkout traffic): 0.4 x volume percent of them, each at the stage its age implies. Stock levels
-- are the running sum of the stock ledger.
-- u(g, k) means (hashint8extended(g, k) & 2147483647)::float8 / 2147483647.

-- Ids continue from the history that retention already purged (shipments, parcels and
-- reservations leave with their orders after 90 days; the ledger before 2 years goes to the
-- warehouse).
ALTER TABLE fulfilment.tracking_events ALTER COLUMN id RESTART WITH 72000000;
ALTER TABLE fulfilment.stock_movements ALTER COLUMN id RESTART WITH 9800000;
ALTER TABLE fulfilment.stock_reservations ALTER COLUMN id RESTART WITH 7700000;
ALTER TABLE fulfilment.returns ALTER COLUMN id RESTART WITH 41000;

ALTER TABLE fulfilment.stock_movements DISABLE TRIGGER USER;
ALTER TABLE fulfilment.tracking_events DISABLE TRIGGER USER;
ALTER TABLE fulfilment.shipments DISABLE TRIGGER USER;
ALTER TABLE fulfilment.returns DISABLE TRIGGER USER;
ALTER TABLE fulfilment.warehouses DISABLE TRIGGER USER;
ALTER TABLE fulfilment.carrier_accounts DISABLE TRIGGER USER;

INSERT INTO fulfilment.carriers (id, code, name, tracking_url_template, api_base_url, supports_webhooks, is_active, created_at)
VALUES
    (1, 'dhl', 'DHL Parcel', 'https://www.dhl.com/track?tracking-id={tracking_number}', 'https://api-eu.dhl.com', true, true, now() - interval '1780 days'),
    (2, 'ups', 'UPS', 'https://www.ups.com/track?tracknum={tracking_number}', 'https://onlinetools.ups.com', true, true, now() - interval '1780 days'),
    (3, 'dpd', 'DPD', 'https://tracking.dpd.de/status/en_US/parcel/{tracking_number}', 'https://api.dpd.de', false, true, now() - interval '1700 days'),
    (4, 'gls', 'GLS', 'https://gls-group.com/track/{tracking_number}', 'https://api.gls-group.eu', false, true, now() - interval '1650 days'),
    (5, 'postnl', 'PostNL', 'https://jouw.postnl.nl/track-and-trace/{tracking_number}', 'https://api.postnl.nl', true, true, now() - interval '1500 days'),
    (6, 'royal-mail', 'Royal Mail', 'https://www.royalmail.com/track-your-item#/tracking-results/{tracking_number}', NULL, false, true, now() - interval '1450 days'),
    (7, 'colissimo', 'Colissimo', 'https://www.laposte.fr/outils/suivre-vos-envois?code={tracking_number}', 'https://ws.colissimo.fr', false, true, now() - interval '1400 days'),
    (8, 'fedex', 'FedEx', 'https://www.fedex.com/fedextrack/?trknbr={tracking_number}', 'https://apis.fedex.com', true, true, now() - interval '1300 days'),
    (9, 'inpost', 'InPost', 'https://inpost.pl/sledzenie-przesylek?number={tracking_number}', 'https://api-shipx-pl.easypack24.net', true, true, now() - interval '900 days'),
    (10, 'correos', 'Correos', 'https://www.correos.es/es/en/tools/tracker/items/details?tracking-number={tracking_number}', NULL, false, true, now() - interval '800 days'),
    (11, 'hermes', 'Hermes (legacy contract)', 'https://www.myhermes.de/empfangen/sendungsverfolgung/?suche={tracking_number}', NULL, false, false, now() - interval '1780 days'),
    (12, 'evri', 'Evri', 'https://www.evri.com/track/parcel/{tracking_number}', 'https://api.evri.com', true, true, now() - interval '600 days');

INSERT INTO fulfilment.carrier_services (id, carrier_id, code, name, max_weight_g, transit_days_min, transit_days_max, is_express, is_tracked, is_active)
VALUES
    (1, 1, 'paket', 'DHL Paket', 31500, 1, 3, false, true, true),
    (2, 1, 'express', 'DHL Express Domestic', 31500, 1, 1, true, true, true),
    (3, 1, 'europaket', 'DHL Europaket', 31500, 2, 5, false, true, true),
    (4, 1, 'warenpost', 'DHL Warenpost', 1000, 1, 4, false, true, true),
    (5, 2, 'standard', 'UPS Standard', 70000, 1, 5, false, true, true),
    (6, 2, 'express_saver', 'UPS Express Saver', 70000, 1, 2, true, true, true),
    (7, 3, 'classic', 'DPD Classic', 31500, 1, 3, false, true, true),
    (8, 3, 'predict', 'DPD Predict', 31500, 1, 3, false, true, true),
    (9, 3, 'express_12', 'DPD Express 12:00', 31500, 1, 1, true, true, true),
    (10, 4, 'business_parcel', 'GLS BusinessParcel', 40000, 1, 4, false, true, true),
    (11, 4, 'euro_business', 'GLS EuroBusinessParcel', 40000, 2, 6, false, true, true),
    (12, 5, 'standard', 'PostNL Standard', 23000, 1, 2, false, true, true),
    (13, 5, 'letterbox', 'PostNL Brievenbuspakje', 2000, 1, 2, false, true, true),
    (14, 6, 'tracked_48', 'Royal Mail Tracked 48', 20000, 2, 3, false, true, true),
    (15, 6, 'tracked_24', 'Royal Mail Tracked 24', 20000, 1, 2, true, true, true),
    (16, 7, 'domicile', 'Colissimo Domicile', 30000, 2, 3, false, true, true),
    (17, 8, 'priority', 'FedEx International Priority', 68000, 1, 3, true, true, true),
    (18, 8, 'economy', 'FedEx International Economy', 68000, 3, 6, false, true, true),
    (19, 9, 'locker', 'InPost Paczkomat', 25000, 1, 2, false, true, true),
    (20, 10, 'paq_standard', 'Correos Paq Estandar', 30000, 2, 4, false, true, true),
    (21, 11, 'paket', 'Hermes Paket', 31500, 2, 4, false, true, false),
    (22, 12, 'standard', 'Evri Standard', 15000, 2, 4, false, true, true),
    (23, 12, 'next_day', 'Evri Next Day', 15000, 1, 1, true, true, true),
    (24, 1, 'international', 'DHL Paket International', 31500, 4, 10, false, true, true);

INSERT INTO fulfilment.shipping_zones (country_code, zone, needs_customs, updated_at)
SELECT c, z, nc, now() - interval '400 days'
FROM (VALUES
    ('DE', 'domestic', false), ('AT', 'eu', false), ('BE', 'eu', false), ('BG', 'eu', false), ('HR', 'eu', false),
    ('CY', 'eu', false), ('CZ', 'eu', false), ('DK', 'eu', false), ('EE', 'eu', false), ('FI', 'eu', false),
    ('FR', 'eu', false), ('GR', 'eu', false), ('HU', 'eu', false), ('IE', 'eu', false), ('IT', 'eu', false),
    ('LV', 'eu', false), ('LT', 'eu', false), ('LU', 'eu', false), ('MT', 'eu', false), ('NL', 'eu', false),
    ('PL', 'eu', false), ('PT', 'eu', false), ('RO', 'eu', false), ('SK', 'eu', false), ('SI', 'eu', false),
    ('ES', 'eu', false), ('SE', 'eu', false), ('GB', 'europe_other', true), ('CH', 'europe_other', true),
    ('NO', 'europe_other', true), ('IS', 'europe_other', true), ('TR', 'europe_other', true), ('UA', 'europe_other', true),
    ('US', 'north_america', true), ('CA', 'north_america', true), ('MX', 'north_america', true),
    ('JP', 'apac', true), ('AU', 'apac', true), ('NZ', 'apac', true), ('SG', 'apac', true), ('KR', 'apac', true),
    ('AE', 'rest_of_world', true), ('IL', 'rest_of_world', true), ('ZA', 'rest_of_world', true), ('BR', 'rest_of_world', true)
) AS v(c, z, nc);

-- Rate cards: the previous contract year (closed) and the current one, 6 zones x 6 weight bands.
INSERT INTO fulfilment.carrier_rate_cards (carrier_service_id, zone, weight_from_g, weight_to_g, price_cents, currency, valid_from, valid_to)
SELECT cs.id, z.zone, b.w_from, b.w_to,
       (290 + z.k * 410 + b.k * 180 + (cs.id * 37) % 150) * CASE WHEN cs.is_express THEN 2 ELSE 1 END
           + CASE WHEN y.cur THEN 15 + z.k * 10 ELSE 0 END,
       'EUR',
       y.valid_from, y.valid_to
FROM fulfilment.carrier_services cs
CROSS JOIN (VALUES ('domestic', 0), ('eu', 1), ('europe_other', 2), ('north_america', 4), ('apac', 5), ('rest_of_world', 6)) AS z(zone, k)
CROSS JOIN (VALUES (0, 1000, 0), (1000, 2000, 1), (2000, 5000, 2), (5000, 10000, 3), (10000, 20000, 4), (20000, 31500, 5)) AS b(w_from, w_to, k)
CROSS JOIN (VALUES (false, (date_trunc('year', now()) - interval '1 year')::date, date_trunc('year', now())::date),
                   (true, date_trunc('year', now())::date, NULL::date)) AS y(cur, valid_from, valid_to)
WHERE b.w_from < cs.max_weight_g
  AND (z.k = 0 OR cs.code NOT IN ('warenpost', 'letterbox', 'locker', 'express'))
  AND cs.is_active;

INSERT INTO fulfilment.carrier_accounts (carrier_id, merchant_id, account_number, secret_name, is_active, created_at)
SELECT c.id, NULL, upper(c.code::text) || '-MKT-' || lpad((c.id * 7919 % 100000)::text, 6, '0'),
       'fulfilment/carriers/' || c.code || '/marketplace', c.is_active, c.created_at
FROM fulfilment.carriers c;

INSERT INTO fulfilment.carrier_accounts (carrier_id, merchant_id, account_number, secret_name, is_active, created_at)
SELECT 1 + (hashint8(m) & 1023) % 8, m, 'BYO-' || m || '-' || lpad(((hashint8(m * 3) & 2147483647) % 1000000)::text, 7, '0'),
       'fulfilment/carriers/merchant-' || m, (hashint8(m * 5) & 7) <> 0,
       now() - make_interval(days => 1700 - 17 * m)
FROM generate_series(1, 100) m
WHERE (hashint8(m * 11) & 3) = 0;

INSERT INTO fulfilment.warehouses (id, code, name, operator, operator_name, country_code, timezone, address, capacity_units,
                                   cutoff_local, opened_on, closed_on)
VALUES
    (1, 'BER1', 'Berlin Schoenefeld', 'own', NULL, 'DE', 'Europe/Berlin', '{"line1": "Mittelstrasse 9", "postcode": "12529", "city": "Schoenefeld"}', 180000, '16:00', current_date - 1790, NULL),
    (2, 'HAM1', 'Hamburg Billbrook', 'own', NULL, 'DE', 'Europe/Berlin', '{"line1": "Liebigstrasse 67", "postcode": "22113", "city": "Hamburg"}', 90000, '15:00', current_date - 1760, current_date - 610),
    (3, 'AMS1', 'Amsterdam Westpoort', '3pl', 'Lowlands Logistics B.V.', 'NL', 'Europe/Amsterdam', '{"line1": "Moezelhavenweg 20", "postcode": "1043 AM", "city": "Amsterdam"}', 60000, '15:00', current_date - 1500, NULL),
    (4, 'PAR1', 'Paris Gonesse', '3pl', 'Hexagone Fulfilment SAS', 'FR', 'Europe/Paris', '{"line1": "4 Rue de la Gare", "postcode": "95500", "city": "Gonesse"}', 70000, '14:30', current_date - 1400, NULL),
    (5, 'LEJ1', 'Leipzig Radefeld', 'own', NULL, 'DE', 'Europe/Berlin', '{"line1": "Am Exer 12", "postcode": "04435", "city": "Schkeuditz"}', 240000, '17:00', current_date - 640, NULL),
    (6, 'WAW1', 'Warsaw Blonie', 'own', NULL, 'PL', 'Europe/Warsaw', '{"line1": "ul. Sochaczewska 20", "postcode": "05-870", "city": "Blonie"}', 120000, '16:00', current_date - 1100, NULL),
    (7, 'MAD1', 'Madrid Getafe', '3pl', 'Iberia Logistica SL', 'ES', 'Europe/Madrid', '{"line1": "Calle Torneros 5", "postcode": "28906", "city": "Getafe"}', 40000, '14:00', current_date - 1000, NULL),
    (8, 'MIL1', 'Milan Piacenza', '3pl', 'Padana Logistica S.p.A.', 'IT', 'Europe/Rome', '{"line1": "Via Emilia 300", "postcode": "29122", "city": "Piacenza"}', 45000, '14:00', current_date - 950, NULL),
    (9, 'LHR1', 'London Heathrow', '3pl', 'Thames Fulfilment Ltd', 'GB', 'Europe/London', '{"line1": "Unit 4, Bath Road", "postcode": "UB7 0EB", "city": "West Drayton"}', 30000, '15:00', current_date - 1300, NULL),
    (10, 'DUB1', 'Dublin Ballycoolin', '3pl', 'Liffey 3PL Ltd', 'IE', 'Europe/Dublin', '{"line1": "Cappagh Road", "postcode": "D11 X2P3", "city": "Dublin"}', 15000, '14:00', current_date - 1250, current_date - 400),
    (11, 'PRG1', 'Prague Jazlovice', 'own', NULL, 'CZ', 'Europe/Prague', '{"line1": "Jazlovice 53", "postcode": "251 01", "city": "Ricany"}', 80000, '16:00', current_date - 700, NULL),
    (12, 'VIE1', 'Vienna Inzersdorf', '3pl', 'Donau Lager GmbH', 'AT', 'Europe/Vienna', '{"line1": "Industriezentrum Sued 4", "postcode": "2355", "city": "Wiener Neudorf"}', 25000, '15:00', current_date - 560, NULL),
    (13, 'CPH1', 'Copenhagen Greve', '3pl', 'Oresund Logistik ApS', 'DK', 'Europe/Copenhagen', '{"line1": "Hundigevej 50", "postcode": "2670", "city": "Greve"}', 20000, '14:00', current_date - 420, NULL),
    (14, 'LYS1', 'Lyon Saint-Quentin', 'own', NULL, 'FR', 'Europe/Paris', '{"line1": "Rue du Bourgelat 8", "postcode": "38070", "city": "Saint-Quentin-Fallavier"}', 110000, '16:00', current_date - 120, NULL);

INSERT INTO fulfilment.storage_bins (warehouse_id, code, aisle, bay, level, bin_type, is_pickable)
SELECT w.id, format('%s-%s-%s', lpad(a::text, 2, '0'), lpad(b::text, 2, '0'), chr(64 + l)), a, b, l,
       CASE WHEN l = 1 AND b > 9 THEN 'pallet' WHEN a = 1 THEN 'cold' WHEN a = 2 AND b < 3 THEN 'hazmat' WHEN l = 1 AND b = 9 THEN 'floor' ELSE 'shelf' END,
       NOT (l = 4 AND a % 5 = 0)
FROM fulfilment.warehouses w, generate_series(1, 24) a, generate_series(1, 10) b, generate_series(1, 4) l
WHERE w.operator = 'own' AND w.closed_on IS NULL;

-- Which open warehouses stock which SKU: 1 to 4 each, the big own sites most often.
INSERT INTO fulfilment.stock_levels (warehouse_id, sku_id, on_hand, reserved, reorder_point, bin_id, last_counted_at, updated_at)
SELECT DISTINCT ON (w.wh, s.id) w.wh, s.id, 0, 0,
       (ARRAY[0, 5, 10, 20, 50])[1 + (hashint8(s.id * 17 + w.wh) & 1023) % 5],
       b.id,
       now() - interval '1 day' * ((hashint8(s.id * 7 + w.wh) & 1023) % 90),
       now()
FROM catalog.skus s
CROSS JOIN generate_series(0, 3) j
CROSS JOIN LATERAL (SELECT (ARRAY[5, 5, 5, 1, 1, 6, 11, 14, 3, 4, 7, 8, 9, 12, 13])[1 + ((hashint8(s.id) & 1023) + j * 4) % 15] AS wh) w
LEFT JOIN (SELECT id, warehouse_id, row_number() OVER (PARTITION BY warehouse_id ORDER BY id) AS rn
           FROM fulfilment.storage_bins WHERE is_pickable AND bin_type = 'shelf') b
       ON b.warehouse_id = w.wh AND b.rn = 1 + (hashint8(s.id) & 1023) % 600
WHERE j < 1 + (hashint8(s.id * 3) & 1023) % 4;

-- The stock ledger, two years: receipts in big lots, picks of a few units, the odd adjustment,
-- damage write-off, transfer and cycle count. Picks never outrun receipts on average.
INSERT INTO fulfilment.stock_movements (warehouse_id, sku_id, kind, qty, source_type, source_id, note, occurred_at, recorded_by)
WITH pairs AS (
    SELECT warehouse_id, sku_id, row_number() OVER (ORDER BY warehouse_id, sku_id) AS n
    FROM fulfilment.stock_levels
), m AS (
    SELECT g, 1 + floor(0.999999 * (SELECT count(*) FROM fulfilment.stock_levels)
                        * (hashint8extended(g, 61) & 2147483647)::float8 / 2147483647)::bigint AS pair_n,
           (hashint8(g) & 1023) AS h,
           now() - interval '730 days' * (1 - sqrt((hashint8extended(g, 62) & 2147483647)::float8 / 2147483647)) AS at
    FROM generate_series(1, 4000 * :volume) g
)
SELECT p.warehouse_id, p.sku_id,
       k.kind::fulfilment.movement_kind,
       CASE k.kind WHEN 'receipt' THEN 24 * (1 + m.h % 10) WHEN 'pick' THEN -(1 + m.h % 4)
                   WHEN 'adjustment' THEN CASE WHEN m.h % 2 = 0 THEN 1 + m.h % 3 ELSE -(1 + m.h % 3) END
                   WHEN 'damage' THEN -(1 + m.h % 2) WHEN 'return' THEN 1
                   WHEN 'transfer_in' THEN 12 * (1 + m.h % 3) WHEN 'transfer_out' THEN -12 * (1 + m.h % 3)
                   ELSE CASE WHEN m.h % 3 = 0 THEN -1 ELSE 1 END END,
       CASE k.kind WHEN 'receipt' THEN 'purchase_order' WHEN 'pick' THEN 'shipment' WHEN 'return' THEN 'return'
                   WHEN 'transfer_in' THEN 'transfer' WHEN 'transfer_out' THEN 'transfer' WHEN 'cycle_count' THEN 'count' END,
       CASE k.kind WHEN 'receipt' THEN 7000000 + m.g / 7 WHEN 'pick' THEN 3900000 + m.g WHEN 'return' THEN 41000 + m.g / 50
                   WHEN 'transfer_in' THEN 900 + m.g / 400 WHEN 'transfer_out' THEN 900 + m.g / 400 END,
       CASE k.kind WHEN 'adjustment' THEN (ARRAY['found during putaway', 'mis-scan corrected', 'supplier short-shipped', 'system correction INC-2231'])[1 + m.h % 4]
                   WHEN 'damage' THEN (ARRAY['forklift damage', 'water damage', 'crushed in transit'])[1 + m.h % 3] END,
       m.at,
       CASE WHEN k.kind IN ('pick', 'receipt') THEN 'fulfilment_api' WHEN k.kind = 'cycle_count' THEN 'debezium'
            ELSE (ARRAY['wms:jana.novak', 'wms:piotr.z', 'wms:lea.m', 'support_console'])[1 + m.h % 4] END
FROM m
JOIN pairs p ON p.n = m.pair_n
CROSS JOIN LATERAL (SELECT CASE WHEN m.h < 90 THEN 'receipt' WHEN m.h < 930 THEN 'pick' WHEN m.h < 960 THEN 'adjustment'
                                 WHEN m.h < 975 THEN 'damage' WHEN m.h < 995 THEN 'return' WHEN m.h < 1005 THEN 'cycle_count'
                                 WHEN m.h < 1015 THEN 'transfer_in' ELSE 'transfer_out' END AS kind) k;

UPDATE fulfilment.stock_levels l
   SET on_hand = greatest(s.total, 0) + 40 + (hashint8(l.sku_id + l.warehouse_id) & 63),
       updated_at = s.last_at
  FROM (SELECT warehouse_id, sku_id, sum(qty) AS total, max(occurred_at) AS last_at
        FROM fulfilment.stock_movements GROUP BY 1, 2) s
 WHERE s.warehouse_id = l.warehouse_id AND s.sku_id = l.sku_id;
-- (+40..103: the opening balance from the 2021 stock take, which predates the ledger.)

-- Shipments for 0.4 x volume percent of the live orders, staged by the order's age.
INSERT INTO fulfilment.shipments (id, order_id, merchant_id, warehouse_id, carrier_service_id, status, tracking_number,
                                  ship_to, ship_to_country, weight_g, shipping_cost_cents, currency, promised_by,
                                  label_created_at, shipped_at, delivered_at, created_at, updated_at)
WITH o AS (
    SELECT o.id, o.merchant_id, o.sku, o.qty, o.created_at,
           extract(epoch FROM now() - o.created_at) / 3600 AS age_h,
           (hashint8(o.id) & 1023) AS h,
           (ARRAY['DE', 'DE', 'DE', 'DE', 'DE', 'DE', 'FR', 'FR', 'FR', 'NL', 'NL', 'GB', 'GB', 'BE', 'AT', 'AT', 'IT', 'ES', 'PL', 'PL',
                  'SE', 'DK', 'IE', 'CH', 'US', 'PT', 'CZ', 'FI', 'NO', 'LU', 'JP', 'AU'])[1 + (hashint8(o.id * 3) & 1023) % 32] AS country
    FROM public.orders o
    WHERE o.id % 1000 < 4 * :volume
), wh AS (
    SELECT DISTINCT ON (sku_id) sku_id, warehouse_id FROM fulfilment.stock_levels ORDER BY sku_id, on_hand DESC, warehouse_id
), svc AS (
    SELECT o.*, wh.warehouse_id,
           CASE WHEN o.country = 'DE' THEN (ARRAY[1, 1, 1, 2, 4, 7, 8, 10, 9])[1 + o.h % 9]
                WHEN o.country = 'NL' THEN (ARRAY[12, 13, 3])[1 + o.h % 3]
                WHEN o.country = 'GB' THEN (ARRAY[14, 15, 22, 23, 6])[1 + o.h % 5]
                WHEN o.country = 'FR' THEN (ARRAY[16, 3, 7])[1 + o.h % 3]
                WHEN o.country = 'PL' THEN (ARRAY[19, 19, 11])[1 + o.h % 3]
                WHEN o.country IN ('US', 'JP', 'AU', 'CH', 'NO') THEN (ARRAY[17, 18, 24, 6])[1 + o.h % 4]
                ELSE (ARRAY[3, 11, 5, 7, 6])[1 + o.h % 5] END AS carrier_service_id
    FROM o JOIN wh ON wh.sku_id = o.sku
), st AS (
    SELECT svc.*, cs.is_express, cs.transit_days_max, c.code AS carrier_code, s.weight_g AS unit_weight,
           CASE WHEN svc.h = 7 AND svc.age_h < 6 THEN -1
                WHEN svc.age_h < 1.5 THEN 0 WHEN svc.age_h < 5 THEN 1 WHEN svc.age_h < 8 THEN 2
                WHEN NOT cs.is_express OR svc.age_h < 14 THEN CASE WHEN svc.h % 97 = 3 THEN 9 ELSE 3 END
                WHEN svc.age_h < 18 THEN 4 ELSE 5 END AS stage
    FROM svc
    JOIN fulfilment.carrier_services cs ON cs.id = svc.carrier_service_id
    JOIN fulfilment.carriers c ON c.id = cs.carrier_id
    JOIN catalog.skus s ON s.id = svc.sku
)
SELECT 5100000 + row_number() OVER (ORDER BY st.id), st.id, st.merchant_id, st.warehouse_id, st.carrier_service_id,
       (CASE st.stage WHEN -1 THEN 'cancelled' WHEN 0 THEN 'pending' WHEN 1 THEN 'label_created' WHEN 2 THEN 'picked_up'
                      WHEN 3 THEN 'in_transit' WHEN 9 THEN 'exception' WHEN 4 THEN 'out_for_delivery' ELSE 'delivered' END)::fulfilment.shipment_status,
       CASE WHEN st.stage >= 1 THEN upper(left(st.carrier_code::text, 2)) || lpad(((hashint8extended(st.id, 71) & 2147483647) % 10000000000)::text, 12, '0') END,
       jsonb_build_object(
           'name', (ARRAY['Anna', 'Lukas', 'Marie', 'Jonas', 'Sophie', 'Elias', 'Emma', 'Noah', 'Lea', 'Paul', 'Chloe', 'Louis',
                          'Olivia', 'Jack', 'Sanne', 'Daan', 'Zofia', 'Jakub', 'Giulia', 'Marco', 'Lucia', 'Pablo', 'Freja', 'Oscar'])[1 + (hashint8(st.id * 5) & 1023) % 24]
                   || ' ' || (ARRAY['Muller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Martin', 'Bernard', 'Dubois', 'Smith', 'Jones',
                                    'de Vries', 'Jansen', 'Nowak', 'Kowalski', 'Rossi', 'Garcia', 'Novak', 'Hansen', 'Murphy', 'Silva'])[1 + (hashint8(st.id * 7) & 1023) % 20],
           'line1', (1 + (hashint8(st.id * 11) & 255)) || ' ' || (ARRAY['Hauptstrasse', 'Bahnhofstrasse', 'Rue de la Paix', 'High Street', 'Kerkstraat',
                                    'ul. Polna', 'Via Roma', 'Calle Mayor', 'Main Street', 'Storgatan'])[1 + (hashint8(st.id * 13) & 1023) % 10],
           'postcode', lpad(((hashint8(st.id * 17) & 2147483647) % 99999)::text, 5, '0'),
           'city', (ARRAY['Berlin', 'Munich', 'Hamburg', 'Paris', 'Lyon', 'Amsterdam', 'London', 'Vienna', 'Warsaw', 'Madrid', 'Milan', 'Cologne'])[1 + (hashint8(st.id * 19) & 1023) % 12],
           'country', st.country,
           'phone', CASE WHEN st.h % 3 <> 0 THEN '+49 ' || (150 + st.h % 30) || ' ' || lpad(((hashint8(st.id * 23) & 2147483647) % 10000000)::text, 7, '0') END),
       st.country,
       st.unit_weight * st.qty + 150,
       CASE WHEN st.stage >= 1 THEN 390 + (st.unit_weight * st.qty / 1000) * 45 + CASE WHEN st.is_express THEN 600 ELSE 0 END END,
       'EUR',
       (st.created_at + make_interval(days => st.transit_days_max::int + 1))::date,
       CASE WHEN st.stage >= 1 THEN st.created_at + interval '90 minutes' END,
       CASE WHEN st.stage >= 2 THEN st.created_at + interval '5 hours' END,
       CASE WHEN st.stage = 5 THEN st.created_at + interval '18 hours' END,
       st.created_at + interval '2 minutes',
       st.created_at + CASE st.stage WHEN -1 THEN interval '20 minutes' WHEN 0 THEN interval '2 minutes' WHEN 1 THEN interval '90 minutes'
                                     WHEN 2 THEN interval '5 hours' WHEN 3 THEN interval '8 hours' WHEN 9 THEN interval '11 hours'
                                     WHEN 4 THEN interval '14 hours' ELSE interval '18 hours' END
FROM st;

-- Parcels: one per shipment, two when four or more units.
INSERT INTO fulfilment.parcels (id, shipment_id, seq, tracking_number, weight_g, length_mm, width_mm, height_mm, created_at)
SELECT 6300000 + row_number() OVER (ORDER BY s.id, k), s.id, k,
       CASE WHEN s.tracking_number IS NOT NULL THEN s.tracking_number || CASE WHEN k > 1 THEN '-' || k ELSE '' END END,
       greatest(s.weight_g / CASE WHEN o.qty >= 4 THEN 2 ELSE 1 END, 100),
       (ARRAY[250, 350, 400, 600])[1 + (hashint8(s.id) & 3)], (ARRAY[180, 250, 300, 400])[1 + (hashint8(s.id) & 3)],
       (ARRAY[80, 120, 150, 300])[1 + (hashint8(s.id) & 3)],
       coalesce(s.label_created_at, s.created_at)
FROM fulfilment.shipments s
JOIN public.orders o ON o.id = s.order_id
CROSS JOIN generate_series(1, 2) k
WHERE k = 1 OR o.qty >= 4;

INSERT INTO fulfilment.parcel_items (parcel_id, sku_id, qty)
SELECT p.id, o.sku, CASE WHEN o.qty >= 4 THEN CASE WHEN p.seq = 1 THEN o.qty / 2 ELSE o.qty - o.qty / 2 END ELSE o.qty END
FROM fulfilment.parcels p
JOIN fulfilment.shipments s ON s.id = p.shipment_id
JOIN public.orders o ON o.id = s.order_id;

-- Carrier scans up to each shipment's stage (two hub scans in transit).
INSERT INTO fulfilment.tracking_events (parcel_id, carrier_id, event_code, status, description, location, occurred_at, received_at, raw)
SELECT p.id, cs.carrier_id, e.code, e.status::fulfilment.shipment_status, e.description,
       CASE WHEN e.status IN ('in_transit', 'exception') THEN (ARRAY['Hub Leipzig', 'Hub Hannover', 'Hub Koeln', 'Hub Paris Nord', 'Hub Utrecht', 'Hub Poznan'])[1 + (hashint8(p.id + e.n) & 1023) % 6]
            WHEN e.status IN ('out_for_delivery', 'delivered') THEN s.ship_to ->> 'city'
            ELSE w.name END,
       s.created_at + e.after + make_interval(mins => ((hashint8(p.id * 10 + e.n) & 1023) % 40)::int),
       s.created_at + e.after + make_interval(mins => ((hashint8(p.id * 10 + e.n) & 1023) % 40)::int + 1 + (hashint8(p.id + e.n) & 7)::int),
       CASE WHEN e.status = 'exception' THEN jsonb_build_object('carrier_code', 'ADDR_INCOMPLETE', 'message', 'Address incomplete, recipient not found',
                                                                'parcel', p.tracking_number, 'scan_id', md5(p.id::text)) END
FROM fulfilment.parcels p
JOIN fulfilment.shipments s ON s.id = p.shipment_id
JOIN fulfilment.carrier_services cs ON cs.id = s.carrier_service_id
JOIN fulfilment.warehouses w ON w.id = s.warehouse_id
JOIN (VALUES
    (1, 1, 'LBL', 'label_created', 'Shipment information received', interval '90 minutes'),
    (2, 2, 'PU', 'picked_up', 'Picked up by carrier', interval '5 hours'),
    (3, 3, 'HUB_IN', 'in_transit', 'Arrived at sort facility', interval '8 hours'),
    (4, 3, 'HUB_OUT', 'in_transit', 'Departed sort facility', interval '10 hours'),
    (5, 9, 'EXC', 'exception', 'Delivery exception: address incomplete', interval '11 hours'),
    (6, 4, 'OFD', 'out_for_delivery', 'Out for delivery', interval '14 hours'),
    (7, 5, 'DLV', 'delivered', 'Delivered', interval '18 hours')
) AS e(n, stage, code, status, description, after)
  ON e.stage <= CASE s.status WHEN 'label_created' THEN 1 WHEN 'picked_up' THEN 2 WHEN 'in_transit' THEN 3 WHEN 'exception' THEN 9
                              WHEN 'out_for_delivery' THEN 4 WHEN 'delivered' THEN 5 ELSE 0 END
 AND (e.stage <> 9 OR s.status = 'exception')
 AND (e.stage < 4 OR e.stage = 9 OR s.status <> 'exception')
 AND s.created_at + e.after < now();

-- Reservations: released when the label was created, still held for pending shipments, and a
-- few that expired (payment abandoned after the hold).
INSERT INTO fulfilment.stock_reservations (order_id, sku_id, warehouse_id, qty, created_at, expires_at, released_at, release_reason)
SELECT s.order_id, o.sku, s.warehouse_id, o.qty, s.created_at, s.created_at + interval '2 hours',
       CASE WHEN s.status = 'cancelled' THEN s.updated_at WHEN s.status <> 'pending' THEN s.label_created_at END,
       CASE WHEN s.status = 'cancelled' THEN 'cancelled' WHEN s.status <> 'pending' THEN 'shipped' END
FROM fulfilment.shipments s JOIN public.orders o ON o.id = s.order_id;

INSERT INTO fulfilment.stock_reservations (order_id, sku_id, warehouse_id, qty, created_at, expires_at, released_at, release_reason)
SELECT o.id, o.sku, l.warehouse_id, o.qty, o.created_at, o.created_at + interval '30 minutes', o.created_at + interval '31 minutes', 'expired'
FROM public.orders o
JOIN LATERAL (SELECT warehouse_id FROM fulfilment.stock_levels WHERE sku_id = o.sku ORDER BY warehouse_id LIMIT 1) l ON true
WHERE o.id % 1000 >= 4 * :volume AND o.id % 1000 < 4 * :volume + 1 AND o.created_at < now() - interval '1 hour'
  AND (hashint8(o.id) & 3) = 0;

UPDATE fulfilment.stock_levels l SET reserved = r.qty
FROM (SELECT warehouse_id, sku_id, sum(qty) AS qty FROM fulfilment.stock_reservations
      WHERE released_at IS NULL GROUP BY 1, 2) r
WHERE r.warehouse_id = l.warehouse_id AND r.sku_id = l.sku_id;

-- Returns: only delivered shipments can be returned, and most buyers have not had theirs long.
INSERT INTO fulfilment.returns (rma_number, shipment_id, order_id, status, reason_code, customer_comment, return_tracking_number,
                                refund_amount_cents, restock, requested_at, received_at, closed_at, updated_at)
SELECT 'RMA-' || lpad((20000000 + s.id % 10000000)::text, 8, '0'), s.id, s.order_id,
       'requested', (ARRAY['damaged', 'wrong_item', 'not_as_described', 'no_longer_needed', 'size_fit', 'other'])[1 + (hashint8(s.id) & 1023) % 6],
       CASE WHEN (hashint8(s.id) & 1) = 0 THEN (ARRAY['Box was crushed', 'Ordered the wrong size', 'Colour is different', 'Changed my mind'])[1 + (hashint8(s.id * 3) & 3)] END,
       NULL, NULL, NULL,
       s.delivered_at + interval '2 hours', NULL, NULL, s.delivered_at + interval '2 hours'
FROM fulfilment.shipments s
WHERE s.status = 'delivered' AND (hashint8(s.id * 29) & 15) = 0 AND s.delivered_at + interval '2 hours' < now();

INSERT INTO fulfilment.return_items (return_id, sku_id, qty, condition)
SELECT r.id, o.sku, 1, NULL
FROM fulfilment.returns r JOIN public.orders o ON o.id = r.order_id;

ALTER TABLE fulfilment.stock_movements ENABLE TRIGGER USER;
ALTER TABLE fulfilment.tracking_events ENABLE TRIGGER USER;
ALTER TABLE fulfilment.shipments ENABLE TRIGGER USER;
ALTER TABLE fulfilment.returns ENABLE TRIGGER USER;
ALTER TABLE fulfilment.warehouses ENABLE TRIGGER USER;
ALTER TABLE fulfilment.carrier_accounts ENABLE TRIGGER USER;
