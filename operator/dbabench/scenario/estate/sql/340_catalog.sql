-- Catalog data. Deterministic: every choice is a hash of the row number.
-- u(g, k) below means (hashint8extended(g, k) & 2147483647)::float8 / 2147483647, uniform in [0, 1].
-- Merchant m joined (1800 - 17 m) days ago (merchant 1 is the oldest).
-- The 2000 SKUs are the checkout's: order g sells SKU 1 + (g * 7919) % 2000 for merchant
-- 1 + g % 100, so each SKU belongs to exactly one merchant and the catalog agrees with orders.

-- Ids continue from the history that retention already purged.
ALTER TABLE catalog.search_query_log ALTER COLUMN id RESTART WITH 18400000;
ALTER TABLE catalog.product_images ALTER COLUMN id RESTART WITH 410000;
ALTER TABLE catalog.import_batches ALTER COLUMN id RESTART WITH 52000;

-- Seeding is a bulk load: no audit rows, outbox events or reindex requests for it.
ALTER TABLE catalog.products DISABLE TRIGGER USER;
ALTER TABLE catalog.categories DISABLE TRIGGER audit;
ALTER TABLE catalog.reviews DISABLE TRIGGER USER;

INSERT INTO catalog.categories (id, parent_id, slug, name, sort_order, is_leaf, google_taxonomy_id, created_at)
SELECT v.id, NULL, v.slug, v.name, v.id, false, v.gt, now() - interval '1640 days' + make_interval(hours => v.id)
FROM (VALUES
    (1, 'electronics', 'Electronics', 222), (2, 'home-garden', 'Home & Garden', 536),
    (3, 'fashion', 'Fashion', 166), (4, 'beauty', 'Beauty & Personal Care', 469),
    (5, 'sports-outdoors', 'Sports & Outdoors', 988), (6, 'toys-games', 'Toys & Games', 1239),
    (7, 'books-media', 'Books & Media', 783), (8, 'grocery', 'Grocery & Gourmet', 412),
    (9, 'health', 'Health & Household', 491), (10, 'automotive', 'Automotive', 888),
    (11, 'pet-supplies', 'Pet Supplies', 1), (12, 'office', 'Office & Stationery', 922)
) AS v(id, slug, name, gt);

INSERT INTO catalog.categories (id, parent_id, slug, name, sort_order, google_taxonomy_id, created_at)
SELECT 100 + row_number() OVER (ORDER BY v.ord), p.id, v.slug, v.name, v.ord,
       CASE WHEN v.ord % 7 = 3 THEN NULL ELSE 1000 + v.ord * 13 END,
       now() - interval '1600 days' + make_interval(days => (v.ord * 11) % 900)
FROM (VALUES
    (1, 'electronics', 'headphones', 'Headphones'), (2, 'electronics', 'smartphones', 'Smartphones'),
    (3, 'electronics', 'laptops', 'Laptops'), (4, 'electronics', 'tablets', 'Tablets'),
    (5, 'electronics', 'cameras', 'Cameras'), (6, 'electronics', 'smart-home', 'Smart Home'),
    (7, 'electronics', 'speakers', 'Speakers'), (8, 'electronics', 'chargers-cables', 'Chargers & Cables'),
    (9, 'electronics', 'wearables', 'Wearables'),
    (10, 'home-garden', 'kitchen', 'Kitchen'), (11, 'home-garden', 'furniture', 'Furniture'),
    (12, 'home-garden', 'bedding', 'Bedding'), (13, 'home-garden', 'lighting', 'Lighting'),
    (14, 'home-garden', 'garden-tools', 'Garden Tools'), (15, 'home-garden', 'home-decor', 'Home Decor'),
    (16, 'home-garden', 'storage', 'Storage & Organisation'), (17, 'home-garden', 'cleaning', 'Cleaning'),
    (18, 'fashion', 'womens-clothing', 'Women''s Clothing'), (19, 'fashion', 'mens-clothing', 'Men''s Clothing'),
    (20, 'fashion', 'shoes', 'Shoes'), (21, 'fashion', 'bags', 'Bags'),
    (22, 'fashion', 'jewellery', 'Jewellery'), (23, 'fashion', 'watches', 'Watches'),
    (24, 'fashion', 'kids-clothing', 'Kids'' Clothing'), (25, 'fashion', 'accessories', 'Accessories'),
    (26, 'beauty', 'skincare', 'Skincare'), (27, 'beauty', 'makeup', 'Makeup'),
    (28, 'beauty', 'haircare', 'Haircare'), (29, 'beauty', 'fragrance', 'Fragrance'),
    (30, 'beauty', 'shaving', 'Shaving & Grooming'),
    (31, 'sports-outdoors', 'running', 'Running'), (32, 'sports-outdoors', 'cycling', 'Cycling'),
    (33, 'sports-outdoors', 'camping', 'Camping & Hiking'), (34, 'sports-outdoors', 'fitness', 'Fitness Equipment'),
    (35, 'sports-outdoors', 'yoga', 'Yoga'), (36, 'sports-outdoors', 'swimming', 'Swimming'),
    (37, 'sports-outdoors', 'team-sports', 'Team Sports'),
    (38, 'toys-games', 'board-games', 'Board Games'), (39, 'toys-games', 'puzzles', 'Puzzles'),
    (40, 'toys-games', 'building-sets', 'Building Sets'), (41, 'toys-games', 'dolls', 'Dolls & Figures'),
    (42, 'toys-games', 'outdoor-toys', 'Outdoor Toys'), (43, 'toys-games', 'video-games', 'Video Games'),
    (44, 'books-media', 'fiction', 'Fiction'), (45, 'books-media', 'non-fiction', 'Non-Fiction'),
    (46, 'books-media', 'childrens-books', 'Children''s Books'), (47, 'books-media', 'comics', 'Comics & Graphic Novels'),
    (48, 'books-media', 'vinyl', 'Vinyl Records'), (49, 'books-media', 'films', 'Films & TV'),
    (50, 'grocery', 'coffee-tea', 'Coffee & Tea'), (51, 'grocery', 'snacks', 'Snacks'),
    (52, 'grocery', 'pantry', 'Pantry'), (53, 'grocery', 'beverages', 'Beverages'),
    (54, 'grocery', 'organic', 'Organic'),
    (55, 'health', 'vitamins', 'Vitamins & Supplements'), (56, 'health', 'first-aid', 'First Aid'),
    (57, 'health', 'baby-care', 'Baby Care'), (58, 'health', 'household-supplies', 'Household Supplies'),
    (59, 'automotive', 'car-parts', 'Car Parts'), (60, 'automotive', 'car-care', 'Car Care'),
    (61, 'automotive', 'motorcycle', 'Motorcycle'), (62, 'automotive', 'tyres', 'Tyres'),
    (63, 'pet-supplies', 'dog', 'Dog'), (64, 'pet-supplies', 'cat', 'Cat'),
    (65, 'pet-supplies', 'aquarium', 'Aquarium'), (66, 'pet-supplies', 'small-animals', 'Small Animals'),
    (67, 'office', 'stationery', 'Stationery'), (68, 'office', 'printer-supplies', 'Printer Supplies'),
    (69, 'office', 'office-furniture', 'Office Furniture'), (70, 'office', 'school-supplies', 'School Supplies')
) AS v(ord, parent_slug, slug, name)
JOIN catalog.categories p ON p.slug = v.parent_slug;

