-- Catalog secondary indexes, the review summary materialised view, sequence positions.

CREATE INDEX categories_parent_idx ON catalog.categories (parent_id);
CREATE INDEX category_attributes_attribute_idx ON catalog.category_attributes (attribute_id);
CREATE INDEX products_category_idx ON catalog.products (category_id);
CREATE INDEX products_brand_idx ON catalog.products (brand_id) WHERE brand_id IS NOT NULL;
CREATE INDEX products_merchant_status_idx ON catalog.products (merchant_id, status, updated_at DESC);
CREATE INDEX products_tags_idx ON catalog.products USING gin (tags);
CREATE UNIQUE INDEX skus_gtin_key ON catalog.skus (gtin) WHERE gtin IS NOT NULL;
CREATE INDEX product_attribute_values_facet_idx ON catalog.product_attribute_values (attribute_id, value_text) WHERE value_text IS NOT NULL;
CREATE INDEX collection_products_product_idx ON catalog.collection_products (product_id);
CREATE INDEX collections_merchant_idx ON catalog.collections (merchant_id) WHERE merchant_id IS NOT NULL;
CREATE INDEX reviews_product_published_idx ON catalog.reviews (product_id, published_at DESC) WHERE status = 'published';
CREATE INDEX reviews_moderation_idx ON catalog.reviews (created_at) WHERE status = 'pending';
CREATE INDEX reviews_sku_idx ON catalog.reviews (sku_id) WHERE sku_id IS NOT NULL;
CREATE INDEX search_documents_tsv_idx ON catalog.search_documents USING gin (tsv);
CREATE INDEX search_documents_title_trgm_idx ON catalog.search_documents USING gin (title gin_trgm_ops);
CREATE INDEX search_documents_merchant_idx ON catalog.search_documents (merchant_id) WHERE status = 'active';
CREATE INDEX search_query_log_queried_at_brin ON catalog.search_query_log USING brin (queried_at) WITH (pages_per_range = 32);
CREATE INDEX search_reindex_queue_enqueued_idx ON catalog.search_reindex_queue (enqueued_at);
CREATE INDEX import_batches_merchant_idx ON catalog.import_batches (merchant_id, created_at DESC);

COMMENT ON INDEX catalog.search_documents_title_trgm_idx IS 'Typo-tolerant fallback of catalog.search_products() (query <% title).';
COMMENT ON INDEX catalog.search_query_log_queried_at_brin IS 'The log is append-only in time order: a BRIN index serves the 60-day purge and date-range reports at a fraction of a btree''s size.';

-- Review aggregates shown on product pages (refreshed hourly, jobs: catalog.rating_summary_refresh).
CREATE MATERIALIZED VIEW catalog.product_rating_summary AS
SELECT product_id,
       count(*) AS reviews,
       round(avg(rating), 2) AS rating_avg,
       count(*) FILTER (WHERE rating = 5) AS stars_5,
       count(*) FILTER (WHERE rating = 4) AS stars_4,
       count(*) FILTER (WHERE rating = 3) AS stars_3,
       count(*) FILTER (WHERE rating = 2) AS stars_2,
       count(*) FILTER (WHERE rating = 1) AS stars_1,
       max(published_at) AS last_review_at
FROM catalog.reviews
WHERE status = 'published'
GROUP BY product_id
WITH DATA;
CREATE UNIQUE INDEX product_rating_summary_product_idx ON catalog.product_rating_summary (product_id);
COMMENT ON MATERIALIZED VIEW catalog.product_rating_summary IS 'Published review counts and average per product; refreshed CONCURRENTLY every hour.';
ALTER MATERIALIZED VIEW catalog.product_rating_summary OWNER TO catalog_owner;

-- The catalog's own SKU numbers: handed out after the checkout's 2000.
SELECT setval('catalog.sku_number_seq', 2000);
