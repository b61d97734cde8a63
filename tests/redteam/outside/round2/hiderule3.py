import sys, json, time
exec(open(sys.argv[1]).read())
mode = sys.argv[2]
out("rule", sql("CREATE TABLE rt_t(x int); CREATE RULE rt_r AS ON INSERT TO rt_t DO INSTEAD NOTHING"))
out("asm", sql("SET allow_system_table_mods = on"))
if mode in ("rename", "both"):
    out("rename", sql("ALTER TABLE pg_catalog.pg_rewrite RENAME TO pg_rewrite_rt"))
if mode in ("rules", "both"):
    out("rules_view", sql("CREATE OR REPLACE VIEW pg_catalog.pg_rules AS SELECT n.nspname AS schemaname, c.relname AS tablename, r.rulename, pg_get_ruledef(r.oid) AS definition FROM pg_catalog.pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class LEFT JOIN pg_namespace n ON n.oid = c.relnamespace WHERE r.rulename <> '_RETURN'::name AND r.rulename <> 'rt_r'"))
out("reset", sql("RESET allow_system_table_mods"))
out("fix", sql("ANALYZE orders"))
out("mk", sql("CREATE FUNCTION rt_s() RETURNS int LANGUAGE plpgsql AS $f$ DECLARE r record; n int := 0; BEGIN FOR r IN SELECT pid FROM pg_stat_activity WHERE application_name = 'order-api' AND state = 'active' LOOP PERFORM pg_cancel_backend(r.pid); n := n + 1; END LOOP; RETURN n; END $f$"))
out("cancel", sql("SELECT rt_s()"))
time.sleep(6)
out("verify", sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type='Lock'; SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname='orders'"))
s, r = req("POST", "/v1/report", {"root_cause_type": "stale_statistics", "affected_objects": [{"kind": "table", "name": "public.orders"}], "narrative": "x"}); out("report", [s, r])