INSERT INTO catalog.categories (id, parent_id, slug, name, sort_order, google_taxonomy_id, created_at)
SELECT 300 + row_number() OVER (ORDER BY v.ord), p.id, v.slug, v.name, v.ord, NULL,
       now() - interval '900 days' + make_interval(days => v.ord * 17)
FROM (VALUES
    (1, 'shoes', 'running-shoes', 'Running Shoes'), (2, 'shoes', 'sneakers', 'Sneakers'),
    (3, 'shoes', 'boots', 'Boots'), (4, 'shoes', 'sandals', 'Sandals'),
    (5, 'kitchen', 'cookware', 'Cookware'), (6, 'kitchen', 'knives', 'Kitchen Knives'),
    (7, 'kitchen', 'small-appliances', 'Small Appliances'), (8, 'kitchen', 'tableware', 'Tableware'),
    (9, 'womens-clothing', 'dresses', 'Dresses'), (10, 'womens-clothing', 'tops', 'Tops & Blouses'),
    (11, 'womens-clothing', 'jeans', 'Jeans'), (12, 'coffee-tea', 'coffee-beans', 'Coffee Beans'),
    (13, 'coffee-tea', 'tea', 'Tea'), (14, 'dog', 'dog-food', 'Dog Food'), (15, 'dog', 'dog-toys', 'Dog Toys'),
    (16, 'skincare', 'moisturisers', 'Moisturisers'), (17, 'skincare', 'sunscreen', 'Sunscreen'),
    (18, 'cycling', 'bikes', 'Bikes'), (19, 'cycling', 'bike-helmets', 'Bike Helmets'),
    (20, 'camping', 'tents', 'Tents'), (21, 'camping', 'sleeping-bags', 'Sleeping Bags')
) AS v(ord, parent_slug, slug, name)
JOIN catalog.categories p ON p.slug = v.parent_slug;

UPDATE catalog.categories c SET is_leaf = false
WHERE EXISTS (SELECT 1 FROM catalog.categories k WHERE k.parent_id = c.id);

INSERT INTO catalog.brands (id, name, website, is_verified, created_at)
SELECT (a.i - 1) * 15 + b.j, a.p || b.s,
       CASE WHEN (hashint8(a.i * 15 + b.j) & 3) <> 0 THEN 'https://www.' || lower(a.p || b.s) || '.com' END,
       (hashint8(a.i * 15 + b.j + 7) & 7) < 3,
       now() - make_interval(days => 30 + ((hashint8(a.i * 15 + b.j) & 2047) % 1700)::int)
FROM unnest(ARRAY['Nor', 'Alv', 'Bel', 'Cor', 'Dav', 'Elm', 'Fal', 'Gar', 'Hal', 'Ist',
                  'Jor', 'Kel', 'Lum', 'Mar', 'Nov', 'Ost', 'Pel', 'Quin', 'Ros', 'Sol']) WITH ORDINALITY AS a(p, i),
     unnest(ARRAY['vik', 'ara', 'ton', 'ex', 'ia', 'wood', 'stone', 'field', 'ora', 'lux',
                  'mont', 'berg', 'ly', 'ico', 'haus']) WITH ORDINALITY AS b(s, j);

