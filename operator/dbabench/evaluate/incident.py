"""What is part of an incident, read mechanically off its scenario (issue 40): every name its
manifest uses (the fault's statements and jobs, the reference path and fixes, the checks, the
intended state, the alert), the dataset's tables and the workload's own service. A report's
object that is part of the incident is never counted against it; one that is not (a table that
does not exist, a role nobody mentions) is, beyond a small tolerance.

Generous by design: naming a true object costs an honest report nothing, and an object is not
a diagnosis (the causes are). What a scenario rules out (its contradictions) is not read.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from dbabench.model.report import QUALIFIED, ObjectRef
from dbabench.model.scenario import ScenarioSpec
from dbabench.model.workload import WORKER_SERVICE
from dbabench.scenario.datasets import DATASETS

_NAME = re.compile(r"[a-z_][a-z0-9_$]*(?:\.[a-z_][a-z0-9_$]*)*")
# always part of a PostgreSQL incident: the default schema and the catalog's
_ALWAYS = frozenset({"public", "pg_catalog"})


def _words(text: str) -> frozenset[str]:
    words: set[str] = set()
    for dotted in _NAME.findall(text):
        words.add(dotted)
        words.update(dotted.split("."))
    return frozenset(words)


@functools.cache
def _dataset_text(dataset: str, scale: int) -> str:
    return "\n".join(DATASETS[dataset](scale).statements).lower()


@dataclass(frozen=True)
class Incident:
    text: str
    """everything the manifest and the dataset name, lower-cased"""
    words: frozenset[str]
    """the identifiers in it, each dotted name whole and in parts"""
    replica: bool

    def involves(self, ref: ObjectRef) -> bool:
        schema, name = ref.key()
        name = name.lower()
        if ref.kind == "server":
            return name == "primary" or (name == "replica" and self.replica)
        if ref.kind in ("file", "session", "prepared_transaction", "advisory_lock",
                        "large_object"):
            # whole, as the manifest writes it: "a" or "-" is in every text, no session's name
            return bool(re.search(r"\w", name)) and bool(
                re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w-])", self.text))
        if ref.kind in QUALIFIED or ref.kind == "column":
            return name in self.words and (schema is None or schema.lower() in self.words
                                           or schema.lower() in _ALWAYS)
        return name in self.words


def incident_of(spec: ScenarioSpec) -> Incident:
    kept = spec.model_dump(mode="json", exclude={"decoy_report": True,
                                                 "diagnosis": {"contradictions"}})
    text = "\n".join([str(kept).lower(), WORKER_SERVICE,
                      _dataset_text(spec.database.dataset, spec.database.scale)])
    return Incident(text=text, words=_words(text), replica=spec.database.replica is not None)
