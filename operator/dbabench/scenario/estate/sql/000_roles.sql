-- Roles of the marketplace's primary cluster.
--
-- Conventions (platform team, see the access runbook):
--   * group roles are NOLOGIN and hold privileges; people and services are members;
--   * every service has its own LOGIN role so pg_stat_activity and the logs say who is who;
--   * no passwords here: services authenticate with client certificates or through the pooler
--     (pgbouncer_auth runs its auth_query), people through the bastion with SSO-issued secrets;
--   * domain owner roles own their schemas' objects so migrations can run as them via SET ROLE.
-- Roles are cluster-wide, so this file creates only the ones that are missing and then sets
-- attributes, which makes it safe to run against a cluster that already has some of them.

DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY[
        -- groups
        'readonly', 'readwrite', 'ledger_owner', 'catalog_owner', 'warehouse_owner',
        'auditor', 'pii_reader',
        -- services
        'payments_api', 'ledger_writer', 'catalog_api', 'search_indexer', 'identity_api',
        'notifier', 'fulfilment_api', 'pricing_engine', 'outbox_relay', 'queue_worker',
        -- data platform
        'warehouse_loader', 'dbt_runner', 'bi_dashboards', 'data_science', 'finance_reports',
        -- people and tools
        'support_console', 'oncall_readonly', 'flyway', 'pgbouncer_auth', 'replicator',
        'debezium', 'datadog', 'backup_runner',
        -- contractors (time-boxed accounts)
        'ext_nkovacs', 'ext_tosei']
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', r);
        END IF;
    END LOOP;
END
$$;

-- Group roles: never log in.
ALTER ROLE readonly        NOLOGIN;
ALTER ROLE readwrite       NOLOGIN;
ALTER ROLE ledger_owner    NOLOGIN;
ALTER ROLE catalog_owner   NOLOGIN;
ALTER ROLE warehouse_owner NOLOGIN;
ALTER ROLE auditor         NOLOGIN;
ALTER ROLE pii_reader      NOLOGIN;

-- Services. Connection limits are per service pool size x replicas plus headroom, so a
-- runaway deploy hits its own ceiling instead of max_connections.
ALTER ROLE payments_api    LOGIN CONNECTION LIMIT 60;
ALTER ROLE ledger_writer   LOGIN CONNECTION LIMIT 20;
ALTER ROLE catalog_api     LOGIN CONNECTION LIMIT 60;
ALTER ROLE search_indexer  LOGIN CONNECTION LIMIT 8;
ALTER ROLE identity_api    LOGIN CONNECTION LIMIT 60;
ALTER ROLE notifier        LOGIN CONNECTION LIMIT 10;
ALTER ROLE fulfilment_api  LOGIN CONNECTION LIMIT 40;
ALTER ROLE pricing_engine  LOGIN CONNECTION LIMIT 10;
ALTER ROLE outbox_relay    LOGIN CONNECTION LIMIT 6;
ALTER ROLE queue_worker    LOGIN CONNECTION LIMIT 32;

-- Data platform.
ALTER ROLE warehouse_loader LOGIN CONNECTION LIMIT 8;
ALTER ROLE dbt_runner       LOGIN CONNECTION LIMIT 8;
ALTER ROLE bi_dashboards    LOGIN CONNECTION LIMIT 20;
ALTER ROLE data_science     LOGIN CONNECTION LIMIT 5;
ALTER ROLE finance_reports  LOGIN CONNECTION LIMIT 4;

-- People and tools.
ALTER ROLE support_console LOGIN CONNECTION LIMIT 15;
ALTER ROLE oncall_readonly LOGIN CONNECTION LIMIT 10;
ALTER ROLE flyway          LOGIN CONNECTION LIMIT 2;
ALTER ROLE pgbouncer_auth  LOGIN CONNECTION LIMIT 4;
ALTER ROLE replicator      LOGIN REPLICATION CONNECTION LIMIT 4;
ALTER ROLE debezium        LOGIN REPLICATION CONNECTION LIMIT 2;
ALTER ROLE datadog         LOGIN CONNECTION LIMIT 3;
ALTER ROLE backup_runner   LOGIN CONNECTION LIMIT 3;
ALTER ROLE ext_nkovacs     LOGIN CONNECTION LIMIT 2;
ALTER ROLE ext_tosei       LOGIN CONNECTION LIMIT 2;

-- Contractors get accounts that lapse with their statement of work (renewed by ticket).
DO $$
BEGIN
    EXECUTE format('ALTER ROLE ext_nkovacs VALID UNTIL %L',
                   date_trunc('month', now()) + interval '4 months');
    EXECUTE format('ALTER ROLE ext_tosei VALID UNTIL %L',
                   date_trunc('month', now()) + interval '1 month' + interval '14 days');