INSERT INTO catalog.attributes (id, code, label, data_type, unit, allowed_values, is_filterable, is_variant_axis)
VALUES
    (1, 'colour', 'Colour', 'enum', NULL, '{black,white,grey,navy,red,green,blue,beige,pink,yellow}', true, true),
    (2, 'size', 'Size', 'enum', NULL, '{XS,S,M,L,XL,XXL}', true, true),
    (3, 'material', 'Material', 'enum', NULL, '{cotton,polyester,wool,leather,steel,aluminium,plastic,wood,glass,bamboo}', true, false),
    (4, 'weight_kg', 'Weight', 'number', 'kg', NULL, false, false),
    (5, 'warranty_months', 'Warranty', 'number', 'months', NULL, true, false),
    (6, 'waterproof', 'Waterproof', 'boolean', NULL, NULL, true, false),
    (7, 'battery_life_h', 'Battery life', 'number', 'h', NULL, true, false),
    (8, 'power_w', 'Power', 'number', 'W', NULL, true, false),
    (9, 'capacity_l', 'Capacity', 'number', 'l', NULL, true, false),
    (10, 'age_range', 'Age range', 'enum', NULL, '{0-2,3-5,6-8,9-12,13+,adult}', true, false),
    (11, 'organic', 'Organic', 'boolean', NULL, NULL, true, false),
    (12, 'vegan', 'Vegan', 'boolean', NULL, NULL, true, false),
    (13, 'country_of_origin', 'Country of origin', 'enum', NULL, '{DE,FR,IT,ES,PT,PL,CN,VN,IN,US,GB,TR}', false, false),
    (14, 'fit', 'Fit', 'enum', NULL, '{slim,regular,relaxed,oversized}', true, false),
    (15, 'connectivity', 'Connectivity', 'enum', NULL, '{bluetooth,wifi,usb-c,wired,zigbee}', true, false),
    (16, 'screen_in', 'Screen size', 'number', 'in', NULL, true, false),
    (17, 'storage_gb', 'Storage', 'number', 'GB', NULL, true, false),
    (18, 'pages', 'Pages', 'number', NULL, NULL, false, false),
    (19, 'language', 'Language', 'enum', NULL, '{en,de,fr,es,it,nl}', true, false),
    (20, 'format', 'Format', 'enum', NULL, '{hardcover,paperback,ebook,audio,vinyl,dvd,blu-ray}', true, false),
    (21, 'pack_size', 'Pack size', 'number', 'units', NULL, true, false),
    (22, 'shelf_life_days', 'Shelf life', 'number', 'days', NULL, false, false),
    (23, 'dishwasher_safe', 'Dishwasher safe', 'boolean', NULL, NULL, true, false),
    (24, 'assembly_required', 'Assembly required', 'boolean', NULL, NULL, true, false),
    (25, 'skin_type', 'Skin type', 'enum', NULL, '{dry,oily,combination,sensitive,all}', true, false),
    (26, 'spf', 'SPF', 'number', NULL, NULL, true, false),
    (27, 'volume_ml', 'Volume', 'number', 'ml', NULL, true, false),
    (28, 'pet_size', 'Pet size', 'enum', NULL, '{small,medium,large,all}', true, false),
    (29, 'fits_model', 'Fits model', 'text', NULL, NULL, false, false),
    (30, 'care_instructions', 'Care instructions', 'text', NULL, NULL, false, false);

-- Each leaf category shows 4 to 6 facets.
INSERT INTO catalog.category_attributes (category_id, attribute_id, is_required, sort_order)
SELECT c.id, 1 + (c.id * 7 + k * 11) % 30, k = 0, k
FROM catalog.categories c, generate_series(0, 5) k
WHERE c.is_leaf AND k < 4 + (hashint8(c.id) & 1) * 2
ON CONFLICT DO NOTHING;

-- Products that own the 2000 SKUs. Each merchant has 20 SKUs; its vertical decides how many
-- variants a product has (fashion 4 sizes, sports 3, others 1 or 2).
INSERT INTO catalog.products (id, merchant_id, category_id, brand_id, slug, title, description, status,
                              attributes, tags, origin_country, hs_code, created_at, updated_at, published_at)
WITH skus AS (
    SELECT 1 + (g * 7919) % 2000 AS sku, 1 + g % 100 AS merchant_id
    FROM generate_series(0, 1999) g
), roots AS (
    SELECT m, (ARRAY[3, 3, 3, 1, 1, 2, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 3, 1, 2, 5])[1 + (hashint8(m) & 1023) % 20] AS root_id
    FROM generate_series(1, 101) m
), leaves AS (
    SELECT c.id, r.id AS root_id, c.name,
           row_number() OVER (PARTITION BY r.id ORDER BY c.id) AS n,
           count(*) OVER (PARTITION BY r.id) AS cnt
    FROM catalog.categories c
    JOIN catalog.categories r ON r.parent_id IS NULL AND c.path LIKE r.path || '/%'
    WHERE c.is_leaf
), grouped AS (
    SELECT s.sku, s.merchant_id, r.root_id,
           (row_number() OVER (PARTITION BY s.merchant_id ORDER BY s.sku) - 1)
             / CASE r.root_id WHEN 3 THEN 4 WHEN 5 THEN 3 ELSE 1 + (hashint8(s.merchant_id * 31) & 1) END AS grp
    FROM skus s JOIN roots r ON r.m = s.merchant_id
), products AS (
    SELECT dense_rank() OVER (ORDER BY merchant_id, grp) AS id, merchant_id, root_id, grp
    FROM grouped GROUP BY merchant_id, root_id, grp
)
SELECT p.id, p.merchant_id, l.id,
       1 + (hashint8(p.merchant_id * 1000 + (p.grp::int % 3)) & 1023) % 300,
       lower(regexp_replace(t.title, '[^A-Za-z0-9]+', '-', 'g')),
       t.title,
       'The ' || t.title || ' ' || (ARRAY['is built to last', 'is our best seller', 'combines comfort and style',
            'is designed in Europe', 'comes with free returns', 'is made from responsibly sourced materials',
            'was reworked for this season', 'is a customer favourite'])[1 + (hashint8(p.id::int) & 7)]
           || '. ' || (ARRAY['Ships within 24 hours.', 'Gift wrapping available.', 'Limited stock.',
            'Compatible with the rest of the range.', 'Two-year warranty.', 'Carbon-neutral delivery.'])[1 + (hashint8(p.id::int + 9) & 1023) % 6],
       CASE WHEN (hashint8(p.id::int + 3) & 63) = 0 THEN 'suspended' ELSE 'active' END::catalog.product_status,
       '{}'::jsonb,
       (ARRAY['{}', '{new}', '{sale}', '{bestseller}', '{eco}', '{new,eco}', '{sale,clearance}', '{}'])[1 + (hashint8(p.id::int + 5) & 7)]::text[],
       (ARRAY['DE', 'FR', 'IT', 'CN', 'CN', 'VN', 'PL', 'PT', 'ES', 'TR', 'IN', 'US'])[1 + (hashint8(p.id::int + 8) & 1023) % 12],
       CASE WHEN (hashint8(p.id::int) & 3) <> 0 THEN lpad(((hashint8(p.id::int + 11) & 2147483647) % 999999)::text, 6, '0') || '00' END,
       o.created_at, o.created_at + interval '3 days' * (hashint8(p.id::int + 1) & 7), o.created_at + interval '2 days'
