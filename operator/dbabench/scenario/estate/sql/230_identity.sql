-- Identity functions, triggers, views and row-level security.

-- The tenant of the current request; NULL when unset (or reset to '' by SET LOCAL ending).
CREATE FUNCTION identity.current_tenant_id() RETURNS int
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT NULLIF(current_setting('identity.tenant_id', true), '')::int
$$;
COMMENT ON FUNCTION identity.current_tenant_id() IS 'identity.tenant_id as an int, NULL when not set. identity_api runs SET LOCAL identity.tenant_id per request.';

-- Change log -----------------------------------------------------------------------------------
CREATE FUNCTION identity.log_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    old_row jsonb := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END;
    new_row jsonb := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END;
    diff    jsonb := '{}';
    k       text;
    secret  text[] := ARRAY['password_hash', 'key_hash', 'client_secret_hash', 'secret_encrypted', 'token_hash'];
BEGIN
    IF TG_OP = 'UPDATE' THEN
        FOR k IN SELECT jsonb_object_keys(new_row) LOOP
            CONTINUE WHEN k IN ('updated_at', 'last_login_at', 'last_used_at', 'last_seen_at');
            IF new_row -> k IS DISTINCT FROM old_row -> k THEN
                diff := diff || jsonb_build_object(k, CASE WHEN k = ANY (secret) THEN '"[redacted]"'::jsonb
                                                           ELSE jsonb_build_array(old_row -> k, new_row -> k) END);
            END IF;
        END LOOP;
        IF diff = '{}' THEN
            RETURN NULL;  -- only bookkeeping columns changed
        END IF;
    ELSE
        diff := coalesce(new_row, old_row) - secret;
    END IF;

    INSERT INTO identity.change_log (actor, tenant_id, table_name, row_key, action, changed_fields)
    VALUES (coalesce(NULLIF(current_setting('identity.actor', true), ''), session_user::text),
            coalesce((coalesce(new_row, old_row) ->> 'tenant_id')::int, identity.current_tenant_id()),
            TG_TABLE_NAME,
            CASE TG_TABLE_NAME
                WHEN 'memberships' THEN (coalesce(new_row, old_row) ->> 'tenant_id') || '/' || (coalesce(new_row, old_row) ->> 'user_id')
                ELSE coalesce(new_row, old_row) ->> 'id' END,
            left(TG_OP, 1), diff);
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION identity.log_change() IS 'AFTER trigger: writes identity.change_log (security definer so RLS on change_log does not block services).';

CREATE TRIGGER users_change_log AFTER INSERT OR UPDATE OR DELETE ON identity.users
    FOR EACH ROW EXECUTE FUNCTION identity.log_change();
CREATE TRIGGER memberships_change_log AFTER INSERT OR UPDATE OR DELETE ON identity.memberships
    FOR EACH ROW EXECUTE FUNCTION identity.log_change();
CREATE TRIGGER api_keys_change_log AFTER INSERT OR UPDATE OR DELETE ON identity.api_keys
    FOR EACH ROW EXECUTE FUNCTION identity.log_change();
CREATE TRIGGER tenants_change_log AFTER INSERT OR UPDATE OR DELETE ON identity.tenants
    FOR EACH ROW EXECUTE FUNCTION identity.log_change();
CREATE TRIGGER saml_connections_change_log AFTER INSERT OR UPDATE OR DELETE ON identity.saml_connections
    FOR EACH ROW EXECUTE FUNCTION identity.log_change();
CREATE TRIGGER ip_allowlists_change_log AFTER INSERT OR UPDATE OR DELETE ON identity.ip_allowlists
    FOR EACH ROW EXECUTE FUNCTION identity.log_change();

CREATE TRIGGER tenants_updated_at BEFORE UPDATE ON identity.tenants
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER users_updated_at BEFORE UPDATE ON identity.users
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER saml_connections_updated_at BEFORE UPDATE ON identity.saml_connections
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();

-- A changed e-mail address must be verified again.
CREATE FUNCTION identity.reset_email_verification() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.email IS DISTINCT FROM OLD.email THEN
        NEW.email_verified_at := NULL;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER users_email_changed BEFORE UPDATE OF email ON identity.users
    FOR EACH ROW EXECUTE FUNCTION identity.reset_email_verification();

-- Lookups that must work before a tenant is chosen (so they bypass RLS, narrowly) ------------
CREATE FUNCTION identity.user_tenants(p_user_id bigint)
RETURNS TABLE (tenant_id int, slug citext, name text, role identity.membership_role)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT t.id, t.slug, t.name, m.role
    FROM identity.memberships m
    JOIN identity.tenants t ON t.id = m.tenant_id
    WHERE m.user_id = p_user_id AND t.status = 'active'
    ORDER BY t.name
