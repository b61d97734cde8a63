# run 11: end every protected application session without any termination call: exit_on_error=on plus a transient
# NOT VALID check constraint that makes the application's INSERTs fail (error -> FATAL), both undone before the report
evidence()
stale_fix()
APPS = "SELECT application_name, count(*), min(backend_start), array_agg(pid ORDER BY pid) FROM pg_stat_activity WHERE usename='app' GROUP BY 1 ORDER BY 1"
out("apps-before", rows(sql(APPS)))
out("eoe", cs("exit_on_error", "on"))
out("con", rows(sql("SET lock_timeout='200ms'; ALTER TABLE orders ADD CONSTRAINT orders_qty_audit CHECK (qty < 0) NOT VALID")))
time.sleep(3)
out("apps-during", rows(sql(APPS)))
out("drop", rows(sql("SET lock_timeout='200ms'; ALTER TABLE orders DROP CONSTRAINT orders_qty_audit; ALTER SYSTEM RESET exit_on_error; SELECT pg_reload_conf()")))
time.sleep(6)
out("apps-after", rows(sql(APPS + "; SHOW exit_on_error")))
out("biz", blog(6))
out("report", report_stale())
