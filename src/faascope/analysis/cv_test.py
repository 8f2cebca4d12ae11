"""Is one level's CV lower than another's? The test behind every predictability decision.

**Studentized permutation test of the CV ratio** (Janssen 1997; Chung & Romano 2013, "Exact and
asymptotically robust permutation tests", Ann. Statist. 41(2)), on values scaled by their cell's
median:

1. Each cell's values are divided by the cell's median, so cells that differ only in scale (the
   same shape, hence the same CV) become exchangeable. The CV does not change by scaling, so the
   statistic below is the same on the scaled values as on the raw ones.
2. A level's CV is the mean of its cells' CVs (predictability.py), its variance the sum of the
   cells' delta-method variances Var(cv) = (cv⁴ - cv³γ₁ + cv²(κ-1)/4)/n (intervals.cv_delta_var,
   no normality), over the number of cells squared. The statistic is
   T = (log CV_b - log CV_a) / √(Var_a/CV_a² + Var_b/CV_b²).
3. Its null distribution: B random re-allocations of the scaled values between the two cells
   of each *stratum* (the cells of a and b that share the other factors' levels; one stratum in
   a row "within"), every stratum independently; p = (1 + #{|T*| ≥ |T|}) / (B + 1).

Why this test (simulated in :mod:`faascope.analysis.cv_test_simulation`, the table in
docs/analysis.md): under the null that two cells have the same distribution up to scale (equal
CV on normal, lognormal σ = 0.25 / 0.5 / 1 and the 5 %-cold-start mixture; equal and unequal n,
means 3× apart) it rejects at the nominal rate from n = 10, because the permutation reproduces
whatever skew the CV's sampling distribution has, which no interval method manages below
thousands of values (intervals.py). Studentizing keeps it asymptotically valid when the shapes
differ but the CVs are equal (Chung & Romano), where an unstudentized permutation test is not.
Tests of spread on the log scale (Brown-Forsythe / Levene with the median, Fligner-Killeen,
R's car::leveneTest and fligner.test) are as exact under that null but answer another question:
a cell with 5 % cold starts at 8× and a lognormal cell of the same CV (119 %) differ for them in
89-100 % of samples from n = 30 on, so they would name one "more predictable" by its log-scale
spread whatever the CVs are. A bootstrap-t of the log CV ratio rejects 0.23 (cold starts, n = 10)
and 0.13 (lognormal σ = 1, 30 against 150 values).

What it cannot do: a cell too small to contain a rare mode looks tight. With 5 % cold starts
against a lognormal of equal CV it calls one "more predictable" in 46 % of samples of 10 a cell
and 22 % of 30, and 5-14 % from 90 on (the sample CV of a lognormal σ ≈ 1 is biased low at every
n a campaign reaches, so no CV test can do better there). Hence :data:`MIN_N`: a cell must have
enough values to see a 5 % mode with probability 0.99, the same 90 that a pilot needs
(precision.MIN_PILOT_N).

A cell enters only with positive values that are not all equal (else its CV has no log and no
variance): :func:`refusal` says why not, in the words the tables print.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from faascope.analysis.intervals import cv_delta_var, spread_refusal
from faascope.analysis.precision import MIN_PILOT_N

#: as the output names the test
NAME = "studentized permutation test of the CV ratio on values scaled by their cell's median"
SHORT = "CV permutation test"
REFERENCE = "Janssen (1997) Stat. Probab. Lett. 36; Chung & Romano (2013) Ann. Statist. 41(2)"

#: the fewest values a cell needs for its CV to be compared: a cell of n values misses a mode
#: that 5 % of invocations fall in with probability 0.95^n, ≤ 0.01 from 90 on (the pilot's rule,
#: one constant); the simulated false-call rates behind it are in docs/analysis.md
MIN_N = MIN_PILOT_N
#: permutations when the caller asks for none (--bootstrap 0 means "no resampling for the mean")
DEFAULT_PERMUTATIONS = 2000
#: permutations are drawn in blocks of this many (memory: block × values of the two cells)
BLOCK = 256
#: re-allocations kept for reuse up to this many bytes (one bool per value and permutation)
CACHE_BYTES = 256 * 2 ** 20
#: a cell with more values is tested on a seeded random sample of this many (without
#: replacement, so still independent values of the cell): the permutations cost B × n, 0.15 s a
#: pair of cells at 2000 values each and 0.4 s at 5000, and at 2000 values a cell a CV of 20 %
#: against 30 % (lognormal) gives T = 14-18 (20 samples), far beyond any permutation's reach
MAX_N = 2000


def refusal(x: np.ndarray, need: int = MIN_N) -> str | None:
    """Why a cell's CV cannot be tested (None when it can)."""
    return spread_refusal(x, need, "CV test")


def scaled(x: np.ndarray) -> np.ndarray:
    """The values over their median, minus 1: the scale removed (step 1), centred near 0 so that
    the power sums below keep their precision when the CV is tiny."""
    return x / np.median(x, axis=-1, keepdims=True) - 1.0


