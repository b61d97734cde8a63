-- Schemas, one per domain. payments, catalog and analytics belong to their domain owner
-- roles; the others to postgres. public holds the checkout core (the oldest part of the
-- database, from before the split into domains) and flyway's history table.
CREATE SCHEMA IF NOT EXISTS payments   AUTHORIZATION ledger_owner;
CREATE SCHEMA IF NOT EXISTS identity;
CREATE SCHEMA IF NOT EXISTS catalog    AUTHORIZATION catalog_owner;
CREATE SCHEMA IF NOT EXISTS fulfilment;
CREATE SCHEMA IF NOT EXISTS analytics  AUTHORIZATION warehouse_owner;
CREATE SCHEMA IF NOT EXISTS events;
CREATE SCHEMA IF NOT EXISTS jobs;

COMMENT ON SCHEMA public     IS 'Checkout core: merchants, orders, price history (pre-2021 monolith tables).';
COMMENT ON SCHEMA payments   IS 'Payments: double-entry ledger, payment intents, payouts, refunds, disputes, reconciliation.';
COMMENT ON SCHEMA identity   IS 'Identity: tenants, users, memberships, sessions, API keys, OAuth clients. Row-level security by tenant.';
COMMENT ON SCHEMA catalog    IS 'Catalog: products, SKUs, categories, search documents.';
COMMENT ON SCHEMA fulfilment IS 'Fulfilment: warehouses, stock, shipments, carriers, returns.';
COMMENT ON SCHEMA analytics  IS 'In-database warehouse: monthly fact partitions, dimensions, materialised views, ETL staging.';
COMMENT ON SCHEMA events     IS 'Events: monthly audit log, transactional outbox and inbox, CDC-fed tables.';
COMMENT ON SCHEMA jobs       IS 'Scheduler: job definitions, runs, advisory locks, a work queue consumed with SKIP LOCKED.';
