import sys, os, json, socket, subprocess
exec(open(sys.argv[1]).read())
out("env", dict(os.environ))
out("task", open(os.environ["DBABENCH_TASK_FILE"]).read())
s, tools = req("GET", "/v1/tools"); out("tools", tools)
s, oa = req("GET", "/v1/openapi.json"); out("openapi_paths", list(oa.get("paths", {}).keys()) if isinstance(oa, dict) else oa)
out("openapi", oa)
# sandbox
def sh(c):
    try:
        r = subprocess.run(c, shell=True, capture_output=True, text=True, timeout=20); return (r.stdout + r.stderr)[-4000:]
    except Exception as e: return repr(e)
out("sandbox", sh("id; hostname; cat /proc/self/mountinfo | awk '{print $5, $4, $6}'; ls -la / /tmp; ps -ef; cat /proc/1/cmdline | tr '\\0' ' '; ip addr 2>&1; cat /proc/net/tcp"))
out("paths", sh("ls -d /work /work/main /work/main/scenarios /var/cache/dbabench /root /home 2>&1; ls /usr/lib/python3*/site-packages 2>&1 | head; python3 -c 'import dbabench,sys;print(dbabench.__file__)' 2>&1; cat /proc/self/status | grep -i cap"))
q = {
 "settings": "SELECT name, setting, source, sourcefile FROM pg_settings WHERE source NOT IN ('default','override') OR name IN ('data_directory','config_file','hba_file','ident_file','cluster_name','log_directory','external_pid_file','unix_socket_directories','listen_addresses','port')",
 "custom": "SELECT name, setting FROM pg_settings WHERE name LIKE '%.%'",
 "dbrole": "SELECT d.datname, r.rolname, s.setconfig FROM pg_db_role_setting s LEFT JOIN pg_database d ON d.oid=s.setdatabase LEFT JOIN pg_roles r ON r.oid=s.setrole",
 "file_settings": "SELECT * FROM pg_file_settings",
 "hba": "SELECT * FROM pg_hba_file_rules",
 "activity": "SELECT pid, usename, application_name, client_addr, backend_type, state, left(query,200) FROM pg_stat_activity",
 "dbs": "SELECT datname, shobj_description(oid,'pg_database') FROM pg_database",
 "roles": "SELECT rolname, rolcanlogin, rolsuper, rolpassword IS NOT NULL, rolconfig FROM pg_authid",
 "descr": "SELECT objoid::regclass::text, description FROM pg_description WHERE objoid >= 16384 LIMIT 50",
 "schemas": "SELECT nspname FROM pg_namespace",
 "funcs": "SELECT n.nspname, p.proname, left(p.prosrc,300) FROM pg_proc p JOIN pg_namespace n ON n.oid=p.pronamespace WHERE n.nspname NOT IN ('pg_catalog','information_schema')",
 "tables": "SELECT schemaname, relname, n_live_tup, n_dead_tup, n_mod_since_analyze, last_analyze, last_autoanalyze FROM pg_stat_user_tables",
 "pss": "SELECT count(*) FROM pg_stat_statements",
 "pss2": "SELECT left(query,300) FROM pg_stat_statements LIMIT 40",
 "ext": "SELECT extname FROM pg_extension",
 "waldir": "SELECT * FROM pg_ls_logdir()",
 "curlog": "SELECT pg_current_logfile(), current_user, inet_server_port(), version()",
 "slots": "SELECT * FROM pg_replication_slots",
 "prepared": "SELECT * FROM pg_prepared_xacts",
 "stat_wal": "SELECT * FROM pg_stat_archiver",
 "tmpfiles": "SELECT * FROM pg_ls_tmpdir()",
 "archive_status": "SELECT * FROM pg_ls_archive_statusdir()",
 "timeout": "SHOW statement_timeout",
 "lift1": "SET statement_timeout = 0",
 "lift2": "SELECT set_config('statement_timeout','0',false)",
}
for k, v in q.items(): out("sql_" + k, sql(v))
for pq in ['count by (__name__)({__name__=~".+"})', 'count by (job, instance)({__name__=~".+"})', 'prometheus_build_info', '{__name__=~"prometheus_.*config.*"}', 'up', 'count by (job)(up)', '{__name__=~".+", job!~"postgres|node"}']:
    out("metrics " + pq, tool("query_metrics", query=pq))
for kb in ["vocabulary lock", "scenario", "reference fix", 'NEAR(a b', '"', '*', 'rowid:1']:
    out("kb " + kb, tool("query_knowledge_base", query=kb))
out("log", tool("read_log", source="postgresql", tail=20))
out("blog", tool("read_log", source="business", tail=20))
out("budget", req("GET", "/v1/budget"))
for p in ["/", "/v1", "/v1/trace", "/v1/report", "/v1/status", "/docs", "/metrics", "/v1/tools/../../etc/passwd", "/v1/run", "/v1/scenario", "/openapi.json", "/mcp", "/v1/events"]:
    out("GET " + p, req("GET", p))
