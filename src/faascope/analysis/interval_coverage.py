"""Simulated coverage of faascope's confidence intervals on reference distributions of serverless
measurements: the evidence behind :data:`faascope.analysis.intervals.MIN_N` (issue #25, item 5).

Reference families (one cell's values; every one positive, scale 1, since every method here is
scale-invariant):

- ``normal``: N(1, 0.15²), CV 15 %: warm latencies with symmetric jitter (the ideal case).
- ``lognormal 0.25``: log-scale σ = 0.25, the boundary of a *tight* cell (the CV rule).
- ``lognormal 0.5``, ``lognormal 1``: right-skewed cells. In the 2024 thesis data
  (examples/data/thesis-2024, 16 cells of 163-209 values) the log-scale SD per cell has median
  0.18, upper quartile 0.69 and 90th percentile 1.28: σ = 0.5 is a typical skewed cell, σ = 1 a
  heavy one, and heavier ones exist.
- ``cold starts``: warm latencies (lognormal σ = 0.25) of which 5 % are cold starts 8× slower
  (issue #25's mixture; the thesis data has cells where up to 6 % of values exceed 3× the median).
  A sample of n values misses every cold start with probability 0.95ⁿ (36 % at n = 20), and then
  no method can know the mean it estimates: this family sets the mean's minimum n.

The methods are faascope's own (the vectorised functions of intervals.py, run on a (replicates,
n) array at once); the bootstrap shares one matrix of resample counts among a block of
replicates, which keeps a coverage estimate unbiased (the counts are independent of the data)
and costs one product of matrices. Coverage = the share of replicates whose interval contains the
family's true value; where a rule prints an interval only for some samples (the CV's tight
cells), the share among the printed ones, with the printed share beside it.

``python3 bench/interval_coverage.py`` prints the table in docs/analysis.md and the minimum n it
implies; tests/analysis/test_interval_coverage.py checks every MIN_N against a smaller run.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import optimize, stats

from faascope.analysis import intervals as iv


@dataclass(frozen=True)
class Family:
    key: str
    label: str
    draw: Callable[[np.random.Generator, tuple], np.ndarray]
    mean: float
    median: float
    cv: float


def _lognormal(sigma: float) -> Family:
    return Family(f"lognormal {sigma:g}", f"lognormal σ = {sigma:g}",
                  lambda rng, shape: np.exp(sigma * rng.standard_normal(shape)),
                  math.exp(sigma * sigma / 2), 1.0, math.sqrt(math.expm1(sigma * sigma)))


COLD_SHARE, COLD_FACTOR, WARM_SIGMA = 0.05, 8.0, 0.25


def _cold_starts() -> Family:
    p, k, s = COLD_SHARE, COLD_FACTOR, WARM_SIGMA

    def draw(rng, shape):
        warm = np.exp(s * rng.standard_normal(shape))
        return np.where(rng.random(shape) < p, k * warm, warm)

    ew, ew2 = math.exp(s * s / 2), math.exp(2 * s * s)
    mean = ew * (1 - p + p * k)
    cv = math.sqrt(ew2 * (1 - p + p * k * k) / mean ** 2 - 1)
    median = optimize.brentq(lambda m: (1 - p) * stats.norm.cdf(math.log(m) / s)
                             + p * stats.norm.cdf(math.log(m / k) / s) - 0.5, 0.5, 2.0)
    return Family("cold starts", f"{p:.0%} cold starts at {k:g}×", draw, mean, median, cv)


FAMILIES: dict[str, Family] = {f.key: f for f in [
    Family("normal", "normal, CV 15 %", lambda rng, shape: 1.0 + 0.15 * rng.standard_normal(shape), 1.0, 1.0, 0.15),
    _lognormal(0.25), _lognormal(0.5), _lognormal(1.0), _cold_starts()]}

#: CV comparisons: (first cell's family, second's); the second cell is scaled 3× (CVs unchanged)
PAIRS: list[tuple[str, str]] = [(f, f) for f in FAMILIES] + [("normal", "lognormal 0.25")]

BLOCK = 100  # replicates that share one matrix of bootstrap resample counts


@dataclass
class Coverage:
    method: str
    family: str
    n: int
    reps: int
    printed: float      # share of replicates with an interval
    covered: float      # share of those whose interval holds the true value (NaN if none)

    @property
    def mc_se(self) -> float:
        """Monte-Carlo standard error of `covered` at the nominal floor."""
        k = self.printed * self.reps
        return math.sqrt(iv.COVERAGE_FLOOR * (1 - iv.COVERAGE_FLOOR) / k) if k else math.inf


def _blocks(reps: int):
    for s in range(0, reps, BLOCK):
        yield s, min(reps, s + BLOCK)


def mean_coverage(method: str, fam: Family, n: int, reps: int, seed: int, n_boot: int = 199,
                  alpha: float = 0.05) -> Coverage:
    """Coverage of the mean by "t", "log-t", "boot-t" or "boot-t-log" (no minimum n applied)."""
    rng = np.random.default_rng(seed)
    x = fam.draw(rng, (reps, n))
    if method in ("t", "log-t"):
        lo, hi = iv.t_bounds(x, alpha, log=method == "log-t")
    else:
        lo, hi = np.empty(reps), np.empty(reps)
        for s, e in _blocks(reps):
            lo[s:e], hi[s:e] = iv.boot_t_bounds(x[s:e], iv.resample_counts(n, n_boot, rng), alpha,
                                                log=method == "boot-t-log")
    ok = iv.mean_printable(x, lo, hi)   # the rule that prints an interval, as mean_interval
    hit = (lo <= fam.mean) & (fam.mean <= hi)
    return Coverage(method, fam.key, n, reps, float(ok.mean()), float(hit[ok].mean()) if ok.any() else math.nan)


def median_coverage(fam: Family, n: int, reps: int, seed: int, alpha: float = 0.05) -> Coverage:
    rng = np.random.default_rng(seed)
    x = np.sort(fam.draw(rng, (reps, n)), axis=1)
    ranks = iv.median_ci_ranks(n, alpha)
    if ranks is None:
        return Coverage("order-statistic", fam.key, n, reps, 0.0, math.nan)
    lo, hi = x[:, ranks[0] - 1], x[:, ranks[1] - 1]
    return Coverage("order-statistic", fam.key, n, reps, 1.0,
                    float(np.mean((lo <= fam.median) & (fam.median <= hi))))


def cv_coverage(fam: Family, n: int, reps: int, seed: int, rule: bool = True, alpha: float = 0.05) -> Coverage:
    """Coverage of the CV by the log-scale delta interval, among the samples the tightness rule
    lets through (all of them with rule=False)."""
    rng = np.random.default_rng(seed)
    x = fam.draw(rng, (reps, n))
    cv, se = iv.cv_log_se(x)
    lo, hi = iv.cv_bounds(cv, se, n, alpha)
    ok = iv.tightness(x)[0] if rule else np.ones(reps, bool)
    hit = (lo <= fam.cv) & (fam.cv <= hi)
    name = "cv-log-t" if rule else "cv-log-t (every sample)"
    return Coverage(name, fam.key, n, reps, float(ok.mean()), float(hit[ok].mean()) if ok.any() else math.nan)


def cv_bca_coverage(fam: Family, n: int, reps: int, seed: int, n_boot: int = 999, alpha: float = 0.05) -> Coverage:
    """Coverage of the CV by the BCa bootstrap faascope used before (for the table's contrast):
    bias correction from the resamples, acceleration from the jackknife, as scipy.stats.bootstrap."""
    rng = np.random.default_rng(seed)
    x = fam.draw(rng, (reps, n))
    cv = x.std(1, ddof=1) / x.mean(1)
    s1, s2 = x.sum(1, keepdims=True), (x * x).sum(1, keepdims=True)
    mi = (s1 - x) / (n - 1)
    ji = np.sqrt(np.maximum((s2 - x * x - (n - 1) * mi * mi) / (n - 2), 0)) / mi   # leave-one-out CVs
    dj = ji.mean(1, keepdims=True) - ji
    with np.errstate(divide="ignore", invalid="ignore"):
        acc = (dj ** 3).sum(1) / (6 * ((dj ** 2).sum(1)) ** 1.5)
    hit = np.zeros(reps, bool)
    z = stats.norm.ppf([alpha / 2, 1 - alpha / 2])
    for s, e in _blocks(reps):
        c = iv.resample_counts(n, n_boot, rng)
        xb = x[s:e]
        mb = np.einsum("rn,bn->rb", xb, c) / n
        cb = np.sqrt(np.maximum(np.einsum("rn,bn->rb", xb * xb, c) / n - mb * mb, 0) * n / (n - 1)) / mb
        with np.errstate(divide="ignore", invalid="ignore"):
            z0 = stats.norm.ppf((cb < cv[s:e, None]).mean(1) + 0.5 * (cb == cv[s:e, None]).mean(1))
            a = acc[s:e]
            lev = stats.norm.cdf(z0[:, None] + (z0[:, None] + z) / (1 - a[:, None] * (z0[:, None] + z)))
        cs = np.sort(cb, axis=1)
        pos = np.nan_to_num(lev, nan=0.5) * (n_boot - 1)
        lo_i, hi_i = np.floor(pos).astype(int), np.ceil(pos).astype(int)
        frac = pos - lo_i
        rows = np.arange(e - s)[:, None]
        q = cs[rows, lo_i] * (1 - frac) + cs[rows, hi_i] * frac
        hit[s:e] = (q[:, 0] <= fam.cv) & (fam.cv <= q[:, 1]) & np.isfinite(lev).all(1)
    return Coverage("cv-bca (before)", fam.key, n, reps, 1.0, float(hit.mean()))


def comparison_coverage(pair: tuple[str, str], n: int, reps: int, seed: int, what: str = "ratio",
                        n_draws: int = 999, rule: bool = True, alpha: float = 0.05) -> Coverage:
    """Coverage of CV(b) / CV(a) ("ratio") or CV(b) - CV(a) ("difference") between one cell of
    each family by faascope's draws, among the pairs whose cells are both tight."""
    rng = np.random.default_rng(seed)
    fa, fb = FAMILIES[pair[0]], FAMILIES[pair[1]]
    xa, xb = fa.draw(rng, (reps, n)), 3.0 * fb.draw(rng, (reps, n))
    ca, sa = iv.cv_log_se(xa)
    cb, sb = iv.cv_log_se(xb)
    da, db = iv.cv_draws_from(ca, sa, n, n_draws, rng), iv.cv_draws_from(cb, sb, n, n_draws, rng)
    lo, hi = iv.percentile_ci(db / da if what == "ratio" else db - da, alpha)
    true = fb.cv / fa.cv if what == "ratio" else fb.cv - fa.cv
    ok = (iv.tightness(xa)[0] & iv.tightness(xb)[0]) if rule else np.ones(reps, bool)
    hit = (lo <= true) & (true <= hi)
    return Coverage(f"cv-{what}", f"{fa.key} / {fb.key}", n, reps, float(ok.mean()),
                    float(hit[ok].mean()) if ok.any() else math.nan)


def ratio_percentile_bootstrap_coverage(fam: Family, n: int, reps: int, seed: int, n_boot: int = 999,
                                        alpha: float = 0.05) -> Coverage:
    """The CV ratio's percentile bootstrap faascope used before, between two cells of one family
    (true ratio 1), for the table's contrast."""
    rng = np.random.default_rng(seed)
    xa, xb = fam.draw(rng, (reps, n)), 3.0 * fam.draw(rng, (reps, n))
    hit = np.zeros(reps, bool)
    for s, e in _blocks(reps):
        cvs = []
        for x in (xa[s:e], xb[s:e]):
            c = iv.resample_counts(n, n_boot, rng)
            mb = np.einsum("rn,bn->rb", x, c) / n
            cvs.append(np.sqrt(np.maximum(np.einsum("rn,bn->rb", x * x, c) / n - mb * mb, 0) * n / (n - 1)) / mb)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = cvs[1] / cvs[0]
        r = np.where(np.isfinite(r), r, np.nan)
        q = np.nanquantile(r, [alpha / 2, 1 - alpha / 2], axis=1)
        hit[s:e] = (q[0] <= 1) & (1 <= q[1])
    return Coverage("cv-ratio percentile bootstrap (before)", f"{fam.key} / {fam.key}", n, reps, 1.0,
                    float(hit.mean()))


def meets_floor(c: Coverage, z: float = 0.0, rare: float = 0.01) -> bool:
    """Whether a coverage estimate satisfies the rule: at least COVERAGE_FLOOR - z MC standard
    errors among the printed intervals, or printed for at most `rare` of the samples."""
    if c.printed <= rare:
        return True
    return c.covered >= iv.COVERAGE_FLOOR - z * c.mc_se


def minimum_n(results: list[Coverage]) -> int | None:
    """The smallest n of the grid from which every family meets the floor at that n and every
    larger n simulated (None if even the largest does not)."""
    ns = sorted({c.n for c in results})
    # an n where no family gets an interval is no start (the median below 6 values)
    good = {n: all(meets_floor(c) for c in results if c.n == n)
            and any(c.printed > 0 for c in results if c.n == n) for n in ns}
    best = None
    for n in reversed(ns):
        if not good[n]:
            break
        best = n
    return best