END
$$;

-- Memberships.
GRANT readonly        TO readwrite;
GRANT readonly        TO auditor;
GRANT readonly        TO oncall_readonly, bi_dashboards, data_science, finance_reports, dbt_runner;
GRANT readonly        TO ext_nkovacs, ext_tosei;
GRANT readwrite       TO support_console;
GRANT pii_reader      TO support_console, identity_api, notifier;
GRANT auditor         TO finance_reports;
GRANT ledger_owner    TO flyway;
GRANT catalog_owner   TO flyway;
GRANT warehouse_owner TO flyway, dbt_runner;
GRANT pg_monitor      TO datadog, oncall_readonly;
GRANT pg_read_all_data TO backup_runner;
GRANT pg_signal_backend TO oncall_readonly;

COMMENT ON ROLE readonly IS 'Group: SELECT on non-PII tables of every domain schema.';
COMMENT ON ROLE readwrite IS 'Group: readonly plus DML on operational tables (support tooling).';
COMMENT ON ROLE ledger_owner IS 'Owns schema payments and its objects; migrations SET ROLE to it.';
COMMENT ON ROLE catalog_owner IS 'Owns schema catalog and its objects; migrations SET ROLE to it.';
COMMENT ON ROLE warehouse_owner IS 'Owns schema analytics (the in-database warehouse); dbt builds as it.';
COMMENT ON ROLE auditor IS 'Group: read access to audit trails (identity.login_audit, events.audit_log) for SOX reviews.';
COMMENT ON ROLE pii_reader IS 'Group: column access to personal data (emails, names, IPs); membership reviewed quarterly.';
COMMENT ON ROLE payments_api IS 'Payments service: intents, attempts, refunds, disputes. Limit 60 = 6 pods x pool 8 + headroom.';
COMMENT ON ROLE ledger_writer IS 'The only writer of payments journal entries (posting service); append-only.';
COMMENT ON ROLE catalog_api IS 'Catalog service (products, SKUs, categories).';
COMMENT ON ROLE search_indexer IS 'Rebuilds catalog search documents; limit 8 so a reindex cannot starve the API.';
COMMENT ON ROLE identity_api IS 'Identity service: users, memberships, sessions, API keys. Subject to tenant RLS.';
COMMENT ON ROLE notifier IS 'Sends e-mails and webhooks to merchants; reads contact details.';
COMMENT ON ROLE fulfilment_api IS 'Fulfilment service: shipments, returns, stock.';
COMMENT ON ROLE pricing_engine IS 'Recomputes prices from cost feeds; writes price_history.';
COMMENT ON ROLE outbox_relay IS 'Relays events.outbox rows to the message bus.';
COMMENT ON ROLE queue_worker IS 'Background workers consuming jobs.queue with SKIP LOCKED.';
COMMENT ON ROLE warehouse_loader IS 'ETL: loads analytics staging tables hourly and merges them into facts.';
COMMENT ON ROLE dbt_runner IS 'dbt: builds analytics models and refreshes materialised views.';
COMMENT ON ROLE bi_dashboards IS 'Dashboard tool service account; limit 20 matches its pool.';
COMMENT ON ROLE data_science IS 'Shared notebook account; limit 5 because notebooks leak idle connections.';
COMMENT ON ROLE finance_reports IS 'Month-end close and revenue reports (read-only, plus audit trails).';
COMMENT ON ROLE support_console IS 'Internal support console: looks up and corrects orders and accounts.';
COMMENT ON ROLE oncall_readonly IS 'Break-glass read-only login for the on-call engineer; may cancel/terminate backends.';
COMMENT ON ROLE flyway IS 'Schema migrations; owns nothing itself, SET ROLEs to the domain owner. Limit 2: one migration at a time.';
COMMENT ON ROLE pgbouncer_auth IS 'PgBouncer auth_query user: may only call public.pgbouncer_user_lookup().';
COMMENT ON ROLE replicator IS 'Streaming replication to the two hot standbys and the delayed replica.';
COMMENT ON ROLE debezium IS 'Logical decoding for CDC into the lake; limit 2 (one connector plus a snapshot).';
COMMENT ON ROLE datadog IS 'Monitoring agent (pg_monitor).';
COMMENT ON ROLE backup_runner IS 'Nightly logical dumps of small schemas (pg_read_all_data); physical backups use replicator.';
COMMENT ON ROLE ext_nkovacs IS 'Contractor (warehouse modelling), read-only; expires with the statement of work.';
COMMENT ON ROLE ext_tosei IS 'Contractor (payments reconciliation audit), read-only; expires with the statement of work.';
