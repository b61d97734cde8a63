"""An external agent image of the pods tests: before it works, it looks around its pod's
network as an attacker would (what listens, what answers on every port of its loopback) and
prints what it found and what it was given; then it runs the example agent (its argument)."""

from __future__ import annotations

import json
import os
import runpy
import socket
import sys

listening = set()
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    for line in open(table).read().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A":
            listening.add(int(fields[1].rsplit(":", 1)[1], 16))
answering = []
for port in range(1, 65536):
    with socket.socket() as probe:
        # a connection to its own ephemeral port is TCP's self-connect, not a listener
        if probe.connect_ex(("127.0.0.1", port)) == 0 and probe.getsockname()[1] != port:
            answering.append(port)
print(json.dumps({"listening": sorted(listening), "answering": answering,
                  "hostname": os.environ.get("HOSTNAME"), "env": dict(os.environ)}), flush=True)
runpy.run_path(sys.argv[1], run_name="__main__")
