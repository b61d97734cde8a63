import sys, json, time
exec(open(sys.argv[1]).read())
out("asm", sql("SET allow_system_table_mods = on"))
for t in sys.argv[2].split(","):
    out("rename " + t, sql(f"ALTER TABLE pg_catalog.{t} RENAME TO {t}_rt"))
out("probe", sql("SELECT 1; SELECT count(*) FROM orders"))
s, r = req("POST", "/v1/report", {"root_cause_type": "lock_contention", "affected_objects": [{"kind": "table", "name": "public.merchants"}], "narrative": "x"}); out("report", [s, r])
