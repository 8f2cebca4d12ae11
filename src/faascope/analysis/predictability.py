"""Predictability: the coefficient of variation (CV = s/mean) and differences between levels.

The CV of a *level* of a factor is the unweighted mean of the CVs of the cells at that level (one
CV per configuration of the other factors, as a study's per-cell tables show them), so a level is
not penalised for the spread *between* the other factors' levels.

Differences come with percentile-bootstrap CIs: every cell is resampled independently (the
cells are independent samples), B times, with a seeded generator; the same draws serve every
comparison. Cells larger than `bootstrap_max_n` use draws from the normal approximation with the
delta-method variance of the CV (see cells.cv_delta) instead of resampling.

Two criteria say when a difference counts (the output names the one used):
- "difference" (default, as in the 2024 thesis): |ΔCV| ≥ the negligible threshold (default 10
  percentage points) *and* the CI of ΔCV excludes 0. Absolute: CV 0.1 % against 7.2 % is "no
  difference".
- "ratio": the larger CV is at least `ratio_threshold` times the smaller (default 1.5) *and* the
  percentile-bootstrap CI of the ratio CV(b)/CV(a) excludes 1. Relative: 0.1 % against 7.2 % is a
  72-fold difference.
A level whose CV is undefined (a cell with mean 0) is never compared.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from faascope.analysis.cells import cv_delta
from faascope.analysis.design import Design


def cv_draws(design: Design, n_boot: int, seed: int, bootstrap_max_n: int = 5000) -> np.ndarray:
    """(C, B) bootstrap draws of every cell's CV (n_boot = 0: 2000 draws from the delta-method
    normal approximation for every cell)."""
    B = n_boot if n_boot > 0 else 2000
    out = np.empty((len(design.counts), B))
    for c, idx in enumerate(design.rows_of_cells()):
        x = design.y[idx]
        n = len(x)
        rng = np.random.default_rng([seed, c])
        if n < 2 or float(np.mean(x)) == 0:  # no CV: one row, or a mean of 0
            out[c] = np.nan
        elif n_boot > 0 and n <= bootstrap_max_n:
            chunk = max(1, 4_000_000 // n)
            for s in range(0, B, chunk):
                e = min(B, s + chunk)
                xs = x[rng.integers(0, n, size=(e - s, n))]
                m = xs.mean(axis=1)
                with np.errstate(divide="ignore", invalid="ignore"):
                    out[c, s:e] = xs.std(axis=1, ddof=1) / m
        else:
            cv, var = cv_delta(x)
            out[c] = cv + math.sqrt(var) * rng.standard_normal(B)
    return out


CRITERIA = ("difference", "ratio")


def _ci(d: np.ndarray, alpha: float) -> list[float] | None:
    d = d[np.isfinite(d)]
    if len(d) < 2:
        return None
    lo, hi = np.quantile(d, [alpha / 2, 1 - alpha / 2])
    return [float(lo), float(hi)]


def compare_cvs(cv_a: float, cv_b: float, draws_a: np.ndarray, draws_b: np.ndarray, alpha: float,
                threshold_pp: float, criterion: str = "difference", ratio_threshold: float = 1.5) -> dict:
    """CV(b) - CV(a) in percentage points and CV(b) / CV(a), each with its CI, and whether the
    difference counts under `criterion`."""
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
    if criterion == "ratio":
        meaningful = excludes_one and big
    else:
        meaningful = excludes_zero and abs(diff) >= threshold_pp
    return {"cv_diff_pp": diff, "cv_diff_ci_pp": ci, "ci_excludes_zero": excludes_zero,
            "exceeds_threshold": bool(abs(diff) >= threshold_pp),
            "cv_ratio": ratio, "cv_ratio_ci": rci, "ci_excludes_one": excludes_one,
            "meaningful": bool(meaningful)}


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


def predictability(design: Design, cell_cv: np.ndarray, draws: np.ndarray, alpha: float,
                   threshold_pp: float, criterion: str = "difference", ratio_threshold: float = 1.5) -> list[dict]:
    """Per factor: CV per level and every pairwise comparison (level2 against level1)."""
    out = []
    for j, f in enumerate(design.factors):
        cv, dr = level_cvs(design, cell_cv, draws, j)
        comps = []
        for a, b in itertools.combinations(design.levels[f], 2):
            comps.append({"group1": a, "group2": b, **compare_cvs(cv[a], cv[b], dr[a], dr[b], alpha, threshold_pp,
                                                                  criterion, ratio_threshold)})
        out.append({"factor": f, "cv": cv, "comparisons": comps})
    return out
