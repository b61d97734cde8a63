"""Records: one module names every file dbabench keeps, one reads and writes a run's."""

from __future__ import annotations

import ast
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

import dbabench
from dbabench.evaluate import scorer
from dbabench.model.artifacts import RunArtifact
from dbabench.model.evaluation import EvaluationResult
from dbabench.model.run import RunRecord
from dbabench.records.run import RunFiles

PACKAGE = Path(dbabench.__file__).parent
FILE_NAME = re.compile(r"^[\w-][\w.-]*\.(json|jsonl|md|log|html|csv|png|svg|yaml|yml|txt)$")
PACKAGE_DATA = {"taxonomy.yaml", "prices.yaml", "catalog_names.txt", "traffic.yaml"}
"""Files shipped inside the package, read as resources: not records of anything."""


def spelled_file_names(path: Path, base: Path = PACKAGE) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and FILE_NAME.match(node.value) and node.value not in PACKAGE_DATA):
            found.append(f"{path.relative_to(base)}:{node.lineno}: {node.value!r}")
    return found


def test_no_module_but_model_artifacts_spells_a_file_name() -> None:
    spelled = [hit for path in sorted(PACKAGE.rglob("*.py"))
               if path.relative_to(PACKAGE) != Path("model/artifacts.py")
               for hit in spelled_file_names(path)]
    assert spelled == [], "name these in dbabench.model.artifacts:\n" + "\n".join(spelled)


def test_the_scan_sees_a_name_in_a_format_string(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text('def f(job):\n    return f"{job}_exporter.log", "run.json", ".yaml"\n')
    assert sorted(h.split(": ")[1] for h in spelled_file_names(module, tmp_path)) == [
        "'_exporter.log'", "'run.json'"]


def test_a_run_directory_is_private_and_read_back_through_models(tmp_path: Path) -> None:
    files = RunFiles.create(tmp_path, "some-scenario", "react:openrouter:openai/gpt-4o")
    assert files.root.parent == tmp_path and "/" not in files.root.name[len("some-"):]
    assert files.root.name.startswith("some-scenario-react-openrouter-openai-gpt-4o-")
    assert files.root.stat().st_mode & 0o777 == 0o700
    record = RunRecord(scenario="s", agent="a", incident="inc-1",
                       started_at=datetime.now(timezone.utc))
    files.write(RunArtifact.RUN, record)
    assert files.record() == record
    # an agent that made no call left no trace, and filed no report
    assert files.events() == [] and files.report() is None
    evaluation = EvaluationResult(scorer=scorer.current(), scenario="s", agent="a", status="infra_error",
                                  infra_reason="fault did not manifest")
    files.write(RunArtifact.EVALUATION, evaluation)
    assert files.evaluation() == evaluation
    assert sorted(p.name for p in files.root.iterdir()) == [RunArtifact.EVALUATION,
                                                              RunArtifact.RUN]


def test_a_trace_line_still_being_written_is_left_out(tmp_path: Path) -> None:
    files = RunFiles(tmp_path)
    whole = '{"seq": 1, "ts": "2026-12-07T00:00:00Z", "kind": "thought", "text": "look"}\n'
    files.write_text(RunArtifact.TRACE, whole + '{"seq": 2, "ts": "2026-12-')
    assert [e.seq for e in files.events()] == [1]


def test_a_broken_record_is_an_error_not_a_default(tmp_path: Path) -> None:
    files = RunFiles(tmp_path)
    files.write_text(RunArtifact.EVALUATION, "{not json")
    with pytest.raises(ValueError):
        files.evaluation()