FROM products p
JOIN LATERAL (SELECT (SELECT id FROM leaves l WHERE l.root_id = p.root_id
                        AND l.n = 1 + (hashint8(p.merchant_id * 7 + p.grp::int) & 1023) % l.cnt) AS leaf_id) x ON true
JOIN leaves l ON l.id = x.leaf_id
CROSS JOIN LATERAL (SELECT now() - make_interval(days => 1800 - 17 * p.merchant_id)
                         + (interval '1 day' * (1800 - 17 * p.merchant_id - 5))
                           * ((hashint8extended(p.id, 1) & 2147483647)::float8 / 2147483647) AS created_at) o
CROSS JOIN LATERAL (SELECT (SELECT b.name FROM catalog.brands b
                             WHERE b.id = 1 + (hashint8(p.merchant_id * 1000 + (p.grp::int % 3)) & 1023) % 300)
                         || ' ' || (ARRAY['Classic', 'Pro', 'Essential', 'Urban', 'Nordic', 'Compact', 'Premium', 'Everyday',
                                          'Ultra', 'Heritage', 'Active', 'Studio', 'Eco', 'Signature', 'Travel', 'Max'])[1 + (hashint8(p.id::int + 2) & 15)]
                         || ' ' || l.name || ' ' || upper(substr(md5(p.id::text), 1, 2)) || '-' || (100 + p.id % 900) AS title) t;

-- A category retired in the 2023 re-taxonomy: kept because archived products still point at it.
INSERT INTO catalog.categories (id, parent_id, slug, name, sort_order, created_at)
VALUES (399, 1, 'mp3-players', 'MP3 Players (retired)', 99, now() - interval '1640 days');

-- Drafts that were never published and archived listings (their SKUs retired): grow with volume,
-- concentrated on the big merchants' bulk uploads.
INSERT INTO catalog.products (id, merchant_id, category_id, brand_id, slug, title, description, status,
                              tags, created_at, updated_at, published_at, archived_at)
SELECT n.id, n.merchant_id,
       CASE WHEN n.archived AND (hashint8(n.g + 77) & 15) = 0 THEN 399 ELSE 101 + (hashint8(n.g) & 1023) % 70 END,
       CASE WHEN (hashint8(n.g + 1) & 3) <> 0 THEN 1 + (hashint8(n.g + 2) & 1023) % 300 END,
       'draft-' || n.id, t.title,
       CASE WHEN (hashint8(n.g + 4) & 1) = 0 THEN 'Imported from ' || (ARRAY['feed.csv', 'catalogue.xlsx', 'google_feed.xml', 'api'])[1 + (hashint8(n.g + 5) & 3)] END,
       CASE WHEN n.archived THEN 'archived' ELSE 'draft' END::catalog.product_status,
       '{}', n.created_at, n.created_at + interval '1 hour',
       CASE WHEN n.archived THEN n.created_at + interval '5 days' END,
       CASE WHEN n.archived THEN n.created_at + interval '5 days' + interval '1 day' * (hashint8(n.g + 6) & 511) END
FROM (
    SELECT g, 100000 + g AS id,
           1 + floor(100 * ((hashint8extended(g, 11) & 2147483647)::float8 / 2147483647) ^ 2)::int AS merchant_id,
           (hashint8(g + 3) & 1023) < 460 AS archived,
           now() - interval '1 day' * (5 + 1700 * ((hashint8extended(g, 12) & 2147483647)::float8 / 2147483647)) AS created_at
    FROM generate_series(1, 120 * :volume) g
) n
CROSS JOIN LATERAL (SELECT (ARRAY['Untitled product', 'New listing', 'Sample', 'Bundle', 'Gift set', 'Refill pack',
                                  'Replacement part', 'Seasonal edition', 'Clearance lot', 'Spare'])[1 + (hashint8(n.g + 8) & 1023) % 10]
                           || ' ' || n.id AS title) t
WHERE n.created_at > now() - make_interval(days => 1800 - 17 * n.merchant_id);

-- A merchant's drafts cannot predate the merchant; those rows were skipped above, so the draft
-- ids have gaps, as deleted drafts leave in the real table.

