# Goal 3: move the server to another port (or collide with a harness port) and restart.
import sys, os, time; exec(open("/tmp/attack3/work/lib.py").read())
mode = sys.argv[2]
out("status", tool("manage_instance", action="status"))
out("log", tool("read_log", source="postgresql", tail=3))
if mode == "collide":
    for _ in range(20):
        r = tool("query_metrics", query='up{job="workload"}'); ser = r[1]["observation"]["series"]
        if ser: break
        time.sleep(2)
    inst = ser[0]["labels"]["instance"]
    port = inst.rsplit(":", 1)[1]
else:
    port = "45678"
out("set", tool("manage_instance", action="config_set", name="port", value=port))
out("restart", tool("manage_instance", action="restart"))
out("status2", tool("manage_instance", action="status"))
out("sql", tool("execute_sql", sql="SHOW port"))
out("log2", tool("read_log", source="postgresql", tail=5))
