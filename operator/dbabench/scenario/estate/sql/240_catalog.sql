-- Catalog functions, triggers and views.

-- Category path and depth follow the parent.
CREATE FUNCTION catalog.categories_set_path() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    parent_path text;
    parent_depth smallint;
BEGIN
    IF NEW.parent_id IS NULL THEN
        NEW.path := '/' || NEW.slug;
        NEW.depth := 0;
    ELSE
        SELECT path, depth INTO STRICT parent_path, parent_depth
        FROM catalog.categories WHERE id = NEW.parent_id;
        NEW.path := parent_path || '/' || NEW.slug;
        NEW.depth := parent_depth + 1;
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION catalog.categories_set_path() IS 'BEFORE trigger: derives path and depth from the parent. Moving a subtree needs catalog.rebuild_category_paths().';

CREATE TRIGGER categories_set_path
    BEFORE INSERT OR UPDATE OF parent_id, slug ON catalog.categories
    FOR EACH ROW EXECUTE FUNCTION catalog.categories_set_path();

CREATE FUNCTION catalog.rebuild_category_paths() RETURNS integer
LANGUAGE sql AS $$
    WITH RECURSIVE t AS (
        SELECT id, '/' || slug AS path, 0 AS depth FROM catalog.categories WHERE parent_id IS NULL
        UNION ALL
        SELECT c.id, t.path || '/' || c.slug, t.depth + 1
        FROM catalog.categories c JOIN t ON c.parent_id = t.id
    ), u AS (
        UPDATE catalog.categories c SET path = t.path, depth = t.depth
        FROM t WHERE c.id = t.id AND (c.path, c.depth) IS DISTINCT FROM (t.path, t.depth)
        RETURNING 1
    )
    SELECT count(*)::integer FROM u
$$;
COMMENT ON FUNCTION catalog.rebuild_category_paths() IS 'Recomputes every path after a subtree move; returns the rows changed.';

CREATE TRIGGER categories_updated_at BEFORE UPDATE ON catalog.categories
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER products_updated_at BEFORE UPDATE ON catalog.products
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER skus_updated_at BEFORE UPDATE ON catalog.skus
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER reviews_updated_at BEFORE UPDATE ON catalog.reviews
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();

-- Search documents are rebuilt asynchronously: writers only enqueue the product.
CREATE FUNCTION catalog.enqueue_reindex() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO catalog.search_reindex_queue (product_id, reason)
    VALUES (NEW.product_id, TG_TABLE_NAME || '.' || lower(TG_OP))
    ON CONFLICT (product_id) DO UPDATE SET reason = EXCLUDED.reason, enqueued_at = now();
    RETURN NULL;
END
$$;

CREATE FUNCTION catalog.enqueue_product_reindex() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO catalog.search_reindex_queue (product_id, reason)
    VALUES (NEW.id, 'products.' || lower(TG_OP))
    ON CONFLICT (product_id) DO UPDATE SET reason = EXCLUDED.reason, enqueued_at = now();
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION catalog.enqueue_product_reindex() IS 'AFTER trigger on products: marks the search document stale.';

CREATE TRIGGER products_enqueue_reindex
    AFTER INSERT OR UPDATE OF title, description, status, brand_id, category_id, tags ON catalog.products
    FOR EACH ROW EXECUTE FUNCTION catalog.enqueue_product_reindex();
CREATE TRIGGER reviews_enqueue_reindex
    AFTER INSERT OR UPDATE OF status, rating ON catalog.reviews
    FOR EACH ROW WHEN (NEW.status = 'published')
    EXECUTE FUNCTION catalog.enqueue_reindex();

