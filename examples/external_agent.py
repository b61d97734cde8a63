"""A 30-line external agent: a fixed runbook for lock waits, through the tool server (README).
Run: dbabench run stale-stats-lock-chain --agent external -- python examples/external_agent.py"""
import json
import os
import time

from dbabench.tools.client import ToolClient

tools = ToolClient(os.environ["DBABENCH_TOOLS_URL"], os.environ["DBABENCH_TOOLS_TOKEN"])
task = json.load(open(os.environ["DBABENCH_TASK_FILE"]))
sql = lambda q: tools.call("execute_sql", sql=q)  # noqa: E731

waits = sql("SELECT pid, application_name, pg_blocking_pids(pid) AS by FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock'")
holder = sql("SELECT pid, application_name, query FROM pg_stat_activity WHERE pid IN"
             " (SELECT unnest(pg_blocking_pids(pid)) FROM pg_stat_activity)")
tools.think(f"symptom: {task['symptom'][:80]}; blockers: {holder['observation']}")
stats = sql("SELECT s.relname, n_mod_since_analyze, last_analyze, reloptions FROM pg_stat_user_tables"
            " s JOIN pg_class c ON c.oid = s.relid WHERE n_mod_since_analyze > 100000")
for table in [row[0] for row in stats["observation"]["results"][0]["rows"]]:
    sql(f"ANALYZE {table}; ALTER TABLE {table} RESET (autovacuum_enabled)")
sql("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE state = 'active' AND"
    " pid IN (SELECT unnest(pg_blocking_pids(pid)) FROM pg_stat_activity)")
time.sleep(8)  # the scheduler re-runs the cancelled job with a fresh plan
after = sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
tools.report({"root_cause_type": "stale_statistics",
              "affected_objects": [{"kind": "table", "name": "orders"}],
              "causal_factors": ["cardinality_misestimate", "lock_chain", "autovacuum_disabled"],
              "evidence": [{"tool": "execute_sql", "observation": "n_mod_since_analyze high",
                            "trace_seq": stats["seq"]}],
              "verification": f"lock waiters after the fix: {after['observation']}"})
