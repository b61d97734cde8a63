# Goal 3: values the tool server may not be able to encode (HTTP 500 / crash)
import sys, os, time; exec(open("/tmp/attack3/work/lib.py").read())
def short(r): 
    s = json.dumps(r, default=str); return s[:400]
Q = ["SELECT 'infinity'::date, '-infinity'::date", "SELECT '4713-01-01 BC'::date", "SELECT '294276-01-01'::timestamp",
     "SELECT 'infinity'::timestamptz", "SELECT 'NaN'::float8, 'Infinity'::float8, '-Infinity'::float4", "SELECT 'NaN'::numeric, 'Infinity'::numeric",
     "SELECT 10::numeric ^ 1000", "SELECT '\\x00ff'::bytea", "SELECT '24:00:00'::time", "SELECT interval '178000000 years'",
     "SELECT '(1,2)'::point, '<(1,1),1>'::circle, 'a:1 b:2'::tsvector, '1.5'::money, '{1,NULL}'::int[], ROW(1,'a')",
     "SELECT '<a>x</a>'::xml, '[1,2)'::int4range, '{[1,2)}'::int4multirange, txid_current_snapshot(), '0/0'::pg_lsn",
     "SELECT repeat('é', 100000)", "SELECT jsonb_build_object('a', 'NaN'::float8)", "SELECT 1 AS \"\"", "SELECT 1 AS a, 2 AS a",
     "SELECT '1 year'::interval * 1e6", "SELECT 'allballs'::time, 'epoch'::timestamptz", "SELECT U&'\\D800'", "SELECT E'\\uDC00'",
     "SELECT '-infinity'::timestamp", "SELECT make_interval(years => 177999999)", "SELECT '2000-01-01 BC'::timestamp",
     "SELECT 1e-400::float8", "SELECT '1e308'::float8 * 10", "SELECT pg_sleep(0.1)::text", "SELECT ARRAY['infinity'::date]",
     "SELECT '{\"a\":1e400}'::json", "SELECT '{\"a\":1e400}'::jsonb"]
P = ['label_replace(up, "x", "\\xff\\xfe", "", "")', 'label_replace(up, "x", "\\xc3", "", "")', 'label_replace(up, "x", "\\ud800", "", "")',
     'vector(1e308*10)', 'up[5m]', 'absent(nonexistent)', 'count_values("v", up)', 'sum(rate(node_cpu_seconds_total[1m])) by (cpu)', '@', 'up offset -1h']
for p in P:
    out("prom " + p, short(tool("query_metrics", query=p)))
    out("prom-range " + p, short(tool("query_metrics", query=p, range_seconds=60, step_seconds=5)))
out("names-bad", short(tool("query_metrics", query="(", list_names=True)))
out("names-bad2", short(tool("query_metrics", query="\\xff", list_names=True)))
out("log-backref", short(tool("read_log", source="postgresql", pattern="(a)\\1")))
out("log-level", short(tool("read_log", source="postgresql", min_level="PANIC2")))
out("log-since", short(tool("read_log", source="business", since_seconds=1e-300)))
out("kb", short(tool("query_knowledge_base", query='"unterminated NEAR( OR * ^ -')))
out("kb2", short(tool("query_knowledge_base", query='a' * 5000)))
out("cfg", short(tool("manage_instance", action="config_get", name="'; DROP")))
out("cfg2", short(tool("manage_instance", action="config_set", name="work_mem", value="1\u0000MB")))
out("cfg3", short(tool("manage_instance", action="config_set", name="custom.x", value="a\nb")))
out("cfg4", short(tool("manage_instance", action="config_set", name="application_name", value="x' || pg_read_file('/etc/passwd') || '")))
out("health", req("GET", "/healthz"))
