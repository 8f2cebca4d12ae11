"""Adaptive replication: ``faascope run --target-ci 5%`` runs the two-stage procedure of
:mod:`faascope.analysis.precision` (Stein 1945) until every cell has the n its pilot planned, or a
budget is spent.

After the planned runs (and after each round), every cell's successful measurements of the
response (``latency_seconds`` unless told), in run order, are checked with :func:`faascope.
analysis.precision.cell_precision`:

1. the pilot: a cell with fewer than ``pilot_n`` (:data:`~faascope.analysis.precision.
   MIN_PILOT_N` unless raised) successful values gets the rest in a round;
2. the plan: once a cell's pilot is complete, its statistic and total n follow from the pilot's
   first ``pilot_n`` values alone, and the plans are recorded in the results store (an
   ``adaptive_plan`` event: procedure, pilot size, target, statistic, per cell the planned n;
   :func:`faascope.analysis.adaptive_record.adaptive_facts` reads it back for ``analyze`` and
   ``report``);
3. the second stage: each cell gets what its plan asks for, in one round; later rounds only
   replace invocations that failed. A cell is never stopped because its interval looks narrow,
   and never re-planned from later values (the same pilot always gives the same plan, also on
   ``--resume`` or a rerun).

Rounds are appended by :mod:`faascope.designs.topup` (randomised among themselves, durable,
resumable); each ``round_added`` event says its stage (``pilot``, ``stage 2``) and the
procedure's settings.

A cell none of whose invocations succeeded gets no more replications (more would fail the same
way; ``run`` says so at the end). The budgets bound what this command spends: wall-clock seconds
since it started, invocations it made, and dollars (the cost model of :mod:`faascope.cost` applied
to the invocations it recorded: compute at the provider's billing granularity, requests,
ephemeral storage). A round that would overrun a budget is scaled down to fit the remainder, using
this run's seconds per invocation and each cell's mean cost per invocation so far; when nothing
fits, the run stops and says which budget was spent, and every cell short of its planned n is
reported as *not reached*. Without any budget, at most :data:`MAX_ROUNDS` rounds run.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from faascope.analysis.precision import (MAX_REPLICATIONS, PROCEDURE, CellPrecision,
                                        cell_precision, check_pilot_n)
from faascope.designs.topup import round_runs, round_seed
from faascope.cost.pricing import pricing_for
from faascope.cost.report import invocation_costs
from faascope.errors import BadInput
from faascope.store.reader import ResultsFile
from faascope.store.schema import ADAPTIVE_PLAN_EVENT, ROUND_ADDED_EVENT

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

    @property
    def short(self) -> list[str]:
        """Cells (that did not fail outright) short of their planned n: not reached."""
        return [k for k, p in self.precision.items() if not p.met and k not in self.failing]

    @property
    def reached(self) -> bool:
        return bool(self.precision) and not self.short


def add_round(campaign: Campaign, additions: dict[str, int], reason: str,
              extra: Optional[dict] = None) -> int:
    """Append a round to the campaign (one transaction); the number of runs it added."""
    additions = {k: int(v) for k, v in additions.items() if int(v) > 0}
    if not additions:
        return 0
    store, cid = campaign.store, campaign.id
    existing = store.planned_runs(cid)
    round_no = len(store.events(cid, (ROUND_ADDED_EVENT,))) + 1
    runs = round_runs(campaign.plan, existing, additions, round_no)
    measured: dict[str, int] = {}
    for r in existing + [dict(r, order_index=r["order"]) for r in runs]:
        if r["kind"] == "measure":
            measured[r["cell_key"]] = measured.get(r["cell_key"], 0) + 1
    store.append_runs(cid, runs, replications=max(measured.values()), event={
        "round": round_no, "seed": round_seed(campaign.plan.seed, round_no), "reason": reason,
        **(extra or {}), "added": additions, "runs": len(runs),
        "order_first": runs[0]["order"], "order_last": runs[-1]["order"]})
    campaign.summary.planned = len(store.planned_runs(cid))
    return len(runs)


class AdaptiveRounds:
    """The ``rounds`` callback of :meth:`Campaign.execute`: True when it appended a round."""

    def __init__(self, target: float, *, stat: str = "auto", response: str = "latency_seconds",
                 budget: Optional[Budget] = None, alpha: float = 0.05, warm_only: bool = False,
                 pilot_n: Optional[int] = None):
        self.target, self.stat, self.response, self.alpha = target, stat, response, alpha
        #: judge only the invocations that were not forced cold (``faascope tune --spec``)
        self.warm_only = warm_only
        self.pilot_n = check_pilot_n(pilot_n)
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

    # -------------------------------------------------------------- the record
    def settings(self) -> dict:
        """What the plans depend on besides the pilot's values (recorded with them)."""
        return {"procedure": PROCEDURE, "pilot_n": self.pilot_n,
                "target_rel_half_width": self.target, "stat": self.stat, "alpha": self.alpha,
                "response": self.response, "warm_only": self.warm_only}

    def _record_plans(self, campaign: Campaign) -> None:
        """An ``adaptive_plan`` event with every plan made so far, unless the latest one with
        the same settings already holds them (a resumed run writes nothing new)."""
        plans = {k: p.plan.as_dict() for k, p in self.outcome.precision.items()
                 if p.plan is not None}
        if not plans:
            return
        detail = {**self.settings(), "cells": plans}
        for _, ev in reversed(campaign.store.events(campaign.id, (ADAPTIVE_PLAN_EVENT,))):
            if {k: ev.get(k) for k in self.settings()} == self.settings():
                if ev.get("cells") == plans:
                    return
                break
        campaign.store.event(campaign.id, ADAPTIVE_PLAN_EVENT, detail)

    # -------------------------------------------------------------- the decision
    def __call__(self, campaign: Campaign) -> bool:
        self.start(campaign)
        df = self._frame(campaign)
        measured = df[df["warmup"].fillna(0).astype(int) == 0]
        if self.warm_only:
            measured = measured[measured["cold_forced"].fillna(0).astype(int) == 0]
        # the pilot is each cell's first values in run order
        measured = measured.sort_values("order_index", kind="stable")
        out = self.outcome
        out.precision, out.failing = {}, []
        wanted: dict[str, int] = {}
        piloting = False
        for key in campaign.plan.cells_by_key:
            rows = measured[measured["cell_key"] == key]
            ok = rows[rows["ok"] == 1]
            p = cell_precision(ok[self.response].to_numpy(dtype=float), self.target,
                               self.stat, self.alpha, pilot_n=self.pilot_n)
            out.precision[key] = p
            if len(rows) and not len(ok):
                out.failing.append(key)
                continue
            if not p.met and p.more > 0:
                wanted[key] = p.more
                piloting = piloting or p.plan is None
        self._record_plans(campaign)
        plan = campaign.plan
        if self.warm_only and plan.cold_mode == "cell" and plan.warmup == 0 and wanted:
            # a round forces each cell's first run in each block cold (designs.topup): k + B
            # consecutive replications cover every block once, so k of them are warm
            wanted = {k: n + max(1, plan.blocks) for k, n in wanted.items()}
        if not wanted:
            out.stopped_by = ("every cell has its planned n" if not out.short and not out.failing
                              else "every cell that can has its planned n" if not out.short
                              else f"{len(out.short)} cell(s) cannot reach the target (their "
                              f"n is capped at {MAX_REPLICATIONS}, or their estimate is 0)")
            return False
        if campaign.stop.stop:
            out.stopped_by = "interrupted"
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
        stage = "pilot" if piloting else "stage 2"
        campaign.say(f"round {out.rounds} ({stage}): {sum(scaled.values())} more replication(s) "
                     f"in {len(scaled)} cell(s) toward their "
                     + (f"pilot of {self.pilot_n}" if piloting else "planned n")
                     + f" (target ±{self.target:.1%})")
        return add_round(campaign, scaled, reason=f"target CI ±{self.target:.1%}",
                         extra={"stage": stage, **self.settings()}) > 0

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
