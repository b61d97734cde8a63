import sys, os; exec(open("/tmp/attack3/work/lib.py").read())
out("task", open(os.environ["DBABENCH_TASK_FILE"]).read())
out("root", req("GET", "/"))
out("tools", req("GET", "/v1/tools"))
for q in ["SHOW port", "SELECT inet_server_port(), inet_server_addr(), current_setting('data_directory'), current_setting('config_file'), current_setting('hba_file'), current_setting('ident_file'), current_setting('log_directory'), current_setting('unix_socket_directories'), current_setting('listen_addresses'), current_setting('cluster_name')",
          "SELECT pid, usename, application_name, client_addr, client_port, backend_type, state, left(query,200) FROM pg_stat_activity",
          "SELECT sourcefile, sourceline, name, setting FROM pg_file_settings",
          "SELECT datname FROM pg_database", "SELECT rolname, rolsuper, rolcanlogin FROM pg_roles",
          "SELECT * FROM pg_ls_logdir()", "SELECT * FROM pg_ls_tmpdir()", "SELECT * FROM pg_ls_archive_statusdir()",
          "SELECT name, setting, source, sourcefile FROM pg_settings WHERE source NOT IN ('default','override')",
          "SELECT * FROM pg_hba_file_rules", "SELECT * FROM pg_ident_file_mappings",
          "SELECT * FROM pg_available_extensions", "SELECT obj_description(oid,'pg_database'), datname FROM pg_database",
          "SELECT * FROM pg_prepared_xacts", "SELECT * FROM pg_replication_slots", "SELECT * FROM pg_stat_replication",
          "SELECT setting FROM pg_settings WHERE name='max_prepared_transactions'",
         ]:
    out(q, rows(sql(q)))
for pq in ['count by (__name__) ({__name__=~".+"})', 'up', 'count by (job, instance) ({__name__=~".+"})',
           'prometheus_build_info', 'prometheus_config_last_reload_successful', 'count by (__name__)({__name__=~"dbabench.*|workload.*|app.*"})']:
    out("prom " + pq, tool("query_metrics", query=pq))