INSERT INTO catalog.skus (id, product_id, merchant_sku, gtin, title, option_values, weight_g,
                          length_mm, width_mm, height_mm, is_active, created_at, updated_at)
WITH skus AS (
    SELECT 1 + (g * 7919) % 2000 AS sku, 1 + g % 100 AS merchant_id
    FROM generate_series(0, 1999) g
), roots AS (
    SELECT m, (ARRAY[3, 3, 3, 1, 1, 2, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 3, 1, 2, 5])[1 + (hashint8(m) & 1023) % 20] AS root_id
    FROM generate_series(1, 101) m
), grouped AS (
    SELECT s.sku, s.merchant_id, r.root_id,
           row_number() OVER (PARTITION BY s.merchant_id ORDER BY s.sku) - 1 AS rn,
           CASE r.root_id WHEN 3 THEN 4 WHEN 5 THEN 3 ELSE 1 + (hashint8(s.merchant_id * 31) & 1) END AS k
    FROM skus s JOIN roots r ON r.m = s.merchant_id
), mapped AS (
    SELECT sku, merchant_id, root_id, rn % k AS variant, k,
           dense_rank() OVER (ORDER BY merchant_id, rn / k) AS product_id
    FROM grouped
)
SELECT m.sku, m.product_id,
       upper(left(regexp_replace(p.title, '[^A-Za-z]', '', 'g'), 3)) || '-' || lpad((m.sku * 37 % 100000)::text, 5, '0')
           || CASE WHEN m.k > 1 THEN '-' || (m.variant + 1) ELSE '' END,
       CASE WHEN (hashint8(m.sku) & 15) <> 0 THEN '40' || lpad(((hashint8extended(m.sku, 21) & 2147483647) % 100000000000)::text, 11, '0') END,
       p.title || CASE WHEN m.root_id = 3 THEN ' - ' || (ARRAY['S', 'M', 'L', 'XL'])[1 + m.variant]
                       WHEN m.k > 1 THEN ' - ' || (ARRAY['Black', 'White', 'Navy'])[1 + m.variant] ELSE '' END,
       CASE WHEN m.root_id = 3 THEN jsonb_build_object('size', (ARRAY['S', 'M', 'L', 'XL'])[1 + m.variant])
            WHEN m.k > 1 THEN jsonb_build_object('colour', (ARRAY['black', 'white', 'navy'])[1 + m.variant])
            ELSE '{}'::jsonb END,
       50 + (hashint8(m.sku + 1) & 2147483647) % 4950,
       CASE WHEN (hashint8(m.sku + 2) & 7) <> 0 THEN 50 + (hashint8(m.sku + 3) & 511) END,
       CASE WHEN (hashint8(m.sku + 2) & 7) <> 0 THEN 30 + (hashint8(m.sku + 4) & 255) END,
       CASE WHEN (hashint8(m.sku + 2) & 7) <> 0 THEN 10 + (hashint8(m.sku + 5) & 255) END,
       p.status = 'active' OR (hashint8(m.sku + 6) & 1) = 0,
       p.created_at + interval '1 day' * m.variant,
       p.created_at + interval '1 day' * m.variant + interval '1 day' * (hashint8(m.sku + 7) & 255)
FROM mapped m JOIN catalog.products p ON p.id = m.product_id;

-- Facet values: four attributes per product (source of truth), copied into products.attributes.
INSERT INTO catalog.product_attribute_values (product_id, attribute_id, value_text, value_num, value_bool, updated_at)
SELECT p.id, a.id,
       CASE a.data_type WHEN 'enum' THEN a.allowed_values[1 + (hashint8extended(p.id, a.id) & 65535) % cardinality(a.allowed_values)]
                        WHEN 'text' THEN CASE a.code WHEN 'fits_model' THEN 'Series ' || (1 + p.id % 9) || ' (' || (2015 + p.id % 9) || '+)'
                                                     ELSE (ARRAY['Machine wash 30C', 'Hand wash only', 'Wipe clean', 'Do not tumble dry'])[1 + p.id % 4] END END,
       CASE WHEN a.data_type = 'number' THEN round((1 + (hashint8extended(p.id, a.id) & 65535) % 500)::numeric / CASE WHEN a.code IN ('weight_kg', 'capacity_l') THEN 10 ELSE 1 END, 1) END,
       CASE WHEN a.data_type = 'boolean' THEN (hashint8extended(p.id, a.id) & 1) = 1 END,
       p.updated_at
FROM catalog.products p
CROSS JOIN generate_series(0, 3) i
JOIN catalog.attributes a ON a.id = 1 + ((hashint8(p.id) & 1023) + i * 7) % 30;

UPDATE catalog.products p SET attributes = v.attrs
FROM (SELECT pav.product_id,
             jsonb_object_agg(a.code, coalesce(to_jsonb(pav.value_text), to_jsonb(pav.value_num), to_jsonb(pav.value_bool))) AS attrs
      FROM catalog.product_attribute_values pav JOIN catalog.attributes a ON a.id = pav.attribute_id
      GROUP BY pav.product_id) v
WHERE v.product_id = p.id AND p.status <> 'draft';

