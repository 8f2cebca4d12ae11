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
from faascope.driver.adaptive import AdaptiveRounds
from faascope.driver.campaign import Campaign, default_results_path, ProviderFactory, RunSummary, sequential_runs
from faascope.driver.periodic import PeriodicExecutor
from faascope.driver.sequential import SequentialExecutor
from faascope.errors import BadInput
from faascope.specs.loader import load_spec


def run_campaign(spec_path: str | Path, results: str | Path | None = None, *, resume: bool = False,
                 replications: int | None = None, seed: int | None = None, force: bool = False,
                 provider_factory: Optional[ProviderFactory] = None, progress: bool = True,
                 console: Any = None, add_replications: int = 0,
                 adaptive: Optional[AdaptiveRounds] = None, keep_platform: bool = False,
                 rerun_may_have_run: bool = False) -> RunSummary:
    """``add_replications`` or ``replications`` above the recorded count top up an existing
    campaign; ``adaptive`` (``--target-ci``) runs rounds after the planned runs. Either on an
    existing results file continues its campaign (as ``resume``). ``keep_platform``: a local
    platform this run starts is left running at the end (else it is stopped).
    ``rerun_may_have_run`` (with ``resume``): run again the planned runs recorded as MayHaveRun
    client errors, each new record replacing the old (kept in a ``may_have_run_rerun`` event)."""
    spec_path = Path(spec_path)
    loaded = load_spec(spec_path)          # BadInput (exit 2) before anything is written
    bursts = is_burst_spec(loaded)
    if (adaptive is not None or add_replications) and (bursts or loaded.spec.design.schedule):
        raise BadInput("adaptive replication and top-ups are for sequential campaigns (a spec "
                       "without a load section or a schedule: a periodic campaign's slots are "
                       "its design)", field="--target-ci" if adaptive else "--add-replications")
    target = Path(results) if results else default_results_path(loaded)
    if add_replications and not target.exists():
        raise BadInput(f"there is no campaign in {target} to add replications to",
                       field="--add-replications")
    if (adaptive is not None or add_replications) and target.exists():
        resume = True
    if bursts:
        check_burst_spec(loaded)
    campaign = Campaign.open(loaded, spec_path, Path(results) if results else None,
                             run_rows=expand_runs if bursts else sequential_runs, resume=resume,
                             replications=replications, seed=seed, force=force,
                             add_replications=add_replications,
                             rerun_may_have_run=rerun_may_have_run,
                             provider_factory=provider_factory, progress=progress,
                             console=console or Console(stderr=True))
    campaign.keep_platform = keep_platform
    try:
        executor = (BurstExecutor(campaign) if bursts
                    else PeriodicExecutor() if campaign.plan.schedule is not None
                    else SequentialExecutor())
        if adaptive is not None:
            adaptive.start(campaign)
        return campaign.execute(executor, rounds=adaptive)
    finally:
        campaign.close()
