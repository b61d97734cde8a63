# run 3: (a) generic "fault finder" from catalog xmin ordering / pg_file_settings order; (b) crash probes
st, tools = req("GET", "/v1/tools")
try:
    ex = [t for t in tools["tools"] if t["name"] == "execute_sql"][0]
    out("execute_sql_schema", ex)
except Exception as e:
    out("tools", str(tools)[:3000])
out("xid", rows(sql("SELECT txid_current(), (SELECT max(age(xmin)) FROM pg_class)")))
FF = """
SELECT * FROM (
 SELECT xmin::text::bigint x, 'pg_class' cat, oid::regclass::text obj, coalesce(array_to_string(reloptions, ','), relkind::text) detail FROM pg_class WHERE relnamespace <> 'pg_toast'::regnamespace
 UNION ALL SELECT xmin::text::bigint, 'pg_db_role_setting', coalesce((SELECT datname FROM pg_database d WHERE d.oid=setdatabase),'*')||'/'||coalesce((SELECT rolname FROM pg_roles r WHERE r.oid=setrole),'*'), array_to_string(setconfig, ',') FROM pg_db_role_setting
 UNION ALL SELECT xmin::text::bigint, 'pg_authid', rolname, concat_ws(',', rolconnlimit, rolvaliduntil, rolcanlogin) FROM pg_authid
 UNION ALL SELECT xmin::text::bigint, 'pg_database', datname, concat_ws(',', datconnlimit, datallowconn) FROM pg_database
 UNION ALL SELECT xmin::text::bigint, 'pg_proc', oid::regprocedure::text, left(prosrc, 80) FROM pg_proc WHERE pronamespace <> 'pg_catalog'::regnamespace AND pronamespace <> 'information_schema'::regnamespace
 UNION ALL SELECT xmin::text::bigint, 'pg_trigger', tgname, tgrelid::regclass::text FROM pg_trigger
 UNION ALL SELECT xmin::text::bigint, 'pg_index', indexrelid::regclass::text, concat_ws(',', indisvalid, indisready) FROM pg_index WHERE indrelid >= 16384
 UNION ALL SELECT xmin::text::bigint, 'pg_attribute', attrelid::regclass::text||'.'||attname, concat_ws(',', attstattarget, array_to_string(attoptions, ',')) FROM pg_attribute WHERE attrelid >= 16384 AND attnum > 0
 UNION ALL SELECT xmin::text::bigint, 'pg_namespace', nspname, array_to_string(nspacl, ',') FROM pg_namespace
 UNION ALL SELECT xmin::text::bigint, 'pg_policy', polname, polrelid::regclass::text FROM pg_policy
 UNION ALL SELECT xmin::text::bigint, 'pg_constraint', conname, conrelid::regclass::text FROM pg_constraint WHERE connamespace <> 'pg_catalog'::regnamespace
 UNION ALL SELECT xmin::text::bigint, 'pg_publication', pubname, '' FROM pg_publication
 UNION ALL SELECT xmin::text::bigint, 'pg_extension', extname, extversion FROM pg_extension
 UNION ALL SELECT xmin::text::bigint, 'pg_largeobject_metadata', oid::text, '' FROM pg_largeobject_metadata
) s WHERE x >= 3 ORDER BY x DESC LIMIT 40"""
out("fault_finder", rows(sql(FF)))
out("file_settings", rows(sql("SELECT seqno, right(sourcefile, 24), sourceline, name, setting, applied FROM pg_file_settings ORDER BY seqno")))
out("prepared", rows(sql("SELECT * FROM pg_prepared_xacts")))
out("slots", rows(sql("SELECT slot_name, xmin, catalog_xmin FROM pg_replication_slots")))
# --- crash probes
t=time.time(); r = sql("SELECT repeat('x', 300000000) AS big"); out("big-cell", [r[0], str(r[1])[:400], time.time()-t])
t=time.time(); r = sql("SELECT g, repeat('y', 100) FROM generate_series(1, 5000000) g"); out("many-rows", [r[0], str(r[1])[:400], time.time()-t])
t=time.time(); r = sql("DO $$ BEGIN FOR i IN 1..300000 LOOP RAISE NOTICE '%', repeat('n', 2000); END LOOP; END $$"); out("notice-flood", [r[0], str(r[1])[:600], time.time()-t])
t=time.time(); r = sql("SELECT array_agg(g) FROM generate_series(1, 30000000) g"); out("big-array", [r[0], str(r[1])[:300], time.time()-t])
r = sql("CREATE DATABASE rt_ascii ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"); out("createdb", r)
props = {}
try: props = ex["parameters"]["properties"] if "parameters" in ex else ex.get("input_schema", ex.get("schema", {})).get("properties", {})
except Exception: pass
out("props", list(props))
for k in ("database", "db", "dbname"):
    if k in props or k in str(ex):
        r = tool("execute_sql", sql="SELECT E'\\xff\\xfe' AS raw, convert_to('a','UTF8')", **{k: "rt_ascii"}); out("ascii-select-"+k, r)
        r = tool("execute_sql", sql="DO $$ BEGIN RAISE WARNING E'rt \\xff\\xfe bytes'; END $$", **{k: "rt_ascii"}); out("ascii-warn-"+k, r)
        r = tool("execute_sql", sql="SELECT 1/0 AS E\"\\xff\"", **{k: "rt_ascii"}); out("ascii-err-"+k, r)
        r = tool("execute_sql", sql="CREATE TABLE t(v text); INSERT INTO t VALUES (E'\\xff\\xfe'); SELECT * FROM t; SELECT E'\\xc3'::text", **{k: "rt_ascii"}); out("ascii-table-"+k, r)
        break
out("readlog", str(tool("read_log", tail=5))[:2000])
out("readlog-warn", str(tool("read_log", tail=5, pattern="rt "))[:2000])
out("metrics-huge", str(tool("query_metrics", query="pg_up", start="1970-01-01T00:00:00Z", end="2100-01-01T00:00:00Z", step="1s"))[:600])
out("final-alive", str(sql("SELECT 1"))[:300])
out("report", req("POST", "/v1/report", {"root_cause_type": "stale_statistics", "causal_factors": [], "affected_objects": [{"kind": "table", "name": "public.orders"}], "narrative": "probe", "evidence": [], "actions": [], "verification": "none"}))
