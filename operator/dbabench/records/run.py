"""A run directory: where each of a run's records lies, written and read through its model.

A run writes ``run.json`` first and ``evaluation.json`` last; everything between is what a
later reader (rescore, the judge, the viewer, a campaign's tables) needs to see the run again
without its servers. The tools pod and the evaluator Job keep the same records as ConfigMap
keys (env.kube): the names are the same ``RunArtifact`` values.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from dbabench.jsonl import complete_records
from dbabench.model.artifacts import RunArtifact, rescored_evaluation
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.report import Report
from dbabench.model.run import RunRecord
from dbabench.model.trace import TraceEvent


@dataclass(frozen=True)
class RunFiles:
    root: Path

    @classmethod
    def create(cls, parent: Path, scenario: str, agent: str) -> RunFiles:
        """A new, private run directory under ``parent``, named so a person finds it."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        # agent names carry model ids (react:openrouter:openai/gpt-4o): no path separators
        agent = re.sub(r"[^A-Za-z0-9._-]+", "-", agent)
        root = parent / f"{scenario}-{agent}-{stamp}-{secrets.token_hex(3)}"
        root.mkdir(parents=True)
        # the run's manifest, credentials and records are the harness's alone
        root.chmod(0o700)
        return cls(root)

    def path(self, artifact: RunArtifact) -> Path:
        return self.root / artifact

    def has(self, artifact: RunArtifact) -> bool:
        return self.path(artifact).exists()

    def write(self, artifact: RunArtifact, record: BaseModel) -> None:
        self.path(artifact).write_text(record.model_dump_json(indent=1))

    def write_text(self, artifact: RunArtifact, text: str) -> None:
        self.path(artifact).write_text(text)

    def read_text(self, artifact: RunArtifact) -> str:
        return self.path(artifact).read_text()

    def record(self) -> RunRecord:
        return RunRecord.model_validate_json(self.read_text(RunArtifact.RUN))

    def manifest(self) -> str:
        return self.read_text(RunArtifact.MANIFEST)

    def evaluation(self) -> EvaluationResult:
        return EvaluationResult.model_validate_json(self.read_text(RunArtifact.EVALUATION))

    def report(self) -> Report | None:
        """The report the agent filed, None when it filed no valid one."""
        if not self.has(RunArtifact.REPORT):
            return None
        return Report.from_stored(json.loads(self.read_text(RunArtifact.REPORT)))

    def events(self) -> list[TraceEvent]:
        """The trace; empty for an agent that made no call (the null control writes none).
        A last line still being written (a live run) is left out."""
        return [TraceEvent.model_validate(r)
                for r in complete_records(self.path(RunArtifact.TRACE))]

    def write_rescored(self, record: BaseModel, at: datetime) -> Path:
        """A re-score beside the original verdict, which is never overwritten."""
        path = self.root / rescored_evaluation(at.strftime("%Y%m%dT%H%M%SZ"))
        path.write_text(record.model_dump_json(indent=1))
        return path
