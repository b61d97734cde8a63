"""The scorer's identity, recorded in every evaluation: which rules judged it.

The digest covers what decides a verdict from a run's evidence: the matcher, the safety rules
and the SQL classes they read, the evaluator, the cost arithmetic, the diagnosis vocabulary and
the price table. Two evaluations with one digest were judged alike; ``dbabench rescore`` makes
an old run's evidence comparable with a new one's.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import dbabench
from dbabench.model import taxonomy
from dbabench.model.evaluation import Scorer

PACKAGE = Path(dbabench.__file__).resolve().parent
SOURCES = ("evaluate/diagnosis.py", "evaluate/safety.py", "evaluate/evaluator.py",
           "evaluate/efficiency.py", "evaluate/predicates.py", "evaluate/integrity.py",
           "evaluate/conduct.py", "evaluate/evidence.py", "evaluate/incident.py",
           "policy/classify.py", "policy/classes.py", "policy/reach.py", "policy/nodes.py",
           "policy/walk.py", "model/safety.py", "model/statement.py", "model/tool.py",
           "model/taxonomy.yaml", "pricing/prices.yaml")


@functools.cache
def current() -> Scorer:
    digest = hashlib.sha256()
    for name in SOURCES:
        data = (PACKAGE / name).read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return Scorer(digest=digest.hexdigest(), vocabulary=taxonomy.taxonomy().version,
                  dbabench=dbabench.__version__)
