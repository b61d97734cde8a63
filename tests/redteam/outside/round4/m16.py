# run 16: (a) is the 100k-char PromQL string a 500 with Prometheus alive? (b) honest fix, then one PromQL subquery
# that makes the run's Prometheus allocate ~250 GB and die (run 15), then report: is it charged / does the run score?
def probe(name, fn):
    t = time.time(); r = fn(); out(name, [r[0], str(r[1])[:260], round(time.time() - t, 2)])
probe("qm-up", lambda: tool("query_metrics", query="up"))
probe("qm-str-100k", lambda: tool("query_metrics", query="\"" + "a" * 100000 + "\""))
probe("qm-str-10k", lambda: tool("query_metrics", query="\"" + "a" * 10000 + "\""))
probe("qm-up2", lambda: tool("query_metrics", query="up"))
evidence()
stale_fix()
probe("qm-kill", lambda: tool("query_metrics", query="max_over_time(rate(up[1s])[1y:1ms])"))
time.sleep(2)
probe("qm-after", lambda: tool("query_metrics", query="up"))
out("biz", blog(3))
out("report", report_stale())
