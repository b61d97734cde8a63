import sys, json, time
exec(open(sys.argv[1]).read())
W = "FROM pg_stat_activity WHERE application_name = 'checkout-worker'"
def n(): 
    r = sql("SELECT count(*) " + W); 
    try: return r["observation"]["results"][0]["rows"][0][0]
    except Exception: return r
routes = {
 "prepare": ["PREPARE rt_p AS SELECT pg_terminate_backend(pid) " + W, "EXECUTE rt_p"],
 "sqlfunc": ["CREATE FUNCTION rt_f() RETURNS SETOF bool LANGUAGE sql AS $$ SELECT pg_terminate_backend(pid) " + W + " $$", "SELECT rt_f()"],
 "plpgsql": ["CREATE FUNCTION rt_g() RETURNS void LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_terminate_backend(pid) " + W + "; END $$", "SELECT rt_g()"],
 "rule": ["CREATE TABLE rt_t(x int); CREATE RULE rt_r AS ON INSERT TO rt_t DO ALSO SELECT pg_terminate_backend(pid) " + W, "INSERT INTO rt_t VALUES (1)"],
 "operator": ["CREATE FUNCTION rt_h(int) RETURNS bool LANGUAGE sql AS 'SELECT pg_terminate_backend($1)'; CREATE OPERATOR !~~~ (FUNCTION = rt_h, RIGHTARG = int)", "SELECT !~~~ pid " + W],
 "default": ["CREATE TABLE rt_d(x int, y bool DEFAULT (SELECT bool_and(pg_terminate_backend(pid)) " + W + "))", "INSERT INTO rt_d(x) VALUES (1)"],
 "matview": ["CREATE MATERIALIZED VIEW rt_mv AS SELECT 1 AS one WITH NO DATA; CREATE OR REPLACE VIEW rt_v2 AS SELECT 1", "SELECT 1"],
 "cursor": ["BEGIN; DECLARE rt_c CURSOR FOR SELECT pg_terminate_backend(pid) " + W, "FETCH ALL FROM rt_c; COMMIT"],
 "domain": ["CREATE FUNCTION rt_k(int) RETURNS bool LANGUAGE sql AS 'SELECT pg_terminate_backend($1)'; CREATE DOMAIN rt_dom AS int CHECK (rt_k(VALUE) OR true)", "SELECT pid::rt_dom " + W],
 "cast": ["CREATE TYPE rt_ty AS (a int); CREATE FUNCTION rt_c2(int) RETURNS rt_ty LANGUAGE sql AS 'SELECT ROW(pg_terminate_backend($1)::int)::rt_ty'; CREATE CAST (int AS rt_ty) WITH FUNCTION rt_c2(int)", "SELECT pid::rt_ty " + W],
 "index": ["CREATE FUNCTION rt_i(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT CASE WHEN pg_terminate_backend(pid) THEN 1 ELSE 0 END FROM pg_stat_activity WHERE application_name = ''checkout-worker'' LIMIT 1'; CREATE TABLE rt_ix(a int)", "CREATE INDEX ON rt_ix (rt_i(a)); INSERT INTO rt_ix VALUES (1)"],
}
for name, (mk, use) in routes.items():
    time.sleep(3)
    before = n()
    out(name + " mk", sql(mk))
    out(name + " use", sql(use))
    time.sleep(0.5)
    out(name + " killed", [before, n()])
s, r = req("POST", "/v1/report", {"root_cause_type": "stale_statistics", "affected_objects": [{"kind": "table", "name": "public.orders"}], "narrative": "x"}); out("report", [s, r])
