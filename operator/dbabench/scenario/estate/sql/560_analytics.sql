-- Analytics grants. The warehouse holds no personal data (customers are pseudonymised), so
-- readonly (BI, data science, finance, on-call) reads it all; the loader owns the data flow.

GRANT USAGE ON SCHEMA analytics TO readonly, warehouse_loader, dbt_runner;

GRANT SELECT ON ALL TABLES IN SCHEMA analytics TO readonly;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA analytics TO warehouse_loader;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA analytics TO warehouse_loader;
GRANT EXECUTE ON FUNCTION analytics.date_key(date) TO readonly, warehouse_loader;

-- Partition upkeep creates tables: only the owner (dbt_runner is a member) runs it.
REVOKE EXECUTE ON FUNCTION analytics.ensure_month_partitions(regclass, integer) FROM PUBLIC;

ALTER DEFAULT PRIVILEGES FOR ROLE warehouse_owner IN SCHEMA analytics GRANT SELECT ON TABLES TO readonly;
ALTER DEFAULT PRIVILEGES FOR ROLE warehouse_owner IN SCHEMA analytics
    GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO warehouse_loader;
ALTER DEFAULT PRIVILEGES FOR ROLE warehouse_owner IN SCHEMA analytics GRANT USAGE, SELECT ON SEQUENCES TO warehouse_loader;
