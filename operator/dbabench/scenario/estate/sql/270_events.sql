-- Events functions and triggers: the generic audit trigger, the outbox writer and relay
-- helpers, webhook fan-out, the inbox's idempotent accept. The audit and outbox triggers on
-- other domains' tables are attached here, where their functions are defined.

-- Generic row audit. Arguments: the primary key column, then columns to mask.
-- SECURITY DEFINER so that writers need no privilege on events.audit_log.
CREATE FUNCTION events.audit_row_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    pk_col text := coalesce(TG_ARGV[0], 'id');
    o jsonb;
    n jsonb;
    diff jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        n := to_jsonb(NEW);
        diff := n;
    ELSIF TG_OP = 'DELETE' THEN
        o := to_jsonb(OLD);
        diff := o;
    ELSE
        o := to_jsonb(OLD);
        n := to_jsonb(NEW);
        SELECT jsonb_object_agg(k, jsonb_build_array(o -> k, n -> k)) INTO diff
        FROM jsonb_object_keys(n) AS k
        WHERE (o -> k) IS DISTINCT FROM (n -> k) AND k <> 'updated_at';
        IF diff IS NULL THEN
            RETURN NULL;  -- touch-only update
        END IF;
    END IF;
    FOR i IN 1 .. TG_NARGS - 1 LOOP
        IF diff ? TG_ARGV[i] THEN
            diff := jsonb_set(diff, ARRAY[TG_ARGV[i]], '"***"'::jsonb);
        END IF;
    END LOOP;
    INSERT INTO events.audit_log (schema_name, table_name, op, row_pk, actor, app_user_id, changed,
                                  client_addr, application_name)
    VALUES (TG_TABLE_SCHEMA, TG_TABLE_NAME, left(TG_OP, 1), coalesce(n, o) ->> pk_col, session_user,
            nullif(current_setting('app.user_id', true), '')::bigint, diff,
            inet_client_addr(), current_setting('application_name'));
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION events.audit_row_change() IS
    'AFTER ROW trigger: writes the change to events.audit_log. TG_ARGV: primary key column, then columns to mask.';

CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON catalog.products
    FOR EACH ROW EXECUTE FUNCTION events.audit_row_change('id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON catalog.categories
    FOR EACH ROW EXECUTE FUNCTION events.audit_row_change('id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON fulfilment.warehouses
    FOR EACH ROW EXECUTE FUNCTION events.audit_row_change('id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON fulfilment.carrier_accounts
    FOR EACH ROW EXECUTE FUNCTION events.audit_row_change('id', 'account_number');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON fulfilment.returns
    FOR EACH ROW EXECUTE FUNCTION events.audit_row_change('id', 'customer_comment');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON events.webhook_endpoints
    FOR EACH ROW EXECUTE FUNCTION events.audit_row_change('id', 'contact_email');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON jobs.job_definitions
    FOR EACH ROW EXECUTE FUNCTION events.audit_row_change('id');

-- Outbox writer: call inside the business transaction.
CREATE FUNCTION events.write_outbox(p_aggregate_type text, p_aggregate_id text, p_event_type text,
                                    p_payload jsonb, p_headers jsonb DEFAULT '{}'::jsonb)
RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    INSERT INTO events.outbox (aggregate_type, aggregate_id, event_type, payload, headers)
    VALUES (p_aggregate_type, p_aggregate_id, p_event_type, p_payload,
            p_headers || jsonb_build_object('txid', txid_current(), 'producer', session_user))
    RETURNING id
$$;
COMMENT ON FUNCTION events.write_outbox(text, text, text, jsonb, jsonb) IS 'Appends an event to the outbox in the caller''s transaction; returns its id.';

CREATE FUNCTION events.shipment_status_outbox() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM events.write_outbox('shipment', NEW.id::text, 'fulfilment.shipment_status_changed',
        jsonb_build_object('shipment_id', NEW.id, 'order_id', NEW.order_id, 'merchant_id', NEW.merchant_id,
                           'status', NEW.status, 'previous_status', OLD.status,
                           'tracking_number', NEW.tracking_number, 'at', now()));
    RETURN NULL;
END
$$;
CREATE TRIGGER outbox_status_changed AFTER UPDATE OF status ON fulfilment.shipments
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION events.shipment_status_outbox();

CREATE FUNCTION events.return_outbox() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM events.write_outbox('return', NEW.id::text, 'fulfilment.return_updated',
        jsonb_build_object('return_id', NEW.id, 'rma_number', NEW.rma_number, 'order_id', NEW.order_id,
                           'status', NEW.status, 'reason_code', NEW.reason_code,
                           'refund_amount_cents', NEW.refund_amount_cents));
    RETURN NULL;
END
$$;
CREATE TRIGGER outbox_return_updated AFTER INSERT OR UPDATE OF status ON fulfilment.returns
    FOR EACH ROW EXECUTE FUNCTION events.return_outbox();

CREATE FUNCTION events.product_status_outbox() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM events.write_outbox('product', NEW.id::text, 'catalog.product_status_changed',
        jsonb_build_object('product_id', NEW.id, 'merchant_id', NEW.merchant_id,
                           'status', NEW.status, 'previous_status', OLD.status));
    RETURN NULL;
END
$$;
CREATE TRIGGER outbox_status_changed AFTER UPDATE OF status ON catalog.products
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION events.product_status_outbox();

-- Merchant webhooks: one delivery per matching active endpoint of the event's merchant.
CREATE FUNCTION events.fan_out_webhooks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.payload ? 'merchant_id' THEN
        INSERT INTO events.webhook_deliveries (endpoint_id, outbox_id, event_type, payload_sha256, next_attempt_at)
        SELECT e.id, NEW.id, NEW.event_type, sha256(convert_to(NEW.payload::text, 'UTF8')), now()
        FROM events.webhook_endpoints e
        JOIN events.event_types t ON t.name = NEW.event_type AND t.is_public
        WHERE e.merchant_id = (NEW.payload ->> 'merchant_id')::integer
          AND e.is_active AND NEW.event_type = ANY (e.event_types);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER fan_out_webhooks AFTER INSERT ON events.outbox
    FOR EACH ROW EXECUTE FUNCTION events.fan_out_webhooks();

-- Relay side. outbox_relay claims a batch, publishes, then marks it.
CREATE FUNCTION events.claim_outbox(p_limit integer DEFAULT 500) RETURNS SETOF events.outbox
LANGUAGE sql AS $$
    SELECT * FROM events.outbox
    WHERE published_at IS NULL
    ORDER BY id
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
$$;
COMMENT ON FUNCTION events.claim_outbox(integer) IS 'Oldest unpublished events, locked for this relay instance (SKIP LOCKED lets two relays share the load).';

CREATE FUNCTION events.mark_published(p_ids bigint[]) RETURNS integer
LANGUAGE sql AS $$
    WITH u AS (UPDATE events.outbox SET published_at = now(), attempts = attempts + 1
               WHERE id = ANY (p_ids) AND published_at IS NULL RETURNING 1)
    SELECT count(*)::integer FROM u
$$;

CREATE FUNCTION events.purge_outbox(p_keep interval DEFAULT '7 days') RETURNS bigint
LANGUAGE sql AS $$
    WITH d AS (DELETE FROM events.outbox WHERE published_at < now() - p_keep RETURNING 1)
    SELECT count(*) FROM d
$$;
COMMENT ON FUNCTION events.purge_outbox(interval) IS 'Hourly (jobs: events.outbox_purge): deletes published events older than p_keep.';

-- Inbox: true when the message is new and should be handled, false for a redelivery.
CREATE FUNCTION events.inbox_accept(p_message_id uuid, p_source text, p_event_type text,
                                    p_payload jsonb, p_handler text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events.inbox (message_id, source, event_type, payload, handler)
    VALUES (p_message_id, p_source, p_event_type, p_payload, p_handler)
    ON CONFLICT (message_id) DO NOTHING;
    RETURN FOUND;
END
$$;

CREATE TRIGGER webhook_endpoints_updated_at BEFORE UPDATE ON events.webhook_endpoints
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();

CREATE VIEW events.v_outbox_backlog AS
SELECT event_type, count(*) AS unpublished, min(created_at) AS oldest, now() - min(created_at) AS max_age,
       max(attempts) AS max_attempts
FROM events.outbox WHERE published_at IS NULL
GROUP BY event_type;
COMMENT ON VIEW events.v_outbox_backlog IS 'Unpublished outbox events per type (alert when max_age exceeds 2 minutes).';

CREATE VIEW events.v_webhook_health AS
SELECT e.id AS endpoint_id, e.merchant_id, e.url, e.is_active, e.consecutive_failures,
       count(d.*) FILTER (WHERE d.created_at > now() - interval '24 hours') AS deliveries_24h,
       count(d.*) FILTER (WHERE d.created_at > now() - interval '24 hours' AND d.status = 'delivered') AS delivered_24h,
       count(d.*) FILTER (WHERE d.status IN ('pending', 'failed')) AS outstanding
FROM events.webhook_endpoints e
LEFT JOIN events.webhook_deliveries d ON d.endpoint_id = e.id
GROUP BY e.id;
COMMENT ON VIEW events.v_webhook_health IS 'Per-endpoint delivery health for the developer dashboard and the auto-disable job.';