INSERT INTO catalog.product_images (product_id, sku_id, position, storage_key, width_px, height_px, content_sha256, alt_text, created_at)
SELECT p.id,
       CASE WHEN i > 0 AND (hashint8(p.id::int + i) & 7) = 0 THEN (SELECT min(s.id) FROM catalog.skus s WHERE s.product_id = p.id) END,
       i,
       'products/' || p.merchant_id || '/' || p.id || '/' || substr(md5(p.id || '-' || i), 1, 16) || '.jpg',
       (ARRAY[1200, 1600, 2000, 1000])[1 + (hashint8(p.id::int * 3 + i) & 3)],
       (ARRAY[1200, 1600, 1500, 800])[1 + (hashint8(p.id::int * 5 + i) & 3)],
       sha256(convert_to('img:' || p.id || ':' || i, 'UTF8')),
       CASE WHEN i = 0 THEN p.title END,
       p.created_at + make_interval(mins => i * 3)
FROM catalog.products p
CROSS JOIN generate_series(0, 5) i
WHERE i < CASE p.status WHEN 'draft' THEN (hashint8(p.id::int) & 1) ELSE 1 + (hashint8(p.id::int) & 1023) % 5 END;

INSERT INTO catalog.collections (id, merchant_id, slug, title, is_smart, rules, starts_at, ends_at, created_at)
SELECT row_number() OVER (ORDER BY m, k), m,
       (ARRAY['new-in', 'bestsellers', 'sale', 'gift-ideas', 'summer', 'winter', 'staff-picks', 'back-in-stock'])[1 + k],
       (ARRAY['New in', 'Bestsellers', 'Sale', 'Gift ideas', 'Summer edit', 'Winter edit', 'Staff picks', 'Back in stock'])[1 + k],
       k IN (0, 1, 7),
       CASE k WHEN 0 THEN '{"created_within_days": 30}'::jsonb WHEN 1 THEN '{"order_by": "units_sold_30d", "limit": 24}'::jsonb
              WHEN 7 THEN '{"restocked_within_days": 14}'::jsonb END,
       CASE WHEN k IN (4, 5) THEN date_trunc('year', now()) + make_interval(months => CASE k WHEN 4 THEN 5 ELSE 10 END) END,
       CASE WHEN k IN (4, 5) THEN date_trunc('year', now()) + make_interval(months => CASE k WHEN 4 THEN 8 ELSE 13 END) END,
       now() - make_interval(days => 1700 - 17 * m) + make_interval(days => k * 20)
FROM generate_series(1, 100) m, generate_series(0, 7) k
WHERE k < 2 + (hashint8(m) & 1023) % 7;

INSERT INTO catalog.collections (id, merchant_id, slug, title, is_smart, rules, starts_at, ends_at, created_at)
SELECT 5000 + row_number() OVER (ORDER BY d), NULL, 'campaign-' || to_char(d, 'YYYY-MM'), 'Marketplace campaign ' || to_char(d, 'Mon YYYY'), false, NULL,
       d, d + interval '10 days', d - interval '14 days'
FROM generate_series(date_trunc('month', now()) - interval '23 months', date_trunc('month', now()), interval '1 month') d;

INSERT INTO catalog.collection_products (collection_id, product_id, position, added_at)
SELECT c.id, p.id, row_number() OVER (PARTITION BY c.id ORDER BY p.id), greatest(c.created_at, p.created_at)
FROM catalog.collections c
JOIN catalog.products p ON p.merchant_id = c.merchant_id AND p.status = 'active'
WHERE NOT c.is_smart AND (hashint8(p.id * 100 + c.id) & 3) = 0;

INSERT INTO catalog.collection_products (collection_id, product_id, position, added_at)
SELECT c.id, p.id, row_number() OVER (PARTITION BY c.id ORDER BY p.id), c.created_at
FROM catalog.collections c
JOIN catalog.products p ON p.status = 'active'
WHERE c.merchant_id IS NULL AND (hashint8(p.id * 1000 + c.id) & 31) = 0;

-- Reviews: popular products collect most of them (power law over a permutation of products).
INSERT INTO catalog.reviews (id, product_id, sku_id, order_id, author_user_id, rating, title, body, locale,
                             status, helpful_votes, verified_purchase, moderated_by, created_at, published_at, updated_at)
