"""Measure one planned run, the step the sequential and the periodic executors share: give the
function the cell's configuration, force a cold start where planned, invoke, and record the
result (its own fsynced transaction) before anything else happens."""
from __future__ import annotations

import time

from faascope.driver.campaign import Campaign
from faascope.designs.plan import Cell
from faascope.providers.base import FunctionConfig, Provider
from faascope.providers.invocation import InvokeResult


def measure_one_run(campaign: Campaign, provider: Provider, run: dict, cell: Cell,
                    name: str) -> InvokeResult:
    """Configure ``name`` for ``cell``, force it cold if ``run`` says so, invoke it with the
    cell's payload and record the result; the result, for the caller's counts."""
    cfg = FunctionConfig.from_dict(cell.config)
    campaign.configure(name, cfg)
    if run["force_cold"]:
        provider.force_cold(name)
    before_ns = time.time_ns()
    result = provider.invoke(name, cell.payload)
    campaign.record(run, cell, name, cfg, result, before_ns)
    return result