-- The indexer's unit of work: rebuild one product's document from the source tables.
CREATE FUNCTION catalog.refresh_search_document(p_product_id bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO catalog.search_documents AS d
        (product_id, merchant_id, status, title, brand, category_path, body,
         min_price_cents, rating_avg, rating_count, source_version, indexed_at)
    SELECT p.id, p.merchant_id, p.status, p.title, b.name, c.path,
           concat_ws(' ', p.description, array_to_string(p.tags, ' ')),
           (SELECT min(ph.price_cents) FROM catalog.skus s
              JOIN public.price_history ph ON ph.sku = s.id AND ph.valid_to IS NULL
             WHERE s.product_id = p.id AND s.is_active),
           r.avg_rating, coalesce(r.n, 0), 1, now()
    FROM catalog.products p
    LEFT JOIN catalog.brands b ON b.id = p.brand_id
    LEFT JOIN catalog.categories c ON c.id = p.category_id
    LEFT JOIN LATERAL (SELECT round(avg(rating), 2) AS avg_rating, count(*)::integer AS n
                       FROM catalog.reviews WHERE product_id = p.id AND status = 'published') r ON true
    WHERE p.id = p_product_id
    ON CONFLICT (product_id) DO UPDATE
       SET merchant_id = EXCLUDED.merchant_id, status = EXCLUDED.status, title = EXCLUDED.title,
           brand = EXCLUDED.brand, category_path = EXCLUDED.category_path, body = EXCLUDED.body,
           min_price_cents = EXCLUDED.min_price_cents, rating_avg = EXCLUDED.rating_avg,
           rating_count = EXCLUDED.rating_count, source_version = d.source_version + 1,
           indexed_at = now()
$$;
COMMENT ON FUNCTION catalog.refresh_search_document(bigint) IS 'Rebuilds one search document (called by search_indexer for each product drained from search_reindex_queue).';

-- Storefront search: full text first, trigram word similarity on the title as the typo fallback.
CREATE FUNCTION catalog.search_products(p_query text, p_merchant_id integer DEFAULT NULL, p_limit integer DEFAULT 24)
RETURNS TABLE (product_id bigint, title text, rank real)
LANGUAGE sql STABLE AS $$
    (SELECT d.product_id, d.title, ts_rank_cd(d.tsv, q) * d.boost AS rank
     FROM catalog.search_documents d, websearch_to_tsquery('english', p_query) q
     WHERE d.tsv @@ q AND d.status = 'active'
       AND (p_merchant_id IS NULL OR d.merchant_id = p_merchant_id)
     ORDER BY rank DESC, d.product_id
     LIMIT p_limit)
    UNION ALL
    (SELECT d.product_id, d.title, word_similarity(p_query, d.title) * 0.1 * d.boost
     FROM catalog.search_documents d
     WHERE p_query <% d.title AND d.status = 'active'
       AND (p_merchant_id IS NULL OR d.merchant_id = p_merchant_id)
       AND NOT EXISTS (SELECT 1 FROM catalog.search_documents x, websearch_to_tsquery('english', p_query) q
                       WHERE x.tsv @@ q AND x.status = 'active')
     ORDER BY word_similarity(p_query, d.title) DESC, d.product_id
     LIMIT p_limit)
$$;
COMMENT ON FUNCTION catalog.search_products(text, integer, integer) IS
    'Storefront search: websearch syntax over tsv, falling back to trigram word similarity on the title (query <% title, pg_trgm.word_similarity_threshold) when nothing matches.';

-- What can be sold right now, at its current price.
CREATE VIEW catalog.v_sellable_skus AS
SELECT s.id AS sku, s.product_id, p.merchant_id, p.title AS product_title, s.title AS sku_title,
       s.merchant_sku, s.gtin, ph.price_cents, ph.valid_from AS price_since
FROM catalog.skus s
JOIN catalog.products p ON p.id = s.product_id
JOIN public.price_history ph ON ph.sku = s.id AND ph.valid_to IS NULL
WHERE s.is_active AND p.status = 'active';
COMMENT ON VIEW catalog.v_sellable_skus IS 'Active SKUs of active products with their current price (the open price_history row).';

CREATE VIEW catalog.v_category_tree AS
SELECT c.id, c.parent_id, c.path, c.depth, c.name, c.is_leaf,
       (SELECT count(*) FROM catalog.products p WHERE p.category_id = c.id AND p.status = 'active') AS active_products
FROM catalog.categories c;
COMMENT ON VIEW catalog.v_category_tree IS 'Category tree with active product counts, for the merchandising tool.';

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT p.oid::regprocedure AS fn FROM pg_proc p WHERE p.pronamespace = 'catalog'::regnamespace LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO catalog_owner', r.fn);
    END LOOP;
    FOR r IN SELECT c.oid::regclass AS rel FROM pg_class c WHERE c.relnamespace = 'catalog'::regnamespace AND c.relkind = 'v' LOOP
        EXECUTE format('ALTER VIEW %s OWNER TO catalog_owner', r.rel);
    END LOOP;
END
$$;
