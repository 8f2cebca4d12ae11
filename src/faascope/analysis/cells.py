"""Per-cell descriptive statistics, confidence intervals and sample-size adequacy.

- Quantiles: numpy's default 'linear' method, which is R's `quantile(type = 7)` (and Excel's
  PERCENTILE.INC). p99.9 only when a cell has at least 1000 rows.
- Intervals of the mean, the median and the CV: faascope.analysis.intervals, which also decides
  when a cell has too few values (or, for the CV, too skewed ones) for an interval to cover what
  it claims; then the interval is null and ``<name>_why`` says why ("too few (n = 3; needs ≥ 100)").
- Adequacy: the relative half-width of the mean's Student t interval, and the replications needed
  to bring it to the target (iterating t(n-1), using the cell's current s and mean as planning
  values), at least the n the mean's printed interval needs. Planning figures, not intervals.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from faascope.analysis import intervals as iv
from faascope.analysis.design import Design
from faascope.analysis.intervals import median_ci_ranks  # re-exported: callers import it from here

__all__ = ["median_ci_ranks", "n_for_rel_halfwidth", "cell_stats_design", "QUANTILE_METHOD"]

QUANTILE_METHOD = "linear"  # numpy default = R type 7


def n_for_rel_halfwidth(s: float, mean: float, target: float, alpha: float) -> int | None:
    """Smallest n ≥ 2 with t(1-α/2, n-1) s / (√n |mean|) ≤ target (binary search; the left side
    decreases in n)."""
    if not (mean and target > 0 and math.isfinite(s)):
        return None

    def ok(n: int) -> bool:
        return stats.t.ppf(1 - alpha / 2, n - 1) * s / (math.sqrt(n) * abs(mean)) <= target

    z = stats.norm.ppf(1 - alpha / 2)
    lo = max(2, math.floor((z * s / (target * abs(mean))) ** 2))  # t > z, so never too many
    if ok(lo):
        return lo
    hi = lo * 2
    while not ok(hi):
        hi *= 2
    while hi - lo > 1:  # invariant: not ok(lo), ok(hi)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _n_for_target(x: np.ndarray, sd: float, mean: float, target: float, alpha: float, n_boot: int) -> int | None:
    """The replications a cell needs for its mean's interval to reach the target: the planning n,
    but never fewer than the interval needs to be printed at all (intervals.mean_min_n)."""
    need = n_for_rel_halfwidth(sd, mean, target, alpha)
    if need is None:
        return None
    return max(need, iv.mean_min_n(n_boot, positive=bool(np.all(x >= 0) and mean > 0)))


def cell_stats_design(design: Design, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0,
                      target_rel_halfwidth: float = 0.05, bootstrap_max_n: int = 5000) -> list[dict]:
    """One dict per cell (itertools.product order of the factor levels). `n_boot` resamples for
    the mean's bootstrap-t (0: the t interval on the log scale, which needs more values);
    `bootstrap_max_n` is kept for the callers' signature (the mean's interval needs no resampling
    from intervals.LOG_T_FROM values on)."""
    # sort once by (cell, y); every cell is then a contiguous sorted slice
    order = np.lexsort((design.y, design.row_cell))
    ys = design.y[order]
    bounds = np.concatenate([[0], np.cumsum(design.counts)])
    qs = np.array([0.90, 0.95, 0.99, 0.999])
    out = []
    for c in range(len(design.counts)):
        x = ys[bounds[c]:bounds[c + 1]]
        n = len(x)
        mean = float(design.means[c])
        sd = math.sqrt(design.ss_within[c] / (n - 1)) if n > 1 else float("nan")
        cv = sd / mean if mean != 0 else None
        q = np.quantile(x, qs, method=QUANTILE_METHOD)
        tcrit = float(stats.t.ppf(1 - alpha / 2, n - 1)) if n > 1 else float("nan")
        half = tcrit * sd / math.sqrt(n)
        mean_ci = iv.mean_interval(x, alpha, n_boot, seed * 1_000_003 + c)
        median_ci, ranks = iv.median_interval(x, alpha)
        cv_ci = iv.cv_interval(x, alpha)
        rel = half / abs(mean) if mean != 0 and math.isfinite(half) else None
        row = {
            "levels": design.cell_label(c), "n": n, "mean": mean, "median": float(np.median(x)),
            "std": sd, "cv": cv, "min": float(x[0]), "max": float(x[-1]),
            "p90": float(q[0]), "p95": float(q[1]), "p99": float(q[2]),
            "mean_ci": mean_ci.bounds, "mean_ci_method": mean_ci.method, "mean_ci_why": mean_ci.why,
            "median_ci": median_ci.bounds, "median_ci_why": median_ci.why,
            "p999": float(q[3]) if n >= 1000 else None,
            "median_ci_level": ranks[2] if ranks else None,
            "median_ci_ranks": [ranks[0], ranks[1]] if ranks else None,
            "cv_ci": cv_ci.bounds, "cv_ci_method": cv_ci.method, "cv_ci_why": cv_ci.why,
            "ci_halfwidth": half if math.isfinite(half) else None,
            "ci_halfwidth_rel": rel,
            "n_for_target": _n_for_target(x, sd, mean, target_rel_halfwidth, alpha, n_boot),
        }
        out.append(row)
    return out
