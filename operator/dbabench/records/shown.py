"""A run directory read to be shown (``dbabench view``), where ``records.run`` reads it to be
judged again: what can be shown is, whatever else is broken.

A run directory is input: an agent wrote its report and most of its trace, and a run cut short
leaves files half written or missing. Every function here answers what it can read and raises
``Unreadable`` (a ValueError) with the file's name and why for a file that exists and does not
read; a symbolic link is read as no file (a run writes none).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from dbabench.model.artifacts import RunArtifact, rescored_evaluation
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.run import RunRecord
from dbabench.model.trace import TraceEvent

RUN = RunArtifact.RUN
MANIFEST = RunArtifact.MANIFEST
TASK_JSON = RunArtifact.TASK_JSON
TRACE = RunArtifact.TRACE
REPORT = RunArtifact.REPORT
EVALUATION = RunArtifact.EVALUATION
MARKERS = (RUN, TRACE, EVALUATION, REPORT)
"""A directory holding one of these is a run's."""
RAW = (EVALUATION, REPORT, TRACE, RunArtifact.TASK, TASK_JSON, RUN, MANIFEST,
       RunArtifact.ADMISSION, RunArtifact.AGENT, RunArtifact.AGENT_LOG, RunArtifact.BUSINESS_LOG,
       RunArtifact.WORKLOAD_LOG)
"""The files a run page links to, in the order a reader wants them; never the connection
(``tools.json``: the live run's bearer token) nor what only the harness needs (its pids)."""
RESCORED = rescored_evaluation("*")
"""``dbabench rescore``'s verdicts, beside the original (linked; the page shows the original)."""
LOG_DIRS = ("logs", "monitoring")
MAX_MANIFEST_BYTES = 1 << 20


class Unreadable(ValueError):
    """A run's file that exists and does not read: the message names it and says why."""


def _text(run_dir: Path, name: str) -> str | None:
    path = run_dir / name
    if path.is_symlink() or not path.is_file():
        return None  # a run writes files, never links: a link is no record of it
    try:
        return path.read_text(errors="replace")
    except OSError as e:
        raise Unreadable(f"{name}: {e.strerror}") from e


def is_run(path: Path) -> bool:
    return path.is_dir() and any((path / name).is_file() for name in MARKERS)


M = TypeVar("M", bound=BaseModel)


def _record(run_dir: Path, name: str, model: type[M]) -> M | None:
    text = _text(run_dir, name)
    try:
        return None if text is None else model.model_validate_json(text)
    except ValidationError as e:
        raise Unreadable(f"{name}: {e.errors()[0]['msg']}") from e


def record(run_dir: Path) -> RunRecord | None:
    return _record(run_dir, RUN, RunRecord)


def evaluation(run_dir: Path) -> EvaluationResult | None:
    """The verdict; None for a run that was not graded (cut short, or a trace kept alone)."""
    return _record(run_dir, EVALUATION, EvaluationResult)


def report(run_dir: Path) -> Any:
    """``report.json`` as the agent filed it (any JSON: shown, never trusted); None: none."""
    text = _text(run_dir, REPORT)
    try:
        return None if text is None else json.loads(text)
    except json.JSONDecodeError as e:
        raise Unreadable(f"{REPORT}: not JSON ({e.msg})") from e


def steps(run_dir: Path) -> tuple[list[TraceEvent], list[str]]:
    """The trace's events in order, and what did not read (a line each, with its number): one
    bad line costs that step, not the page. A last line still being written is left out."""
    text = _text(run_dir, TRACE)
    if text is None:
        return [], []
    events, problems = [], []
    lines = text.split("\n")
    for number, line in enumerate(lines[:-1], 1):  # the last piece: "" or a line half written
        if not line.strip():
            continue
        try:
            events.append(TraceEvent.model_validate_json(line))
        except ValidationError as e:
            problems.append(f"{TRACE} line {number}: {e.errors()[0]['msg']}")
    events.sort(key=lambda e: e.seq)
    return events, problems


def symptom(run_dir: Path) -> str:
    """The alert the agent was given (``task.json``), or "" where the run kept none."""
    text = _text(run_dir, TASK_JSON)
    try:
        task = json.loads(text) if text is not None else {}
    except json.JSONDecodeError as e:
        raise Unreadable(f"{TASK_JSON}: not JSON ({e.msg})") from e
    found = task.get("symptom") if isinstance(task, dict) else None
    return found if isinstance(found, str) else ""


def expected(run_dir: Path) -> dict[str, Any] | None:
    """What the grader expected of the diagnosis: the ``spec.diagnosis`` section of the run's
    own manifest as written (conditions, alsoTrue, contradictions), read as plain YAML so that
    a manifest of an older format still shows; None: the run kept no manifest."""
    path = run_dir / MANIFEST
    if path.is_symlink() or not path.is_file():
        return None
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise Unreadable(f"{MANIFEST}: larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        manifest = yaml.safe_load(_text(run_dir, MANIFEST) or "")
    except yaml.YAMLError as e:
        raise Unreadable(f"{MANIFEST}: not YAML ({e})") from e
    spec = manifest.get("spec") if isinstance(manifest, dict) else None
    diagnosis = spec.get("diagnosis") if isinstance(spec, dict) else None
    return diagnosis if isinstance(diagnosis, dict) else None


def raw_files(run_dir: Path) -> list[str]:
    """The run's files worth a link, relative to it: RAW, the re-scores, then the logs."""
    found = [name for name in RAW
             if (run_dir / name).is_file() and not (run_dir / name).is_symlink()]
    found += sorted(p.name for p in run_dir.glob(RESCORED) if p.is_file() and not p.is_symlink())
    for sub in LOG_DIRS:
        if (run_dir / sub).is_dir() and not (run_dir / sub).is_symlink():
            found += sorted(str(p.relative_to(run_dir)) for p in (run_dir / sub).rglob("*")
                            if p.is_file() and not p.is_symlink())
    return found
