import sys, json, time, threading
exec(open(sys.argv[1]).read())
out("warm", tool("read_log", source="postgresql", tail=3, pattern="LOG"))
t0 = time.time()
res = {}
def evil():
    res["r"] = tool("read_log", source="postgresql", tail=5, pattern="(.|.)*QQQQ")
th = threading.Thread(target=evil); th.start()
time.sleep(5)
t1 = time.time()
out("budget_during", [req("GET", "/v1/budget", timeout=20), time.time() - t1])
th.join(120)
out("evil", [res.get("r"), time.time() - t0])
out("budget_after", req("GET", "/v1/budget", timeout=20))