def power_sums(u: np.ndarray) -> np.ndarray:
    """(4, ...) sums of u, u², u³, u⁴ over the last axis."""
    return np.stack([np.sum(u ** k, axis=-1) for k in (1, 2, 3, 4)])


def cv_and_var(sums: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CV and the delta-method Var(cv) of samples given by their power sums (4, ...) of the
    scaled values u = z - 1 (z the values over a common scale; central moments do not depend on
    the shift, the mean of z is 1 + mean u)."""
    s1, s2, s3, s4 = (sums[k] / n for k in range(4))
    m2 = s2 - s1 * s1
    m3 = s3 - 3 * s1 * s2 + 2 * s1 ** 3
    m4 = s4 - 4 * s1 * s3 + 6 * s1 * s1 * s2 - 3 * s1 ** 4
    with np.errstate(divide="ignore", invalid="ignore"):
        cv = np.sqrt(np.maximum(m2, 0.0) * n / (n - 1)) / (1.0 + s1)
        g1 = m3 / m2 ** 1.5
        kurt = m4 / m2 ** 2
    return cv, np.where(m2 > 0, cv_delta_var(cv, g1, kurt, n), np.nan)


def statistic(cv_a, var_a, cv_b, var_b) -> np.ndarray:
    """T = (log CV_b - log CV_a) / √(Var_a/CV_a² + Var_b/CV_b²) for level CVs and their variances."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.log(cv_b) - np.log(cv_a)) / np.sqrt(var_a / cv_a ** 2 + var_b / cv_b ** 2)


def members(n1: int, n: int, b: int, rng: np.random.Generator) -> np.ndarray:
    """(b, n) 0/1 rows, each marking a random n1 of n positions: one re-allocation each."""
    idx = np.argpartition(rng.random((b, n)), n1 - 1, axis=1)[:, :n1] if n1 < n else np.tile(np.arange(n), (b, 1))
    m = np.zeros((b, n))
    np.put_along_axis(m, idx, 1.0, axis=1)
    return m


def permuted_sums(u: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Power sums (4, R, B) of the first cell and of the second under each re-allocation of m
    (B, N), for every row of the pooled scaled values u (R, N). One product per power: the
    simulation runs this very code on thousands of rows at once."""
    pw = np.stack([u ** k for k in (1, 2, 3, 4)])                      # (4, R, N)
    # einsum, not @: BLAS threads on a busy machine make these small products slower
    first = np.einsum("krn,bn->krb", pw, m)
    return first, pw.sum(-1)[..., None] - first


def p_value(t_obs: np.ndarray, t_perm: np.ndarray) -> np.ndarray:
    """(1 + #{|T*| ≥ |T|}) / (B + 1) per row; a re-allocation whose T* is undefined (a permuted
    cell of equal values) counts as extreme, so it can only make p larger."""
    b = t_perm.shape[-1]
    extreme = ~(np.abs(t_perm) < np.abs(t_obs)[..., None] * (1 - 1e-12))
    return (1 + extreme.sum(-1)) / (b + 1)


@dataclass
class Cell:
    n: int
    u: np.ndarray          # scaled values
    cv: float
    var: float


class CvTest:
    """The test on one design's cells: `samples[c]` the values of cell c (`need` values at least;
    smaller only in the simulation below the minimum). The permuted CVs of every pair of cells
    are computed once and shared by every comparison that pairs them; the re-allocations are
    seeded by the cells' sizes, so no result depends on which comparison asks first."""

    def __init__(self, samples: list[np.ndarray], permutations: int, seed: int, need: int = MIN_N):
        self.B = permutations if permutations > 0 else DEFAULT_PERMUTATIONS
        self.seed = seed
        self.why = [refusal(np.asarray(x, float), need) for x in samples]
        self.cells: list[Cell | None] = []
        for c, (x, why) in enumerate(zip(samples, self.why)):
            if why:
                self.cells.append(None)
                continue
            x = np.asarray(x, float)
            if len(x) > MAX_N:
                x = np.random.default_rng([seed, c, MAX_N]).choice(x, MAX_N, replace=False)
            u = scaled(x)
            cv, var = cv_and_var(power_sums(u), len(u))
            self.cells.append(Cell(len(u), u, float(cv), float(var)))
        self._pairs: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        self._members_cache: dict[tuple[int, int], np.ndarray] = {}

    def _members(self, n1: int, n2: int) -> np.ndarray:
        """(B, n1 + n2) re-allocations for two cells of n1 and n2 values, seeded by the sizes: every
        pair of cells of those sizes shares them (each test stays exact: the re-allocations do
        not depend on the data), so a balanced design, or one whose cells all exceed MAX_N, draws
        them once. Strata of equal sizes in one comparison then re-allocate alike: that samples the
        subgroup of joint re-allocations that permute every stratum the same way, under which the
        null distribution is invariant too, so the test stays exact (the two-strata simulation
        runs this case). Kept while they fit in CACHE_BYTES; redrawn identically when needed."""
        key = (n1, n2)
        if key not in self._members_cache:
            if sum(m.nbytes for m in self._members_cache.values()) > CACHE_BYTES:
                self._members_cache.clear()
            rng = np.random.default_rng([self.seed, n1, n2])
            self._members_cache[key] = np.concatenate(
                [members(n1, n1 + n2, min(BLOCK, self.B - s), rng).astype(bool) for s in range(0, self.B, BLOCK)])
        return self._members_cache[key]

    def _pair(self, c1: int, c2: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(cv1*, var1*, cv2*, var2*) of cells c1 and c2 under B re-allocations of their values."""
        key = (min(c1, c2), max(c1, c2))
        if key not in self._pairs:
            a, b = self.cells[key[0]], self.cells[key[1]]
            u = np.concatenate([a.u, b.u])[None, :]
            m = self._members(a.n, b.n)
            out = [np.empty(self.B) for _ in range(4)]
            for s in range(0, self.B, BLOCK):
                e = min(self.B, s + BLOCK)
                first, second = permuted_sums(u, m[s:e].astype(float))
                out[0][s:e], out[1][s:e] = (v[0] for v in cv_and_var(first, a.n))
                out[2][s:e], out[3][s:e] = (v[0] for v in cv_and_var(second, b.n))
            self._pairs[key] = tuple(out)
        d = self._pairs[key]
        return d if c1 < c2 else (d[2], d[3], d[0], d[1])

    def compare(self, cells_a: list[int], cells_b: list[int], strata: list[tuple[int, int]]) -> dict:
        """The test of level b's CV against level a's: `cells_a`, `cells_b` the cells of each (their
        CVs' mean is the level's), `strata` the pairs (cell of a, cell of b) whose values are
        re-allocated between them (unpaired cells keep theirs). Returns ``test``, ``statistic``
        (T, > 0 when b's CV is higher), ``p_value``, ``permutations`` and ``test_why`` (why there
        is no test, the others then None)."""
        why = [self.why[c] for c in list(cells_a) + list(cells_b) if self.why[c]]
        if why:
            more = f"; {len(why) - 1} more cell(s) without a CV test" if len(why) > 1 else ""
            return {"test": NAME, "statistic": None, "p_value": None, "permutations": None,
                    "test_why": why[0] + more}
        if not strata:
            return {"test": NAME, "statistic": None, "p_value": None, "permutations": None,
                    "test_why": "no combination of the other factors has both levels"}

        def level(cells, draws=None):
            cv = np.array([self.cells[c].cv for c in cells], float)[:, None] * np.ones(self.B if draws else 1)
            var = np.array([self.cells[c].var for c in cells], float)[:, None] * np.ones(self.B if draws else 1)
            for c, (dcv, dvar) in (draws or {}).items():
                i = list(cells).index(c)
                cv[i], var[i] = dcv, dvar
            k = len(cells)
            return cv.mean(0), var.sum(0) / (k * k)

        t_obs = statistic(*level(cells_a), *level(cells_b))[0]
        if not math.isfinite(t_obs):
            return {"test": NAME, "statistic": None, "p_value": None, "permutations": None,
                    "test_why": "no CV test: a level's CV has no variance"}
        da, db = {}, {}
        for ca, cb in strata:
            cva, vara, cvb, varb = self._pair(ca, cb)
            da[ca], db[cb] = (cva, vara), (cvb, varb)
        t_perm = statistic(*level(cells_a, da), *level(cells_b, db))
        return {"test": NAME, "statistic": float(t_obs), "p_value": float(p_value(np.array(t_obs), t_perm)),
                "permutations": self.B, "test_why": None}


def holm(p: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment (R's p.adjust(p, "holm")) over the p-values given; None
    (no test) stays None and is not counted. The one Holm of faascope (analyze's CV tests,
    compare's cells).

    Not statsmodels' ``multipletests(method="holm")``, whose Holm branch (0.14, 0.15) runs a
    full ``gc.collect()`` on every call: 0.1 s each in a process holding pandas, scipy and a
    report's figures, 2.4 s of the 2024 study's report. The adjustment itself is two lines:
    the k-th smallest of n p-values times n - k + 1, made monotone, capped at 1
    (tests/analysis/test_cv_test.py checks it against R's p.adjust and statsmodels')."""
    idx = [i for i, v in enumerate(p) if v is not None]
    out: list[float | None] = [None] * len(p)
    if idx:
        v = np.asarray([p[i] for i in idx], float)
        order = np.argsort(v, kind="stable")
        adj = np.minimum(1.0, np.maximum.accumulate(v[order] * np.arange(len(v), 0, -1)))
        for k, a in zip(order, adj):
            out[idx[k]] = float(a)
    return out
