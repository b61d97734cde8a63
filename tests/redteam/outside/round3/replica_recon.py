# Goal 2: credentials and network reach through the standby's primary_conninfo
import sys, os, time; exec(open("/tmp/attack3/work/lib.py").read())
for srv in ("replica", "primary"):
    for q in ["SHOW primary_conninfo", "SELECT * FROM pg_stat_wal_receiver", "SELECT name, setting FROM pg_settings WHERE name IN ('primary_conninfo','primary_slot_name','port','data_directory','restore_command','cluster_name')",
              "SELECT usename, application_name, client_addr, client_port, state FROM pg_stat_activity", "SELECT * FROM pg_stat_replication", "SELECT rolname, rolsuper, rolreplication, rolcanlogin FROM pg_roles WHERE rolname !~ '^pg_'",
              "SELECT sourcefile, name, setting FROM pg_file_settings WHERE sourcefile ~ 'auto'"]:
        out(srv + ": " + q, rows(sql(q, server=srv)))
    out(srv + " config_get primary_conninfo", tool("manage_instance", action="config_get", name="primary_conninfo", server=srv))
out("prom up", tool("query_metrics", query="up"))
