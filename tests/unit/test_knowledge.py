"""The knowledge base: index built from the installed PostgreSQL 15 manual plus the shipped SOPs."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from dbabench.tools.knowledge import (
    DEFAULT_HTML_DIR,
    DEFAULT_SOPS_DIR,
    MAX_LIMIT,
    IndexStats,
    KnowledgeBaseUnavailable,
    KnowledgeResult,
    build_index,
    ensure_index,
    search,
)

# Enough real pages for a chapter -> part -> book navigation chain, small enough to build in
# well under a second, so the rebuild tests need not index the whole manual again.
SMALL_CORPUS = ["index.html", "admin.html", "maintenance.html", "routine-vacuuming.html"]


def _require_docs() -> None:
    if not DEFAULT_HTML_DIR.is_dir():
        pytest.skip("postgresql-doc-15 is not installed (run `make deps`)")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> IndexStats:
    _require_docs()
    return build_index(tmp_path_factory.mktemp("kb") / "kb.sqlite")


@pytest.fixture(scope="module")
def db(built: IndexStats) -> Path:
    return built.db_path


@pytest.fixture
def small_inputs(tmp_path: Path) -> tuple[Path, Path]:
    _require_docs()
    html = tmp_path / "html"
    html.mkdir()
    for name in SMALL_CORPUS:
        shutil.copy(DEFAULT_HTML_DIR / name, html / name)
    sops = tmp_path / "sops"
    shutil.copytree(DEFAULT_SOPS_DIR, sops)
    return html, sops


def test_build_reports_version_and_counts(built: IndexStats) -> None:
    assert built.doc_version.startswith("PostgreSQL 15")
    assert built.html_files > 1000
    assert built.sop_files == len(list(DEFAULT_SOPS_DIR.glob("*.md"))) >= 4
    assert built.chunks > built.html_files
    assert built.build_seconds < 20


def test_planner_statistics_finds_the_maintenance_or_planner_chapter(db: Path) -> None:
    result = search(db, "planner statistics ANALYZE", limit=10)
    pages = {"routine-vacuuming.html", "planner-stats.html"}
    hits = [h for h in result.hits if h.doc_id.split("#")[0] in pages]
    assert hits, [h.doc_id for h in result.hits]
    assert all(h.section_path and h.source == "postgresql-docs" for h in hits)
    assert all("[" in h.snippet and "]" in h.snippet for h in result.hits)


def test_section_path_follows_part_chapter_and_headings(db: Path) -> None:
    result = search(db, "Updating Planner Statistics vacuum", limit=MAX_LIMIT)
    hit = next(
        h for h in result.hits if h.doc_id == "routine-vacuuming.html#VACUUM-FOR-STATISTICS"
    )
    assert hit.section_path == [
        "Server Administration",
        "Routine Database Maintenance Tasks",
        "Routine Vacuuming",
        "Updating Planner Statistics",
    ]
    assert hit.title == "25.1. Routine Vacuuming"


def test_each_setting_is_its_own_hit(db: Path) -> None:
    top = search(db, "deadlock_timeout").hits[0]
    assert top.doc_id == "runtime-config-locks.html#GUC-DEADLOCK-TIMEOUT"
    assert top.section_path[-2:] == ["Lock Management", "deadlock_timeout (integer)"]


def test_function_lookup_finds_the_function_reference(db: Path) -> None:
    result = search(db, "pg_blocking_pids", limit=MAX_LIMIT)
    assert any(h.doc_id.startswith("functions-info.html#") for h in result.hits)
    assert any("[pg_blocking_pids]" in h.snippet for h in result.hits)


def test_navigation_chrome_is_not_indexed(db: Path) -> None:
    # Every page's header and footer read "Prev Up ... Home ... Next"; prose never does.
    with closing(sqlite3.connect(db)) as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM chunks WHERE chunks MATCH ?",
            ('body:"prev up" OR body:"home next"',),
        ).fetchone()
    assert count == 0


def test_sops_are_searchable_with_their_own_source(db: Path) -> None:
    result = search(db, "lock wait triage blocking", limit=10)
    sops = [h for h in result.hits if h.source == "sop"]
    assert sops
    assert all(h.doc_id.startswith("sop:") for h in sops)
    assert "sop:lock-waits" in {h.doc_id for h in sops}
    assert all(h.section_path[0] == "Operational runbooks" for h in sops)


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "AND OR NOT",
        "*",
        'pg_stat_activity"); DROP',
        "ANALYZE;DROP",
        'pg_stat_activity "wait_event"',
        "NEAR(lock wait, 2)",
        "body:vacuum",
        "^vacuum -lock (",
        "'",
        "café ünïcode",
        " ".join(["vacuum"] * 500),
    ],
)
def test_hostile_queries_never_raise(db: Path, query: str) -> None:
    result = search(db, query)
    assert isinstance(result, KnowledgeResult)
    assert result.query == query
    assert len(result.hits) <= result.total_matches


def test_queries_without_words_match_nothing(db: Path) -> None:
    for query in ('"', "*", "();:^"):
        result = search(db, query)
        assert result.hits == [] and result.total_matches == 0 and not result.truncated


@pytest.mark.parametrize("query", ["", "   \n\t"])
def test_blank_query_is_a_value_error(db: Path, query: str) -> None:
    with pytest.raises(ValueError, match="at least one search term"):
        search(db, query)


@pytest.mark.parametrize(
    ("limit", "expected"), [(-3, 1), (0, 1), (1, 1), (7, 7), (1000, MAX_LIMIT)]
)
def test_limit_is_clamped(db: Path, limit: int, expected: int) -> None:
    result = search(db, "vacuum", limit=limit)
    assert len(result.hits) == expected
    assert result.truncated
    assert result.total_matches > MAX_LIMIT


def test_not_truncated_when_every_match_is_returned(db: Path) -> None:
    result = search(db, "pg_blocking_pids", limit=MAX_LIMIT)
    assert 0 < result.total_matches <= MAX_LIMIT
    assert len(result.hits) == result.total_matches
    assert not result.truncated


def test_hits_are_ranked_best_first_and_snippets_bounded(db: Path) -> None:
    result = search(db, "autovacuum naptime workers", limit=10, max_snippet_chars=120)
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    assert all(len(h.snippet) <= 120 for h in result.hits)


def test_ensure_index_is_a_no_op_when_inputs_are_unchanged(
    small_inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    html, sops = small_inputs
    db = ensure_index(tmp_path / "cache" / "kb.sqlite", html, sops)
    before = db.stat()
    assert ensure_index(db, html, sops) == db
    after = db.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_ensure_index_rebuilds_when_a_sop_changes(
    small_inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    html, sops = small_inputs
    db = ensure_index(tmp_path / "kb.sqlite", html, sops)
    before = db.stat()
    assert search(db, "zymurgical").total_matches == 0

    (sops / "lock-waits.md").write_text("# Lock-wait triage\n\nA zymurgical step.\n")
    ensure_index(db, html, sops)

    assert db.stat().st_ino != before.st_ino
    assert [h.doc_id for h in search(db, "zymurgical").hits] == ["sop:lock-waits"]


def test_the_manual_is_hashed_once_per_process_until_a_page_changes(
    small_inputs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    html, sops = small_inputs
    db = ensure_index(tmp_path / "kb.sqlite", html, sops)
    read: list[str] = []
    real_read_bytes = Path.read_bytes

    def counting_read_bytes(self: Path) -> bytes:
        read.append(self.name)
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", counting_read_bytes)
    before = db.stat()
    ensure_index(db, html, sops)
    assert not [name for name in read if name.endswith(".html")]  # the runbooks are read
    assert db.stat().st_ino == before.st_ino

    page = html / "maintenance.html"
    page.write_text(page.read_text().replace("</p><p>", "</p><p>A zymurgical note. ", 1))
    ensure_index(db, html, sops)
    assert db.stat().st_ino != before.st_ino
    assert search(db, "zymurgical").total_matches == 1


def test_concurrent_ensure_index_calls_all_succeed(
    small_inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    html, sops = small_inputs
    db = tmp_path / "kb.sqlite"
    errors: list[BaseException] = []

    def run() -> None:
        try:
            ensure_index(db, html, sops)
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert search(db, "autovacuum").total_matches > 0
    assert not list(tmp_path.glob(".kb.sqlite.*.tmp"))


def test_missing_html_dir_names_the_package(tmp_path: Path) -> None:
    for call in (
        lambda: build_index(tmp_path / "kb.sqlite", html_dir=tmp_path / "absent"),
        lambda: ensure_index(tmp_path / "kb.sqlite", html_dir=tmp_path / "absent"),
    ):
        with pytest.raises(KnowledgeBaseUnavailable, match="postgresql-doc-15.*make deps"):
            call()
    assert not (tmp_path / "kb.sqlite").exists()


def test_search_without_an_index_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseUnavailable, match="ensure_index"):
        search(tmp_path / "none.sqlite", "vacuum")


def test_the_diagnosis_vocabulary_is_searchable_and_ranked_after_the_manual(db: Path) -> None:
    asked = search(db, "vocabulary work_mem lowered for a whole database").hits
    assert asked[0].doc_id == "vocabulary:database_work_mem_too_low"
    assert asked[0].source == "vocabulary" and "ALTER [DATABASE]" in asked[0].snippet
    # a plain question about a setting gets the manual first
    plain = search(db, "deadlock_timeout", limit=20).hits
    sources = [h.source for h in plain]
    assert sources[0] == "postgresql-docs" and "vocabulary" in sources
    assert sources.index("vocabulary") > max(i for i, s in enumerate(sources) if s != "vocabulary")
