"""The ``query_knowledge_base`` backend: full-text search over the PostgreSQL 15 manual and the
generic runbooks shipped in ``dbabench/knowledge/sops``.

The corpus is deliberately limited to what a real DBA would have on a shelf. Nothing about
benchmark scenarios may ever be indexed here, or the tool would hand the agent the answers.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Literal

from dbabench.errors import PermanentInfraError
from dbabench.model import taxonomy
from dbabench.model.base import Model
from dbabench.paths import cache_dir

DEFAULT_HTML_DIR = Path("/usr/share/doc/postgresql-doc-15/html")
DEFAULT_SOPS_DIR = Path(__file__).resolve().parent.parent / "knowledge" / "sops"

# Part of the input digest, so changing how documents are chunked invalidates cached indexes.
SCHEMA_VERSION = "2"

MAX_LIMIT = 20
# Bounds the MATCH expression an agent can make SQLite evaluate.
MAX_QUERY_TERMS = 32
SNIPPET_MIN_CHARS = 40
SNIPPET_MAX_CHARS = 2000
SOP_SECTION = "Operational runbooks"
VOCABULARY_SECTION = "Diagnosis vocabulary"

# bm25() takes one weight per column, in table order: doc_id, title, section_path, body, source.
# A term in a heading says far more about what a section is about than one in passing prose.
_BM25_WEIGHTS = "0.0, 5.0, 3.0, 1.0, 0.0"

Source = Literal["postgresql-docs", "sop", "vocabulary"]


class IndexBuildStopped(RuntimeError):
    """The build was asked to stop (its run was interrupted); nothing was written."""


class KnowledgeBaseUnavailable(PermanentInfraError, RuntimeError):
    """The documentation to index, or the built index, is not on this machine."""


class KnowledgeHit(Model):
    doc_id: str
    title: str
    section_path: list[str]
    snippet: str
    score: float
    source: Source


class KnowledgeResult(Model):
    query: str
    hits: list[KnowledgeHit]
    truncated: bool
    total_matches: int


class IndexStats(Model):
    db_path: Path
    doc_version: str
    digest: str
    html_files: int
    sop_files: int
    chunks: int
    size_bytes: int
    build_seconds: float


def default_index_path() -> Path:
    return cache_dir() / "kb" / "postgresql-15.sqlite"


# --------------------------------------------------------------------------- HTML parsing

# Each of these DocBook wrappers is a citable unit with its own anchor and heading. Tables are
# units too: the function and view references are one table each, and left inside their section
# they would drown it (bm25 penalises long documents) and each other.
_SECTION_CLASSES = frozenset(
    {
        "preface", "part", "partintro", "chapter", "appendix", "reference",
        "sect1", "sect2", "sect3", "sect4", "simplesect",
        "refentry", "refsect1", "refsect2", "refsect3", "table",
    }
)  # fmt: skip
# Navigation chrome and generated lists: they repeat titles of other pages, so indexing them
# would make every table of contents match every query.
_SKIP_CLASSES = frozenset(
    {
        "navheader", "navfooter", "toc", "index", "indexdiv",
        "list-of-tables", "list-of-figures", "list-of-examples", "legalnotice",
    }
)  # fmt: skip
# Block-level tags separate words; without a space `<td>a</td><td>b</td>` would index "ab".
_BLOCK_TAGS = frozenset(
    {
        "p", "div", "br", "hr", "li", "dt", "dd", "tr", "td", "th", "pre", "table",
        "ul", "ol", "dl", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6",
    }
)  # fmt: skip
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_NUMBERING = re.compile(
    r"^(?:(?:Chapter|Part|Appendix|Table)\s+)?(?:[IVXLC]+|[A-Z]|\d+)(?:\.\d+)*\.\s+"
)
_SPACES = re.compile(r"\s+")


def _clean(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _heading(text: str) -> str:
    """Drop DocBook numbering: ``25.1.3. Updating Planner Statistics`` -> ``Updating ...``."""
    return _NUMBERING.sub("", _clean(text))


@dataclass
class _Section:
    anchor: str
    order: int
    # Set for a term of a <dl> (a GUC, a libpq parameter, a glossary term): the nesting depth of
    # its list. Such a section has no <div> of its own and ends where its description ends.
    dl_depth: int | None = None
    heading: str | None = None
    text: list[str] = field(default_factory=list)


@dataclass
class _Chunk:
    anchor: str
    order: int
    headings: list[str]
    body: str


class _PageParser(HTMLParser):
    """Splits one page of the manual into per-section chunks and reads its navigation links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.up_href: str | None = None
        self.home_title: str | None = None
        self.chunks: list[_Chunk] = []
        # One entry per open <div>: the section it opened, or None; True marks skipped chrome.
        self._divs: list[_Section | bool | None] = []
        self._sections: list[_Section] = []
        self._skip_depth = 0
        self._dl_depth = 0
        self._in_title = False
        self._title_parts: list[str] = []
        self._heading_tag: str | None = None
        self._heading_parts: list[str] = []
        self._order = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "title":
            self._in_title = True
        elif tag == "a":
            self._read_nav_link(attr)
        if tag == "div":
            self._open_div(attr)
            return
        if self._skip_depth:
            return
        if tag == "dl":
            self._dl_depth += 1
        elif tag == "dt":
            # The next term of the same list ends the previous term's description.
            self._finish_terms(self._dl_depth)
            if attr.get("id"):
                self._open_section(attr["id"] or "", dl_depth=self._dl_depth)
        # A table's caption is a <p class="title">; a list term's heading is its <dt>.
        is_title = (
            tag in _HEADINGS
            or (tag == "dt" and bool(attr.get("id")))
            or (tag == "p" and "title" in (attr.get("class") or "").split())
        )
        if is_title and self._sections and self._sections[-1].heading is None:
            self._heading_tag = tag
            self._heading_parts = []
        elif tag in _BLOCK_TAGS:
            self._emit(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_TAGS and tag != "div" and not self._skip_depth:
            self._emit(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            self.title = _clean("".join(self._title_parts))
        elif tag == "div":
            self._close_div()
        elif self._skip_depth:
            return
        elif tag == self._heading_tag:
            self._heading_tag = None
            if self._sections:
                self._sections[-1].heading = _heading("".join(self._heading_parts))
        elif tag == "dl":
            self._finish_terms(self._dl_depth)
            self._dl_depth -= 1
        elif tag in _BLOCK_TAGS:
            self._emit(" ")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title_parts.append(data)
        elif self._skip_depth:
            return
        elif self._heading_tag is not None:
            self._heading_parts.append(data)
        else:
            self._emit(data)

    def close(self) -> None:
        super().close()
        while self._divs:
            self._close_div()

    def _read_nav_link(self, attr: dict[str, str | None]) -> None:
        key = attr.get("accesskey")
        if key == "u" and self.up_href is None:
            self.up_href = (attr.get("href") or "").split("#", 1)[0] or None
        elif key == "h" and self.home_title is None:
            self.home_title = attr.get("title")

    def _open_div(self, attr: dict[str, str | None]) -> None:
        classes = set((attr.get("class") or "").split())
        if self._skip_depth or classes & _SKIP_CLASSES:
            self._skip_depth += 1
            self._divs.append(True)
            return
        anchor = attr.get("id")
        if anchor and classes & _SECTION_CLASSES:
            self._divs.append(self._open_section(anchor))
        else:
            self._emit(" ")
            self._divs.append(None)

    def _close_div(self) -> None:
        if not self._divs:
            return
        entry = self._divs.pop()
        if entry is True:
            self._skip_depth -= 1
        elif isinstance(entry, _Section):
            self._finish_terms(0)
            self._finish_section()
        else:
            self._emit(" ")

    def _open_section(self, anchor: str, dl_depth: int | None = None) -> _Section:
        section = _Section(anchor=anchor, order=self._order, dl_depth=dl_depth)
        self._order += 1
        self._sections.append(section)
        return section

    def _finish_terms(self, min_depth: int) -> None:
        """End the open list-term sections whose list is at least ``min_depth`` deep."""
        while self._sections:
            depth = self._sections[-1].dl_depth
            if depth is None or depth < min_depth:
                return
            self._finish_section()

    def _finish_section(self) -> None:
        headings = [s.heading for s in self._sections if s.heading]
        section = self._sections.pop()
        body = _clean("".join(section.text))
        if body:
            self.chunks.append(_Chunk(section.anchor, section.order, headings, body))

    def _emit(self, text: str) -> None:
        if self._sections:
            self._sections[-1].text.append(text)


@dataclass
class _Page:
    name: str
    title: str
    up_href: str | None
    chunks: list[_Chunk]


def _parse_page(name: str, html: str) -> tuple[_Page, str | None]:
    parser = _PageParser()
    parser.feed(html)
    parser.close()
    return _Page(name, parser.title, parser.up_href, parser.chunks), parser.home_title


def _ancestors(name: str, pages: dict[str, _Page]) -> list[str]:
    """Titles of the chapter, part, ... above a page, outermost first, without the book itself."""
    titles: list[str] = []
    seen = {name}
    up = pages[name].up_href
    while up and up in pages and up not in seen:
        seen.add(up)
        page = pages[up]
        if page.up_href is None:  # the book's root page: its title is the doc version
            break
        titles.append(_heading(page.title))
        up = page.up_href
    return titles[::-1]


# --------------------------------------------------------------------------- SOPs


@dataclass
class _Sop:
    slug: str
    title: str
    body: str


def _parse_sop(path: Path, text: str) -> _Sop:
    first, _, rest = text.lstrip().partition("\n")
    if not first.startswith("# "):
        raise ValueError(f"{path}: a runbook must start with a '# Title' line")
    return _Sop(slug=path.stem, title=first[2:].strip(), body=rest.strip())


# --------------------------------------------------------------------------- building


def _html_files(html_dir: Path) -> list[Path]:
    files = sorted(html_dir.glob("*.html")) if html_dir.is_dir() else []
    if not files:
        raise KnowledgeBaseUnavailable(
            f"PostgreSQL documentation not found in {html_dir}; install the postgresql-doc-15 "
            "package (`make deps` does this, or `apt-get install postgresql-doc-15`)"
        )
    return files


def _sop_files(sops_dir: Path) -> list[Path]:
    return sorted(sops_dir.glob("*.md")) if sops_dir.is_dir() else []


def _inputs(html_dir: Path, sops_dir: Path, *,
            html: bool = True) -> Iterator[tuple[str, Path, bytes]]:
    """Every input file with a label that stays stable across machines, for hashing and parsing."""
    for path in _html_files(html_dir) if html else []:
        yield "html", path, path.read_bytes()
    for path in _sop_files(sops_dir):
        yield "sop", path, path.read_bytes()
    # the report contract's vocabulary, so that an agent can look up what a cause id means
    yield "vocabulary", taxonomy.TAXONOMY_FILE, taxonomy.TAXONOMY_FILE.read_bytes()


def _digest_update(digest: hashlib._Hash, kind: str, path: Path, data: bytes) -> None:
    # Length-prefixed, so moving bytes between a name and a body cannot collide.
    for part in (kind.encode(), path.name.encode(), data):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)


_HTML_DIGESTS: dict[tuple[tuple[str, int, int], ...], bytes] = {}
"""The documentation's share of the digest, by its files' paths, sizes and modification times:
every run checks the index, and hashing the package's 18 MB each time was a battery's cost.
The runbooks and the vocabulary, small and edited here (within one timestamp tick, too), are
hashed every time."""


def input_digest(html_dir: Path = DEFAULT_HTML_DIR, sops_dir: Path = DEFAULT_SOPS_DIR) -> str:
    pages = _html_files(html_dir)
    signature = tuple((str(p), (st := p.stat()).st_size, st.st_mtime_ns) for p in pages)
    if signature not in _HTML_DIGESTS:
        part = hashlib.sha256()
        for path in pages:
            _digest_update(part, "html", path, path.read_bytes())
        _HTML_DIGESTS[signature] = part.digest()
    digest = hashlib.sha256(SCHEMA_VERSION.encode())
    digest.update(_HTML_DIGESTS[signature])
    for kind, path, data in _inputs(html_dir, sops_dir, html=False):
        _digest_update(digest, kind, path, data)
    return digest.hexdigest()


_SCHEMA = """
CREATE VIRTUAL TABLE chunks USING fts5(
    doc_id UNINDEXED, title, section_path, body, source UNINDEXED,
    tokenize = 'porter unicode61'
);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise IndexBuildStopped("the knowledge base index build was stopped")


def build_index(
    db_path: Path, html_dir: Path = DEFAULT_HTML_DIR, sops_dir: Path = DEFAULT_SOPS_DIR,
    stop: threading.Event | None = None,
) -> IndexStats:
    """Parse the manual and the runbooks into a fresh FTS5 database at ``db_path``.

    The database is written beside its destination and renamed into place, so a reader (or a
    concurrent builder) only ever sees a complete index. Once ``stop`` is set the build gives
    up between two files (IndexBuildStopped): a run interrupted meanwhile must not wait ~10 s.
    """
    started = time.monotonic()
    # before reading: a file changed during the build leaves a digest that no longer matches,
    # so the next check builds again
    digest = input_digest(html_dir, sops_dir)
    pages: dict[str, _Page] = {}
    sops: list[_Sop] = []
    doc_version: str | None = None
    for kind, path, data in _inputs(html_dir, sops_dir):
        _check(stop)
        text = data.decode("utf-8", errors="replace")
        if kind == "vocabulary":
            continue
        if kind == "sop":
            sops.append(_parse_sop(path, text))
            continue
        page, home_title = _parse_page(path.name, text)
        pages[page.name] = page
        doc_version = doc_version or home_title

    rows: list[tuple[str, str, str, str, str]] = []
    for name, page in pages.items():
        ancestors = _ancestors(name, pages)
        for chunk in sorted(page.chunks, key=lambda c: c.order):
            path = " > ".join(ancestors + chunk.headings)
            rows.append((f"{name}#{chunk.anchor}", page.title, path, chunk.body, "postgresql-docs"))
    for sop in sops:
        path = " > ".join([SOP_SECTION, sop.title])
        rows.append((f"sop:{sop.slug}", sop.title, path, sop.body, "sop"))
    # one row a cause, so that a search returns the entries it is about
    for area, title in taxonomy.taxonomy().areas.items():
        for entry in taxonomy.area_entries(area):
            cause = entry.split(":", 1)[0]
            rows.append((f"vocabulary:{cause}", f"{VOCABULARY_SECTION}: {cause}",
                         f"{VOCABULARY_SECTION} > {title}", entry, "vocabulary"))

    db_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{db_path.name}.", suffix=".tmp", dir=db_path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    meta = {
        "doc_version": doc_version or "PostgreSQL Documentation",
        "digest": digest,
        "schema_version": SCHEMA_VERSION,
        "html_files": str(len(pages)),
        "sop_files": str(len(sops)),
    }
    try:
        _check(stop)
        with closing(sqlite3.connect(tmp)) as conn:
            # The file is private until renamed, so durability comes from the rename, not WAL.
            conn.execute("PRAGMA journal_mode = OFF")
            conn.execute("PRAGMA synchronous = OFF")
            conn.executescript(_SCHEMA)
            conn.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?)", rows)
            conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            conn.execute("INSERT INTO chunks(chunks) VALUES ('optimize')")
            conn.commit()
        tmp.chmod(0o644)
        os.replace(tmp, db_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return IndexStats(
        db_path=db_path,
        doc_version=meta["doc_version"],
        digest=meta["digest"],
        html_files=len(pages),
        sop_files=len(sops),
        chunks=len(rows),
        size_bytes=db_path.stat().st_size,
        build_seconds=round(time.monotonic() - started, 3),
    )


def _connect_ro(db_path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)


def _stored_digest(db_path: Path) -> str | None:
    if not db_path.is_file():
        return None
    try:
        with closing(_connect_ro(db_path)) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'digest'").fetchone()
    except sqlite3.DatabaseError:  # truncated or foreign file: rebuild over it
        return None
    return row[0] if row else None


@contextmanager
def _build_lock(db_path: Path, stop: threading.Event | None) -> Iterator[None]:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with open(db_path.with_name(db_path.name + ".lock"), "a") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                # another process builds it: poll, so that a stop is heard while waiting
                _check(stop)
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure_index(
    db_path: Path | None = None,
    html_dir: Path = DEFAULT_HTML_DIR,
    sops_dir: Path = DEFAULT_SOPS_DIR,
    stop: threading.Event | None = None,
) -> Path:
    """Return a current index, building it only if missing or built from different inputs;
    ``stop`` abandons the build (see build_index)."""
    db_path = db_path or default_index_path()
    digest = input_digest(html_dir, sops_dir)
    if _stored_digest(db_path) == digest:
        return db_path
    # Serialise builders; whoever waited re-checks, since the holder may have just built it.
    with _build_lock(db_path, stop):
        if _stored_digest(db_path) != digest:
            build_index(db_path, html_dir, sops_dir, stop)
    return db_path


# --------------------------------------------------------------------------- searching

_TERM = re.compile(r"\w+")


def match_expression(query: str) -> str | None:
    """A MATCH expression that FTS5 accepts for any input, or None if nothing is searchable.

    Every word becomes a quoted string, so FTS5 operators (AND, NOT, NEAR, ``*``, ``:``, quotes)
    in agent input are searched for as text instead of parsed. ``pg_stat_activity`` stays one
    quoted string, which the tokenizer turns into the phrase "pg stat activity".
    """
    terms = list(dict.fromkeys(t.lower() for t in _TERM.findall(query)))[:MAX_QUERY_TERMS]
    if not terms:
        return None
    return " OR ".join(f'"{term}"' for term in terms)


def search(
    db_path: Path, query: str, limit: int = 5, max_snippet_chars: int = 300
) -> KnowledgeResult:
    """Rank sections of the manual and runbooks against ``query``.

    ``limit`` is clamped to 1..20 and ``max_snippet_chars`` to 40..2000 rather than rejected,
    because an agent asking for 100 hits should get 20, not an error. A blank query is a
    ValueError; a query with no word characters (``"``, ``*``) simply matches nothing.
    """
    if not query.strip():
        raise ValueError("query must contain at least one search term")
    limit = max(1, min(MAX_LIMIT, limit))
    max_chars = max(SNIPPET_MIN_CHARS, min(SNIPPET_MAX_CHARS, max_snippet_chars))
    expression = match_expression(query)
    if expression is None:
        return KnowledgeResult(query=query, hits=[], truncated=False, total_matches=0)
    if not db_path.is_file():
        raise KnowledgeBaseUnavailable(
            f"knowledge base index {db_path} does not exist; build it with ensure_index()"
        )
    # snippet() counts tokens, not characters; ~6 characters per token, at most 64 tokens.
    snippet_tokens = max(8, min(64, max_chars // 6))
    with closing(_connect_ro(db_path)) as conn:
        (total,) = conn.execute(
            "SELECT count(*) FROM chunks WHERE chunks MATCH ?", (expression,)
        ).fetchone()
        rows = conn.execute(
            f"""
            SELECT doc_id, title, section_path, source,
                   snippet(chunks, 3, '[', ']', '…', ?),
                   bm25(chunks, {_BM25_WEIGHTS}) AS rank
            FROM chunks WHERE chunks MATCH ?
            ORDER BY source = 'vocabulary' AND NOT ?, rank LIMIT ?
            """,
            # the report's vocabulary comes after the manual, unless it is what is asked for
            (snippet_tokens, expression, "vocabulary" in query.lower(), limit),
        ).fetchall()
    hits = [
        KnowledgeHit(
            doc_id=doc_id,
            title=title,
            section_path=section_path.split(" > ") if section_path else [],
            snippet=_shorten(_clean(snippet), max_chars),
            # bm25 is lower-is-better; flip it so a larger score means a better hit.
            score=round(-rank, 4),
            source=source,
        )
        for doc_id, title, section_path, source, snippet, rank in rows
    ]
    return KnowledgeResult(
        query=query, hits=hits, truncated=total > len(hits), total_matches=total
    )


def _shorten(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1]
    space = cut.rfind(" ")
    if space > max_chars // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"
