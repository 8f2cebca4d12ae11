"""A run's remaining time, weighted by the plan's per-cell estimates
(:func:`faascope.designs.estimate.estimate`): a 1 GB write and a 1 KB read do not take the same
time, so counting invocations (rich's default ETA) misleads in a mixed campaign.

remaining = (the model's seconds for the pending runs) × (seconds taken so far / the model's
seconds for the runs done so far): the model gives the shape, this machine's pace the scale."""
from __future__ import annotations

import time
from typing import Optional

from rich.progress import ProgressColumn
from rich.text import Text

from faascope.designs.estimate import COLD_S, estimate, human_duration, where_of


class WeightedETA:
    def __init__(self, plan, pending: list[dict]):
        where = where_of(plan.spec.provider_kind)
        self.per_cell = estimate(plan)["per_invocation_seconds"]
        self.cold = COLD_S[where]
        self.remaining = sum(self.cost(r) for r in pending)
        self.done = 0.0
        self.t0 = time.monotonic()

    def cost(self, run: dict) -> float:
        return self.per_cell.get(run["cell_key"], 0.0) + (self.cold if run["force_cold"] else 0.0)

    def advance(self, run: dict) -> None:
        c = self.cost(run)
        self.done += c
        self.remaining = max(0.0, self.remaining - c)

    def seconds(self) -> Optional[float]:
        if self.done <= 0:
            return self.remaining  # the model alone until there is a pace to scale it by
        return self.remaining * (time.monotonic() - self.t0) / self.done


class ETAColumn(ProgressColumn):
    """``ETA 3 min 12 s`` from the task's ``eta`` field (a :class:`WeightedETA`)."""

    def render(self, task):
        eta = task.fields.get("eta")
        s = eta.seconds() if eta is not None else None
        return Text("ETA –" if s is None else f"ETA {human_duration(s)}")


def short_cell(key: str, width: int = 48) -> str:
    """A cell key short enough for a progress line."""
    text = key.replace('"', "")
    return text if len(text) <= width else text[:width - 1] + "…"
