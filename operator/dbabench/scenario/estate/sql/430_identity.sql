-- Identity: unique constraints, secondary indexes, sequence positions.

ALTER TABLE identity.tenants ADD CONSTRAINT tenants_slug_key UNIQUE (slug);
ALTER TABLE identity.tenants ADD CONSTRAINT tenants_merchant_id_key UNIQUE (merchant_id);

ALTER TABLE identity.users ADD CONSTRAINT users_public_id_key UNIQUE (public_id);
-- an e-mail address identifies one live account; erased accounts keep a placeholder
CREATE UNIQUE INDEX users_email_key ON identity.users (email) WHERE deleted_at IS NULL;
CREATE INDEX users_email_domain_idx ON identity.users (email_domain);
CREATE INDEX users_email_trgm_idx ON identity.users USING gin ((email::text) gin_trgm_ops);  -- support console search
CREATE INDEX users_last_login_idx ON identity.users (last_login_at);

CREATE INDEX memberships_user_idx ON identity.memberships (user_id);

CREATE UNIQUE INDEX invitations_token_hash_key ON identity.invitations (token_hash);
CREATE INDEX invitations_tenant_email_idx ON identity.invitations (tenant_id, email);
CREATE INDEX invitations_pending_idx ON identity.invitations (expires_at)
    WHERE accepted_at IS NULL AND revoked_at IS NULL;

ALTER TABLE identity.user_identities ADD CONSTRAINT user_identities_provider_subject_key UNIQUE (provider, subject);
CREATE INDEX user_identities_user_idx ON identity.user_identities (user_id);
CREATE INDEX mfa_factors_user_idx ON identity.mfa_factors (user_id);
CREATE INDEX password_resets_user_idx ON identity.password_resets (user_id);
CREATE INDEX email_verifications_user_idx ON identity.email_verifications (user_id);

CREATE INDEX sessions_user_idx ON identity.sessions (user_id);
CREATE INDEX sessions_expires_idx ON identity.sessions (expires_at);

ALTER TABLE identity.api_keys ADD CONSTRAINT api_keys_prefix_key UNIQUE (prefix);
CREATE INDEX api_keys_tenant_idx ON identity.api_keys (tenant_id);
CREATE INDEX api_key_usage_daily_day_idx ON identity.api_key_usage_daily (day);

ALTER TABLE identity.oauth_clients ADD CONSTRAINT oauth_clients_client_id_key UNIQUE (client_id);
CREATE INDEX oauth_clients_tenant_idx ON identity.oauth_clients (tenant_id);
ALTER TABLE identity.oauth_grants ADD CONSTRAINT oauth_grants_client_user_tenant_key UNIQUE (client_id, user_id, tenant_id);
CREATE INDEX oauth_grants_user_idx ON identity.oauth_grants (user_id);
CREATE INDEX oauth_grants_tenant_idx ON identity.oauth_grants (tenant_id);

ALTER TABLE identity.tenant_domains ADD CONSTRAINT tenant_domains_domain_key UNIQUE (domain);
CREATE INDEX tenant_domains_tenant_idx ON identity.tenant_domains (tenant_id);
ALTER TABLE identity.saml_connections ADD CONSTRAINT saml_connections_tenant_key UNIQUE (tenant_id);
ALTER TABLE identity.ip_allowlists ADD CONSTRAINT ip_allowlists_tenant_cidr_key UNIQUE (tenant_id, cidr);

CREATE INDEX change_log_row_idx ON identity.change_log (table_name, row_key);
CREATE INDEX change_log_tenant_idx ON identity.change_log (tenant_id, changed_at);

-- login audit: per-user history and per-address investigation, on every partition
CREATE INDEX login_audit_user_idx ON identity.login_audit (user_id, occurred_at);
CREATE INDEX login_audit_ip_idx ON identity.login_audit (ip, occurred_at);
CREATE INDEX login_audit_occurred_brin ON identity.login_audit USING brin (occurred_at);

