"""The decision table: per scenario, which level of the compared factor (e.g. the platform) is best
for performance and which for predictability, with "-" when the data do not say.

- Performance (lower mean is better): the level with the lowest mean wins only if Tukey HSD finds
  it significantly lower than *every* other level. Over the whole scenario the compared factor's
  own Tukey term is used (its means are R's model.tables means, i.e. marginal means when
  balanced); within one combination of the other factors (rows "within"), the highest-order
  interaction term of the full model is used, comparing only cells that share that combination
  (with the family-wise error of the whole interaction family, as R's TukeyHSD does).
- Predictability (lower CV is better): the level with the lowest CV wins only if, against every
  other level, the CV difference is at least the negligible threshold (percentage points) and
  its bootstrap CI excludes 0. See predictability.py for how a level's CV is defined.
"""
from __future__ import annotations

import itertools

import numpy as np

from faascope.analysis.anova import ModelFit, term_means
from faascope.analysis.design import Design
from faascope.analysis.predictability import compare_cvs, level_cvs


def _winner(means: dict[str, float], better: dict[tuple[str, str], bool]) -> str:
    """Lowest-mean level if `better[(best, other)]` holds against every other level, else "-"."""
    best = min(means, key=means.get)
    others = [lvl for lvl in means if lvl != best]
    return best if others and all(better.get((best, o), False) for o in others) else "-"


def decide(fit: ModelFit, tukey_rows: list[dict], cell_cv: np.ndarray, draws: np.ndarray,
           compare: int, alpha: float, threshold_pp: float, raw_means: np.ndarray) -> list[dict]:
    d: Design = fit.design
    f = d.factors[compare]
    levels = d.levels[f]
    others = [j for j in range(len(d.factors)) if j != compare]
    rows = []

    # ---- whole scenario
    combos, means, _ = term_means(fit, (compare,))
    mean_by_level = {levels[c[0]]: float(m) for c, m in zip(combos, means)}
    sig = {}
    for r in tukey_rows:
        if r["term"] == f and r["reject"]:
            a, b = r["group1"], r["group2"]
            lower, higher = (a, b) if r["meandiff"] > 0 else (b, a)  # meandiff = mean(b) - mean(a)
            sig[(lower, higher)] = True
    cv, dr = level_cvs(d, cell_cv, draws, compare)
    w = d.counts.astype(float)
    raw_by_level = {}
    for k, lvl in enumerate(levels):
        sel = d.cell_codes[:, compare] == k
        raw_by_level[lvl] = float(np.dot(w[sel], raw_means[sel]) / w[sel].sum())
    rows.append(_row(f, {d.factors[j]: "all" for j in others}, mean_by_level, sig, cv, dr, alpha, threshold_pp,
                     raw_by_level))

    # ---- within each combination of the other factors (full model only)
    top = tuple(range(len(d.factors)))
    if others and top in fit.terms:
        top_name = ":".join(d.factors)
        sig_cells = {}
        for r in tukey_rows:
            if r["term"] == top_name and r["reject"]:
                a, b = r["group1"], r["group2"]
                lower, higher = (a, b) if r["meandiff"] > 0 else (b, a)
                sig_cells[(lower, higher)] = True
        tcombos, tmeans, _ = term_means(fit, top)
        tmean = {c: float(m) for c, m in zip(tcombos, tmeans)}
        for oc in itertools.product(*(range(len(d.levels[d.factors[j]])) for j in others)):
            within = {d.factors[j]: d.levels[d.factors[j]][k] for j, k in zip(others, oc)}
            cells = np.array([c for c in range(len(d.counts))
                              if all(d.cell_codes[c, j] == k for j, k in zip(others, oc))])

            def label(level_idx):
                codes = [0] * len(d.factors)
                codes[compare] = level_idx
                for j, k in zip(others, oc):
                    codes[j] = k
                return tuple(codes), ":".join(d.levels[d.factors[j]][codes[j]] for j in range(len(d.factors)))

            means_w, sig_w, raw_w = {}, {}, {}
            names = {}
            for li, lvl in enumerate(levels):
                codes, name = label(li)
                means_w[lvl] = tmean[codes]
                names[lvl] = name
                raw_w[lvl] = float(raw_means[d.cell_of(codes)])
            for a, b in itertools.permutations(levels, 2):
                if sig_cells.get((names[a], names[b])):
                    sig_w[(a, b)] = True
            cv_w, dr_w = level_cvs(d, cell_cv, draws, compare, cells)
            rows.append(_row(f, within, means_w, sig_w, cv_w, dr_w, alpha, threshold_pp, raw_w))
    return rows


def _row(factor, within, means, sig, cv, dr, alpha, threshold_pp, raw_means) -> dict:
    """`means` are on the tested scale (they pick the candidate); `raw_means` are reported."""
    perf = _winner(means, sig)
    comps = {}
    for a, b in itertools.permutations(cv, 2):
        comps[(a, b)] = compare_cvs(cv[a], cv[b], dr[a], dr[b], alpha, threshold_pp)
    pred_ok = {(a, b): c["meaningful"] and c["cv_diff_pp"] > 0 for (a, b), c in comps.items()}
    pred = _winner(cv, pred_ok)
    best_cv = min(cv, key=cv.get)
    runner = min((lvl for lvl in cv if lvl != best_cv), key=cv.get, default=None)
    detail = comps.get((best_cv, runner)) if runner else None
    return {"compare": factor, "within": within, "performance": perf, "predictability": pred,
            "mean": raw_means, "cv": cv,
            "cv_diff_pp": detail["cv_diff_pp"] if detail else None,
            "cv_diff_ci_pp": detail["cv_diff_ci_pp"] if detail else None,
            "cv_comparison": [best_cv, runner] if runner else None}
