"""Confidence intervals faascope prints, and when it prints none (issue #25, item 5).

Every interval faascope prints comes from here, with the rule that decides whether it is printed:
a method is used only from the smallest n at which its simulated coverage at nominal 95 % is at
least 0.93 on every reference family (normal, lognormal σ = 0.25, 0.5 and 1, and warm latencies
with 5 % cold starts at 8×; :mod:`faascope.analysis.interval_coverage` defines them, simulates
every method and is the test's and the table's source). Below that n the interval is not
computed; the output says ``too few (n = 3; needs ≥ 100)`` instead (:func:`too_few`), and the JSON
has the interval null with a ``…_why`` key holding that text.

Methods (:data:`METHODS`; the minimum n of each is in :data:`MIN_N`):

- mean of positive values: the **bootstrap-t on the log scale** (Hall 1988; Efron & Tibshirani
  1993, ch. 12): T* = (log m* - log m) / (s* / (m* √n)) over B resamples, and
  [m·exp(-q(1-α/2)·se), m·exp(-q(α/2)·se)] with se = s / (m √n). Studentising gets the skewness
  of the mean's distribution right where Student's t does not, and the log scale keeps both ends
  positive. From :data:`LOG_T_FROM` on, or with ``n_boot = 0``: the **t interval on the log
  scale** m·exp(±t(1-α/2, n-1)·s / (m √n)) (delta method for log m), which covers there.
  Values ≤ 0 (a response that may be negative): the same two on the original scale. No
  interval where a few values dominate the mean (:data:`MEAN_MIN_EFFECTIVE_N`) or where it would
  reach beyond the values measured (:func:`mean_printable`): "a few values dominate the mean …".
- median: order statistics, [x(l), x(n-l+1)] with the exact binomial coverage ≥ 1 - α for every
  continuous distribution; the minimum n follows from the binomial (n = 6 at 95 %).
- coefficient of variation: the **delta method on the log scale**, cv·exp(±w·t(1-α/2, n-1)·se)
  (w = :data:`CV_WIDEN`), se² = Var(cv)/cv², Var(cv) ≈ (cv⁴ - cv³γ₁ + cv²(κ-1)/4)/n from the
  sample's skewness γ₁ and kurtosis κ. No method (delta, BCa, percentile, studentised bootstrap)
  reaches 93 % on skewed data below hundreds to thousands of values (lognormal σ = 0.5: n ≈ 1000;
  σ = 1: beyond 20,000; the coverage table in docs/analysis.md), so a CV interval is printed only
  for **tight** cells: log-scale spread (1.4826 · MAD of log x) at most :data:`TIGHT_LOG_SPREAD`
  and no value beyond :data:`FAR_FACTOR` times the median either way (a second mode such as cold
  starts, or a long tail). Else ``too skewed for a CV interval (…)``.
- CV difference and ratio between levels: each cell's CV drawn from its log-scale t
  approximation (cv·exp(w·se·T), T ~ t(n-1)), a level's draws the mean of its cells', and the
  percentile interval of the differences or ratios of the draws (the ratio's stays positive).
  Printed when every cell in both levels is tight and has at least MIN_N["cv-comparison"] values.

Positive quantities (durations, bytes/s, prices, CVs) thus get intervals that stay positive by
construction; :func:`faascope.report.numbers.si_ci` still marks a negative lower end of a
non-negative quantity (``0*``) should any other interval reach below zero.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: the coverage a printed interval's method reaches at its minimum n on every reference family,
#: simulated at nominal 95 % (other confidence levels use the same minimum n)
COVERAGE_FLOOR = 0.93

#: the largest log-scale spread (1.4826 · MAD of log x, = σ for lognormal data) of a tight cell
TIGHT_LOG_SPREAD = 0.25
#: a value more than this many times the median (or less than the median over it) is far: a mode or a tail
FAR_FACTOR = 3.0
#: the CV interval's half-width on the log scale is t·se times this. Choosing the cells that get
#: an interval by their spread favours samples whose CV came out low, so at the rule's boundary
#: (lognormal σ = TIGHT_LOG_SPREAD, half its samples printed) the plain interval covers 0.92 at
#: every n; widened by 10 % it covers ≥ 0.93 from n = 150 (tests/analysis/test_interval_coverage.py)
CV_WIDEN = 1.1


@dataclass(frozen=True)
class Method:
    key: str
    statistic: str
    name: str            # as the output names it
    reference: str


METHODS: dict[str, Method] = {m.key: m for m in [
    Method("boot-t-log", "mean", "bootstrap-t, log scale",
           "Hall (1988) Ann. Statist. 16(3); Efron & Tibshirani (1993) ch. 12, on log(mean)"),
    Method("log-t", "mean", "t, log scale", "delta method for log(mean); t(n-1) quantile"),
    Method("boot-t", "mean", "bootstrap-t", "Hall (1988); for responses with values ≤ 0"),
    Method("t", "mean", "Student t", "R t.test; for responses with values ≤ 0, large n"),
    Method("order-statistic", "median", "order statistics",
           "binomial coverage of [x(l), x(n-l+1)], e.g. Conover (1999) §3.2; exact"),
    Method("cv-log-t", "cv", "delta method, log scale",
           "delta-method Var(s/mean) from γ₁ and κ (no normality); interval on log cv with t(n-1)"),
    Method("cv-comparison", "cv difference / ratio", "delta draws, log scale",
           "per-cell log-scale t draws of the CV; percentile of the level differences / ratios"),
    Method("emm", "estimated marginal mean", "t (pooled model)",
           "slot for the estimated marginal means (issue #25 item 3); not simulated here"),
]}

#: the smallest n at which the method's simulated coverage at 95 % is ≥ 0.93 on every reference
#: family, and stays so at every larger n simulated; from `python3 bench/interval_coverage.py`
#: (the table in docs/analysis.md), checked by tests/analysis/test_interval_coverage.py.
#: (order-statistic: exact, see median_min_n; emm: to be set where it is simulated)
MIN_N: dict[str, int] = {
    "boot-t-log": 100,     # lognormal σ = 1: 0.926 at 75, 0.934 at 100; cold starts 0.957 at 75
    "log-t": 300,          # cold starts 0.929 at 200, 0.937 at 300; lognormal σ = 1 0.931 at 150
    "boot-t": 150,         # lognormal σ = 1: 0.929 at 100, 0.934 at 150
    "t": 300,              # cold starts 0.926 at 200; lognormal σ = 1 0.932 at 200
    "cv-log-t": 150,       # tight cells; at the boundary (lognormal σ = 0.25) 0.927 at 100, 0.939 at 150
    "cv-comparison": 75,   # the difference, normal vs lognormal σ = 0.25: 0.929 at 50, 0.942 at 75 (ratio: from 20)
}
#: from this n on the mean uses the t interval on the log scale (it covers there; no resampling)
LOG_T_FROM = MIN_N["log-t"]


@dataclass(frozen=True)
class CI:
    """An interval, or why there is none (``why``), and the method that made or refused it."""
    low: float | None = None
    high: float | None = None
    method: str | None = None
    why: str | None = None

    @property
    def bounds(self) -> list[float] | None:
        return None if self.low is None else [self.low, self.high]


def too_few(n: int, need: int) -> str:
    """The text printed instead of an interval: "too few (n = 3; needs ≥ 100)"."""
    return f"too few (n = {n}; needs ≥ {need})"


def without_ci(value_text: str, why: str | None) -> str:
    """A value printed without its interval, and why, the same in every table:
    "1.23 s, no CI: too few (n = 3; needs ≥ 100)"."""
    return f"{value_text}, no CI: {why}" if why and value_text not in ("", "–") else value_text


def refused(why: str, method: str | None = None) -> CI:
    return CI(None, None, method, why)


# ----------------------------------------------------------------------------------- the mean
#: the smallest effective sample size of the mean (Kish: (Σx)² / Σx²) at which a positive
#: sample's mean gets an interval. Below it a few values hold most of the sum (a rare mode far
#: above the rest: a few 90 ms CPU-quota waits among 230 µs calls) and the bootstrap-t covers
#: only by running to absurd ends (10¹⁰ s); an interval that does stay in range under-covers
#: (3 % at 350×, n = 100: 0.64 with a floor of 5). From 10 no printed interval of such a sample
#: holds the mode and under-covers, and every reference family keeps its intervals
#: (tests/analysis/test_interval_dominance.py simulates both).
MEAN_MIN_EFFECTIVE_N = 10


def effective_n(x: np.ndarray) -> np.ndarray:
    """Kish's effective sample size of the mean of each row of positive x: (Σx)² / Σx²."""
    return x.sum(-1) ** 2 / (x * x).sum(-1)


