-- Events grants. The audit log is for auditors only; services write events through the
-- SECURITY DEFINER helpers, the relay and the notifier own their side of the tables.

GRANT USAGE ON SCHEMA events TO readonly, auditor, outbox_relay, notifier, debezium, fulfilment_api, payments_api,
    catalog_api, identity_api, ledger_writer, pricing_engine, queue_worker, warehouse_loader;

GRANT SELECT ON events.audit_log TO auditor;

GRANT SELECT ON events.event_types, events.outbox, events.inbox, events.consumer_offsets, events.dead_letters,
    events.webhook_deliveries, events.webhook_attempts, events.cdc_erp_purchase_orders, events.cdc_erp_stock_counts,
    events.cdc_crm_accounts, events.debezium_heartbeat, events.v_outbox_backlog, events.v_webhook_health TO readonly;
GRANT SELECT (id, merchant_id, url, event_types, secret_name, api_version, is_active, consecutive_failures,
              disabled_at, disabled_reason, created_at, updated_at) ON events.webhook_endpoints TO readonly;
GRANT SELECT ON events.webhook_endpoints TO pii_reader;

REVOKE EXECUTE ON FUNCTION events.write_outbox(text, text, text, jsonb, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION events.write_outbox(text, text, text, jsonb, jsonb)
    TO payments_api, ledger_writer, fulfilment_api, catalog_api, identity_api, pricing_engine, queue_worker;

GRANT SELECT, UPDATE, DELETE ON events.outbox TO outbox_relay;
GRANT EXECUTE ON FUNCTION events.claim_outbox(integer), events.mark_published(bigint[]), events.purge_outbox(interval) TO outbox_relay;
GRANT INSERT ON events.dead_letters TO outbox_relay, notifier, fulfilment_api, payments_api;

GRANT SELECT, INSERT, UPDATE ON events.inbox, events.consumer_offsets TO fulfilment_api, payments_api, notifier;
GRANT EXECUTE ON FUNCTION events.inbox_accept(uuid, text, text, jsonb, text) TO fulfilment_api, payments_api, notifier;

GRANT SELECT, UPDATE ON events.webhook_endpoints TO notifier;
GRANT SELECT, INSERT, UPDATE, DELETE ON events.webhook_endpoints TO identity_api;
GRANT SELECT, INSERT, UPDATE, DELETE ON events.webhook_deliveries, events.webhook_attempts TO notifier;
GRANT SELECT ON events.event_types TO notifier, identity_api;
GRANT SELECT ON events.v_webhook_health TO notifier, identity_api;

-- CDC: the sink connector (as debezium) lands rows, consumers mark them applied.
GRANT SELECT, INSERT ON events.cdc_erp_purchase_orders, events.cdc_erp_stock_counts, events.cdc_crm_accounts TO debezium;
GRANT SELECT, UPDATE ON events.debezium_heartbeat TO debezium;
GRANT SELECT, UPDATE (applied_at) ON events.cdc_erp_purchase_orders, events.cdc_erp_stock_counts TO fulfilment_api;
GRANT SELECT ON events.cdc_crm_accounts TO warehouse_loader;

-- Dead letters are replayed by support tooling.
GRANT UPDATE (replayed_at, replayed_by) ON events.dead_letters TO readwrite;
