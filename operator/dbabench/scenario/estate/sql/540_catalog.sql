-- Catalog grants. Objects are owned by catalog_owner; services get what their code needs.

GRANT USAGE ON SCHEMA catalog TO readonly, catalog_api, search_indexer, pricing_engine, fulfilment_api,
    notifier, warehouse_loader, queue_worker;

-- Nothing in catalog is personal data: readonly (and through it BI, on-call, support) reads all.
GRANT SELECT ON ALL TABLES IN SCHEMA catalog TO readonly;

GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA catalog TO catalog_api;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA catalog TO catalog_api;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA catalog TO catalog_api;

GRANT SELECT ON ALL TABLES IN SCHEMA catalog TO search_indexer;
GRANT INSERT, UPDATE, DELETE ON catalog.search_documents, catalog.search_reindex_queue TO search_indexer;
GRANT EXECUTE ON FUNCTION catalog.refresh_search_document(bigint) TO search_indexer;

GRANT SELECT ON catalog.skus, catalog.products TO pricing_engine, fulfilment_api, notifier;
GRANT SELECT ON catalog.product_images TO queue_worker;
GRANT UPDATE (storage_key, width_px, height_px, content_sha256) ON catalog.product_images TO queue_worker;
GRANT SELECT ON ALL TABLES IN SCHEMA catalog TO warehouse_loader;

-- Support moderates reviews and can suspend a listing.
GRANT UPDATE (status, moderated_by, published_at) ON catalog.reviews TO readwrite;
GRANT UPDATE (status) ON catalog.products TO readwrite;

-- The sellable-SKU view and the indexer read current prices from the checkout core.
GRANT SELECT ON public.price_history TO catalog_owner, search_indexer, catalog_api;

ALTER DEFAULT PRIVILEGES FOR ROLE catalog_owner IN SCHEMA catalog GRANT SELECT ON TABLES TO readonly;
ALTER DEFAULT PRIVILEGES FOR ROLE catalog_owner IN SCHEMA catalog GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO catalog_api;
ALTER DEFAULT PRIVILEGES FOR ROLE catalog_owner IN SCHEMA catalog GRANT USAGE, SELECT ON SEQUENCES TO catalog_api;
ALTER DEFAULT PRIVILEGES FOR ROLE catalog_owner IN SCHEMA catalog GRANT SELECT ON TABLES TO search_indexer, warehouse_loader;
