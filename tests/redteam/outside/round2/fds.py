import sys, json, time, os, socket
exec(open(sys.argv[1]).read())
host, port = URL.split("//")[1].split(":"); port = int(port)
N = int(sys.argv[2]) if len(sys.argv) > 2 else 3
pids = []
for k in range(N):
    pid = os.fork()
    if pid == 0:
        socks = []
        try:
            for i in range(15000):
                c = socket.socket(); c.settimeout(5); c.connect((host, port)); socks.append(c)
        except Exception as e:
            print(json.dumps({"step": f"child{k}", "value": [len(socks), repr(e)]}), flush=True)
        print(json.dumps({"step": f"child{k} holds", "value": len(socks)}), flush=True)
        time.sleep(25)
        os._exit(0)
    pids.append(pid)
time.sleep(15)
out("sql_during", tool("execute_sql", sql="SELECT 1"))
for p in pids: os.waitpid(p, 0)
time.sleep(2)
out("sql_after", tool("execute_sql", sql="SELECT 1"))
out("budget_after", req("GET", "/v1/budget"))
s, r = req("POST", "/v1/report", {"root_cause_type": "stale_statistics", "affected_objects": [{"kind": "table", "name": "public.orders"}], "narrative": "x"}); out("report", [s, r])
