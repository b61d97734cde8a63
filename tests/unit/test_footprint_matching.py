"""The footprint scan's matching: a manifest's statements as pg_stat_statements, a log line or a
session shows them, and the words that name the harness."""

from __future__ import annotations

from dbabench.evaluate.footprints import Manifest, mask
from dbabench.model.footprint import Source
from dbabench.scenario.loader import resolve


def _manifest(name: str) -> Manifest:
    return Manifest.of(resolve(name)[1])


def test_a_fault_statement_is_found_however_it_is_shown() -> None:
    manifest = _manifest("tenant-isolation-policies-break-checkout")
    shown = [
        # pg_stat_statements: constants normalised away
        "CREATE POLICY tenant_isolation ON orders AS RESTRICTIVE"
        " USING (merchant_id = current_setting($1)::int)",
        # a log line, in other case and spacing, inside free text
        "2026-12-07 05:00:00.000 UTC [42] app=psql ERROR: 42710 policy exists STATEMENT: create"
        " policy tenant_isolation on orders   as restrictive\n using (merchant_id ="
        " current_setting('portal.merchant_id')::int);",
    ]
    for text in shown:
        known = manifest.match(text, whole=not text.startswith("2026"))
        assert known is not None and known.source == Source.FAULT, text
        assert known.text.startswith("CREATE POLICY tenant_isolation ON orders AS RESTRICTIVE")


def test_the_workload_and_its_jobs_are_the_incident() -> None:
    manifest = _manifest("tenant-isolation-policies-break-checkout")
    known = manifest.match("SELECT m.name, m.order_count FROM merchants m"
                           " WHERE m.id BETWEEN $1 AND $2", whole=True)
    assert known is not None and known.source == Source.WORKLOAD
    assert manifest.match("SELECT 1", whole=True).source == Source.WORKLOAD  # type: ignore[union-attr]
    assert manifest.match("DELETE FROM merchants WHERE id = $1", whole=True) is None
    # an alternative's BEGIN ... COMMIT does not make every client's BEGIN the answer
    assert manifest.match("BEGIN", whole=True) is None


def test_what_the_manifest_knows_of_its_fault() -> None:
    stale = _manifest("stale-stats-lock-chain")
    assert stale.reads_table_stats()
    util = _manifest("util-library-shadows-review-routing")
    # its UPDATE of orders is followed by VACUUM ANALYZE orders: nothing of it is left
    assert util.fault_tables == set() and util.fault_settings == {"search_path"}
    # 600K updates that only make WAL: vacuumed after, nothing of them is left; without the
    # VACUUM ANALYZE (as the scenario was until 2026-12-07) their counters are a footprint
    slot = resolve("abandoned-slot-retains-wal")[1]
    assert Manifest.of(slot).fault_tables == set()
    build = slot.spec.fault.persistent
    unvacuumed = slot.model_copy(deep=True)
    unvacuumed.spec.fault.persistent = [s for s in build
                                        if getattr(s, "sql", "") != "VACUUM ANALYZE orders"]
    assert len(unvacuumed.spec.fault.persistent) == len(build) - 1
    assert Manifest.of(unvacuumed).fault_tables == {"orders"}
    # a prepared transaction's update is the incident, still open
    assert _manifest("orphaned-prepared-transaction-blocker").fault_tables == set()
    idle = _manifest("database-idle-timeout-cuts-pooled-sessions")
    assert {"idle_session_timeout", "default_transaction_read_only"} <= idle.fault_settings
    assert ("reporting", "", "statement_timeout") in idle.intended


def test_harness_words_are_words() -> None:
    manifest = _manifest("role-search-path-hides-tables")
    assert manifest.harness_words("DEFAULT 'x' REFERENCES merchants(id) faulty") == []
    assert manifest.harness_words("dbabench_golden: the fault, see role-search-path-hides-tables"
                                  " (reference)") == [
        "dbabench_golden", "fault", "reference", "role-search-path-hides-tables"]
    # the server's own messages say "reference": only the harness's names count there
    assert manifest.harness_words("invalid reference to FROM-clause entry", authored=False) == []
    assert manifest.harness_words("app=dbabench-verifier", authored=False) == [
        "dbabench", "verifier"]


def test_credentials_are_masked() -> None:
    assert mask("ALTER ROLE portal PASSWORD 'secret''s'") == "ALTER ROLE portal PASSWORD '…'"
    assert "s3cr3t" not in mask("host=127.0.0.1 password=s3cr3t user=postgres")


def test_the_applications_own_statements_are_not_the_faults() -> None:
    # seen in the battery of 2026-12-07: one place_order between admission and the scan read as
    # the fault's three-row INSERT of the same columns (one fingerprint, whatever the rows)
    manifest = _manifest("not-in-subplan-starved-of-memory")
    shown = "INSERT INTO orders(merchant_id, sku, qty) VALUES ($1, $2, $3)"
    known = manifest.match(shown, whole=True)
    assert known is not None and known.source == Source.WORKLOAD
    # the fault's own three rows are still the fault's
    fault = manifest.match("INSERT INTO orders(merchant_id, sku, qty) VALUES ($1, $2, $3),"
                           " ($4, $5, $6), ($7, $8, $9)", whole=True)
    assert fault is not None and fault.source == Source.FAULT
    assert manifest.match("UPDATE merchants SET order_count = order_count + $1,"
                          " updated_at = now() WHERE id = $2", whole=True) is not None


def test_the_monitoring_is_the_incident_even_where_a_check_reads_the_same() -> None:
    """The exporter reads pg_stat_database_conflicts as the replica scenario's check does: a
    CI run's scan, catching it in pg_stat_activity, took the exporter for the harness."""
    manifest = _manifest("replica-reports-cancelled-by-recovery-conflicts")
    assert any(k.source == Source.CHECK and k.normal == "select * from pg_stat_database_conflicts"
               for k in manifest.known)
    known = manifest.match("SELECT * FROM pg_stat_database_conflicts", whole=True)
    assert known is not None and known.source == Source.WORKLOAD
