-- Events secondary indexes and sequence positions.

CREATE INDEX audit_log_row_idx ON events.audit_log (table_name, row_pk, occurred_at);
CREATE INDEX outbox_unpublished_idx ON events.outbox (id) WHERE published_at IS NULL;
CREATE INDEX outbox_published_at_idx ON events.outbox (published_at);
CREATE INDEX outbox_aggregate_idx ON events.outbox (aggregate_type, aggregate_id);
CREATE INDEX inbox_received_at_idx ON events.inbox (received_at);
CREATE INDEX inbox_unprocessed_idx ON events.inbox (received_at) WHERE processed_at IS NULL;
CREATE INDEX dead_letters_open_idx ON events.dead_letters (failed_at) WHERE replayed_at IS NULL;
CREATE INDEX webhook_endpoints_merchant_idx ON events.webhook_endpoints (merchant_id);
CREATE INDEX webhook_deliveries_endpoint_idx ON events.webhook_deliveries (endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_due_idx ON events.webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'failed');
CREATE INDEX webhook_deliveries_created_brin ON events.webhook_deliveries USING brin (created_at);
CREATE INDEX cdc_erp_purchase_orders_pending_idx ON events.cdc_erp_purchase_orders (source_ts) WHERE applied_at IS NULL;
CREATE INDEX cdc_erp_purchase_orders_po_idx ON events.cdc_erp_purchase_orders (po_number, source_ts);
CREATE INDEX cdc_erp_stock_counts_pending_idx ON events.cdc_erp_stock_counts (source_ts) WHERE applied_at IS NULL;
CREATE INDEX cdc_crm_accounts_merchant_idx ON events.cdc_crm_accounts (merchant_id, source_ts);

COMMENT ON INDEX events.outbox_unpublished_idx IS 'The relay''s claim query (published_at IS NULL ORDER BY id); tiny while the relay keeps up.';
