"""The shell every results page shares: escaping, the page with its Content-Security-Policy,
plain tables, and the list of runs that sorts and filters itself in the browser.

Every string read from a run is an agent's input: it goes through ``esc`` and nowhere else.
A page runs no script but, where asked, the one inline script below, allowed by its hash:
should markup slip past the escaping, the browser still runs none of it. Nothing is fetched
from elsewhere: the pages work offline, from disk or from ``dbabench view --serve``.
"""

from __future__ import annotations

import base64
import hashlib
import html
from dataclasses import dataclass, field

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px;
       color: #222; padding: 1em 1.5em 3em; }
body.wide { max-width: 1600px; }
a { color: #0645ad; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.pass { color: #1b5e20; font-weight: 600; } .fail { color: #b71c1c; font-weight: 600; }
.muted { color: #777; } .warn { color: #8a5300; font-weight: 600; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; max-height: 40em;
      overflow: auto; font-size: 12px; }
img { max-width: 100%; border: 1px solid #eee; }
.kind-model { background: #f4f0ff; } .kind-thought { background: #fffbea; }
.kind-report { background: #eaf7ea; } .kind-failure, .kind-infra { background: #fdecec; }
.runs td.why { min-width: 18em; overflow-wrap: anywhere; }
.runs th[data-key] { cursor: pointer; user-select: none; white-space: nowrap; }
.runs th[aria-sort=ascending]::after { content: " \\25B2"; }
.runs th[aria-sort=descending]::after { content: " \\25BC"; }
.filters { display: flex; gap: .8em; align-items: center; flex-wrap: wrap; margin: .5em 0; }
.filters input { min-width: 20em; padding: .2em .4em; }
.label { white-space: nowrap; }
.label-clean-recovery { color: #1b5e20; } .label-unsafe-recovery { color: #8a5300; }
.label-remediation-failure, .label-diagnosis-failure, .label-went-for-the-judge { color: #b71c1c; }
.label-infra-error, .label-not-graded, .label-harness-error { color: #777; }
"""

LIST_SCRIPT = """
(function () {
  var table = document.getElementById("runs");
  if (!table) return;
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var q = document.getElementById("q"), verdict = document.getElementById("verdict");
  var shown = document.getElementById("shown"), order = null;
  var given = new URLSearchParams(location.hash.slice(1) || location.search.slice(1));
  q.value = given.get("q") || "";
  verdict.value = given.get("verdict") || "";
  function key(row, i) {
    var cell = row.cells[i], v = cell.getAttribute("data-sort");
    return v === null ? cell.textContent.trim().toLowerCase() : v;
  }
  function compare(a, b) {
    var x = Number(a), y = Number(b);
    if (a !== "" && b !== "" && !isNaN(x) && !isNaN(y)) return x - y;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  function sort(name, descending) {
    var i = heads.findIndex(function (h) { return h.getAttribute("data-key") === name; });
    if (i < 0) return;
    order = (descending ? "-" : "") + name;
    rows.sort(function (a, b) {
      return compare(key(a, i), key(b, i)) * (descending ? -1 : 1);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    heads.forEach(function (h, j) {
      if (j === i) h.setAttribute("aria-sort", descending ? "descending" : "ascending");
      else h.removeAttribute("aria-sort");
    });
  }
  function apply() {
    var words = q.value.toLowerCase().split(/\\s+/).filter(Boolean), n = 0;
    rows.forEach(function (r) {
      var text = r.textContent.toLowerCase();
      var ok = words.every(function (w) { return text.indexOf(w) >= 0; }) &&
               (!verdict.value || r.getAttribute("data-verdict") === verdict.value);
      r.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = n + " of " + rows.length + " runs shown";
    var state = new URLSearchParams();
    if (q.value) state.set("q", q.value);
    if (verdict.value) state.set("verdict", verdict.value);
    if (order) state.set("sort", order);
    try { history.replaceState(null, "", "#" + state.toString()); } catch (e) {}
  }
  heads.forEach(function (h) {
    var name = h.getAttribute("data-key");
    if (!name) return;
    h.tabIndex = 0;
    function click() {
      sort(name, order === name);
      apply();
    }
    h.addEventListener("click", click);
    h.addEventListener("keydown", function (e) { if (e.key === "Enter") click(); });
  });
  q.addEventListener("input", apply);
  verdict.addEventListener("change", apply);
  var asked = given.get("sort");
  if (asked) sort(asked.replace(/^-/, ""), asked.charAt(0) === "-");
  apply();
})();
"""
SCRIPT_HASH = base64.b64encode(hashlib.sha256(LIST_SCRIPT.encode()).digest()).decode()


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def page(title: str, body: str, *, script: bool = False, wide: bool = False,
         style: str = "") -> str:
    """A whole page. ``script``: the list's sorting and filtering (LIST_SCRIPT, allowed by its
    hash and nothing else); without it, a CSP that forbids every script. ``style``: CSS of the
    page's own, after STYLE."""
    scripts = f" script-src 'sha256-{SCRIPT_HASH}';" if script else ""
    tail = f"<script>{LIST_SCRIPT}</script>\n" if script else ""
    attrs = " class=\"wide\"" if wide else ""
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
            f" img-src 'self';{scripts} style-src 'unsafe-inline'\">"
            f"<title>{esc(title)}</title><style>{STYLE}{style}</style></head>\n"
            f"<body{attrs}>\n{body}\n"
            f"{tail}</body></html>\n")


def table(header: list[str], rows: list[list[str]], classes: list[str] | None = None,
          attrs: str = "") -> str:
    """``rows`` hold HTML already escaped; ``classes``: one CSS class per row."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    thead = f"<thead><tr>{head}</tr></thead>" if any(header) else ""
    body = "".join(
        (f"<tr class=\"{esc(cls)}\">" if cls else "<tr>")
        + "".join(f"<td>{v}</td>" for v in row) + "</tr>\n"
        for row, cls in zip(rows, classes or [""] * len(rows)))
    return f"<table{attrs}>{thead}<tbody>\n{body}</tbody></table>\n"


def mark(ok: bool) -> str:
    return "<span class=\"pass\">PASS</span>" if ok else "<span class=\"fail\">FAIL</span>"


@dataclass(frozen=True)
class Cell:
    """One cell of the list of runs: its HTML (escaped already) and what it sorts by."""

    html: str
    sort: str | float | None = None


@dataclass
class RunRow:
    verdict: str
    """The row's label (``clean recovery``, ``infra error``...): what the verdict menu picks."""
    cells: dict[str, Cell] = field(default_factory=dict)


def label(verdict: str) -> str:
    cls = "label-" + "-".join(verdict.split())
    return f"<span class=\"label {esc(cls)}\">{esc(verdict)}</span>"


def runs_list(columns: list[str], rows: list[RunRow], *, interactive: bool) -> str:
    """The list of runs, one row each. ``interactive``: with a text filter and a verdict menu
    (the page then needs ``page(..., script=True)``); every column header sorts. The state is
    kept in the address (``#q=...&verdict=...&sort=-steps``), so a filtered list can be linked."""
    head = "".join(f"<th data-key=\"{esc(c)}\">{esc(c)}</th>" if interactive
                   else f"<th>{esc(c)}</th>" for c in columns)
    lines = []
    for row in rows:
        tds = []
        for c in columns:
            cell = row.cells.get(c, Cell(""))
            value = cell.sort if isinstance(cell.sort, str) else repr(cell.sort)
            sort = ("" if cell.sort is None or not interactive
                    else f" data-sort=\"{esc(value)}\"")
            extra = " class=\"why\"" if c == "why" else ""
            tds.append(f"<td{sort}{extra}>{cell.html}</td>")
        lines.append(f"<tr data-verdict=\"{esc(row.verdict)}\">{''.join(tds)}</tr>\n")
    controls = ""
    if interactive:
        verdicts = sorted({r.verdict for r in rows})
        options = "".join(f"<option value=\"{esc(v)}\">{esc(v)}</option>" for v in verdicts)
        controls = ("<div class=\"filters\"><input id=\"q\" type=\"search\" placeholder=\"filter:"
                    " words of any column\" aria-label=\"filter\"><select id=\"verdict\""
                    f" aria-label=\"verdict\"><option value=\"\">every verdict</option>{options}"
                    "</select><span id=\"shown\" class=\"muted\"></span>"
                    "<span class=\"muted\">click a column to sort</span></div>")
    return (f"{controls}<table id=\"runs\" class=\"runs\"><thead><tr>{head}</tr></thead>"
            f"<tbody>\n{''.join(lines)}</tbody></table>\n")
