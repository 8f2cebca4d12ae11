"""Per-cell descriptive statistics, confidence intervals and sample-size adequacy.

- Quantiles: numpy's default 'linear' method, which is R's `quantile(type = 7)` (and Excel's
  PERCENTILE.INC). p99.9 only when a cell has at least 1000 rows.
- Mean CI: Student t, mean ± t(1-α/2, n-1) s/√n.
- Median CI: distribution-free, from order statistics. [x(l), x(n-l+1)] covers the median with
  probability 1 - 2 P(B ≤ l-1), B ~ Binomial(n, 1/2); l is the largest rank with coverage ≥ 1-α,
  and the exact coverage is reported. When even [min, max] falls short (n < 6 at 95 %) the CI is
  null.
- CV CI: bootstrap BCa (scipy.stats.bootstrap, seeded per cell) for n ≤ `bootstrap_max_n`;
  above that, a normal interval with the delta-method variance of s/mean that uses the sample
  skewness and kurtosis, so it does not assume normal data: Var ≈ (cv⁴ - cv³γ₁ + cv²(κ-1)/4)/n.
- Adequacy: the relative half-width of the mean CI, and the replications needed to bring it to
  the target (iterating t(n-1), using the cell's current s and mean as planning values).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats

from faascope.analysis.design import Design

QUANTILE_METHOD = "linear"  # numpy default = R type 7


def median_ci_ranks(n: int, alpha: float) -> tuple[int, int, float] | None:
    """1-based ranks (l, u) of the order-statistic CI of the median and its exact coverage."""
    k = int(stats.binom.ppf(alpha / 2, n, 0.5))
    while k >= 0 and stats.binom.cdf(k, n, 0.5) > alpha / 2:
        k -= 1
    if k < 0:
        return None
    l = k + 1
    coverage = 1.0 - 2.0 * float(stats.binom.cdf(l - 1, n, 0.5))
    return l, n - l + 1, coverage


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


def _cv(x, axis=-1):
    return np.std(x, ddof=1, axis=axis) / np.mean(x, axis=axis)


def cv_ci(x: np.ndarray, alpha: float, n_boot: int, seed: int, bootstrap_max_n: int = 5000):
    """(lower, upper, method) of a CI of the coefficient of variation."""
    n = len(x)
    m = float(np.mean(x))
    if n < 3 or m == 0 or np.ptp(x) == 0:
        return None, None, None
    if n_boot > 0 and n <= bootstrap_max_n:
        with warnings.catch_warnings():  # degenerate resamples: fall back to the delta method below
            warnings.simplefilter("ignore")
            res = stats.bootstrap((x,), _cv, n_resamples=n_boot, confidence_level=1 - alpha,
                                  method="BCa", vectorized=True, batch=max(1, 2_000_000 // n),
                                  random_state=np.random.default_rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(lo) and math.isfinite(hi):
            return lo, hi, f"bootstrap-BCa({n_boot})"
    cv, var = cv_delta(x)
    z = stats.norm.ppf(1 - alpha / 2)
    return cv - z * math.sqrt(var), cv + z * math.sqrt(var), "delta"


def cv_delta(x: np.ndarray) -> tuple[float, float]:
    """CV and the delta-method variance of its estimate (moments of the sample, no normality)."""
    n = len(x)
    m = float(np.mean(x))
    d = x - m
    m2 = float(np.mean(d * d))
    s = math.sqrt(m2 * n / (n - 1))
    cv = s / m
    if m2 == 0:
        return cv, 0.0
    g1 = float(np.mean(d ** 3)) / m2 ** 1.5
    kurt = float(np.mean(d ** 4)) / m2 ** 2
    var = (cv ** 4 - cv ** 3 * g1 + cv ** 2 * (kurt - 1) / 4) / n
    return cv, max(var, 0.0)


def cell_stats_design(design: Design, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0,
                      target_rel_halfwidth: float = 0.05, bootstrap_max_n: int = 5000) -> list[dict]:
    """One dict per cell (itertools.product order of the factor levels)."""
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
        ranks = median_ci_ranks(n, alpha)
        lo, hi, cv_method = cv_ci(x, alpha, n_boot, seed * 1_000_003 + c, bootstrap_max_n)
        rel = half / abs(mean) if mean != 0 else None
        row = {
            "levels": design.cell_label(c), "n": n, "mean": mean, "median": float(np.median(x)),
            "std": sd, "cv": cv, "min": float(x[0]), "max": float(x[-1]),
            "p90": float(q[0]), "p95": float(q[1]), "p99": float(q[2]),
            "mean_ci": [mean - half, mean + half],
            "median_ci": [float(x[ranks[0] - 1]), float(x[ranks[1] - 1])] if ranks else None,
            "p999": float(q[3]) if n >= 1000 else None,
            "median_ci_level": ranks[2] if ranks else None,
            "median_ci_ranks": [ranks[0], ranks[1]] if ranks else None,
            "cv_ci": [lo, hi] if lo is not None else None,
            "cv_ci_method": cv_method,
            "ci_halfwidth": half,
            "ci_halfwidth_rel": rel,
            "n_for_target": n_for_rel_halfwidth(sd, mean, target_rel_halfwidth, alpha),
        }
        out.append(row)
    return out
