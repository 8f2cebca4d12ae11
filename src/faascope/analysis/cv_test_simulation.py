"""Simulated false-call rates and power of the CV test (cv_test.py): the evidence behind its
choice and its minimum n (issue #25).

A *false call* is the test rejecting at nominal 5 % when the two cells' CVs are equal: the
decision would then name one of them "more predictable". Nulls:

- ``same``: both cells from one reference family of interval_coverage.FAMILIES (normal CV 15 %,
  lognormal σ = 0.25 / 0.5 / 1, 5 % cold starts at 8×), the second scaled by `scale` (means
  apart, CVs equal), equal or unequal n.
- ``cross``: equal CVs, different shapes: the cold-start mixture (CV 119 %) against a lognormal
  of the same CV (σ = 0.94), and normal CV 20 % against a lognormal of CV 20 %. Not a null the
  permutation is exact under; the rates show what no CV test escapes at small n (a cell too small
  to contain the rare mode looks tight).
- ``strata``: a level of two cells against another, two strata (normal CV 15 %; cold starts),
  the "all" row's test.

Power: lognormal cells of CV 8.6 % against 25.2 % (the thesis's READ / 1024 MB levels), 20 %
against 40 %, and gamma cells of the same CVs.

The test is faascope's own (cv_test.py), run on a (replicates, n) array at once; the B
re-allocations are shared by a block of replicates (they are independent of the data, so each
replicate's test stays exact and the rate unbiased). Also the tests of spread on the log scale
that were not chosen, for the table's contrast: Brown-Forsythe (scipy.stats.levene(center=
"median") = R's car::leveneTest) and Fligner-Killeen (scipy.stats.fligner = R's fligner.test),
and the permutation test without studentizing.

``python3 bench/cv_test.py`` prints the tables in docs/analysis.md; tests/analysis/test_cv_test.py
runs a smaller grid.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats

from faascope.analysis import cv_test as ct
from faascope.analysis.interval_coverage import FAMILIES

Draw = Callable[[np.random.Generator, tuple], np.ndarray]

BLOCK = 20  # replicates that share one set of re-allocations (few: a shared set correlates their calls)


def lognormal_cv(cv: float) -> Draw:
    """Lognormal values of the given CV (σ = √log(1 + cv²))."""
    s = math.sqrt(math.log1p(cv * cv))
    return lambda rng, shape: np.exp(s * rng.standard_normal(shape))


def normal_cv(cv: float) -> Draw:
    """Normal values of the given CV, reflected at 0 (at CV 20 % a value is negative with
    probability 3e-7, and a latency never is)."""
    return lambda rng, shape: np.abs(1.0 + cv * rng.standard_normal(shape))


def gamma_cv(cv: float) -> Draw:
    """Gamma values of the given CV (shape 1/cv²): positive and mildly right-skewed, where a
    normal of CV 40 % would give negative latencies."""
    k = 1.0 / (cv * cv)
    return lambda rng, shape: rng.gamma(k, 1.0 / k, shape)


COLD = FAMILIES["cold starts"]
#: equal-CV pairs of different shapes
CROSS: dict[str, tuple[Draw, Draw]] = {
    "cold starts / lognormal of equal CV": (COLD.draw, lognormal_cv(COLD.cv)),
    "normal CV 20 % / lognormal CV 20 %": (normal_cv(0.20), lognormal_cv(0.20)),
}
#: (label, first cell, second cell): power at realistic differences
POWER: dict[str, tuple[Draw, Draw]] = {
    "lognormal, CV 8.6 % vs 25.2 %": (lognormal_cv(0.086), lognormal_cv(0.252)),
    "gamma, CV 8.6 % vs 25.2 %": (gamma_cv(0.086), gamma_cv(0.252)),
    "lognormal, CV 20 % vs 40 %": (lognormal_cv(0.20), lognormal_cv(0.40)),
    "gamma, CV 20 % vs 40 %": (gamma_cv(0.20), gamma_cv(0.40)),
}


@dataclass
class Rate:
    test: str
    case: str
    n1: int
    n2: int
    reps: int
    rate: float         # share of replicates with p ≤ α (for power: a meaningful call the right way)

    @property
    def mc_se(self) -> float:
        """Monte-Carlo standard error of a rate at the nominal 5 %."""
        return math.sqrt(0.05 * 0.95 / self.reps)


def cv_test_p(xa: np.ndarray, xb: np.ndarray, B: int, rng: np.random.Generator,
              studentize: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """p-values of the CV test between the rows of xa (R, n1) and xb (R, n2), and the observed
    CVs of each, with B re-allocations shared by blocks of rows."""
    R, n1 = xa.shape
    n2 = xb.shape[1]
    p = np.empty(R)
    ua, ub = ct.scaled(xa), ct.scaled(xb)
    cva, vara = ct.cv_and_var(ct.power_sums(ua), n1)
    cvb, varb = ct.cv_and_var(ct.power_sums(ub), n2)
    for s in range(0, R, BLOCK):
        e = min(R, s + BLOCK)
        u = np.concatenate([ua[s:e], ub[s:e]], axis=1)
        first, second = ct.permuted_sums(u, ct.members(n1, n1 + n2, B, rng))
        c1, v1 = ct.cv_and_var(first, n1)
        c2, v2 = ct.cv_and_var(second, n2)
        if studentize:
            t_obs = ct.statistic(cva[s:e], vara[s:e], cvb[s:e], varb[s:e])
            t_perm = ct.statistic(c1, v1, c2, v2)
        else:
            t_obs = np.log(cvb[s:e] / cva[s:e])
            t_perm = np.log(c2 / c1)
        p[s:e] = ct.p_value(t_obs, t_perm)
    return p, cva, cvb


def spread_test_p(xa: np.ndarray, xb: np.ndarray, which: str) -> np.ndarray:
    """p-values of Brown-Forsythe ("levene", center = median) or Fligner-Killeen ("fligner") on
    the log values of every row pair (the tests not chosen)."""
    fn = stats.levene if which == "levene" else stats.fligner
    kw = {"center": "median"} if which == "levene" else {}
    la, lb = np.log(xa), np.log(xb)
    return np.array([fn(a, b, **kw).pvalue for a, b in zip(la, lb)])


def _draw(fa: Draw, fb: Draw, n1: int, n2: int, reps: int, scale: float, rng):
    return fa(rng, (reps, n1)), scale * fb(rng, (reps, n2))


def null_rate(case: str, fa: Draw, fb: Draw, n1: int, n2: int, reps: int, seed: int, B: int = 199,
              scale: float = 3.0, test: str = "cv", alpha: float = 0.05) -> Rate:
    """The share of replicates in which `test` ("cv", "cv unstudentized", "levene", "fligner")
    rejects at α between a cell of `fa` and one of `fb` scaled by `scale`."""
    rng = np.random.default_rng(seed)
    xa, xb = _draw(fa, fb, n1, n2, reps, scale, rng)
    if test in ("levene", "fligner"):
        p = spread_test_p(xa, xb, test)
    else:
        p = cv_test_p(xa, xb, B, rng, studentize=test == "cv")[0]
    return Rate(test, case, n1, n2, reps, float(np.mean(p <= alpha)))


def same_family_rate(family: str, n1: int, n2: int, reps: int, seed: int, **kw) -> Rate:
    f = FAMILIES[family].draw
    return null_rate(family, f, f, n1, n2, reps, seed, **kw)


def cross_rate(case: str, n1: int, n2: int, reps: int, seed: int, **kw) -> Rate:
    fa, fb = CROSS[case]
    return null_rate(case, fa, fb, n1, n2, reps, seed, **kw)


def strata_rate(n: int, reps: int, seed: int, B: int = 199, alpha: float = 0.05) -> Rate:
    """The "all" row's test with two strata under the null: stratum 1 normal CV 15 %, stratum 2
    cold starts, each the same shape in both levels (level b 3× slower), `n` values a cell.
    Runs cv_test.CvTest itself, one replicate at a time (it is the production path)."""
    rng = np.random.default_rng(seed)
    fams = [FAMILIES["normal"].draw, COLD.draw]
    hits = 0
    for r in range(reps):
        cells = [f(rng, (n,)) for f in fams] + [3.0 * f(rng, (n,)) for f in fams]
        t = ct.CvTest(cells, B, seed=int(rng.integers(1 << 31)), need=n)
        res = t.compare([0, 1], [2, 3], [(0, 2), (1, 3)])
        hits += res["p_value"] is not None and res["p_value"] <= alpha
    return Rate("cv", "two strata (normal CV 15 %; cold starts)", n, n, reps, hits / reps)


def power(case: str, n1: int, n2: int, reps: int, seed: int, B: int = 199, alpha: float = 0.05,
          threshold_pp: float = 10.0) -> Rate:
    """The share of replicates the decision calls the first cell (the lower CV) more predictable:
    p ≤ α, the observed CV difference at least `threshold_pp` percentage points and the right way."""
    fa, fb = POWER[case]
    rng = np.random.default_rng(seed)
    xa, xb = _draw(fa, fb, n1, n2, reps, 3.0, rng)
    p, cva, cvb = cv_test_p(xa, xb, B, rng)
    called = (p <= alpha) & (100 * (cvb - cva) >= threshold_pp)
    return Rate("cv", case, n1, n2, reps, float(np.mean(called)))
