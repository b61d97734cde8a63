-- Checkout core grants. app is the checkout service.
GRANT SELECT, INSERT, UPDATE ON merchants, orders, price_history TO app;
GRANT USAGE ON SEQUENCE orders_id_seq TO app;

-- Everyone else reads; pricing_engine maintains prices; support corrects order status.
GRANT SELECT ON merchants, orders, price_history TO readonly;
GRANT SELECT, INSERT, UPDATE ON price_history TO pricing_engine;
GRANT SELECT ON merchants TO pricing_engine;
GRANT SELECT ON merchants, orders TO payments_api, ledger_writer, fulfilment_api, identity_api,
    notifier, warehouse_loader;
GRANT UPDATE (status) ON orders TO support_console;
GRANT SELECT ON flyway_schema_history TO readonly;
-- flyway writes its history table; it owns nothing else (it SET ROLEs to domain owners).
GRANT SELECT, INSERT, UPDATE, DELETE ON flyway_schema_history TO flyway;
GRANT EXECUTE ON FUNCTION public.pgbouncer_user_lookup(text) TO pgbouncer_auth;
