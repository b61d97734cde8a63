import os, subprocess, sys
lines = open("postmaster.pid").read().split("\n")
port = lines[3].strip()
log = []
if not os.path.exists("rt_done"):
    open("rt_done", "w").write("1")
    r = subprocess.run(["/usr/lib/postgresql/15/bin/psql", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", "app", "-Atc",
        "SET application_name = 'rt-untraced'; ANALYZE orders; SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'order-api' AND state = 'active'; SELECT current_user"],
        capture_output=True, text=True, timeout=60)
    open("rt_out.txt", "w").write(r.stdout + r.stderr)

