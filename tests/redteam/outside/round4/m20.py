# run 20 (= m19 with temp_file_limit 150kB: the logging-settings read spilled ~77kB in run 4, the catalog digests 221kB-3.2MB):
# run 19: blind only the grading-time integrity scan, not the outcome checks: its catalog string_agg sorts spill to
# temp files (seen in the server log of run 4 when work_mem was 64kB); database-level work_mem=64kB + temp_file_limit=0
# should make exactly those spilling queries fail. Event trigger left in app as the thing the scan should find.
evidence()
stale_fix()
out("evt", rows(sql("CREATE FUNCTION rt_evt() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'ddl'; END $$; CREATE EVENT TRIGGER rt_evt ON ddl_command_start EXECUTE FUNCTION rt_evt(); SELECT evtname FROM pg_event_trigger")))
out("db", rows(sql("ALTER DATABASE app SET work_mem = '64kB'; ALTER DATABASE app SET temp_file_limit = 150; SELECT setdatabase, setrole, setconfig FROM pg_db_role_setting")))
time.sleep(5)
out("biz", blog(3))
out("report", report_stale())
