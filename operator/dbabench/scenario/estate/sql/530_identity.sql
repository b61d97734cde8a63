-- Identity grants. Personal data (e-mail, names, IP addresses, user agents) is readable only
-- by pii_reader members and the identity service; readonly gets the other columns.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA identity FROM PUBLIC;
GRANT USAGE ON SCHEMA identity TO readonly, identity_api, pii_reader, payments_api, notifier,
    warehouse_loader, support_console;

-- identity_api: the service itself (subject to tenant RLS)
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA identity TO identity_api;
REVOKE INSERT, UPDATE, DELETE ON identity.permissions, identity.role_permissions, identity.change_log
    FROM identity_api;
REVOKE UPDATE, DELETE ON identity.login_audit FROM identity_api;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA identity TO identity_api;
GRANT EXECUTE ON FUNCTION identity.user_tenants(bigint), identity.authenticate_api_key(text, text),
    identity.current_tenant_id(), identity.prune_expired(interval) TO identity_api;
GRANT EXECUTE ON FUNCTION identity.authenticate_api_key(text, text) TO payments_api;
GRANT EXECUTE ON FUNCTION identity.current_tenant_id() TO PUBLIC;

-- readonly: non-personal columns
GRANT SELECT ON identity.tenants, identity.memberships, identity.api_key_usage_daily,
    identity.oauth_clients, identity.oauth_grants, identity.permissions, identity.role_permissions,
    identity.tenant_domains, identity.saml_connections, identity.ip_allowlists TO readonly;
GRANT SELECT (id, public_id, email_domain, status, locale, time_zone, mfa_enabled, email_verified_at,
    created_at, updated_at, last_login_at, deleted_at) ON identity.users TO readonly;
GRANT SELECT (id, tenant_id, name, prefix, scopes, environment, created_by, created_at, last_used_at,
    expires_at, revoked_at) ON identity.api_keys TO readonly;
GRANT SELECT (id, user_id, tenant_id, created_at, last_seen_at, expires_at, mfa_verified, revoked_at,
    revoked_reason) ON identity.sessions TO readonly;
GRANT SELECT (id, occurred_at, tenant_id, user_id, outcome, method, country) ON identity.login_audit TO readonly;

-- pii_reader: the personal columns too
GRANT SELECT (email, display_name) ON identity.users TO pii_reader;
GRANT SELECT (ip, user_agent) ON identity.sessions TO pii_reader;
GRANT SELECT ON identity.login_audit, identity.invitations TO pii_reader;

-- auditors read the trails in full
GRANT SELECT ON identity.login_audit, identity.change_log TO auditor;

-- support: find accounts, revoke sessions, suspend users
GRANT SELECT ON identity.active_sessions, identity.tenant_members TO support_console;
GRANT UPDATE (revoked_at, revoked_reason) ON identity.sessions TO support_console;
GRANT UPDATE (status) ON identity.users TO support_console;
GRANT SELECT (id, user_id, kind, label, created_at, last_used_at, disabled_at) ON identity.mfa_factors TO support_console;
GRANT UPDATE (disabled_at) ON identity.mfa_factors TO support_console;

-- notifier e-mails members of a tenant
GRANT SELECT (id, email, display_name, locale, status) ON identity.users TO notifier;
GRANT SELECT ON identity.memberships, identity.tenants TO notifier;

-- the warehouse gets pseudonymous data only (public_id, domains, no addresses)
GRANT SELECT ON identity.tenants, identity.memberships, identity.api_key_usage_daily,
    identity.oauth_grants TO warehouse_loader;
GRANT SELECT (id, public_id, email_domain, status, locale, mfa_enabled, created_at, last_login_at, deleted_at)
    ON identity.users TO warehouse_loader;
GRANT SELECT (id, occurred_at, tenant_id, user_id, outcome, method, country) ON identity.login_audit TO warehouse_loader;