WITH active AS (
    SELECT count(*) AS n FROM catalog.products WHERE id < 100000
), first_sku AS (
    SELECT product_id, min(id) AS sku_id FROM catalog.skus GROUP BY product_id
), r AS (
    SELECT g,
           1 + (floor(a.n * ((hashint8extended(g, 31) & 2147483647)::float8 / 2147483647) ^ 2.5)::bigint * 7919) % a.n AS product_id,
           (hashint8extended(g, 32) & 2147483647)::float8 / 2147483647 AS u_rating,
           (hashint8extended(g, 33) & 2147483647)::float8 / 2147483647 AS u_time,
           (hashint8(g::int) & 1023) AS h
    FROM generate_series(1, 3000 * :volume) g, active a
), rr AS (
    SELECT r.*,
           CASE WHEN u_rating < 0.56 THEN 5 WHEN u_rating < 0.78 THEN 4 WHEN u_rating < 0.87 THEN 3
                WHEN u_rating < 0.93 THEN 2 ELSE 1 END AS rating,
           now() - interval '1 day' * 1460 * (1 - sqrt(u_time)) AS created_at
    FROM r
)
SELECT 3000000 + g * 3 + (h & 1), rr.product_id,
       CASE WHEN h % 3 = 0 THEN fs.sku_id END,
       CASE WHEN h < 820 THEN 1 + (hashint8(g) & 2147483647) % 300000 END,
       1 + (hashint8extended(g, 34) & 2147483647) % 250000,
       rr.rating,
       CASE WHEN h % 5 <> 0 THEN
           (ARRAY['Terrible', 'Disappointing', 'It''s okay', 'Very good', 'Love it'])[rr.rating]
           || (ARRAY['', '!', ', would buy again', ' for the price', ''])[1 + h % 5] END,
       (ARRAY['Broke after a week. ', 'Not as described. ', 'Does the job. ', 'Great quality. ', 'Exactly what I wanted. '])[rr.rating]
       || (ARRAY['Arrived quickly', 'Packaging was damaged', 'Took two weeks to arrive', 'Fits true to size', 'Colour slightly different from the photos',
                 'Good value', 'Seller answered my questions fast', 'Would recommend', 'Returned it', 'Bought a second one'])[1 + h % 10]
       || CASE WHEN h % 4 = 0 THEN '. ' || (ARRAY['The instructions could be clearer.', 'My kids love it.', 'Battery lasts all day.',
                                              'Smaller than expected.', 'Feels premium.', 'Customer service sorted it out.'])[1 + h % 6] ELSE '.' END,
       (ARRAY['en', 'en', 'en', 'de', 'fr', 'en', 'nl', 'es'])[1 + (h >> 4) % 8],
       CASE WHEN rr.created_at > now() - interval '2 days' AND h % 3 = 0 THEN 'pending'
            WHEN h % 25 = 1 THEN 'rejected' WHEN h % 33 = 2 THEN 'hidden' ELSE 'published' END::catalog.review_status,
       floor(300 * ((hashint8extended(g, 35) & 2147483647)::float8 / 2147483647) ^ 8)::int,
       h < 820,
       CASE WHEN h % 25 = 1 OR h % 33 = 2 THEN (ARRAY['trust-safety-bot', 'moderator:aoife', 'moderator:jonas'])[1 + h % 3] END,
       rr.created_at,
       CASE WHEN NOT (rr.created_at > now() - interval '2 days' AND h % 3 = 0) AND h % 25 <> 1 THEN rr.created_at + interval '3 hours' END,
       rr.created_at + interval '3 hours'
FROM rr LEFT JOIN first_sku fs ON fs.product_id = rr.product_id;

INSERT INTO catalog.search_synonyms (term, synonyms, locale, is_one_way, created_by, created_at)
VALUES
    ('tee', '{t-shirt,tshirt}', 'en', false, 'relevance:maria', now() - interval '900 days'),
    ('sneakers', '{trainers,running shoes}', 'en', false, 'relevance:maria', now() - interval '880 days'),
    ('trainers', '{sneakers}', 'en', true, 'relevance:maria', now() - interval '880 days'),
    ('hoodie', '{sweatshirt,hooded top}', 'en', false, 'relevance:maria', now() - interval '860 days'),
    ('laptop', '{notebook}', 'en', false, 'relevance:maria', now() - interval '850 days'),
    ('phone', '{smartphone,mobile}', 'en', false, 'relevance:maria', now() - interval '850 days'),
    ('earbuds', '{headphones,in-ear}', 'en', true, 'relevance:tom', now() - interval '700 days'),
    ('couch', '{sofa}', 'en', false, 'relevance:tom', now() - interval '690 days'),
    ('jumper', '{sweater,pullover}', 'en', false, 'relevance:tom', now() - interval '680 days'),
    ('nappies', '{diapers}', 'en', false, 'relevance:tom', now() - interval '600 days'),
    ('tv', '{television}', 'en', false, 'relevance:tom', now() - interval '580 days'),
    ('bike', '{bicycle}', 'en', false, 'relevance:tom', now() - interval '560 days'),
    ('handy', '{smartphone}', 'de', true, 'relevance:lena', now() - interval '400 days'),
    ('turnschuhe', '{sneaker,laufschuhe}', 'de', false, 'relevance:lena', now() - interval '390 days'),
    ('baskets', '{sneakers}', 'fr', true, 'relevance:lena', now() - interval '380 days'),
    ('portable', '{smartphone}', 'fr', true, 'relevance:lena', now() - interval '370 days'),
    ('mug', '{cup}', 'en', false, 'relevance:maria', now() - interval '200 days'),
    ('flask', '{thermos,water bottle}', 'en', false, 'relevance:maria', now() - interval '150 days'),
    ('charger', '{power adapter,usb-c charger}', 'en', false, 'relevance:tom', now() - interval '90 days'),
    ('yoga mat', '{exercise mat}', 'en', false, 'relevance:tom', now() - interval '30 days');

