"""How precisely a cell's measurements pin down its statistic, and how many replications a target
precision needs: what ``faascope run --target-ci``, ``faascope plan --pilot`` and ``faascope tune``
decide with.

The target is a relative half-width r of a 95 % confidence interval: (CI half-width) / estimate.

Which statistic (``stat="auto"``): the mean while the cell's coefficient of variation is at most
:data:`HIGH_CV` (0.5), else the median: a heavy tail or a mixture of cold and warm times makes
the mean's t interval unreliable and the mean itself a poor summary. ``mean``, ``median`` and
``p95`` can be chosen.

CI methods (the ones ``faascope analyze`` uses, :mod:`faascope.analysis.cells`):

- mean: Student t, mean ± t(1-α/2, n-1)·s/√n; the half-width is t·s/√n;
- median and p95: distribution-free, from order statistics: [x(l), x(u)] with B ~ Binomial(n, p)
  (p = 0.5 or 0.95), l the largest rank with P(B ≤ l-1) ≤ α/2 and u the smallest with
  P(B ≥ u) ≤ α/2; the half-width is the larger of estimate - x(l) and x(u) - estimate. Such an
  interval needs a minimum n (6 for the median, 72 for p95 at 95 %); below it the cell is not met.

Whatever the statistic, a cell with fewer than :data:`MIN_N_TARGET` (5) values is not met.

Replications needed:

- mean: n = (t(1-α/2, n-1)·s / (r·mean))², iterated on t (the smallest n that satisfies it, by
  :func:`faascope.analysis.cells.n_for_rel_halfwidth`), with the pilot's s and mean as planning
  values;
- median, p95: an order-statistic interval narrows as 1/√n, so n = n_now·(h_now / r)², and at
  least the interval's minimum n.

These are planning values from a pilot's estimates: a noisy pilot plans too few or too many,
which is why ``run --target-ci`` re-checks after each round (a sequential design; stopping when a
CI is met slightly favours narrow intervals, so report the CI, not the stopping rule, as evidence).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import stats

from faascope.analysis.cells import n_for_rel_halfwidth
from faascope.analysis.per_cell import mean_ci
from faascope.errors import BadInput

#: above this coefficient of variation ``auto`` targets the median instead of the mean
HIGH_CV = 0.5
STATS = ("auto", "mean", "median", "p95")
QUANTILE_P = {"median": 0.5, "p95": 0.95}
#: fewer replications than this never meet a target: with 2-4 values a lucky narrow interval
#: would stop a cell early (s is itself too uncertain)
MIN_N_TARGET = 5
#: a cell never asks for more than this many replications from one estimate
MAX_REPLICATIONS = 10_000


def parse_target(text: str | float, field: str = "--target-ci") -> float:
    """A relative half-width from ``5%`` or ``0.05`` (0 < r < 1)."""
    s = str(text).strip()
    try:
        r = float(s[:-1]) / 100 if s.endswith("%") else float(s)
    except ValueError:
        raise BadInput(f"{text!r} is not a relative half-width such as 5% or 0.05",
                       field=field) from None
    if not (0 < r < 1):
        raise BadInput(f"{text!r} must be between 0 and 100 % (exclusive)", field=field)
    return r


def quantile_ci_ranks(n: int, p: float, alpha: float = 0.05) -> Optional[tuple[int, int]]:
    """1-based ranks (l, u) of the distribution-free CI of the p-quantile; None when even
    [min, max] does not cover it with probability 1-α."""
    if n < 1:
        return None
    b = stats.binom(n, p)
    k = np.arange(0, n + 1)
    below = b.cdf(k - 1)                      # P(B <= l-1) for l = k
    ls = k[(k >= 1) & (below <= alpha / 2)]
    above = b.sf(k - 1)                       # P(B >= u) for u = k
    us = k[(k >= 1) & (k <= n) & (above <= alpha / 2)]
    if ls.size == 0 or us.size == 0:
        return None
    return int(ls.max()), int(us.min())


def min_n_for(stat: str, alpha: float = 0.05) -> int:
    """The smallest n at which the statistic has a CI at all."""
    if stat == "mean":
        return 2
    p = QUANTILE_P[stat]
    n = 1
    while quantile_ci_ranks(n, p, alpha) is None:
        n += 1
    return n


@dataclass
class CellPrecision:
    n: int
    stat: str
    estimate: float
    ci_low: Optional[float]
    ci_high: Optional[float]
    cv: Optional[float]
    #: CI half-width / estimate; None without a CI
    rel_half_width: Optional[float]
    #: replications this cell needs for the target (>= n when met)
    needed: int
    met: bool

    @property
    def more(self) -> int:
        return max(0, self.needed - self.n)


def choose_stat(stat: str, cv: Optional[float]) -> str:
    if stat not in STATS:
        raise BadInput(f"{stat!r} is not one of {', '.join(STATS)}", field="--target-stat")
    if stat != "auto":
        return stat
    return "median" if cv is not None and cv > HIGH_CV else "mean"


def cell_precision(values, target: float, stat: str = "auto",
                   alpha: float = 0.05) -> CellPrecision:
    """How precisely ``values`` (one cell's measurements) estimate the chosen statistic, and the
    replications the target needs."""
    v = np.asarray(values, dtype=float)
    v = np.sort(v[np.isfinite(v)])
    n = int(v.size)
    mean = float(v.mean()) if n else math.nan
    sd = float(v.std(ddof=1)) if n > 1 else math.nan
    cv = sd / mean if n > 1 and mean > 0 else None
    chosen = choose_stat(stat, cv)
    if n == 0:
        return CellPrecision(0, chosen, math.nan, None, None, None, None, min_n_for(chosen, alpha),
                             False)
    if chosen == "mean":
        est, lo, hi, _ = mean_ci(v, alpha)
        rel = (hi - est) / abs(est) if lo is not None and est else None
        need = (n_for_rel_halfwidth(sd, est, target, alpha) if n > 1 and sd == sd else None)
        if need is None:
            need = 2 if n < 2 else n
        if sd == 0:
            need = max(2, n)
    else:
        p = QUANTILE_P[chosen]
        est = float(np.quantile(v, p))
        ranks = quantile_ci_ranks(n, p, alpha)
        floor = min_n_for(chosen, alpha)
        if ranks is None or est == 0:
            lo = hi = rel = None
            need = floor
        else:
            lo, hi = float(v[ranks[0] - 1]), float(v[ranks[1] - 1])
            rel = max(est - lo, hi - est) / abs(est)
            need = max(floor, math.ceil(n * (rel / target) ** 2)) if rel > target else n
    met = rel is not None and rel <= target and n >= MIN_N_TARGET
    if met:
        need = n
    elif rel is not None and rel <= target:
        need = MIN_N_TARGET
    return CellPrecision(n, chosen, est, lo, hi, cv, rel, min(int(need), MAX_REPLICATIONS), met)
