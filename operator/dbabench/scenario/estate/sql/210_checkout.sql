-- Shared helpers that live in public (the checkout core itself has no triggers: the
-- checkout service maintains its own columns).

-- Generic updated_at trigger function, used by tables in every domain that have updated_at.
CREATE FUNCTION public.set_updated_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION public.set_updated_at() IS 'BEFORE UPDATE trigger: stamps updated_at. Shared by all domains.';

-- PgBouncer auth_query: the pooler connects as pgbouncer_auth and looks up the password
-- stored password hash of the role a client logs in as. Expired roles (VALID UNTIL) are not returned.
CREATE FUNCTION public.pgbouncer_user_lookup(p_usename text, OUT usename name, OUT passwd text)
RETURNS record
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT rolname, rolpassword
    FROM pg_authid
    WHERE rolname = p_usename
      AND rolcanlogin
      AND NOT rolsuper
      AND (rolvaliduntil IS NULL OR rolvaliduntil > now())
$$;
REVOKE ALL ON FUNCTION public.pgbouncer_user_lookup(text) FROM PUBLIC;
COMMENT ON FUNCTION public.pgbouncer_user_lookup(text) IS 'PgBouncer auth_query (auth_user = pgbouncer_auth); never returns superusers.';
