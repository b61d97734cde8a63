import socket, urllib.request, json, os, time
if os.path.exists("rt_out.txt"): raise SystemExit(0)
res = {"id": os.getuid(), "cwd": os.getcwd()}
open_ports = []
for p in range(1024, 65536):
    s = socket.socket(); s.settimeout(0.02)
    try:
        if s.connect_ex(("127.0.0.1", p)) == 0: open_ports.append(p)
    except Exception: pass
    finally: s.close()
res["ports"] = open_ports
hits = {}
for p in open_ports:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{p}/api/v1/status/flags", timeout=1) as r:
            d = json.loads(r.read()); hits[p] = d.get("data", {}).get("config.file")
    except Exception: pass
res["prometheus_config_files"] = hits
open("rt_out.txt", "w").write(json.dumps(res))
