"""How precisely a cell's measurements pin down its statistic, and how many replications a target
precision needs: what ``faascope run --target-ci``, ``faascope plan --pilot`` and ``faascope tune``
decide with.

The target is a relative half-width r of a 95 % confidence interval: (CI half-width) / estimate.

**The procedure: two stages (Stein 1945, Ann. Math. Stat. 16, 243-258), decided once.**

1. A pilot of fixed size n0 (:data:`MIN_PILOT_N` = 90 unless raised) per cell: its *first* n0
   successful values in run order. Nothing about the values decides how many the pilot has.
2. From the pilot alone (:func:`two_stage_plan`): the statistic (``auto``: the mean while the
   pilot's CV is at most :data:`HIGH_CV`, else the median) and the cell's total n:

   - mean: n = max(n0, n_min, ⌈(t(1-α/2, n0-1)·s0 / (r·|x̄0|))²⌉), Stein's rule with the
     relative half-width r·|x̄0| in place of a fixed one, and n_min the fewest values a mean's
     interval is printed from (:func:`faascope.analysis.intervals.mean_min_n`, 100);
   - median, p95: n = max(n0, ⌈n0·(h0 / r)²⌉), h0 the pilot's relative half-width of the
     distribution-free interval (an order-statistic interval narrows as 1/√n).

3. The cell is run to that n (more only to replace failed invocations) and never re-planned from
   later values: the decision to stop depends on the pilot only, so it cannot favour samples that
   happen to look precise. ``run`` reports the interval the procedure was simulated with at the
   final n (below: Student t for the mean, order statistics for quantiles); ``faascope analyze``
   prints the mean's with its own method (bootstrap-t on the log scale), whose coverage
   ``faascope.analysis.intervals`` simulates separately. Both are printed only from n_min on.

The rule it replaces stopped a cell as soon as its own interval looked narrow enough, from 5
values on; in a seeded simulation (``tests/analysis/adaptive_simulation.py``, the table in
docs/analysis.md, "Adaptive replication") that under-estimated the variance by 13 % at the stop,
made a Welch test between two identical cells reject 8.7 % at α = 0.05, and, with 5 % cold
starts at 8×, stopped cells at ~18 values, most before any cold start (coverage 0.44). The
two-stage rule keeps the variance within 1 %, Welch within simulation error of its fixed-n rate
and the coverage of the reported statistic at 0.946-0.950 on normal, log-normal and that
mixture. A budget may still cut the second stage short; then the target is *not reached*.

CI methods (the ones ``faascope analyze`` uses, :mod:`faascope.analysis.cells`):

- mean: Student t, mean ± t(1-α/2, n-1)·s/√n; the half-width is t·s/√n;
- median and p95: distribution-free, from order statistics: [x(l), x(u)] with B ~ Binomial(n, p)
  (p = 0.5 or 0.95), l the largest rank with P(B ≤ l-1) ≤ α/2 and u the smallest with
  P(B ≥ u) ≤ α/2; the half-width is the larger of estimate - x(l) and x(u) - estimate. Such an
  interval needs a minimum n (6 for the median, 72 for p95 at 95 %).

*Met* means the cell has the n its pilot planned (and that n was not capped at
:data:`MAX_REPLICATIONS`); the interval at that n is printed as it is — it may come out a little
wider or narrower than r, since s at the final n is a new estimate.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Optional, Sequence

import numpy as np
from scipy import stats

from faascope.analysis.intervals import mean_min_n
from faascope.analysis.per_cell import mean_ci
from faascope.errors import BadInput

#: above this coefficient of variation ``auto`` targets the median instead of the mean
HIGH_CV = 0.5
STATS = ("auto", "mean", "median", "p95")
QUANTILE_P = {"median": 0.5, "p95": 0.95}
#: the procedure's name, as the results store records it
PROCEDURE = "two-stage (Stein 1945)"
#: The pilot's size: the smallest n with 0.95^n ≤ 0.01 (ln 0.01 / ln 0.95 = 89.8, so 90), i.e. a
#: pilot sees at least one value of a mode that 5 % of invocations fall in (cold starts, a slow
#: replica) with probability ≥ 0.99. Why that high: a pilot that misses the mode picks the mean
#: (its CV looks low), plans too few and reports an interval that cannot cover the mean it
#: missed, so the coverage of the reported statistic is at most (1 - 0.95^n0) × the interval's
#: own. With 5 % cold starts at 8× (the median's interval covering 0.951 on its own) that bound
#: is 0.905 at n0 = 59 (the "95 % sure" size), 0.927 at 72 and 0.942 at 90; simulated
#: (docs/analysis.md, "Adaptive replication"): 0.917-0.935, 0.938, 0.946-0.948. A rarer mode
#: needs more: a 1 % mode is seen by 90 values with probability 1 - 0.99^90 = 0.59; 95 % needs
#: 299 (ln 0.05 / ln 0.99) and 99 % 459: raise it (``--pilot-n``) where such modes matter.
#: 90 ≥ 72 also gives p95 an interval.
MIN_PILOT_N = 90
#: a cell never plans more than this many replications; a plan capped here cannot meet its target
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


def check_pilot_n(n: Optional[int], field: str = "--pilot-n") -> int:
    """The pilot size asked for (default :data:`MIN_PILOT_N`); smaller ones are refused."""
    if n is None:
        return MIN_PILOT_N
    if n < MIN_PILOT_N:
        raise BadInput(f"a pilot of {n} is too small to see a mode of 5 % of the invocations "
                       f"reliably: at least {MIN_PILOT_N} (docs/analysis.md, \"Adaptive "
                       f"replication\")", field=field)
    return int(n)


@lru_cache(maxsize=4096)
def quantile_ci_ranks(n: int, p: float, alpha: float = 0.05) -> Optional[tuple[int, int]]:
    """1-based ranks (l, u) of the distribution-free CI of the p-quantile; None when even
    [min, max] does not cover it with probability 1-α. (Cached: a pure function of its
    arguments, called once per cell and check.)"""
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


@lru_cache(maxsize=4096)
def t_quantile(q: float, df: int) -> float:
    """Student t's q-quantile with df degrees of freedom (cached: plans ask for few)."""
    return float(stats.t.ppf(q, df))


