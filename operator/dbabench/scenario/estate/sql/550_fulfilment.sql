-- Fulfilment grants. shipments.ship_to is personal data: readonly gets every other column.

GRANT USAGE ON SCHEMA fulfilment TO readonly, pii_reader, fulfilment_api, notifier, catalog_api, queue_worker,
    warehouse_loader, support_console;

GRANT SELECT ON fulfilment.carriers, fulfilment.carrier_services, fulfilment.shipping_zones, fulfilment.carrier_rate_cards,
    fulfilment.warehouses, fulfilment.storage_bins, fulfilment.stock_levels, fulfilment.stock_movements,
    fulfilment.stock_reservations, fulfilment.parcels, fulfilment.parcel_items, fulfilment.tracking_events,
    fulfilment.returns, fulfilment.return_items, fulfilment.v_stock_position, fulfilment.v_late_shipments TO readonly;
GRANT SELECT (id, order_id, merchant_id, warehouse_id, carrier_service_id, status, tracking_number, ship_to_country,
              weight_g, shipping_cost_cents, currency, promised_by, label_created_at, shipped_at, delivered_at,
              created_at, updated_at) ON fulfilment.shipments TO readonly;
GRANT SELECT (id, carrier_id, merchant_id, secret_name, is_active, created_at) ON fulfilment.carrier_accounts TO readonly;
GRANT SELECT ON fulfilment.shipments TO pii_reader;

GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA fulfilment TO fulfilment_api;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA fulfilment TO fulfilment_api;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA fulfilment TO fulfilment_api;

GRANT SELECT ON fulfilment.shipments, fulfilment.returns, fulfilment.carriers, fulfilment.carrier_services,
    fulfilment.v_late_shipments TO notifier;
GRANT SELECT ON fulfilment.stock_levels, fulfilment.v_stock_position, fulfilment.warehouses TO catalog_api;
GRANT SELECT ON fulfilment.shipments, fulfilment.parcels, fulfilment.carrier_services, fulfilment.carrier_accounts TO queue_worker;
GRANT UPDATE (tracking_number, label_created_at, status) ON fulfilment.shipments TO queue_worker;
GRANT UPDATE (tracking_number) ON fulfilment.parcels TO queue_worker;

-- Support corrects addresses and statuses and approves returns.
GRANT UPDATE (status, ship_to, promised_by) ON fulfilment.shipments TO support_console;
GRANT UPDATE (status, refund_amount_cents, restock, closed_at) ON fulfilment.returns TO support_console;

GRANT SELECT (id, order_id, merchant_id, warehouse_id, carrier_service_id, status, ship_to_country, weight_g,
              shipping_cost_cents, currency, promised_by, shipped_at, delivered_at, created_at, updated_at)
    ON fulfilment.shipments TO warehouse_loader;
GRANT SELECT ON fulfilment.stock_levels, fulfilment.stock_movements, fulfilment.returns, fulfilment.return_items,
    fulfilment.warehouses, fulfilment.carriers, fulfilment.carrier_services TO warehouse_loader;

ALTER DEFAULT PRIVILEGES IN SCHEMA fulfilment GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO fulfilment_api;
ALTER DEFAULT PRIVILEGES IN SCHEMA fulfilment GRANT USAGE, SELECT ON SEQUENCES TO fulfilment_api;