def mean_printable(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Which rows' mean intervals are printed: within the values measured (an interval beyond
    the sample's range says the values cannot place their mean) and, for positive values, an
    effective n of at least :data:`MEAN_MIN_EFFECTIVE_N`. Vectorised for the coverage
    simulation, which applies this very rule."""
    ok = (lo >= x.min(-1)) & (hi <= x.max(-1))
    positive = (x >= 0).all(-1)
    return ok & (~positive | (effective_n(np.where(positive[..., None], x, 1.0)) >= MEAN_MIN_EFFECTIVE_N))


def dominance_why(x: np.ndarray) -> str:
    """Why a mean gets no interval when a few values dominate it: "the largest 3 of 100 values
    hold 92 % of the sum (effective n 3.6 < 10)"."""
    v = np.sort(np.abs(x))[::-1]
    share = np.cumsum(v) / v.sum()
    k = int(np.searchsorted(share, 0.5) + 1)
    return (f"a few values dominate the mean: the largest {k} of {x.size} hold "
            f"{share[k - 1]:.0%} of the sum (effective n {float(effective_n(np.abs(x))):.1f}; "
            f"needs ≥ {MEAN_MIN_EFFECTIVE_N}); the median's interval holds")


def mean_min_n(n_boot: int = 2000, positive: bool = True) -> int:
    """The fewest values the mean's interval needs (with or without resampling)."""
    if positive:
        return MIN_N["boot-t-log"] if n_boot > 0 else MIN_N["log-t"]
    return MIN_N["boot-t"] if n_boot > 0 else MIN_N["t"]


def resample_counts(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(B, n) how often each value appears in each of B bootstrap resamples (multinomial)."""
    return rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(float)


def boot_t_bounds(x: np.ndarray, counts: np.ndarray, alpha: float, log: bool) -> tuple[np.ndarray, np.ndarray]:
    """Studentised-bootstrap bounds of the mean of every row of x (R, n), resampled by `counts`
    (B, n); on the log scale when `log`. Vectorised so the coverage simulation runs this very
    code."""
    n = x.shape[-1]
    m = x.mean(-1)
    s = x.std(-1, ddof=1)
    # einsum, not @: BLAS threads on a busy machine make these small products 10x slower
    mb = np.einsum("rn,bn->rb", x, counts) / n               # (R, B) resample means
    vb = np.maximum(np.einsum("rn,bn->rb", x * x, counts) / n - mb * mb, 0.0) * n / (n - 1)
    sb = np.sqrt(vb)
    with np.errstate(divide="ignore", invalid="ignore"):
        if log:
            tb = (np.log(mb) - np.log(m)[:, None]) / (sb / (mb * math.sqrt(n)))
        else:
            tb = (mb - m[:, None]) / (sb / math.sqrt(n))
    tb = np.where(np.isfinite(tb), tb, np.nan)              # resamples of one repeated value
    q = row_quantiles(tb, [alpha / 2, 1 - alpha / 2])
    if log:
        se = s / (m * math.sqrt(n))
        with np.errstate(over="ignore"):  # an unbounded end (too few distinct values) is inf
            return m * np.exp(-q[1] * se), m * np.exp(-q[0] * se)
    se = s / math.sqrt(n)
    return m - q[1] * se, m - q[0] * se


def row_quantiles(a: np.ndarray, probs) -> np.ndarray:
    """(len(probs), R) quantiles of every row of a (R, B), NaN left out, by numpy's default
    'linear' rule (as np.nanquantile, which loops over rows)."""
    s = np.sort(a, axis=1)                                   # NaN sorts last
    k = np.isfinite(s).sum(1)
    rows = np.arange(len(s))
    out = np.full((len(probs), len(s)), np.nan)
    for i, p in enumerate(probs):
        h = p * np.maximum(k - 1, 0)
        lo = np.floor(h).astype(int)
        hi = np.minimum(lo + 1, np.maximum(k - 1, 0))
        v = s[rows, lo] + (h - lo) * (s[rows, hi] - s[rows, lo])
        out[i] = np.where(k > 0, v, np.nan)
    return out


def t_bounds(x: np.ndarray, alpha: float, log: bool) -> tuple[np.ndarray, np.ndarray]:
    """Student-t bounds of the mean of every row of x, on the log scale (delta method) when `log`."""
    n = x.shape[-1]
    m = x.mean(-1)
    s = x.std(-1, ddof=1)
    t = float(stats.t.ppf(1 - alpha / 2, n - 1))
    if log:
        h = t * s / (m * math.sqrt(n))
        return m * np.exp(-h), m * np.exp(h)
    h = t * s / math.sqrt(n)
    return m - h, m + h


def mean_interval(values, alpha: float = 0.05, n_boot: int = 2000, seed=0) -> CI:
    """The interval of the mean of `values` (finite ones), or why there is none."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = int(x.size)
    positive = bool(n and np.all(x >= 0) and x.mean() > 0)
    need = mean_min_n(n_boot, positive)
    large = n >= (MIN_N["log-t"] if positive else MIN_N["t"])
    key = ("log-t" if positive else "t") if (large or n_boot <= 0) else ("boot-t-log" if positive else "boot-t")
    if n < need:
        return refused(too_few(n, need), METHODS[key].name)
    if np.ptp(x) == 0:
        return refused(f"no spread (all {n} values equal)", METHODS[key].name)
    if key in ("log-t", "t"):
        lo, hi = t_bounds(x[None, :], alpha, log=positive)
        name = METHODS[key].name
    else:
        rng = np.random.default_rng(seed)
        lo, hi = boot_t_bounds(x[None, :], resample_counts(n, n_boot, rng), alpha, log=positive)
        name = f"{METHODS[key].name} (B = {n_boot})"
    if not mean_printable(x[None, :], lo, hi)[0]:
        return refused(dominance_why(x), name)
    return CI(float(lo[0]), float(hi[0]), name)


# --------------------------------------------------------------------------------- the median
def median_ci_ranks(n: int, alpha: float) -> tuple[int, int, float] | None:
    """1-based ranks (l, u) of the order-statistic CI of the median and its exact coverage; None
    when even [min, max] covers less than 1 - α."""
    k = int(stats.binom.ppf(alpha / 2, n, 0.5))
    while k >= 0 and stats.binom.cdf(k, n, 0.5) > alpha / 2:
        k -= 1
    if k < 0:
        return None
    l = k + 1
    coverage = 1.0 - 2.0 * float(stats.binom.cdf(l - 1, n, 0.5))
    return l, n - l + 1, coverage


def median_min_n(alpha: float = 0.05) -> int:
    """The fewest values whose [min, max] covers the median with probability ≥ 1 - α: 1 - 2^(1-n)."""
    return max(2, math.ceil(1 - math.log2(alpha)))


def median_interval(sorted_values: np.ndarray, alpha: float = 0.05) -> tuple[CI, tuple[int, int, float] | None]:
    """The order-statistic interval of the median of sorted values, and (l, u, exact coverage)."""
    n = len(sorted_values)
    ranks = median_ci_ranks(n, alpha) if n else None
    if ranks is None:
        return refused(too_few(n, median_min_n(alpha)), METHODS["order-statistic"].name), None
    return CI(float(sorted_values[ranks[0] - 1]), float(sorted_values[ranks[1] - 1]),
              METHODS["order-statistic"].name), ranks


# ---------------------------------------------------------------------------- the CV
def cv_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CV (s / mean) of every row of x and the delta-method variance of its estimate, from the
    sample's skewness and kurtosis (no normality): (cv⁴ - cv³γ₁ + cv²(κ-1)/4) / n."""
    n = x.shape[-1]
    m = x.mean(-1)
    d = x - m[..., None]
    m2 = (d * d).mean(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        g1 = (d ** 3).mean(-1) / m2 ** 1.5
        kurt = (d ** 4).mean(-1) / m2 ** 2
        cv = np.sqrt(m2 * n / (n - 1)) / m
    return cv, np.where(m2 > 0, cv_delta_var(cv, g1, kurt, n), 0.0)


def cv_delta_var(cv, g1, kurt, n: int):
    """The delta-method variance of a sample CV from the sample's skewness γ₁ and kurtosis κ (no
    normality): (cv⁴ - cv³γ₁ + cv²(κ-1)/4) / n, never below 0. The CV's interval and the CV test
    (cv_test.py) both use it."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.maximum((cv ** 4 - cv ** 3 * g1 + cv ** 2 * (kurt - 1) / 4) / n, 0.0)


def cv_log_se(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cv, standard error of log cv) of every row of x."""
    cv, var = cv_moments(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return cv, np.sqrt(var) / cv


def tightness(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tight?, log-scale spread, farthest value as a multiple of the median) of every row of
    positive values x: tight when the spread (1.4826 · MAD of log x) is at most TIGHT_LOG_SPREAD
    and every value is within FAR_FACTOR of the median."""
    lx = np.log(x)
    med = np.median(lx, axis=-1)
    dev = np.abs(lx - med[..., None])
    spread = 1.4826 * np.median(dev, axis=-1)
    far = np.exp(dev.max(-1))
    return (spread <= TIGHT_LOG_SPREAD) & (far <= FAR_FACTOR), spread, far


def spread_refusal(x: np.ndarray, need: int, what: str) -> str | None:
    """Why a sample's CV cannot enter `what` ("CV interval", "CV test"): too few values, a value
    not positive, or no spread at all; None when none of these holds."""
    n = len(x)
    if n < need:
        return too_few(n, need)
    if not np.all(x > 0):
        return f"no {what}: it needs positive values"
    if np.ptp(x) == 0:
        return f"no spread (all {n} values equal)"
    return None


def cv_refusal(x: np.ndarray, need: int) -> str | None:
    """Why a sample gets no CV interval (or comparison) with `need` values required; None when it does."""
    why = spread_refusal(x, need, "CV interval")
    if why:
        return why
    ok, spread, far = tightness(x[None, :])
    if ok[0]:
        return None
    if spread[0] > TIGHT_LOG_SPREAD:
        return f"too skewed for a CV interval (log-scale spread {spread[0]:.2f} > {TIGHT_LOG_SPREAD:g})"
    if far[0] > FAR_FACTOR:
        med = float(np.median(x))
        where = (f"{x.max() / med:.3g}× the median" if x.max() / med >= med / x.min()
                 else f"1/{med / x.min():.3g} of the median")
        return f"too skewed for a CV interval (a value {where}: a second mode or a long tail)"
    return None


def cv_bounds(cv: np.ndarray, se_log: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """cv·exp(±CV_WIDEN·t(1-α/2, n-1)·se) for every row."""
    t = CV_WIDEN * float(stats.t.ppf(1 - alpha / 2, n - 1))
    return cv * np.exp(-t * se_log), cv * np.exp(t * se_log)


def cv_interval(values, alpha: float = 0.05) -> CI:
    """The interval of the coefficient of variation, or why there is none."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    name = METHODS["cv-log-t"].name
    why = cv_refusal(x, MIN_N["cv-log-t"])
    if why:
        return refused(why, name)
    cv, se = cv_log_se(x[None, :])
    lo, hi = cv_bounds(cv, se, len(x), alpha)
    return CI(float(lo[0]), float(hi[0]), name)


def cv_draws(values, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """`n_draws` draws of the CV from its log-scale t approximation, cv·exp(se·T), T ~ t(n-1);
    all NaN when the cell cannot be compared (cv_refusal with MIN_N["cv-comparison"])."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if cv_refusal(x, MIN_N["cv-comparison"]) is not None:
        return np.full(n_draws, np.nan)
    cv, se = cv_log_se(x[None, :])
    return cv_draws_from(cv, se, len(x), n_draws, rng)[0]


def cv_draws_from(cv: np.ndarray, se_log: np.ndarray, n: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """(R, n_draws) draws cv·exp(CV_WIDEN·se·T), T ~ t(n-1), for every cell of R."""
    return cv[:, None] * np.exp(CV_WIDEN * se_log[:, None] * rng.standard_t(n - 1, (len(cv), n_draws)))


def percentile_ci(draws: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) percentile interval of draws along the last axis (NaN where any draw is NaN)."""
    q = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=-1)
    return q[0], q[1]


def interval_note(n_boot: int = 2000) -> str:
    """One line for an output's notes: which intervals are printed, and from how many values."""
    return (f"Intervals are printed only where they cover: the mean's ({'bootstrap-t' if n_boot > 0 else 't'} "
            f"on the log scale) from n = {mean_min_n(n_boot)}, the median's from n = {median_min_n()}, the CV's "
            f"from n = {MIN_N['cv-log-t']} in tight cells (log-scale spread ≤ {TIGHT_LOG_SPREAD:g}, no value "
            f"beyond {FAR_FACTOR:g}× the median) and so are CV comparisons; otherwise the output says why "
            "(docs/analysis.md, 'Which intervals are printed').")
