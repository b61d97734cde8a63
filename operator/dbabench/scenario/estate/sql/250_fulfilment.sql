-- Fulfilment functions, triggers and views.

CREATE TRIGGER stock_levels_updated_at BEFORE UPDATE ON fulfilment.stock_levels
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER shipments_updated_at BEFORE UPDATE ON fulfilment.shipments
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER returns_updated_at BEFORE UPDATE ON fulfilment.returns
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();

-- Rank of a status in the normal flow, so late or duplicate scans never move a shipment back.
CREATE FUNCTION fulfilment.status_rank(s fulfilment.shipment_status) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE s WHEN 'pending' THEN 0 WHEN 'label_created' THEN 1 WHEN 'picked_up' THEN 2
                  WHEN 'in_transit' THEN 3 WHEN 'exception' THEN 3 WHEN 'out_for_delivery' THEN 4
                  WHEN 'delivered' THEN 5 WHEN 'returned_to_sender' THEN 5 WHEN 'cancelled' THEN 6 END
$$;

-- A carrier scan moves its shipment forward.
CREATE FUNCTION fulfilment.apply_tracking_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE fulfilment.shipments s
       SET status = NEW.status,
           shipped_at = CASE WHEN s.shipped_at IS NULL AND NEW.status IN ('picked_up', 'in_transit')
                             THEN NEW.occurred_at ELSE s.shipped_at END,
           delivered_at = CASE WHEN NEW.status = 'delivered' THEN NEW.occurred_at ELSE s.delivered_at END
      FROM fulfilment.parcels p
     WHERE p.id = NEW.parcel_id AND s.id = p.shipment_id
       AND (fulfilment.status_rank(NEW.status) > fulfilment.status_rank(s.status)
            OR (NEW.status = 'exception' AND s.status <> 'exception'));
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION fulfilment.apply_tracking_event() IS 'AFTER INSERT trigger on tracking_events: advances the shipment''s status (never backwards).';

CREATE TRIGGER tracking_events_apply AFTER INSERT ON fulfilment.tracking_events
    FOR EACH ROW EXECUTE FUNCTION fulfilment.apply_tracking_event();

-- Stock movements keep stock_levels in step.
CREATE FUNCTION fulfilment.apply_stock_movement() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fulfilment.stock_levels AS l (warehouse_id, sku_id, on_hand)
    VALUES (NEW.warehouse_id, NEW.sku_id, greatest(NEW.qty, 0))
    ON CONFLICT (warehouse_id, sku_id) DO UPDATE
       SET on_hand = greatest(l.on_hand + NEW.qty, 0),
           last_counted_at = CASE WHEN NEW.kind = 'cycle_count' THEN NEW.occurred_at ELSE l.last_counted_at END;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION fulfilment.apply_stock_movement() IS 'AFTER INSERT trigger on stock_movements: applies qty to stock_levels.on_hand (clamped at zero; the nightly reconciliation reports the clamps).';

CREATE TRIGGER stock_movements_apply AFTER INSERT ON fulfilment.stock_movements
    FOR EACH ROW EXECUTE FUNCTION fulfilment.apply_stock_movement();

-- Reserve stock for an order in the warehouse with the most available, or return NULL.
CREATE FUNCTION fulfilment.reserve_stock(p_order_id bigint, p_sku_id integer, p_qty integer,
                                         p_hold interval DEFAULT '30 minutes')
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    wh smallint;
    rid bigint;
BEGIN
    SELECT l.warehouse_id INTO wh
    FROM fulfilment.stock_levels l
    JOIN fulfilment.warehouses w ON w.id = l.warehouse_id AND w.closed_on IS NULL
    WHERE l.sku_id = p_sku_id AND l.available >= p_qty
    ORDER BY l.available DESC, l.warehouse_id
    LIMIT 1
    FOR UPDATE OF l SKIP LOCKED;
    IF wh IS NULL THEN
        RETURN NULL;
    END IF;
    UPDATE fulfilment.stock_levels SET reserved = reserved + p_qty
     WHERE warehouse_id = wh AND sku_id = p_sku_id;
    INSERT INTO fulfilment.stock_reservations (order_id, sku_id, warehouse_id, qty, expires_at)
    VALUES (p_order_id, p_sku_id, wh, p_qty, now() + p_hold)
    RETURNING id INTO rid;
    RETURN rid;
END
$$;
COMMENT ON FUNCTION fulfilment.reserve_stock(bigint, integer, integer, interval) IS
    'Called by fulfilment_api when an order is paid; SKIP LOCKED so concurrent checkouts of a hot SKU spread over warehouses.';

CREATE FUNCTION fulfilment.release_expired_reservations() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    n integer;
BEGIN
    WITH expired AS (
        UPDATE fulfilment.stock_reservations
           SET released_at = now(), release_reason = 'expired'
         WHERE released_at IS NULL AND expires_at < now()
        RETURNING warehouse_id, sku_id, qty
    ), per AS (
        SELECT warehouse_id, sku_id, sum(qty) AS qty FROM expired GROUP BY 1, 2
    )
    UPDATE fulfilment.stock_levels l SET reserved = greatest(l.reserved - per.qty, 0)
      FROM per WHERE l.warehouse_id = per.warehouse_id AND l.sku_id = per.sku_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;
COMMENT ON FUNCTION fulfilment.release_expired_reservations() IS 'Every minute (jobs: fulfilment.release_reservations): gives expired holds back.';

CREATE VIEW fulfilment.v_stock_position AS
SELECT l.sku_id, count(*) AS warehouses, sum(l.on_hand) AS on_hand, sum(l.reserved) AS reserved,
       sum(l.available) AS available, bool_or(l.available <= l.reorder_point) AS needs_reorder
FROM fulfilment.stock_levels l
JOIN fulfilment.warehouses w ON w.id = l.warehouse_id AND w.closed_on IS NULL
GROUP BY l.sku_id;
COMMENT ON VIEW fulfilment.v_stock_position IS 'Network-wide stock per SKU (open warehouses only); the storefront''s in-stock flag.';

CREATE VIEW fulfilment.v_late_shipments AS
SELECT s.id, s.order_id, s.merchant_id, s.status, s.promised_by, c.code AS carrier, s.tracking_number,
       current_date - s.promised_by AS days_late
FROM fulfilment.shipments s
LEFT JOIN fulfilment.carrier_services cs ON cs.id = s.carrier_service_id
LEFT JOIN fulfilment.carriers c ON c.id = cs.carrier_id
WHERE s.promised_by < current_date
  AND s.status NOT IN ('delivered', 'cancelled', 'returned_to_sender');
COMMENT ON VIEW fulfilment.v_late_shipments IS 'Shipments past their promised date and not delivered (support console queue).';
