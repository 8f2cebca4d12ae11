"""Predictability: the coefficient of variation (CV = s/mean) and differences between levels.

The CV of a *level* of a factor is the unweighted mean of the CVs of the cells at that level (one
CV per configuration of the other factors, as a study's per-cell tables show them), so a level is
not penalised for the spread *between* the other factors' levels.

Whether two levels' CVs differ is decided by a **test** (cv_test.py: a studentized permutation
test of the CV ratio on values scaled by their cell's median, re-allocated within each
combination of the other factors), Holm-adjusted over the pairs of levels of one family (a
factor's levels here, a decision row's in decisions.py). Its false-call rate is at the nominal
5 % on normal, lognormal and cold-start data from cv_test.MIN_N values a cell; below that, or
with a cell of non-positive or equal values, the pair has no test (``test_why`` says why) and is
not meaningful.

Two criteria say when a difference counts (the output names the one used), each *and* the
test's adjusted p ≤ α:
- "difference" (default, as in the 2024 thesis): |ΔCV| ≥ the negligible threshold (default 10
  percentage points). Absolute: CV 0.1 % against 7.2 % is "no difference".
- "ratio": the larger CV is at least `ratio_threshold` times the smaller (default 1.5).
  Relative: 0.1 % against 7.2 % is a 72-fold difference.

The difference and the ratio are shown with intervals where those cover (percentile intervals of
B draws per cell from each CV's log-scale t approximation, intervals.cv_draws: every cell of
both levels *tight* with at least intervals.MIN_N["cv-comparison"] values; otherwise null and
``ci_why`` says why). The decision never reads them: on skewed cells they would not cover.
A level whose CV is undefined (a cell with mean 0) is never compared.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from faascope.analysis import intervals as iv
from faascope.analysis.cv_test import NAME as CV_TEST, CvTest, holm
from faascope.analysis.design import Design


def cv_draws(design: Design, n_boot: int, seed: int, bootstrap_max_n: int = 5000) -> np.ndarray:
    """(C, B) draws of every cell's CV (B = n_boot, or 2000 when 0) from its log-scale t
    approximation; a row of NaN for a cell whose CV cannot be compared (cell_refusals).
    `bootstrap_max_n` is kept for the callers' signature."""
    B = n_boot if n_boot > 0 else 2000
    out = np.empty((len(design.counts), B))
    for c, idx in enumerate(design.rows_of_cells()):
        out[c] = iv.cv_draws(design.y[idx], B, np.random.default_rng([seed, c]))
    return out


def cell_refusals(design: Design) -> list[str | None]:
    """Per cell, why its CV cannot enter a comparison with an interval (None when it can)."""
    return [iv.cv_refusal(design.y[idx], iv.MIN_N["cv-comparison"]) for idx in design.rows_of_cells()]


CRITERIA = ("difference", "ratio")


def comparison_why(whys: list[str | None]) -> str | None:
    """The first reason among a comparison's cells, naming how many more cells fall short."""
    bad = [w for w in whys if w]
    if not bad:
        return None
    return bad[0] if len(bad) == 1 else f"{bad[0]}; {len(bad) - 1} more cell(s) without a CV interval"


def _ci(d: np.ndarray, alpha: float) -> list[float] | None:
    d = d[np.isfinite(d)]
    if len(d) < 2:
        return None
    lo, hi = np.quantile(d, [alpha / 2, 1 - alpha / 2])
    return [float(lo), float(hi)]


def compare_cvs(cv_a: float, cv_b: float, draws_a: np.ndarray, draws_b: np.ndarray, alpha: float,
                threshold_pp: float, criterion: str = "difference", ratio_threshold: float = 1.5,
                p_adj: float | None = None) -> dict:
    """CV(b) - CV(a) in percentage points and CV(b) / CV(a), each with its CI where it covers, and
    whether the difference counts under `criterion`: the test's adjusted p-value `p_adj` ≤ α and
    the difference (or ratio) at least the threshold."""
    if not (math.isfinite(cv_a) and math.isfinite(cv_b)):
        return {"cv_diff_pp": None, "cv_diff_ci_pp": None, "ci_excludes_zero": False,
                "exceeds_threshold": False, "cv_ratio": None, "cv_ratio_ci": None,
                "meaningful": False, "undefined": True}
    diff = 100.0 * (cv_b - cv_a)
    ci = _ci(draws_b - draws_a, alpha)
    ci = [100.0 * v for v in ci] if ci else None
    excludes_zero = bool(ci and (ci[0] > 0 or ci[1] < 0))
    ratio = cv_b / cv_a if cv_a > 0 else (math.inf if cv_b > 0 else None)
    with np.errstate(divide="ignore", invalid="ignore"):
        rci = _ci(draws_b / draws_a, alpha)
    excludes_one = bool(rci and (rci[0] > 1 or rci[1] < 1))
    big = ratio is not None and max(ratio, 1 / ratio if ratio else math.inf) >= ratio_threshold
    relevant = big if criterion == "ratio" else abs(diff) >= threshold_pp
    supported = p_adj is not None and p_adj <= alpha
    return {"cv_diff_pp": diff, "cv_diff_ci_pp": ci, "ci_excludes_zero": excludes_zero,
            "exceeds_threshold": bool(abs(diff) >= threshold_pp),
            "cv_ratio": ratio, "cv_ratio_ci": rci, "ci_excludes_one": excludes_one,
            "meaningful": bool(supported and relevant)}


