"""A run scanned for harness footprints as its agent is let in (evaluate.footprints): the
hook a run takes, used by the self-proof's null runs and by ``dbabench scenarios footprints``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

import httpx
import psycopg

from dbabench.evaluate import footprints
from dbabench.model.footprint import FootprintScan
from dbabench.model.scenario import Scenario
from dbabench.runner.run import Admitted, OnAdmitted


def scanner(scenario: Scenario, progress: Callable[[str], None] = lambda _: None,
            ) -> tuple[OnAdmitted, list[FootprintScan]]:
    """A hook for ``run_scenario(on_admitted=...)`` and the list its scan lands in (empty
    when the agent was never let in). A scan that fails is a scan with its error."""
    scans: list[FootprintScan] = []

    async def look(run: Admitted) -> None:
        progress("scanning what the agent's tools can read")
        try:
            scans.append(await footprints.scan(scenario, run.probe, run.tools,
                                               incident=run.incident, run_dir=str(run.run_dir)))
        except (psycopg.Error, httpx.HTTPError, OSError) as e:
            scans.append(FootprintScan(scenario=scenario.name, incident=run.incident,
                                       run_dir=str(run.run_dir),
                                       scanned_at=datetime.now(timezone.utc),
                                       error=f"the scan failed: {e}"))

    return look, scans