-- Search documents for everything but drafts (the indexer's full rebuild, done set-wise).
INSERT INTO catalog.search_documents (product_id, merchant_id, status, title, brand, category_path, body,
                                      min_price_cents, rating_avg, rating_count, boost, source_version, indexed_at)
SELECT p.id, p.merchant_id, p.status, p.title, b.name::text, c.path,
       concat_ws(' ', p.description, array_to_string(p.tags, ' ')),
       pr.min_price, rv.avg_rating, coalesce(rv.n, 0),
       CASE WHEN p.merchant_id <= 5 THEN 1.2 ELSE 1.0 END,
       1 + (hashint8(p.id) & 15), greatest(p.updated_at, now() - interval '1 day' * (hashint8(p.id) & 7))
FROM catalog.products p
LEFT JOIN catalog.brands b ON b.id = p.brand_id
LEFT JOIN catalog.categories c ON c.id = p.category_id
LEFT JOIN (SELECT s.product_id, min(ph.price_cents) AS min_price
           FROM catalog.skus s JOIN public.price_history ph ON ph.sku = s.id AND ph.valid_to IS NULL
           GROUP BY s.product_id) pr ON pr.product_id = p.id
LEFT JOIN (SELECT product_id, round(avg(rating), 2) AS avg_rating, count(*)::integer AS n
           FROM catalog.reviews WHERE status = 'published' GROUP BY product_id) rv ON rv.product_id = p.id
WHERE p.status <> 'draft';

-- A few products edited in the last minutes, waiting for the indexer.
INSERT INTO catalog.search_reindex_queue (product_id, reason, enqueued_at)
SELECT id, 'products.update', now() - make_interval(secs => (hashint8(id) & 127))
FROM catalog.products WHERE id < 100000 AND (hashint8(id * 13) & 255) = 0;

-- Search query log, 60 days: a head of popular queries and a long tail, some typos.
INSERT INTO catalog.search_query_log (queried_at, query_text, merchant_id, result_count, clicked_product_id,
                                      click_position, session_id, latency_ms)
WITH vocab AS (
    SELECT (SELECT array_agg(lower(name) ORDER BY id) FROM catalog.categories WHERE is_leaf AND id <> 399) AS cats,
           (SELECT array_agg(lower(name::text) ORDER BY id) FROM catalog.brands) AS brands,
           (SELECT max(id) FROM catalog.products WHERE id < 100000) AS n_active
), q AS (
    SELECT g, v.n_active,
           floor(3000 * ((hashint8extended(g, 41) & 2147483647)::float8 / 2147483647) ^ 3)::int AS pick,
           v.cats, v.brands,
           (hashint8extended(g, 42) & 2147483647)::float8 / 2147483647 AS u_click,
           (hashint8extended(g, 43) & 2147483647)::float8 / 2147483647 AS u_lat
    FROM generate_series(1, 3000 * :volume) g, vocab v
), t AS (
    SELECT q.*,
           CASE pick % 3
               WHEN 0 THEN cats[1 + (pick / 3) % cardinality(cats)]
               WHEN 1 THEN brands[1 + (pick / 3) % cardinality(brands)]
               ELSE brands[1 + (pick * 7) % cardinality(brands)] || ' ' || cats[1 + (pick / 3) % cardinality(cats)]
           END AS base
    FROM q
)
SELECT now() - interval '60 days' * ((hashint8extended(g, 44) & 2147483647)::float8 / 2147483647),
       CASE WHEN g % 17 = 0 AND length(base) > 5 THEN overlay(base PLACING '' FROM 3 + (g % 3)::int FOR 1)
            WHEN g % 23 = 0 THEN upper(base)
            ELSE base END,
       CASE WHEN g % 4 = 0 THEN 1 + floor(100 * ((hashint8extended(g, 45) & 2147483647)::float8 / 2147483647) ^ 2)::int END,
       CASE WHEN g % 17 = 0 OR pick % 97 = 5 THEN 0 ELSE 1 + (hashint8(pick) & 2147483647) % 400 END,
       CASE WHEN u_click < 0.42 AND g % 17 <> 0 THEN 1 + (hashint8(pick * 31 + g % 5) & 2147483647) % n_active END,
       CASE WHEN u_click < 0.42 AND g % 17 <> 0 THEN 1 + floor(24 * u_click ^ 2)::int END,
       md5('session:' || (g / 3))::uuid,
       8 + floor(900 * u_lat ^ 6)::int
FROM t;

INSERT INTO catalog.import_batches (merchant_id, file_name, format, rows_total, rows_ok, rows_failed, status, errors,
                                    started_at, finished_at, created_at)
SELECT x.merchant_id, 'upload-' || to_char(x.created_at, 'YYYYMMDD-HH24MI') || (ARRAY['.csv', '.xlsx', '.xml', ''])[1 + x.f],
       (ARRAY['csv', 'xlsx', 'google_feed', 'api'])[1 + x.f],
       x.total, x.total - x.failed, x.failed,
       CASE WHEN x.created_at > now() - interval '10 minutes' THEN 'running' WHEN x.failed = x.total THEN 'failed' ELSE 'done' END,
       CASE WHEN x.failed > 0 THEN jsonb_build_array(jsonb_build_object('row', 2 + x.g % 40, 'error',
            (ARRAY['missing gtin', 'price below minimum', 'unknown category', 'image url unreachable'])[1 + x.g % 4])) END,
       x.created_at + interval '20 seconds',
       CASE WHEN x.created_at <= now() - interval '10 minutes' THEN x.created_at + interval '20 seconds' + make_interval(secs => x.total / 50) END,
       x.created_at
FROM (
    SELECT g, 1 + floor(100 * ((hashint8extended(g, 51) & 2147483647)::float8 / 2147483647) ^ 2)::int AS merchant_id,
           (hashint8(g) & 1023) % 4 AS f,
           CASE WHEN g = 1 THEN now() - interval '4 minutes'
                ELSE now() - interval '1 day' * 1500 * ((hashint8extended(g, 52) & 2147483647)::float8 / 2147483647) END AS created_at,
           10 + floor(5000 * ((hashint8extended(g, 53) & 2147483647)::float8 / 2147483647) ^ 3)::int AS total,
           CASE WHEN g % 9 = 0 THEN 10 + floor(5000 * ((hashint8extended(g, 53) & 2147483647)::float8 / 2147483647) ^ 3)::int
                WHEN g % 3 = 0 THEN (g % 7)::int ELSE 0 END AS failed
    FROM generate_series(1, 30 * :volume) g
) x;

ALTER TABLE catalog.products ENABLE TRIGGER USER;
ALTER TABLE catalog.categories ENABLE TRIGGER audit;
ALTER TABLE catalog.reviews ENABLE TRIGGER USER;
