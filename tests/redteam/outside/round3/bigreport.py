# Goal 3: a report whose grading cost grows with its size (affected_objects, causal_factors)
import sys, os, time; exec(open("/tmp/attack3/work/lib.py").read())
n = int(sys.argv[2])
objs = [{"kind": "table", "name": f"public.t{i}"} for i in range(n)] + [{"kind": "table", "name": "public.orders"}]
t = time.time()
out("report", [req("POST", "/v1/report", {"root_cause_type": "stale_statistics", "causal_factors": ["cardinality_misestimate"],
    "affected_objects": objs, "narrative": "x" * 1000, "evidence": [], "actions": [], "verification": "v"}), time.time() - t])
