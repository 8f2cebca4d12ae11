"""Choosing a batch size and a delay with few trial bursts: successive halving.

Why successive halving and not Bayesian optimisation (docs/concurrency.md): the space is a small
2-D grid of discrete candidates; each evaluation is a whole burst (N invocations, minutes on a
cloud) and noisy; and the answer must say how sure it is. Successive halving spends one burst
per candidate first, keeps the best 1/eta, gives the survivors more bursts, and repeats, so the
bursts go where the decision is close. A Gaussian-process optimiser (scikit-optimize) or TPE
(optuna) needs ~10 evaluations before its model beats random choice on such a grid and models
the noise poorly with one burst per point; optuna also brings SQLAlchemy and alembic.

Two rules cut trials before any burst runs:

- a candidate whose schedule alone makes the objective worse than all-at-once cannot win: for
  objectives measured from the burst's start (``start_s``, ``completion_s``) the stagger delay of
  the member at quantile q is ⌊q·N/b⌋·d, a lower bound of that member's start;
- candidates that are the same schedule (batch size ≥ N, or delay 0) are all-at-once.

The answer: the best candidate, its % improvement over all-at-once with Fieller's interval and
Welch's p-values against all-at-once and the runner-up — all from confirmation bursts run after
the choice, :data:`~faascope.analysis.improvement.MIN_BURSTS_PER_SIDE` a side (the one rule of
analysis/improvement.py) — and the counts of bursts spent.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from faascope.analysis.improvement import MIN_BURSTS_PER_SIDE, improvement, p_not_better, too_few


@dataclass
class Candidate:
    batch_size: int
    delay: float
    scores: list[float] = field(default_factory=list)
    pruned: Optional[str] = None
    eliminated_in: Optional[int] = None

    @property
    def key(self) -> tuple[int, float]:
        return (self.batch_size, self.delay)

    @property
    def mean(self) -> float:
        return float(np.mean(self.scores)) if self.scores else math.inf


@dataclass
class SearchResult:
    best: Optional[Candidate]
    runner_up: Optional[Candidate]
    candidates: list[Candidate]
    baseline: list[float]
    rounds: int
    bursts: int
    improvement_pct: Optional[float]
    ci: tuple[Optional[float], Optional[float]]
    #: Welch's one-sided p-value of "the best is not better than all at once" (confirmation bursts)
    p_value_vs_all_at_once: Optional[float]
    #: the same against the runner-up (both on their own confirmation bursts)
    p_value_vs_runner_up: Optional[float]
    #: bursts of the best run after it was chosen (the only ones its interval uses)
    confirm_bursts: int = 0
    #: the text printed instead of an interval below the rule (None when there is one)
    too_few: Optional[str] = None
    stopped_by_budget: bool = False
    notes: list[str] = field(default_factory=list)


def schedule_bound(n: int, batch_size: int, delay: float, q: float) -> float:
    """The stagger delay of the member at quantile q of a burst of n: ⌊q·(n−1)/b⌋·d."""
    return math.floor(q * (n - 1) / batch_size) * delay


def default_batch_sizes(n: int) -> list[int]:
    """Halving batch sizes below N: N/2, N/4, … down to about N/32 (at least 1)."""
    out, b = [], n // 2
    while b >= max(1, n // 32) and len(out) < 5:
        out.append(b)
        b //= 2
    return sorted(set(out)) or [1]


def default_delays(run_s: float) -> list[float]:
    """Delays on the scale of one invocation's run time: ¼, ½, 1 and 2 times it (≥ 1 ms)."""
    base = max(run_s, 0.001)
    return sorted({round(base * f, 4) for f in (0.25, 0.5, 1.0, 2.0)})


