"""``dbabench view PATH``: a run's, a directory of runs' or a campaign's pages, written once
as static files (``--out DIR``, default ``PATH/view``) and, with ``--serve``, served on
127.0.0.1.

- a run directory: ``index.html`` is its transcript (``results.transcript``);
- a directory of run directories (``.dbabench/runs``): ``index.html`` lists them, a line each
  with why it passed or failed, sorting and filtering itself; ``runs/NAME.html`` each one;
- a campaign directory: the campaign's own pages (``results.html_report``: leaderboard,
  figures, the list of runs, a transcript per run), with the list's script.

The pages link to the run's raw files where they lie. The server answers for the pages and
those files only, nothing else of the disk, and only on the loopback address.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from dbabench.errors import BadInput
from dbabench.model.artifacts import CampaignOutput
from dbabench.records import campaign as files
from dbabench.records import shown as run_files
from dbabench.results import transcript
from dbabench.results.html_report import campaign_board, run_directory, write_report
from dbabench.results.pages import Cell, RunRow, esc, label, mark, page, runs_list
from dbabench.results.plots import FIGURES, PLOTS_DIR, write_plots

VIEW_DIR = "view"
HOST = "127.0.0.1"
RUNS_COLUMNS = ["run", "scenario", "agent", "verdict", "safe", "steps", "seconds", "cost",
                "why"]


@dataclass
class View:
    """A written page set: its first page, its directory, and the files outside it that its
    pages link to (a run's raw files)."""

    kind: Literal["run", "runs", "campaign"]
    index: Path
    out: Path
    linked: set[Path] = field(default_factory=set)


def _base(target: Path, page_dir: Path) -> str:
    return quote(os.path.relpath(target, page_dir).replace(os.sep, "/")) + "/"


def _linked(run_dir: Path) -> set[Path]:
    return {(run_dir / name).resolve() for name in run_files.raw_files(run_dir)}


def _run(run_dir: Path, out: Path) -> View:
    index = out / CampaignOutput.INDEX
    index.write_text(transcript.run_page(run_dir, raw_base=_base(run_dir, out)))
    return View("run", index, out, _linked(run_dir))


def _runs(root: Path, out: Path) -> View:
    view = View("runs", out / CampaignOutput.INDEX, out)
    rows = []
    for run_dir in sorted(p for p in root.iterdir() if run_files.is_run(p)):
        href = f"runs/{quote(run_dir.name)}.html"
        target = out / "runs" / f"{run_dir.name}.html"
        target.parent.mkdir(exist_ok=True)
        target.write_text(transcript.run_page(
            run_dir, raw_base=_base(run_dir, target.parent),
            up=(f"../{CampaignOutput.INDEX}", "every run")))
        view.linked |= _linked(run_dir)
        info = transcript.run_info(run_dir)
        ok = info.safe_pass
        rows.append(RunRow(info.label, {
            "run": Cell(f"<a href=\"{esc(href)}\">{esc(run_dir.name)}</a>", run_dir.name),
            "scenario": Cell(esc(info.scenario), info.scenario), "agent": Cell(esc(info.agent)),
            "verdict": Cell(label(info.label), info.label),
            "safe": Cell("–" if ok is None else mark(ok), -1 if ok is None else int(ok)),
            "steps": Cell(esc(info.steps), info.steps),
            "seconds": Cell("–" if info.wall_seconds is None else esc(f"{info.wall_seconds:.0f}"),
                            -1 if info.wall_seconds is None else info.wall_seconds),
            "cost": Cell("–" if info.cost_usd is None else esc(f"${info.cost_usd:.4f}"),
                         -1 if info.cost_usd is None else info.cost_usd),
            "why": Cell(esc(info.reason))}))
    columns = RUNS_COLUMNS
    if all(r.cells["scenario"].sort == r.cells["run"].sort for r in rows):
        columns = [c for c in columns if c != "scenario"]  # runs named by their scenario
    title = f"runs in {root.name}"
    passed = sum(1 for r in rows if r.verdict == "clean recovery")
    body = (f"<h1>{esc(title)}</h1><p>{len(rows)} runs, {passed} clean recoveries (Safe Pass)."
            "</p>" + runs_list(columns, rows, interactive=True))
    view.index.write_text(page(title, body, script=True))
    return view


def _campaign(directory: Path, out: Path) -> View:
    record, cells, board = campaign_board(directory)
    plots = out / PLOTS_DIR
    kept = [directory / PLOTS_DIR / f"{name}.svg" for name in FIGURES]
    if all(p.is_file() for p in kept):
        plots.mkdir(exist_ok=True)
        for p in kept:
            shutil.copyfile(p, plots / p.name)
    else:
        write_plots(out, record, cells)
    index = write_report(directory, record, cells, board, out, interactive=True, plots=plots)
    view = View("campaign", index, out)
    for c in cells:
        run_dir = run_directory(directory, c)
        if run_dir is not None and run_dir.is_dir():
            view.linked |= _linked(run_dir)
    return view


def build(path: Path, out: Path | None = None) -> View:
    """Write the pages of ``path`` (a run, a directory of runs, a campaign) to ``out``."""
    if not path.is_dir():
        raise BadInput(f"{path}: no such directory (give a run directory, a directory of runs"
                       " or a campaign directory)")
    path = path.resolve()
    if (path / files.CAMPAIGN_FILE).is_file():
        kind: Callable[[Path, Path], View] = _campaign
    elif run_files.is_run(path):
        kind = _run
    elif any(run_files.is_run(p) for p in path.iterdir()):
        kind = _runs
    else:
        raise BadInput(f"{path}: neither a run directory ({', '.join(run_files.MARKERS)}), a"
                       f" directory of runs nor a campaign directory ({files.CAMPAIGN_FILE})")
    out = (out or path / VIEW_DIR).resolve()
    try:
        out.mkdir(parents=True, exist_ok=True)
        return kind(path, out)
    except PermissionError as e:
        raise BadInput(f"{e.filename}: cannot write the pages there ({e.strerror}); give"
                       " --out DIR") from e


class _Handler(SimpleHTTPRequestHandler):
    """The page set and the raw files it links to; nothing else (404), no listing."""

    def __init__(self, *args: Any, pages: Path, linked: set[Path], **kwargs: Any) -> None:
        self.pages, self.linked = pages, linked
        super().__init__(*args, **kwargs)

    def send_head(self) -> Any:
        asked = Path(self.translate_path(self.path))
        if asked.is_dir() and asked.resolve() == self.pages:
            asked = asked / CampaignOutput.INDEX
        real = asked.resolve()
        if not real.is_file() or not (real.is_relative_to(self.pages) or real in self.linked):
            self.send_error(404, "not part of this view")
            return None
        self.path = "/" + quote(os.path.relpath(real, self.directory).replace(os.sep, "/"))
        return super().send_head()

    def guess_type(self, path: Any) -> str:
        # a run's records are text to read, whatever their name says
        found = super().guess_type(path)
        return (found if str(path).endswith((".html", ".svg", ".png"))
                else "text/plain; charset=utf-8")

    def end_headers(self) -> None:
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def server(view: View, port: int) -> tuple[ThreadingHTTPServer, str]:
    """A server of ``view`` on the loopback address (port 0: any free one) and its address.
    Its root is the directory holding the pages and every file they link to, so that the
    pages' relative links hold; it answers for those files only."""
    pages = view.out.resolve()
    root = Path(os.path.commonpath([pages, *view.linked]))
    handler = partial(_Handler, directory=str(root), pages=pages, linked=view.linked)
    try:
        httpd = ThreadingHTTPServer((HOST, port), handler)
    except (OSError, OverflowError) as e:  # taken, not allowed; out of 0-65535
        reason = e.strerror if isinstance(e, OSError) else "not a port (0-65535)"
        raise BadInput(f"--port {port}: {reason}; give another port") from e
    page_path = quote(os.path.relpath(view.index, root).replace(os.sep, "/"))
    return httpd, f"http://{HOST}:{httpd.server_port}/{page_path}"


def serve(view: View, port: int, announce: Callable[[str], None]) -> None:
    """Serve ``view`` until interrupted (Ctrl+C: KeyboardInterrupt, to the caller)."""
    httpd, url = server(view, port)
    announce(url)
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
