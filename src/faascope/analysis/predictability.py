"""Predictability: the coefficient of variation (CV = s/mean) and differences between levels.

The CV of a *level* of a factor is the unweighted mean of the CVs of the cells at that level (one
CV per configuration of the other factors, as a study's per-cell tables show them), so a level is
not penalised for the spread *between* the other factors' levels.

Differences and ratios come with percentile intervals of B draws per cell (seeded; the same draws
serve every comparison): each cell's CV is drawn from its log-scale t approximation
(faascope.analysis.intervals.cv_draws), a level's draws are the mean of its cells' draws. A
comparison gets an interval only when every cell of both levels is *tight* and has at least
intervals.MIN_N["cv-comparison"] values (below that the simulated coverage is under 93 %, and the
percentile bootstrap used before printed [0, 5.5e13] on small cells); otherwise its intervals are
null, ``ci_why`` says why, and the difference is not meaningful.

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

from faascope.analysis import intervals as iv
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
    why = cell_refusals(design)
    for j, f in enumerate(design.factors):
        cv, dr = level_cvs(design, cell_cv, draws, j)
        comps = []
        for a, b in itertools.combinations(design.levels[f], 2):
            ka, kb = design.levels[f].index(a), design.levels[f].index(b)
            cells = [c for c in range(len(design.counts)) if design.cell_codes[c, j] in (ka, kb)]
            comp = compare_cvs(cv[a], cv[b], dr[a], dr[b], alpha, threshold_pp, criterion, ratio_threshold)
            comps.append({"group1": a, "group2": b, **comp, "ci_why": comparison_why([why[c] for c in cells])
                          if comp["cv_ratio_ci"] is None else None})
        out.append({"factor": f, "cv": cv, "comparisons": comps})
    return out
