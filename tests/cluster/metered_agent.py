"""An external agent image of the pods tests: it asks its model once through
OPENAI_BASE_URL, as any OpenAI client does, then files a report. It prints whether it was
given anything but the meter's address and its tool token."""

from __future__ import annotations

import json
import os

import httpx

from dbabench.tools.client import ToolClient

reply = httpx.post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", timeout=60,
                   headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
                   json={"model": "gpt-4o-mini",
                         "messages": [{"role": "user", "content": "what is wrong?"}]})
print(json.dumps({"status": reply.status_code, "env": sorted(os.environ)}), flush=True)
reply.raise_for_status()
with ToolClient(os.environ["DBABENCH_TOOLS_URL"], os.environ["DBABENCH_TOOLS_TOKEN"]) as tools:
    tools.call("execute_sql", sql="SELECT count(*) FROM pg_stat_activity")
    tools.report({"root_cause_type": "lock_contention",
                  "affected_objects": [{"kind": "table", "name": "orders"}]})
