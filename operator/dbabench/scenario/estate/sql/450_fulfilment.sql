-- Fulfilment secondary indexes and sequence positions.

CREATE INDEX stock_levels_sku_idx ON fulfilment.stock_levels (sku_id);
CREATE INDEX stock_movements_wh_sku_idx ON fulfilment.stock_movements (warehouse_id, sku_id, occurred_at);
CREATE INDEX stock_reservations_order_idx ON fulfilment.stock_reservations (order_id);
CREATE INDEX stock_reservations_open_idx ON fulfilment.stock_reservations (expires_at) WHERE released_at IS NULL;
CREATE INDEX stock_reservations_wh_sku_idx ON fulfilment.stock_reservations (warehouse_id, sku_id) WHERE released_at IS NULL;
CREATE INDEX shipments_order_idx ON fulfilment.shipments (order_id);
CREATE INDEX shipments_merchant_created_idx ON fulfilment.shipments (merchant_id, created_at DESC);
CREATE INDEX shipments_warehouse_created_idx ON fulfilment.shipments (warehouse_id, created_at);
CREATE INDEX shipments_open_status_idx ON fulfilment.shipments (status, promised_by)
    WHERE status NOT IN ('delivered', 'cancelled', 'returned_to_sender');
CREATE INDEX shipments_tracking_number_idx ON fulfilment.shipments (tracking_number) WHERE tracking_number IS NOT NULL;
CREATE INDEX parcels_tracking_number_idx ON fulfilment.parcels (tracking_number) WHERE tracking_number IS NOT NULL;
CREATE INDEX tracking_events_parcel_idx ON fulfilment.tracking_events (parcel_id, occurred_at);
CREATE INDEX returns_shipment_idx ON fulfilment.returns (shipment_id);
CREATE INDEX returns_order_idx ON fulfilment.returns (order_id);
CREATE INDEX returns_open_idx ON fulfilment.returns (status, requested_at) WHERE status NOT IN ('refunded', 'rejected');
CREATE INDEX carrier_accounts_merchant_idx ON fulfilment.carrier_accounts (merchant_id) WHERE merchant_id IS NOT NULL;
CREATE INDEX carrier_rate_cards_lookup_idx ON fulfilment.carrier_rate_cards (zone, carrier_service_id, weight_to_g) WHERE valid_to IS NULL;

COMMENT ON INDEX fulfilment.shipments_open_status_idx IS 'Open shipments only (about a fifth of the table): the late-shipment and exception queues.';
