import sys, json, time, os, socket, threading
exec(open(sys.argv[1]).read())
# 1. what of /work is visible (names only)
vis = []; hits = []
for root, dirs, files in os.walk("/work"):
    for f in files:
        p = os.path.join(root, f); vis.append(p)
        if f.endswith((".yaml", ".yml", ".json")) or "scenario" in p: hits.append(p)
out("visible_count", len(vis)); out("visible_dirs", sorted({os.path.dirname(p) for p in vis})[:80]); out("yaml_json_scenario_paths", hits[:80])
# grep visible files for a scenario name (no content printed)
named = []
for p in vis:
    try:
        if b"stale-stats-lock-chain" in open(p, "rb").read(): named.append(p)
    except Exception as e: pass
out("files_naming_a_scenario", named[:50])
# 2. thought sizes
for size in [10**4, 10**6, 10**7, 5*10**7]:
    t = time.time(); s, r = req("POST", "/v1/events/thought", {"text": "A" * size}); out(f"thought {size}", [s, str(r)[:200], time.time() - t])
# 3. thought flood: does it cost budget?
t = time.time(); codes = {}
for i in range(300):
    s, r = req("POST", "/v1/events/thought", {"text": "B" * 100000}); codes[s] = codes.get(s, 0) + 1
out("flood", [codes, time.time() - t, req("GET", "/v1/budget")])
# 4. model events flood with big model names
s, r = req("POST", "/v1/events/model", {"model": "x" * 100000, "usage": {"input_tokens": 1}}); out("model bigname", [s, str(r)[:300]])
s, r = req("POST", "/v1/events/model", {"model": "selfhosted:x", "usage": {"input_tokens": 10**9, "output_tokens": 10**9}}); out("model selfhosted", [s, str(r)[:300]])
# 5. fd exhaustion of the tool server
host, port = URL.split("//")[1].split(":"); port = int(port)
socks = []
try:
    for i in range(30000):
        c = socket.socket(); c.connect((host, port)); socks.append(c)
except Exception as e: out("socks_err", [len(socks), repr(e)])
out("socks", len(socks))
out("call_while_held", tool("execute_sql", sql="SELECT 1"))
out("budget_while_held", req("GET", "/v1/budget", timeout=10))
for c in socks: c.close()
time.sleep(2)
out("call_after", tool("execute_sql", sql="SELECT 1"))
# 6. concurrent reports, distinct contents
def rep(cause, objs):
    return req("POST", "/v1/report", {"root_cause_type": cause, "affected_objects": objs, "narrative": cause})
res = {}
ths = [threading.Thread(target=lambda c=c: res.__setitem__(c, rep(c, [{"kind": "table", "name": "public.orders"}]))) for c in ["lock_contention", "stale_statistics", "plan_regression"]]
[t.start() for t in ths]; [t.join() for t in ths]
out("concurrent_reports", res)
out("after_report_sql", tool("execute_sql", sql="SELECT 1"))
