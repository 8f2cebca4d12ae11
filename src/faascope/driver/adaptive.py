"""Adaptive replication: ``faascope run --target-ci 5%`` runs rounds until every cell's CI is as
narrow as asked or a budget is spent.

After the planned runs (and after each round), every cell's successful measurements of the
response (``latency_seconds`` unless told) are checked with :func:`faascope.analysis.precision.
cell_precision` (the statistic, the CI method and the sample-size formula are documented there).
Cells that meet the target get nothing more; each other cell gets the replications its estimate
asks for, at least 2 and at most twice what it has per round (a small pilot's variance is a poor
planning value, so the next check corrects it), appended as a round (:mod:`faascope.designs.
topup`: randomised among themselves, durable, resumable).

A cell none of whose invocations succeeded gets no more replications (more would fail the same
way; ``run`` says so at the end). The budgets bound what this command spends: wall-clock seconds
since it started, invocations it made, and dollars (the cost model of :mod:`faascope.cost` applied
to the invocations it recorded: compute at the provider's billing granularity, requests,
ephemeral storage). A round that would overrun a budget is scaled down to fit the remainder, using
this run's seconds per invocation and each cell's mean cost per invocation so far; when nothing
fits, the run stops and says which budget was spent. Without any budget, at most
:data:`MAX_ROUNDS` rounds run.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from faascope.analysis.precision import CellPrecision, cell_precision
from faascope.designs.topup import round_runs, round_seed
from faascope.cost.pricing import pricing_for
from faascope.cost.report import invocation_costs
from faascope.errors import BadInput
from faascope.store.reader import ResultsFile

#: a :class:`faascope.driver.campaign.Campaign` (which imports this module: not imported here)
Campaign = Any

MAX_ROUNDS = 20


@dataclass
class Budget:
    seconds: Optional[float] = None
    invocations: Optional[int] = None
    dollars: Optional[float] = None

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.seconds, self.invocations, self.dollars))


@dataclass
class AdaptiveOutcome:
    precision: dict[str, CellPrecision] = field(default_factory=dict)
    rounds: int = 0
    stopped_by: str = ""
    dollars: float = 0.0
    failing: list[str] = field(default_factory=list)


def add_round(campaign: Campaign, additions: dict[str, int], reason: str) -> int:
    """Append a round to the campaign (one transaction); the number of runs it added."""
    additions = {k: int(v) for k, v in additions.items() if int(v) > 0}
    if not additions:
        return 0
    store, cid = campaign.store, campaign.id
    existing = store.planned_runs(cid)
    round_no = len(store.events(cid, ("round_added",))) + 1
    runs = round_runs(campaign.plan, existing, additions, round_no)
    measured: dict[str, int] = {}
    for r in existing + [dict(r, order_index=r["order"]) for r in runs]:
        if r["kind"] == "measure":
            measured[r["cell_key"]] = measured.get(r["cell_key"], 0) + 1
    store.append_runs(cid, runs, replications=max(measured.values()), event={
        "round": round_no, "seed": round_seed(campaign.plan.seed, round_no), "reason": reason,
        "added": additions, "runs": len(runs),
        "order_first": runs[0]["order"], "order_last": runs[-1]["order"]})
    campaign.summary.planned = len(store.planned_runs(cid))
    return len(runs)


class AdaptiveRounds:
    """The ``rounds`` callback of :meth:`Campaign.execute`: True when it appended a round."""

    def __init__(self, target: float, *, stat: str = "auto", response: str = "latency_seconds",
                 budget: Optional[Budget] = None, alpha: float = 0.05, warm_only: bool = False):
        self.target, self.stat, self.response, self.alpha = target, stat, response, alpha
        #: judge only the invocations that were not forced cold (``faascope tune --spec``)
        self.warm_only = warm_only
        self.budget = budget or Budget()
        self.t0 = time.monotonic()
        self.baseline_id: Optional[int] = None
        self.outcome = AdaptiveOutcome()

    # -------------------------------------------------------------- reading the campaign
    def _frame(self, campaign: Campaign):
        with ResultsFile(campaign.results) as rf:
            df = rf.flat(include_warmups=True)
        if self.response not in df.columns:
            raise BadInput(f"no response column {self.response!r} in the results",
                           field="--target-response")
        return df

    def start(self, campaign: Campaign) -> None:
        if self.baseline_id is None:
            row = campaign.store.conn.execute(
                "SELECT COALESCE(max(id), 0) FROM invocations WHERE campaign_id=?",
                (campaign.id,)).fetchone()
            self.baseline_id = int(row[0])

    def _dollars(self, campaign: Campaign, df) -> tuple[float, dict[str, float]]:
        """This command's spend so far, and each cell's mean cost per invocation (all records)."""
        try:
            costs = invocation_costs(df, pricing=pricing_for(campaign.settings))["cost"]
        except BadInput:
            return 0.0, {}
        costs = costs.astype(float)
        spent = float(costs[df["invocation_id"] > (self.baseline_id or 0)].sum())
        per_cell = costs.groupby(df["cell_key"]).mean().to_dict()
        return spent, {k: float(v) for k, v in per_cell.items() if v == v}

    # -------------------------------------------------------------- the decision
    def __call__(self, campaign: Campaign) -> bool:
        self.start(campaign)
        df = self._frame(campaign)
        measured = df[df["warmup"].fillna(0).astype(int) == 0]
        if self.warm_only:
            measured = measured[measured["cold_forced"].fillna(0).astype(int) == 0]
        out = self.outcome
        out.precision, out.failing = {}, []
        wanted: dict[str, int] = {}
        for key in campaign.plan.cells_by_key:
            rows = measured[measured["cell_key"] == key]
            ok = rows[rows["ok"] == 1]
            p = cell_precision(ok[self.response].to_numpy(dtype=float), self.target,
                               self.stat, self.alpha)
            out.precision[key] = p
            if len(rows) and not len(ok):
                out.failing.append(key)
                continue
            if not p.met:
                wanted[key] = max(2, min(p.more, 2 * max(p.n, 1)))
        if not wanted:
            out.stopped_by = "target met" if not out.failing else "target met where possible"
            return False
        if campaign.stop.stop:
            return False
        if not self.budget.any and out.rounds >= MAX_ROUNDS:
            out.stopped_by = f"{MAX_ROUNDS} rounds (no budget given)"
            return False
        spent, cost_per = self._dollars(campaign, df)
        out.dollars = spent
        scaled = self._fit(campaign, wanted, spent, cost_per)
        if not scaled:
            return False
        out.rounds += 1
        campaign.say(f"round {out.rounds}: {sum(scaled.values())} more replication(s) in "
                     f"{len(scaled)} cell(s) not yet at ±{self.target:.1%}")
        return add_round(campaign, scaled, reason=f"target CI ±{self.target:.1%}") > 0

    def _fit(self, campaign: Campaign, wanted: dict[str, int], spent: float,
             cost_per: dict[str, float]) -> dict[str, int]:
        """``wanted`` scaled down to what the budgets leave ({} and ``stopped_by`` when
        nothing fits)."""
        b, plan = self.budget, campaign.plan
        warm = plan.warmup * max(1, plan.blocks)
        inv = {k: n + warm for k, n in wanted.items()}       # invocations the round makes
        total_inv = sum(inv.values())
        scale = 1.0
        limits = []
        if b.invocations is not None:
            left = b.invocations - campaign.summary.ran_now
            limits.append(("invocations", left / total_inv))
        if b.seconds is not None:
            elapsed = time.monotonic() - self.t0
            per_inv = elapsed / max(1, campaign.summary.ran_now)
            limits.append(("time", (b.seconds - elapsed) / (per_inv * total_inv)))
        if b.dollars is not None and cost_per:
            cost = sum(inv[k] * cost_per.get(k, max(cost_per.values())) for k in inv)
            if cost > 0:
                limits.append(("dollars", (b.dollars - spent) / cost))
        binding = ""
        for name, f in limits:
            if f < scale:
                scale, binding = f, name
        if scale >= 1:
            return wanted
        if scale <= 0:
            self.outcome.stopped_by = f"{binding} budget spent"
            return {}
        # the warm-ups are fixed per cell: scale the measured part of what is left
        out = {k: math.floor(n * scale - (1 - scale) * warm) for k, n in wanted.items()}
        out = {k: n for k, n in out.items() if n >= 1}
        if not out:
            self.outcome.stopped_by = f"{binding} budget spent"
        return out
