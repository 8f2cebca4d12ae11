"""``run_campaign``: what ``faascope run`` does, the one route from a spec to a results file.

Load and check the spec (exit 2 before anything is written), choose the executor (bursts for a
spec with a ``load`` section, slots at their times for a ``design.schedule``, else one invocation
at a time), open the campaign (create, or
resume with ``--resume``) and execute it (:mod:`faascope.driver.campaign`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from rich.console import Console

from faascope.driver.burst_plan import check_burst_spec, expand_runs, is_burst_spec
from faascope.driver.bursts import BurstExecutor
from faascope.driver.campaign import Campaign, ProviderFactory, RunSummary, sequential_runs
from faascope.driver.periodic import PeriodicExecutor
from faascope.driver.sequential import SequentialExecutor
from faascope.specs.loader import load_spec


def run_campaign(spec_path: str | Path, results: str | Path | None = None, *, resume: bool = False,
                 replications: int | None = None, seed: int | None = None, force: bool = False,
                 provider_factory: Optional[ProviderFactory] = None, progress: bool = True,
                 console: Any = None) -> RunSummary:
    spec_path = Path(spec_path)
    loaded = load_spec(spec_path)          # BadInput (exit 2) before anything is written
    bursts = is_burst_spec(loaded)
    if bursts:
        check_burst_spec(loaded)
    campaign = Campaign.open(loaded, spec_path, Path(results) if results else None,
                             run_rows=expand_runs if bursts else sequential_runs, resume=resume,
                             replications=replications, seed=seed, force=force,
                             provider_factory=provider_factory, progress=progress,
                             console=console or Console(stderr=True))
    try:
        executor = (BurstExecutor(campaign) if bursts
                    else PeriodicExecutor() if campaign.plan.schedule is not None
                    else SequentialExecutor())
        return campaign.execute(executor)
    finally:
        campaign.close()
