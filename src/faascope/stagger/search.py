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

The answer: the best candidate, its % improvement over all-at-once with a bootstrap CI over
bursts, the probability (bootstrap) that it beats the runner-up, and the counts of bursts spent.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np


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
    p_best_beats_runner_up: Optional[float]
    p_better_than_all_at_once: Optional[float]
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


def _boot_improvement(cand: np.ndarray, base: np.ndarray, rng, n_boot: int = 4000):
    c = rng.choice(cand, (n_boot, cand.size)).mean(1)
    b = rng.choice(base, (n_boot, base.size)).mean(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100 * (b - c) / b


def successive_halving(candidates: list[Candidate], evaluate: Callable[[list[Candidate], int], None],
                       baseline: Callable[[int], list[float]], *, eta: int = 3,
                       budget: Optional[int] = None, seed: int = 0, alpha: float = 0.05,
                       min_baseline: int = 2,
                       initial_baseline: Optional[list[float]] = None) -> SearchResult:
    """Run the search. ``evaluate(cands, k)`` runs k more bursts of each candidate and appends
    their scores (lower is better); ``baseline(k)`` runs k all-at-once bursts and returns their
    scores (``initial_baseline``: scores of all-at-once bursts already run, e.g. a pilot).
    ``budget`` caps the number of trial bursts (baseline included)."""
    rng = np.random.default_rng(seed)
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
        if len(alive) == 1 and len(alive[0].scores) < 3:
            reps += 1  # confirm the winner with a few more bursts
            continue
        if len(alive) == 1:
            break
        reps += 1
    ranked = sorted([c for c in candidates if c.scores], key=lambda c: c.mean)
    best = ranked[0] if ranked else None
    runner = ranked[1] if len(ranked) > 1 else None
    base = np.asarray(base_scores, float)
    imp, ci, p_win, p_base = None, (None, None), None, None
    if best is not None and base.size and base.mean() > 0:
        cand = np.asarray(best.scores, float)
        imp = float(100 * (base.mean() - cand.mean()) / base.mean())
        if cand.size >= 2 and base.size >= 2:
            boots = _boot_improvement(cand, base, rng)
            boots = boots[np.isfinite(boots)]
            ci = (float(np.quantile(boots, alpha / 2)), float(np.quantile(boots, 1 - alpha / 2)))
            p_base = float((boots > 0).mean())
        if runner is not None and len(best.scores) >= 1 and len(runner.scores) >= 1:
            b1 = rng.choice(np.asarray(best.scores), (4000, len(best.scores))).mean(1)
            b2 = rng.choice(np.asarray(runner.scores), (4000, len(runner.scores))).mean(1)
            p_win = float((b1 < b2).mean())
    res = SearchResult(best=best, runner_up=runner, candidates=candidates, baseline=base_scores,
                       rounds=rounds, bursts=spent, improvement_pct=imp, ci=ci,
                       p_best_beats_runner_up=p_win, p_better_than_all_at_once=p_base,
                       stopped_by_budget=stopped)
    if stopped:
        res.notes.append("the trial budget ran out before one candidate was left")
    if ci[0] is not None and ci[0] <= 0 <= (ci[1] or 0):
        res.notes.append("the CI of the improvement includes 0: staggering may not help here; "
                         "run more bursts (--budget) before relying on it")
    if best is not None and len(best.scores) < 3:
        res.notes.append(f"the winner rests on {len(best.scores)} burst(s) only")
    return res
