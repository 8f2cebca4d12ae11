"""The % improvement of one set of bursts over another, and how sure it is: the rule every
staggering answer follows (`stagger grid`, `stagger suggest`, the report's heatmaps and table).

A staggered cell is compared with the all-at-once cell on one value per burst (a per-burst
statistic such as the burst's median write time; lower is better)::

    improvement = 100 * (1 - ρ),   ρ = mean(staggered) / mean(all at once)

The interval is Fieller's for a ratio of two independent means with unequal variances, found by
inverting Welch's t-test (Tamhane & Logan 2004): ρ is in the 1 − α set when Welch's two-sided
test of ``staggered`` against ``ρ · all-at-once`` does not reject at α. Hence:

- the interval excludes 0 % exactly when Welch's t-test of the two sets of bursts rejects at α,
  so "CI excludes 0" and the p-value never disagree;
- ρ ≥ 0 (burst statistics are positive): the improvement never exceeds +100 %; the slow-down side
  is unbounded when the all-at-once bursts are too noisy to bound it (``ci_low = -inf``).

Why not the percentile bootstrap used before: over bursts its coverage is 0.79 at 3 bursts a
side, 0.86 at 5 and 0.93 only at 20 (tests/analysis/test_improvement.py) — it marked noise as
significant. Fieller's interval holds ≥ 0.93 from :data:`MIN_BURSTS_PER_SIDE` bursts a side
on warm, skewed and cold-start-mixture burst statistics (the same test; the table is in
docs/analysis.md).

:data:`MIN_BURSTS_PER_SIDE` is the one rule: below it no interval, no p-value and no
"significant" mark is computed or printed, only the point estimate and :func:`too_few`.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
from scipy import special, stats

#: bursts each side needs before an improvement gets an interval, a p-value or a "CI excludes 0"
#: verdict. The smallest n at which the simulated coverage of the interval is ≥ 0.93 in every
#: scenario of tests/analysis/test_improvement.py (docs/analysis.md, "Staggering").
MIN_BURSTS_PER_SIDE = 4
#: the keys of :func:`improvement`'s answer (the columns it adds to a table of comparisons)
RESULT_KEYS = ("improvement_pct", "ci_low", "ci_high", "p_value", "n_bursts", "n_baseline", "too_few",
               "staggered", "all_at_once")
_BISECT = 56   # bisection steps: a bracket shrinks 2^56-fold, below a double's precision


def too_few(n: int, need: int = MIN_BURSTS_PER_SIDE, what: str = "burst") -> str:
    """What is printed instead of an interval below the rule: ``too few (n = 2 bursts; needs ≥ 4)``."""
    return f"too few (n = {n} {what}{'s' if n != 1 else ''}; needs ≥ {need})"


def _welch_t(mc, vc, nc, mb, vb, nb, rho):
    """|Welch's t| of ``c`` against ``rho · b`` and its Satterthwaite degrees of freedom."""
    s2 = vc + rho * rho * vb
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mc - rho * mb) / np.sqrt(s2)
        df = s2 * s2 / (vc * vc / (nc - 1) + rho ** 4 * vb * vb / (nb - 1))
    return np.abs(t), df


def ratio_interval(mc: float, vc: float, nc: int, mb: float, vb: float, nb: int,
                   alpha: float = 0.05) -> tuple[float, float]:
    """Fieller's 1 − α interval for μc / μb (both positive): the ρ ≥ 0 that Welch's two-sided
    test of c against ρ·b does not reject. ``vc``, ``vb``: the variances of the means (s²/n).
    The upper bound is ``inf`` when the b side is too noisy to bound it."""
    lo, hi = ratio_intervals(np.array([mc]), np.array([vc]), nc, np.array([mb]), np.array([vb]), nb, alpha)
    return float(lo[0]), float(hi[0])


def ratio_intervals(mc, vc, nc, mb, vb, nb, alpha: float = 0.05):
    """:func:`ratio_interval` for arrays of samples at once (the coverage simulation's form)."""
    mc, vc, mb, vb = (np.asarray(x, float) for x in (mc, vc, mb, vb))
    est = mc / mb

    def g(rho):  # > 0: ρ is rejected (Welch's two-sided p-value below α)
        t, df = _welch_t(mc, vc, nc, mb, vb, nb, rho)
        with np.errstate(invalid="ignore"):
            p_half = special.stdtr(np.where(np.isfinite(df), df, 1e9), -t)
        return np.where(np.isnan(p_half), -1.0, alpha / 2 - p_half)

    # lower bound: 0 when even ρ = 0 is not rejected (c's mean is not bounded away from 0)
    g0 = g(np.zeros_like(est))
    a, b = np.zeros_like(est), est.copy()
    for _ in range(_BISECT):
        mid = (a + b) / 2
        rej = g(mid) > 0
        a, b = np.where(rej, mid, a), np.where(rej, b, mid)
    lo = np.where(g0 > 0, b, 0.0)
    # upper bound: as ρ → ∞, |t| → mb / sqrt(vb) with df → nb − 1; not rejected there: unbounded
    with np.errstate(divide="ignore"):
        t_inf = np.where(vb > 0, mb / np.sqrt(vb), np.inf)
    bounded = t_inf > stats.t.ppf(1 - alpha / 2, nb - 1)
    top = np.where(est > 0, est, 1.0) * 2
    for _ in range(200):
        grow = bounded & ~(g(top) > 0)
        if not grow.any():
            break
        top = np.where(grow, top * 2, top)
    a, b = est.copy(), top
    for _ in range(_BISECT):
        mid = (a + b) / 2
        rej = g(mid) > 0
        a, b = np.where(rej, a, mid), np.where(rej, mid, b)
    hi = np.where(bounded, a, np.inf)
    exact = (vc == 0) & (vb == 0)   # constant bursts on both sides: the ratio is exact
    return np.where(exact, est, lo), np.where(exact, est, hi)