@lru_cache(maxsize=64)
def min_n_for(stat: str, alpha: float = 0.05) -> int:
    """The smallest n at which the statistic has a CI at all."""
    if stat == "mean":
        return 2
    p = QUANTILE_P[stat]
    n = 1
    while quantile_ci_ranks(n, p, alpha) is None:
        n += 1
    return n


def choose_stat(stat: str, cv: Optional[float]) -> str:
    if stat not in STATS:
        raise BadInput(f"{stat!r} is not one of {', '.join(STATS)}", field="--target-stat")
    if stat != "auto":
        return stat
    return "median" if cv is not None and cv > HIGH_CV else "mean"


@dataclass(frozen=True)
class Interval:
    """A statistic of one cell's values with its 95 % CI (None where there is none)."""
    n: int
    stat: str
    estimate: float
    ci_low: Optional[float]
    ci_high: Optional[float]
    cv: Optional[float]
    #: CI half-width / |estimate| (the larger side for order statistics); None without a CI
    rel_half_width: Optional[float]


def interval(values, stat: str = "auto", alpha: float = 0.05) -> Interval:
    """The chosen statistic of ``values`` and its CI (methods in the module docstring)."""
    v = np.asarray(values, dtype=float)
    v = np.sort(v[np.isfinite(v)])
    n = int(v.size)
    mean = float(v.mean()) if n else math.nan
    sd = float(v.std(ddof=1)) if n > 1 else math.nan
    cv = sd / mean if n > 1 and mean > 0 else None
    chosen = choose_stat(stat, cv)
    if n == 0:
        return Interval(0, chosen, math.nan, None, None, None, None)
    if chosen == "mean":
        est, lo, hi, _ = mean_ci(v, alpha)
        rel = (hi - est) / abs(est) if lo is not None and est else None
        return Interval(n, chosen, est, lo, hi, cv, rel)
    p = QUANTILE_P[chosen]
    est = float(np.quantile(v, p))
    ranks = quantile_ci_ranks(n, p, alpha)
    if ranks is None:
        return Interval(n, chosen, est, None, None, cv, None)
    lo, hi = float(v[ranks[0] - 1]), float(v[ranks[1] - 1])
    rel = max(est - lo, hi - est) / abs(est) if est else None
    return Interval(n, chosen, est, lo, hi, cv, rel)


