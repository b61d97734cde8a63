"""A campaign directory's records, written and read in one place: ``campaign.json`` (what was
asked), ``results.jsonl`` (a line per finished cell) and ``events.jsonl`` (what happened)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dbabench.jsonl import complete_records
from dbabench.model.artifacts import CampaignArtifact
from dbabench.model.campaign import CampaignRecord, CellResult, JudgeLabel

CAMPAIGN_FILE = CampaignArtifact.CAMPAIGN
RESULTS_FILE = CampaignArtifact.RESULTS
EVENTS_FILE = CampaignArtifact.EVENTS
JUDGE_FILE = CampaignArtifact.JUDGE
RECORD_FILES = tuple(CampaignArtifact)
"""What a campaign keeps: every table, plot and page is built from these."""
NOT_STARTED = "cell-not-started"


def line(fields: dict[str, Any]) -> str:
    """A record as a line of results.jsonl or events.jsonl, wherever it is kept."""
    return json.dumps(fields, sort_keys=True) + "\n"


def append(path: Path, fields: dict[str, Any]) -> None:
    """One write of a whole line, appended and synced: a reader never sees half a record,
    and a campaign killed at any point keeps every one it wrote."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line(fields).encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def event_record(name: str, at: datetime | None = None, **detail: Any) -> dict[str, Any]:
    return {"at": (at or datetime.now(timezone.utc)).isoformat(), "event": name, **detail}


def event(out: Path, name: str, **detail: Any) -> None:
    append(out / EVENTS_FILE, event_record(name, **detail))


def campaign(out: Path) -> CampaignRecord:
    return CampaignRecord.model_validate_json((out / CAMPAIGN_FILE).read_text())


def write_records(out: Path, records: dict[str, str]) -> None:
    """A campaign directory from its records kept elsewhere (the Campaign resource's
    ConfigMaps): ``records`` by file name, the files of RECORD_FILES only."""
    unknown = sorted(set(records) - set(RECORD_FILES))
    if unknown or CAMPAIGN_FILE not in records:
        raise ValueError(f"not a campaign's records: {', '.join(unknown) or 'no campaign.json'}")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in records.items():
        (out / name).write_text(text)


def results(out: Path) -> list[CellResult]:
    return [CellResult.model_validate(r) for r in complete_records(out / RESULTS_FILE)]


def judged(out: Path) -> list[JudgeLabel]:
    """A judge model's labels of the campaign's runs (results.judge), if one was asked."""
    return [JudgeLabel.model_validate(r) for r in complete_records(out / JUDGE_FILE)]


def not_started(out: Path) -> list[dict[str, Any]]:
    """The cells the campaign chose not to start (its cost cap), that no later resume ran."""
    done = {(r.agent, r.scenario, r.repeat) for r in results(out)}
    skipped = {(e["agent"], e["scenario"], e["repeat"]): e
               for e in complete_records(out / EVENTS_FILE) if e["event"] == NOT_STARTED}
    return [e for key, e in sorted(skipped.items(), key=lambda kv: str(kv[0]))
            if key not in done]
