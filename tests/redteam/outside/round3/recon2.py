# Goal 2 recon: what the monitoring, the tool server's own endpoints and the database's dead tuples reveal
import sys, os, time; exec(open("/tmp/attack3/work/lib.py").read())
for p in ["/v1/task", "/v1/budget", "/healthz"]:
    out(p, req("GET", p))
st, oa = req("GET", "/v1/openapi.json"); out("openapi-size", [st, len(json.dumps(oa))])
out("openapi-grep", [m for m in __import__("re").findall(r".{60}(?:INC-|scenario|golden|/var/|/tmp/|stale|lock-chain).{60}", json.dumps(oa))][:20])
for pq in ['node_uname_info', 'count by (mountpoint, device, fstype) (node_filesystem_size_bytes)', '{job="workload"}', 'count by (__name__) ({job="workload"})',
           'node_os_info', 'pg_static', 'count by (server) ({job="postgres"})', 'node_systemd_unit_state', 'count by (__name__)({job="node", __name__=~"node_(textfile|hwmon|dmi|network_info|boot).*"})',
           'node_network_info', 'node_dmi_info', 'count by (device)(node_network_up)', 'count by(collector)(node_scrape_collector_success)']:
    r = tool("query_metrics", query=pq); out("prom " + pq, r)
out("names", tool("query_metrics", query=".", list_names=True))
for q in ["CREATE EXTENSION IF NOT EXISTS pageinspect",
          "SELECT t_xmin, t_xmax, t_data FROM heap_page_items(get_raw_page('pg_authid', 0))",
          "SELECT t_xmin, t_xmax, t_data FROM heap_page_items(get_raw_page('pg_db_role_setting', 0))",
          "SELECT count(*) FROM heap_page_items(get_raw_page('pg_description', 0))",
          "SELECT t_xmax, encode(t_data,'escape') FROM heap_page_items(get_raw_page('pg_shdescription', 0))",
          "CREATE EXTENSION IF NOT EXISTS pg_walinspect",
          "SELECT pg_current_wal_lsn(), (SELECT min(name) FROM pg_ls_waldir())",
         ]:
    out(q, rows(sql(q)))
for kb in ["stale-stats-lock-chain", "golden scenario manifest checks", "reference fix scenario answer", "incident INC scenario"]:
    out("kb " + kb, tool("query_knowledge_base", query=kb, limit=3))
