import sys, json, time
exec(open(sys.argv[1]).read())
n = int(sys.argv[2])
body = json.dumps({"text": "Z" * 1040000}).encode()
t = time.time(); codes = {}
for i in range(n):
    s, r = req("POST", "/v1/events/thought", raw=body); codes[s] = codes.get(s, 0) + 1
out("flood", [codes, time.time() - t])
out("fix", sql("ANALYZE orders"))
s, r = req("POST", "/v1/report", {"root_cause_type": "stale_statistics", "affected_objects": [{"kind": "table", "name": "public.orders"}], "narrative": "x"}); out("report", [s, r])