@dataclass(frozen=True)
class StagePlan:
    """What a cell's pilot decided: the statistic and the cell's total n (:func:`two_stage_plan`).
    ``planned_n`` is None where no relative target can be planned (the pilot's estimate is 0 or
    negative, or it has no interval); ``capped`` when the formula asked for more than
    :data:`MAX_REPLICATIONS`."""
    stat: str
    pilot_n: int
    pilot_estimate: float
    pilot_sd: float
    pilot_cv: Optional[float]
    pilot_rel_half_width: Optional[float]
    planned_n: Optional[int]
    capped: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


def two_stage_plan(pilot: Sequence[float], target: float, stat: str = "auto",
                   alpha: float = 0.05) -> StagePlan:
    """Stage 2 of the procedure from the pilot's values (all of them are the pilot: pass the
    first n0 in run order). Formulas in the module docstring."""
    v = np.asarray(pilot, dtype=float)
    v = v[np.isfinite(v)]
    n0 = int(v.size)
    iv = interval(v, stat, alpha)
    sd = float(v.std(ddof=1)) if n0 > 1 else math.nan
    need: Optional[float] = None
    if iv.stat == "mean":
        if n0 > 1 and iv.estimate and math.isfinite(sd):
            need = (t_quantile(1 - alpha / 2, n0 - 1) * sd / (target * abs(iv.estimate))) ** 2
            # never stop a mean below the n its interval needs to be printed at all (the rule
            # of faascope.analysis.intervals, which analyze and report follow): a fixed floor,
            # so the plan still depends on the pilot alone
            need = max(need, mean_min_n())
    elif iv.rel_half_width is not None:
        need = max(min_n_for(iv.stat, alpha), n0 * (iv.rel_half_width / target) ** 2)
    planned = capped = None
    if need is not None:
        planned = max(n0, math.ceil(need))
        capped = planned > MAX_REPLICATIONS
        planned = min(planned, MAX_REPLICATIONS)
    return StagePlan(iv.stat, n0, iv.estimate, sd, iv.cv, iv.rel_half_width, planned,
                     bool(capped))


@dataclass(frozen=True)
class CellPrecision(Interval):
    """Where a cell stands in the procedure: its interval now (the :class:`Interval` fields) and
    what its pilot planned."""
    #: the replications the cell needs: the pilot's size until the pilot is complete, then the
    #: planned n (never less than n); None where no target can be planned
    needed: Optional[int] = None
    #: the planned n is reached (and was not capped): the target's procedure is complete
    met: bool = False
    plan: Optional[StagePlan] = None
    #: the relative half-width asked for
    target: float = math.nan

    @property
    def more(self) -> int:
        return max(0, (self.needed or 0) - self.n)

    @property
    def within_target(self) -> bool:
        """The interval at this n is as narrow as the target (not the stopping rule)."""
        return self.rel_half_width is not None and self.rel_half_width <= self.target


def cell_precision(values, target: float, stat: str = "auto", alpha: float = 0.05, *,
                   pilot_n: int = MIN_PILOT_N, plan: Optional[StagePlan] = None) -> CellPrecision:
    """Where a cell stands: ``values`` in run order (its successful measurements); the pilot is
    the first ``pilot_n`` of them. ``plan``, when given (a plan recorded earlier), is used
    instead of planning again."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    n = int(v.size)
    if plan is None and n >= pilot_n:
        plan = two_stage_plan(v[:pilot_n], target, stat, alpha)
    iv = interval(v, plan.stat if plan else stat, alpha)
    if plan is None:
        needed: Optional[int] = pilot_n
        met = False
    else:
        needed = None if plan.planned_n is None else max(plan.planned_n, n)
        met = plan.planned_n is not None and n >= plan.planned_n and not plan.capped
    return CellPrecision(n, iv.stat, iv.estimate, iv.ci_low, iv.ci_high, iv.cv,
                         iv.rel_half_width, needed, met, plan, target)
