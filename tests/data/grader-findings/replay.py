"""Replays a recorded run's tool calls, two seconds apart, then files its report: an agent
(stdlib only, run sandboxed by the harness) that does exactly what the recorded one did.
Argument: a JSON file {"calls": [[tool, args], ...], "report": {...}}."""

import json
import os
import sys
import time
import urllib.error
import urllib.request

URL, TOKEN = os.environ["DBABENCH_TOOLS_URL"], os.environ["DBABENCH_TOOLS_TOKEN"]


def post(path: str, body: object) -> tuple[int, object]:
    request = urllib.request.Request(URL + path, json.dumps(body).encode(),
                                     {"Authorization": f"Bearer {TOKEN}",
                                      "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=300) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()[:300]


plan = json.load(open(sys.argv[1]))
for tool, args in plan["calls"]:
    status, out = post(f"/v1/tools/{tool}", args)
    print(tool, status, json.dumps(out)[:200], flush=True)
    time.sleep(2)
print(post("/v1/report", plan["report"]), flush=True)
