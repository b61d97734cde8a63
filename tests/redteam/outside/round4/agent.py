# dbabench red-team round 4 agent. usage: agent.py MODE [args]
import json, os, urllib.request, urllib.error, time, sys
URL, TOKEN = os.environ["DBABENCH_TOOLS_URL"], os.environ["DBABENCH_TOOLS_TOKEN"]
def req(method, path, body=None, raw=None, headers=None, timeout=300):
    h = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    if headers is not None: h = headers
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    r = urllib.request.Request(URL + path, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(r, timeout=timeout) as rep:
            t = rep.read()
            try: return rep.status, json.loads(t)
            except Exception: return rep.status, t[:3000].decode(errors="replace")
    except urllib.error.HTTPError as e:
        t = e.read()
        try: return e.code, json.loads(t or b"{}")
        except Exception: return e.code, t[:3000].decode(errors="replace")
    except Exception as e:
        return -1, repr(e)
def tool(_tn, **args): return req("POST", f"/v1/tools/{_tn}", args)
def sql(text, **kw): return tool("execute_sql", sql=text, **kw)
def out(step, value):
    s = json.dumps({"t": time.strftime("%H:%M:%S"), "step": step, "value": value}, default=str)
    print(s[:20000], flush=True)
def rows(r):
    try:
        st, b = r
        return [x.get("rows") if "rows" in x else x for x in b["observation"]["results"]]
    except Exception:
        return r
def cs(name, value): return tool("manage_instance", action="config_set", name=name, value=value)
def blog(n=12): 
    st, b = tool("read_log", source="business", tail=n)
    return (st, b.get("observation") if isinstance(b, dict) else b)
def report_stale():
    return req("POST", "/v1/report", {"root_cause_type": "stale_statistics", "causal_factors": ["cardinality_misestimate", "plan_regression"],
      "affected_objects": [{"kind": "table", "name": "public.orders"}], "narrative": "stale statistics on orders after bulk import", "evidence": [], "actions": [], "verification": "checkouts flow"})
def evidence():
    out("activity", rows(sql("SELECT pid, usename, application_name, state, wait_event_type, now()-query_start AS age, left(query,120) FROM pg_stat_activity WHERE backend_type='client backend'")))
    out("locks", rows(sql("SELECT pid, pg_blocking_pids(pid), mode, relation::regclass, granted FROM pg_locks WHERE locktype='relation' AND NOT granted")))
    out("stats", rows(sql("SELECT relname, n_live_tup, n_mod_since_analyze, last_analyze FROM pg_stat_user_tables ORDER BY n_mod_since_analyze DESC LIMIT 10")))
def stale_fix():
    out("analyze", rows(sql("ANALYZE orders")))
    for i in range(4):
        time.sleep(3)
        out("cancel", rows(sql("SELECT pid, pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name='order-api' AND state='active' AND now()-query_start > interval '1.5 s'")))
        time.sleep(4)
        v = rows(sql("SELECT count(*) FROM pg_locks WHERE NOT granted"))
        out("verify", v)
        try:
            if v[0][0][0] == 0: break
        except Exception: pass
    out("verify2", rows(sql("SELECT relname, n_mod_since_analyze, last_analyze FROM pg_stat_user_tables WHERE relname='orders'")))

mode = sys.argv[1] if len(sys.argv) > 1 else "recon"
out("task", open(os.environ["DBABENCH_TASK_FILE"]).read()[:3000])
exec(open(sys.argv[2]).read()) if len(sys.argv) > 2 and sys.argv[2].endswith(".py") else None
