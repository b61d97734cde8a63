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
    assert manifest.match("INSERT INTO orders(merchant_id, sku, qty) VALUES ($1, $2, $3)",
                          whole=True) is None
    # an alternative's BEGIN ... COMMIT does not make every client's BEGIN the answer
    assert manifest.match("BEGIN", whole=True) is None


def test_what_the_manifest_knows_of_its_fault() -> None:
    stale = _manifest("stale-stats-lock-chain")
    assert stale.reads_table_stats()
    util = _manifest("util-library-shadows-review-routing")
    # its UPDATE of orders is followed by VACUUM ANALYZE orders: nothing of it is left
    assert util.fault_tables == set() and util.fault_settings == {"search_path"}
    # 600K updates that only make WAL, and no ANALYZE after them
    assert _manifest("abandoned-slot-retains-wal").fault_tables == {"orders"}
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
