"""Seeded simulations of adaptive replication (``run --target-ci``, ``tune``): the two-stage
procedure of :mod:`faascope.analysis.precision`, driven round by round exactly as
:class:`faascope.driver.adaptive.AdaptiveRounds` drives it (ask :func:`cell_precision` where the
cell stands, run what it asks for, stop when it says met), against the rule it replaced (stop as
soon as the cell's own interval is narrow enough, from 5 values on).

The true values come from the distributions themselves (closed forms; the mixture's median by
root finding), never from the code under test. ``python3 tests/analysis/adaptive_simulation.py``
prints the table of docs/analysis.md ("Adaptive replication"; about 10 minutes on a shared
2-core machine); the tests (test_adaptive_validity.py) run the same functions with fewer
replicates.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import optimize, stats

from faascope.analysis.cells import n_for_rel_halfwidth
from faascope.analysis.precision import (MIN_PILOT_N, QUANTILE_P, cell_precision, interval,
                                        min_n_for)

Draw = Callable[[np.random.Generator, int], np.ndarray]

#: warm latency of the mixture: log-normal, σ = 0.15; 5 % of invocations are cold, 8× as long
WARM_SIGMA, COLD_P, COLD_X = 0.15, 0.05, 8.0


@dataclass(frozen=True)
class Dist:
    name: str
    draw: Draw
    mean: float
    median: float
    p95: float
    var: float


def _mixture_draw(rng: np.random.Generator, n: int) -> np.ndarray:
    w = rng.lognormal(0.0, WARM_SIGMA, n)
    return np.where(rng.random(n) < COLD_P, COLD_X * w, w)


def _mixture_quantile(p: float) -> float:
    def cdf(x):
        return ((1 - COLD_P) * stats.lognorm.cdf(x, WARM_SIGMA)
                + COLD_P * stats.lognorm.cdf(x / COLD_X, WARM_SIGMA))
    return optimize.brentq(lambda x: cdf(x) - p, 1e-3, 100.0, xtol=1e-14)


def distributions() -> dict[str, Dist]:
    ln_s = 0.4
    m2 = math.exp(2 * WARM_SIGMA ** 2)        # E[W²] of the warm log-normal
    mix_mean = math.exp(WARM_SIGMA ** 2 / 2) * (1 - COLD_P + COLD_P * COLD_X)
    mix_var = m2 * (1 - COLD_P + COLD_P * COLD_X ** 2) - mix_mean ** 2
    return {
        "normal": Dist("normal (1, CV 0.2)", lambda rng, n: rng.normal(1.0, 0.2, n),
                       1.0, 1.0, 1.0 + 0.2 * stats.norm.ppf(0.95), 0.04),
        "lognormal": Dist("log-normal (σ = 0.4)", lambda rng, n: rng.lognormal(0.0, ln_s, n),
                          math.exp(ln_s ** 2 / 2), 1.0, math.exp(ln_s * stats.norm.ppf(0.95)),
                          (math.exp(ln_s ** 2) - 1) * math.exp(ln_s ** 2)),
        "mixture": Dist("5 % cold starts at 8×", _mixture_draw, mix_mean, _mixture_quantile(0.5),
                        _mixture_quantile(0.95), mix_var),
    }


def truth(d: Dist, stat: str) -> float:
    return {"mean": d.mean, "median": d.median, "p95": d.p95}[stat]


# ----------------------------------------------------------------------------- the two rules
def two_stage_more(values, target: float, stat: str, pilot_n: int = MIN_PILOT_N) -> int:
    """The procedure faascope runs now: what :func:`cell_precision` asks for (0 when met)."""
    p = cell_precision(values, target, stat, pilot_n=pilot_n)
    return 0 if p.met or p.needed is None else p.more


def old_more(values, target: float, stat: str) -> int:
    """The rule before issue #25 (faascope ≤ 2026-11): stop when the cell's own 95 % CI is at
    most ``target`` of its estimate and n ≥ 5; else ask for what the estimate needs (mean: the
    iterated t formula; quantiles: n·(h/r)²), at least 2 and at most twice n per round."""
    iv = interval(values, stat)
    n = iv.n
    if iv.rel_half_width is not None and iv.rel_half_width <= target and n >= 5:
        return 0
    if iv.stat == "mean":
        sd = float(np.std(values, ddof=1)) if n > 1 else math.nan
        need = n_for_rel_halfwidth(sd, iv.estimate, target, 0.05) if n > 1 else None
        need = need if need is not None else max(2, n)
    elif iv.rel_half_width is None:
        need = min_n_for(iv.stat)
    else:
        need = max(min_n_for(iv.stat), math.ceil(n * (iv.rel_half_width / target) ** 2))
    need = max(need, 5)
    return max(2, min(need - n, 2 * max(n, 1)))


def collect(rng, draw: Draw, more: Callable[[np.ndarray], int], start: int,
            max_rounds: int = 20) -> np.ndarray:
    """One cell: ``start`` values (the spec's replications), then rounds of what ``more`` asks
    for, at most ``max_rounds`` (the driver's bound without a budget)."""
    v = draw(rng, start)
    for _ in range(max_rounds):
        k = more(v)
        if k <= 0:
            break
        v = np.concatenate([v, draw(rng, k)])
    return v


def welch_p(a, b) -> float:
    """Welch's two-sided p (scipy's, from the samples' mean, SD and n)."""
    return float(stats.ttest_ind_from_stats(np.mean(a), np.std(a, ddof=1), len(a), np.mean(b),
                                            np.std(b, ddof=1), len(b), equal_var=False).pvalue)


@dataclass
class Outcome:
    rule: str
    dist: str
    target: float
    stat: str
    reps: int
    coverage: float
    #: the same statistic's interval on a fresh sample of the same n, chosen in advance: what
    #: the interval method gives without any stopping rule
    fixed_coverage: float
    stein_coverage: float       # NaN unless most cells chose the mean
    var_ratio: float            # mean of s²/σ² at the stop
    var_ratio_se: float
    welch: float                # rejection rate at 0.05, two identical cells
    fixed_welch: float          # Welch on two fresh samples of the same two n
    median_n: float
    missed_mode: float          # share of cells that saw no value above 3× the median


def simulate(rule: str, dist: Dist, target: float, stat: str = "auto", reps: int = 1000,
             seed: int = 1, start: int = 2, pilot_n: int = MIN_PILOT_N,
             baselines: bool = False) -> Outcome:
    """``reps`` pairs of identical cells collected under ``rule`` ("two-stage" or "old");
    ``baselines``: also the fixed-n coverage and Welch (NaN without)."""
    rng = np.random.default_rng(seed)
    if rule == "two-stage":
        def more(v):
            return two_stage_more(v, target, stat, pilot_n)
    else:
        def more(v):
            return old_more(v, target, stat)
    cover = fixed_cover = stein = stein_n = rejects = fixed_rejects = missed = 0
    ratios, ns = [], []
    for _ in range(reps):
        a = collect(rng, dist.draw, more, start)
        b = collect(rng, dist.draw, more, start)
        if rule == "two-stage":
            p = cell_precision(a, target, stat, pilot_n=pilot_n)
        else:
            iv = interval(a, stat)
            p = iv
        t = truth(dist, p.stat)
        cover += p.ci_low is not None and p.ci_low <= t <= p.ci_high
        if baselines:
            f = interval(dist.draw(rng, len(a)), p.stat)
            fixed_cover += f.ci_low is not None and f.ci_low <= t <= f.ci_high
        if rule == "two-stage" and p.stat == "mean" and p.plan is not None:
            # Stein's own interval: the final mean ± t(n0-1)·s0/√n
            h = stats.t.ppf(0.975, p.plan.pilot_n - 1) * p.plan.pilot_sd / math.sqrt(len(a))
            stein += abs(float(np.mean(a)) - t) <= h
            stein_n += 1
        ratios.append(float(np.var(a, ddof=1)) / dist.var)
        ns.append(len(a))
        missed += not np.any(a > 3 * np.median(a))
        rejects += welch_p(a, b) < 0.05
        if baselines:
            fixed_rejects += welch_p(dist.draw(rng, len(a)), dist.draw(rng, len(b))) < 0.05
    r = np.asarray(ratios)
    nan = math.nan
    return Outcome(rule, dist.name, target, stat, reps, cover / reps,
                   fixed_cover / reps if baselines else nan,
                   stein / stein_n if stein_n > reps / 2 else nan, float(r.mean()),
                   float(r.std(ddof=1) / math.sqrt(reps)), rejects / reps,
                   fixed_rejects / reps if baselines else nan,
                   float(np.median(ns)), missed / reps)


def table(reps: int = 2000) -> str:
    """The before/after table of docs/analysis.md: per distribution and target, the old rule
    and the two-stage procedure (for the cold-start mixture also with smaller pilots, the
    numbers behind MIN_PILOT_N)."""
    rows = ["| data | target | rule | median n | coverage (same n, fixed) | Stein's interval | "
            "s²/σ² | Welch, 2 identical cells (same n, fixed) |",
            "|---|---|---|---|---|---|---|---|"]
    for key, d in distributions().items():
        pilots = (59, 72, MIN_PILOT_N) if key == "mixture" else (MIN_PILOT_N,)
        for target in (0.025, 0.10):
            for rule, kw in [("old", {})] + [("two-stage", {"pilot_n": n}) for n in pilots]:
                o = simulate(rule, d, target, reps=reps, baselines=True, **kw)
                label = ("stop when narrow (before)" if rule == "old" else
                         f"two-stage, n0 = {kw['pilot_n']}")
                st = "–" if math.isnan(o.stein_coverage) else f"{o.stein_coverage:.3f}"
                rows.append(f"| {d.name} | {target:.1%} | {label} | {o.median_n:.0f} | "
                            f"{o.coverage:.3f} ({o.fixed_coverage:.3f}) | {st} | "
                            f"{o.var_ratio:.3f} | {o.welch:.3f} ({o.fixed_welch:.3f}) |")
                print(rows[-1], file=sys.stderr, flush=True)
    return "\n".join(rows)


if __name__ == "__main__":
    print(table(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