def level_cvs(design: Design, cell_cv: np.ndarray, draws: np.ndarray, factor: int,
              cells: np.ndarray | None = None) -> tuple[dict, dict]:
    """Mean per-cell CV per level of `factor` (over `cells`, default all) and its draws."""
    cells = np.arange(len(design.counts)) if cells is None else cells
    cv, dr = {}, {}
    for k, level in enumerate(design.levels[design.factors[factor]]):
        sel = cells[design.cell_codes[cells, factor] == k]
        vals = cell_cv[sel]
        cv[level] = float(np.mean(vals)) if len(sel) and np.all(np.isfinite(vals)) else float("nan")
        dr[level] = draws[sel].mean(axis=0) if np.isfinite(cv[level]) else np.full(draws.shape[1], np.nan)
    return cv, dr


def cv_test(design: Design, n_perm: int, seed: int) -> CvTest:
    """The CV test on the design's cells (cv_test.CvTest), `n_perm` re-allocations (2000 when 0)."""
    return CvTest([design.y[idx] for idx in design.rows_of_cells()], n_perm, seed)


def level_pair(design: Design, factor: int, ka: int, kb: int,
               cells: np.ndarray | None = None) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """The cells (among `cells`, default all) of level ka and of level kb of `factor`, and the
    strata: pairs of a cell of each that share the other factors' levels."""
    cells = np.arange(len(design.counts)) if cells is None else np.asarray(cells)
    codes = design.cell_codes
    ca = [int(c) for c in cells if codes[c, factor] == ka]
    cb = [int(c) for c in cells if codes[c, factor] == kb]
    others = [j for j in range(codes.shape[1]) if j != factor]
    strata = [(a, b) for a in ca for b in cb if np.array_equal(codes[a, others], codes[b, others])]
    return ca, cb, strata


def cv_comparisons(design: Design, test: CvTest, factor: int, cell_cv: np.ndarray, draws: np.ndarray,
                   alpha: float, threshold_pp: float, criterion: str = "difference", ratio_threshold: float = 1.5,
                   cells: np.ndarray | None = None, why: list[str | None] | None = None) -> tuple[dict, list[dict]]:
    """The level CVs of `factor` (over `cells`, default all) and every pair of its levels
    (group2 against group1): the test (``test``, ``statistic``, ``p_value``, ``permutations``,
    ``test_why``), ``p_adj`` (Holm over the pairs given), the CV difference and ratio with their
    CIs where those cover (``ci_why`` else) and ``meaningful``."""
    f = design.factors[factor]
    cv, dr = level_cvs(design, cell_cv, draws, factor, cells)
    why = why if why is not None else cell_refusals(design)
    pairs, tests = [], []
    for a, b in itertools.combinations(design.levels[f], 2):
        ca, cb, strata = level_pair(design, factor, design.levels[f].index(a), design.levels[f].index(b), cells)
        tests.append(test.compare(ca, cb, strata) if math.isfinite(cv[a]) and math.isfinite(cv[b]) else
                     {"test": CV_TEST, "statistic": None, "p_value": None, "permutations": None,
                      "test_why": "a CV is undefined (a cell with mean 0)"})
        pairs.append((a, b, ca + cb))
    comps = []
    for (a, b, used), t, p_adj in zip(pairs, tests, holm([t["p_value"] for t in tests])):
        comp = compare_cvs(cv[a], cv[b], dr[a], dr[b], alpha, threshold_pp, criterion, ratio_threshold, p_adj)
        comps.append({"group1": a, "group2": b, **comp, **t, "p_adj": p_adj,
                      "ci_why": comparison_why([why[c] for c in used]) if comp["cv_ratio_ci"] is None else None})
    return cv, comps


def predictability(design: Design, cell_cv: np.ndarray, draws: np.ndarray, alpha: float,
                   threshold_pp: float, criterion: str = "difference", ratio_threshold: float = 1.5,
                   test: CvTest | None = None) -> list[dict]:
    """Per factor: CV per level and every pairwise comparison (level2 against level1), tested by
    `test` (default: cv_test(design, draws' count, 0)) with Holm over the factor's pairs."""
    test = test or cv_test(design, draws.shape[1], 0)
    why = cell_refusals(design)
    out = []
    for j, f in enumerate(design.factors):
        cv, comps = cv_comparisons(design, test, j, cell_cv, draws, alpha, threshold_pp, criterion,
                                   ratio_threshold, why=why)
        out.append({"factor": f, "cv": cv, "comparisons": comps})
    return out
