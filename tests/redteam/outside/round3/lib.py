import json, os, urllib.request, urllib.error, time, sys
URL, TOKEN = os.environ["DBABENCH_TOOLS_URL"], os.environ["DBABENCH_TOOLS_TOKEN"]
def req(method, path, body=None, raw=None, headers=None, timeout=300):
    h = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    if headers is not None: h = headers
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    r = urllib.request.Request(URL + path, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(r, timeout=timeout) as rep:
            t = rep.read()
            try: return rep.status, json.loads(t)
            except Exception: return rep.status, t[:3000].decode(errors="replace")
    except urllib.error.HTTPError as e:
        t = e.read()
        try: return e.code, json.loads(t or b"{}")
        except Exception: return e.code, t[:3000].decode(errors="replace")
    except Exception as e:
        return -1, repr(e)
def tool(_tn, **args): return req("POST", f"/v1/tools/{_tn}", args)
def sql(text, **kw): return tool("execute_sql", sql=text, **kw)[1]
def out(step, value):
    s = json.dumps({"step": step, "value": value}, default=str)
    print(s[:30000], flush=True)
def rows(r):
    try:
        return [x.get("rows") if "rows" in x else x for x in r["observation"]["results"]]
    except Exception:
        return r