def successive_halving(candidates: list[Candidate], evaluate: Callable[[list[Candidate], int], None],
                       baseline: Callable[[int], list[float]], *, eta: int = 3,
                       budget: Optional[int] = None, seed: int = 0, alpha: float = 0.05,
                       min_baseline: int = 2,
                       initial_baseline: Optional[list[float]] = None) -> SearchResult:
    """Run the search. ``evaluate(cands, k)`` runs k more bursts of each candidate and appends
    their scores (lower is better); ``baseline(k)`` runs k all-at-once bursts and returns their
    scores (``initial_baseline``: scores of all-at-once bursts already run, e.g. a pilot).
    ``budget`` caps the number of trial bursts (baseline included).

    After the halving, the best and the runner-up get :data:`MIN_BURSTS_PER_SIDE` fresh bursts
    each (and the all-at-once cell is topped up to as many): the best was chosen because its
    bursts looked good, so those bursts overstate it (the winner's curse); the interval and the
    p-values use the fresh bursts only. ``seed`` is kept for callers; the answer is analytic."""
    del seed
    base_scores: list[float] = list(initial_baseline or [])
    if len(base_scores) < min_baseline:
        base_scores += list(baseline(min_baseline - len(base_scores)))
    spent = len(base_scores)
    alive = [c for c in candidates if c.pruned is None]
    rounds = 0
    stopped = False
    reps = 1
    while alive:
        cost = len(alive) * reps + 1
        if budget is not None and spent + cost > budget:
            if rounds == 0:  # too small for one round: evaluate what fits, once
                fit = max(0, budget - spent)
                alive = alive[:fit]
                if not alive:
                    stopped = True
                    break
            else:
                stopped = True
                break
        evaluate(alive, reps)
        spent += len(alive) * reps
        base_scores += list(baseline(1))
        spent += 1
        rounds += 1
        if len(alive) == 1:
            break
        alive.sort(key=lambda c: c.mean)
        keep = max(1, math.ceil(len(alive) / eta))
        for c in alive[keep:]:
            c.eliminated_in = rounds
        alive = alive[:keep]
        if len(alive) == 1:
            break
        reps += 1
    ranked = sorted([c for c in candidates if c.scores], key=lambda c: c.mean)
    best = ranked[0] if ranked else None
    runner = ranked[1] if len(ranked) > 1 else None

    # confirmation: fresh bursts of the chosen ones, as many as the rule needs
    need = MIN_BURSTS_PER_SIDE
    fresh: dict[int, list[float]] = {}
    confirmed_runner = False
    if best is not None:
        top_up = max(0, need - len(base_scores))
        left = math.inf if budget is None else budget - spent
        chosen = [best] if left < 2 * need + top_up or runner is None else [best, runner]
        if left >= need * len(chosen) + top_up:
            before = {id(c): len(c.scores) for c in chosen}
            evaluate(chosen, need)
            fresh = {id(c): c.scores[before[id(c)]:] for c in chosen}
            if top_up:
                base_scores += list(baseline(top_up))
            spent += need * len(chosen) + top_up
            confirmed_runner = len(chosen) == 2

    base = np.asarray(base_scores, float)
    imp, ci, p_base, p_runner, few = None, (None, None), None, None, None
    n_fresh = len(fresh.get(id(best), [])) if best is not None else 0
    if best is not None and base.size and base.mean() > 0:
        r = improvement(fresh[id(best)] if n_fresh else best.scores, base, alpha=alpha)
        imp = r["improvement_pct"]
        if n_fresh:
            ci, p_base, few = (r["ci_low"], r["ci_high"]), r["p_value"], r["too_few"]
        else:
            few = too_few(0, what="confirmation burst")
        if confirmed_runner:
            p_runner = p_not_better(fresh[id(best)], fresh[id(runner)])
    res = SearchResult(best=best, runner_up=runner, candidates=candidates, baseline=base_scores,
                       rounds=rounds, bursts=spent, improvement_pct=imp, ci=ci,
                       p_value_vs_all_at_once=p_base, p_value_vs_runner_up=p_runner,
                       confirm_bursts=n_fresh, too_few=few, stopped_by_budget=stopped)
    if stopped:
        res.notes.append("the trial budget ran out before one candidate was left")
    if best is not None and not n_fresh:
        res.notes.append(f"the budget left too few bursts to confirm the best on {need} fresh bursts: "
                         "its improvement comes from the bursts that chose it (they favour it) and has "
                         "no interval; raise --budget")
    elif runner is not None and not confirmed_runner:
        res.notes.append("the budget left no confirmation bursts for the runner-up: the best is not "
                         "tested against it")
    if ci[0] is not None and ci[0] <= 0 <= (ci[1] or 0):
        res.notes.append("the CI of the improvement includes 0: staggering may not help here; "
                         "run more bursts (--budget) before relying on it")
    return res