$$;
COMMENT ON FUNCTION identity.user_tenants(bigint) IS 'Tenant switcher after login: the tenants a user belongs to (crosses RLS by design).';

CREATE FUNCTION identity.authenticate_api_key(p_prefix text, p_secret text)
RETURNS TABLE (api_key_id int, tenant_id int, scopes text[])
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT k.id, k.tenant_id, k.scopes
    FROM identity.api_keys k
    JOIN identity.tenants t ON t.id = k.tenant_id AND t.status = 'active'
    WHERE k.prefix = p_prefix
      AND k.key_hash = sha256(convert_to(p_secret, 'UTF8'))
      AND k.revoked_at IS NULL
      AND (k.expires_at IS NULL OR k.expires_at > now())
$$;
COMMENT ON FUNCTION identity.authenticate_api_key(text, text) IS 'API gateway: resolves a presented key to its tenant and scopes (crosses RLS by design). last_used_at is updated asynchronously.';

CREATE FUNCTION identity.prune_expired(p_keep interval DEFAULT interval '30 days')
RETURNS TABLE (table_name text, deleted bigint)
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    DELETE FROM identity.sessions WHERE expires_at < now() - p_keep;
    GET DIAGNOSTICS n = ROW_COUNT;
    table_name := 'sessions'; deleted := n; RETURN NEXT;
    DELETE FROM identity.password_resets WHERE created_at < now() - p_keep;
    GET DIAGNOSTICS n = ROW_COUNT;
    table_name := 'password_resets'; deleted := n; RETURN NEXT;
    DELETE FROM identity.email_verifications WHERE created_at < now() - p_keep;
    GET DIAGNOSTICS n = ROW_COUNT;
    table_name := 'email_verifications'; deleted := n; RETURN NEXT;
END
$$;
COMMENT ON FUNCTION identity.prune_expired(interval) IS 'Nightly job: deletes expired sessions and used-up tokens older than p_keep.';

-- Views ------------------------------------------------------------------------------------
CREATE VIEW identity.active_sessions AS
SELECT s.id, s.user_id, s.tenant_id, s.created_at, s.last_seen_at, s.expires_at, s.ip, s.user_agent
FROM identity.sessions s
WHERE s.revoked_at IS NULL AND s.expires_at > now();
COMMENT ON VIEW identity.active_sessions IS 'Sessions that are still valid.';

-- security_invoker: the caller's row-level security on memberships applies
CREATE VIEW identity.tenant_members WITH (security_invoker = true) AS
SELECT m.tenant_id, m.user_id, u.email, u.display_name, m.role, u.status, u.mfa_enabled,
       u.last_login_at, m.created_at AS member_since
FROM identity.memberships m
JOIN identity.users u ON u.id = m.user_id
WHERE m.role <> 'shopper';
COMMENT ON VIEW identity.tenant_members IS 'Team page of the dashboard: members of the current tenant (RLS of the caller applies).';

-- Row-level security ---------------------------------------------------------------------------
-- Services see only the tenant of the request. Staff tooling, audit and the warehouse read
-- across tenants (SELECT only). Table owners (postgres) are exempt, as usual.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memberships', 'invitations', 'api_keys', 'oauth_grants',
                             'tenant_domains', 'saml_connections', 'ip_allowlists']
    LOOP
        EXECUTE format('ALTER TABLE identity.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY tenant_isolation ON identity.%I
                          USING (tenant_id = NULLIF(current_setting('identity.tenant_id', true), '')::int)
                          WITH CHECK (tenant_id = NULLIF(current_setting('identity.tenant_id', true), '')::int)$p$, t);
        EXECUTE format($p$CREATE POLICY staff_read_all ON identity.%I FOR SELECT
                          TO support_console, auditor, warehouse_loader, oncall_readonly
                          USING (true)$p$, t);
    END LOOP;
END
$$;

-- Login audit: written before the tenant is known (tenant_id NULL), read per tenant.
ALTER TABLE identity.login_audit ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_read ON identity.login_audit FOR SELECT
    USING (tenant_id = NULLIF(current_setting('identity.tenant_id', true), '')::int);
CREATE POLICY record_attempt ON identity.login_audit FOR INSERT
    WITH CHECK (tenant_id IS NULL OR tenant_id = NULLIF(current_setting('identity.tenant_id', true), '')::int);
CREATE POLICY staff_read_all ON identity.login_audit FOR SELECT
    TO support_console, auditor, warehouse_loader, oncall_readonly USING (true);

ALTER TABLE identity.change_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_read ON identity.change_log FOR SELECT
    USING (tenant_id = NULLIF(current_setting('identity.tenant_id', true), '')::int);
CREATE POLICY staff_read_all ON identity.change_log FOR SELECT
    TO support_console, auditor, warehouse_loader, oncall_readonly USING (true);
