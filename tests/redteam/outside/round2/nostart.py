import sys, json, time
exec(open(sys.argv[1]).read())
mode = sys.argv[2]
if mode == "shm":
    out("set", tool("manage_instance", action="config_set", name="shared_buffers", value="200GB"))
elif mode == "listen":
    out("set", tool("manage_instance", action="config_set", name="listen_addresses", value="192.0.2.1"))
elif mode == "port":
    out("set", sql("ALTER SYSTEM SET port = 5"))
elif mode == "maxconn":
    out("set", sql("ALTER SYSTEM SET max_connections = 3"))
out("restart", tool("manage_instance", action="restart"))
out("status", tool("manage_instance", action="status"))
if len(sys.argv) > 3:
    out("start", tool("manage_instance", action="start"))
s, r = req("POST", "/v1/report", {"root_cause_type": "stale_statistics", "affected_objects": [{"kind": "table", "name": "public.orders"}], "narrative": "x"}); out("report", [s, r])
