"""The ratio of two samples' medians with its interval: the one rule by which ``faascope
platform fidelity`` says a direction is shown, for the studies' findings
(:mod:`faascope.fidelity.findings`) and for the 2024 study's decisions
(:mod:`faascope.fidelity.compare`).

- unpaired (:func:`ratio_interval`): the ratio of the two medians, with its bootstrap
  percentile interval, each sample resampled on its own;
- paired (:func:`paired_ratio`): two cells of one blocked campaign, where every block ran one
  invocation of each in a random order, so ``a`` and ``b`` are indexed by block. The ratio is
  taken within each block, ``a[i] / b[i]``; the estimate is the median of those ratios and its
  interval the order-statistic one (:func:`faascope.analysis.intervals.median_interval`: the
  sign test inverted, exact coverage ≥ 95 % for any continuous distribution, from 6 blocks).
  A slow stretch of the machine (measured here: a third of a campaign ran x1.35 slower for
  minutes) lands on both sides of a block and cancels in its ratio; the unpaired ratio of
  medians moves with how many of each side it caught.
"""
from __future__ import annotations

import warnings
from typing import Optional

import numpy as np
from scipy import stats

from faascope.analysis.intervals import median_interval

ALPHA = 0.05
N_BOOT = 2000
SEED = 26
#: the statistics a ratio compares: the median (a typical value). A spread is not compared by a
#: bootstrap interval: that of the ratio of standard deviations excluded 1 in 9.3 % of skewed
#: samples of equal spread (30 against 20 exponential values) where it claims 2.5 %; the
#: findings compare spreads by the Brown-Forsythe test instead (findings.check_spread)
STATISTICS = {"median": np.median}


def ratio_interval(a: np.ndarray, b: Optional[np.ndarray], statistic: str = "median",
                   alpha: float = ALPHA, n_boot: int = N_BOOT, seed: int = SEED):
    """stat(a) / stat(b) (or stat(a) alone) and its bootstrap percentile interval, each sample
    resampled on its own. None for the interval when a statistic is 0 (no ratio)."""
    f = STATISTICS[statistic]
    rng = np.random.default_rng(seed)
    if b is None:
        est = float(f(a))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
            res = stats.bootstrap((a,), lambda x, axis=-1: f(x, axis=axis), n_resamples=n_boot,
                                  confidence_level=1 - alpha, method="percentile",
                                  vectorized=True, rng=rng)
        return est, (float(res.confidence_interval.low), float(res.confidence_interval.high))
    fa, fb = float(f(a)), float(f(b))
    if fa <= 0 or fb <= 0:
        return None, None

    def log_ratio(x, y, axis=-1):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(f(x, axis=axis)) - np.log(f(y, axis=axis))

    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        # scipy warns of a degenerate bootstrap distribution (ties); handled below
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap((a, b), log_ratio, n_resamples=n_boot, confidence_level=1 - alpha,
                              method="percentile", vectorized=True, rng=rng)
    lo, hi = res.confidence_interval.low, res.confidence_interval.high
    if not (np.isfinite(lo) and np.isfinite(hi)):
        # a resample whose SD is 0 (all values one tie) has a log ratio of ±inf, which
        # scipy's interpolated percentile turns into nan; the percentile interval itself is
        # defined without interpolation (inverted CDF) and is finite unless more than alpha/2
        # of the resamples are infinite
        d = np.asarray(res.bootstrap_distribution, float)
        d = d[~np.isnan(d)]
        lo, hi = np.quantile(d, [alpha / 2, 1 - alpha / 2], method="inverted_cdf")
        if not (np.isfinite(lo) and np.isfinite(hi)):
            return fa / fb, None
    return fa / fb, (float(np.exp(lo)), float(np.exp(hi)))


def block_ratios(a, b) -> np.ndarray:
    """The ratios a[i] / b[i] of the blocks where both sides have a positive value (a failed
    invocation leaves its block out, not the other blocks' pairing)."""
    a, b = (np.asarray(x if x is not None else [], float) for x in (a, b))
    if len(a) != len(b):
        raise ValueError(f"paired samples of {len(a)} and {len(b)} blocks")
    ok = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
    return a[ok] / b[ok]


def paired_ratio(a, b, alpha: float = ALPHA) -> tuple[int, Optional[float],
                                                       Optional[tuple[float, float]], str]:
    """(blocks with both sides, the median of the per-block ratios, its order-statistic
    interval, why there is none): the interval is None, and ``why`` says so, with too few
    blocks for it."""
    logs = np.sort(np.log(block_ratios(a, b)))
    n = len(logs)
    est = float(np.exp(np.median(logs))) if n else None
    ci, _ = median_interval(logs, alpha)
    if ci.low is None:
        return n, est, None, f"{ci.why}: blocks with both sides, for the order-statistic interval"
    return n, est, (float(np.exp(ci.low)), float(np.exp(ci.high))), ""