def improvement(cand, base, alpha: float = 0.05, higher_is_better: bool = False) -> dict[str, Any]:
    """% improvement of ``cand`` over ``base`` (one value per burst; lower is better unless
    ``higher_is_better``, as the measures table says of the metric): the point estimate from the
    means, and — only with :data:`MIN_BURSTS_PER_SIDE` bursts a side — Fieller's interval
    (``ci_low``/``ci_high``, %; unbounded ends are infinite) and Welch's one-sided p-value of "not
    better" (``p_value``). ``too_few`` holds the text printed instead below the rule."""
    cand = np.asarray(cand, float)
    base = np.asarray(base, float)
    cand, base = cand[np.isfinite(cand)], base[np.isfinite(base)]
    nc, nb = int(cand.size), int(base.size)
    out: dict[str, Any] = {"improvement_pct": None, "ci_low": None, "ci_high": None, "p_value": None,
                           "n_bursts": nc, "n_baseline": nb, "too_few": None}
    if not nc or not nb or base.mean() <= 0:
        return out
    mc, mb = float(cand.mean()), float(base.mean())
    sign = -1.0 if higher_is_better else 1.0   # improvement = ±(1 − ρ): a higher rate is better
    out.update(improvement_pct=100 * sign * (1 - mc / mb), staggered=mc, all_at_once=mb)
    if min(nc, nb) < MIN_BURSTS_PER_SIDE:
        out["too_few"] = too_few(min(nc, nb))
        return out
    vc, vb = float(cand.var(ddof=1)) / nc, float(base.var(ddof=1)) / nb
    lo, hi = ratio_interval(mc, vc, nc, mb, vb, nb, alpha)
    if higher_is_better:
        out.update(ci_low=100 * (lo - 1), ci_high=100 * (hi - 1),
                   p_value=p_not_better(base, cand))
    else:
        out.update(ci_low=100 * (1 - hi), ci_high=100 * (1 - lo), p_value=p_not_better(cand, base))
    return out


def p_not_better(cand, base) -> float:
    """Welch's one-sided p-value of H0 "``cand``'s mean is not below ``base``'s": small when the
    staggered bursts are reliably better. Constant bursts on both sides: 0 or 1 (an exact
    difference, no test)."""
    cand, base = np.asarray(cand, float), np.asarray(base, float)
    if cand.var() == 0 and base.var() == 0:
        return 0.0 if cand.mean() < base.mean() else 1.0
    return float(stats.ttest_ind(cand, base, equal_var=False, alternative="less").pvalue)


def ci_excludes_zero(low, high) -> bool:
    """Whether an improvement's interval lies wholly above or below 0 (the change is significant
    at the interval's level); False when there is no interval (too few bursts)."""
    if low is None or high is None or _nan(low) or _nan(high):
        return False
    return bool(low > 0 or high < 0)


def _nan(v) -> bool:
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return True


def format_ci(r: Mapping[str, Any]) -> str:
    """An improvement's interval for a table, from :func:`improvement`'s answer (or a row with its
    keys): ``[-12.3, +40.1]`` (``−∞`` when unbounded below), :func:`too_few` below the rule, "–"
    when there is nothing to compare."""
    if isinstance(r.get("too_few"), str):
        return r["too_few"]
    low, high = r.get("ci_low"), r.get("ci_high")
    if low is None or high is None or _nan(low) or _nan(high):
        return "–"
    lo = "−∞" if math.isinf(low) else f"{low:+.1f}"
    return f"[{lo}, {high:+.1f}]"


def excludes_zero_text(r: Mapping[str, Any]) -> str:
    """The "CI excludes 0" column: yes / no, "too few" below the rule (never "no" for a comparison
    that had no interval; the CI column beside it says how few), "–" when there is nothing to
    compare."""
    if isinstance(r.get("too_few"), str):
        return "too few"
    if r.get("ci_low") is None or _nan(r.get("ci_low")):
        return "–"
    return "yes" if ci_excludes_zero(r["ci_low"], r["ci_high"]) else "no"
