"""The decision table: per scenario, which level of the compared factor (e.g. the platform) is best
for performance and which for predictability ("-" when no single level is), and the ordering
of all levels the data support: "1769 MB = 3008 MB < 512 MB" ('<' where the levels are
separated, '=' where they are not; when the ties do not form groups, e.g. a = b, b = c but
a < c, the levels are joined by '≤' and the separated pairs follow in brackets).

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
import math

import numpy as np

from faascope.analysis.anova import ModelFit, term_means
from faascope.analysis.design import Design
from faascope.analysis.predictability import compare_cvs, level_cvs


def _winner(means: dict[str, float], better: dict[tuple[str, str], bool]) -> str:
    """Lowest-mean level if `better[(best, other)]` holds against every other level, else "-"."""
    if not means or any(not math.isfinite(v) for v in means.values()):
        return "-"
    best = min(means, key=means.get)
    others = [lvl for lvl in means if lvl != best]
    return best if others and all(better.get((best, o), False) for o in others) else "-"


def ordering(values: dict[str, float], better: dict[tuple[str, str], bool]) -> str:
    """The levels from lowest to highest value with the separations `better[(low, high)]` says
    the data support: '<' between groups separated pairwise, '=' within a group none of whose
    pairs is separated; a group that is neither is joined by '≤' and its separated pairs are
    listed in brackets. Levels with an undefined value are named at the end."""
    undefined = [lvl for lvl, v in values.items() if not math.isfinite(v)]
    lv = sorted((lvl for lvl in values if lvl not in undefined), key=values.get)
    sep = {(a, b) for (a, b), ok in better.items() if ok}
    k = len(lv)
    cuts = [i for i in range(1, k) if all((lv[a], lv[b]) in sep for a in range(i) for b in range(i, k))]
    blocks = [lv[i:j] for i, j in zip([0] + cuts, cuts + [k])]
    texts, inside = [], []
    for b in blocks:
        pairs = [(x, y) for x, y in itertools.combinations(b, 2) if (x, y) in sep or (y, x) in sep]
        if pairs:
            texts.append(" ≤ ".join(b))
            inside += [f"{x} < {y}" if (x, y) in sep else f"{y} < {x}" for x, y in pairs]
        else:
            texts.append(" = ".join(b))
    out = " < ".join(texts) + (f" ({'; '.join(inside)})" if inside else "")
    if undefined:
        out += ("; " if out else "") + f"undefined: {', '.join(undefined)}"
    return out


def decide(fit: ModelFit, tukey_rows: list[dict], cell_cv: np.ndarray, draws: np.ndarray,
           compare: int, alpha: float, threshold_pp: float, raw_means: np.ndarray,
           criterion: str = "difference", ratio_threshold: float = 1.5) -> list[dict]:
    d: Design = fit.design
    f = d.factors[compare]
    levels = d.levels[f]
    others = [j for j in range(len(d.factors)) if j != compare]
    rows = []

    # ---- whole scenario
    combos, means, _ = term_means(fit, (compare,), centred=True)
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
    crit = (criterion, ratio_threshold, fit.status)
    rows.append(_row(f, {d.factors[j]: "all" for j in others}, mean_by_level, sig, cv, dr, alpha, threshold_pp,
                     raw_by_level, crit))

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
        tcombos, tmeans, _ = term_means(fit, top, centred=True)
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
            rows.append(_row(f, within, means_w, sig_w, cv_w, dr_w, alpha, threshold_pp, raw_w, crit))
    return rows


def _row(factor, within, means, sig, cv, dr, alpha, threshold_pp, raw_means, crit) -> dict:
    """`means` are on the tested scale (they pick the candidate); `raw_means` are reported."""
    criterion, ratio_threshold, status = crit
    perf = _winner(means, sig)
    perf_order = ordering(means, sig) if status is None else f"no test ({status.replace('_', ' ')})"
    comps = {}
    for a, b in itertools.permutations(cv, 2):
        comps[(a, b)] = compare_cvs(cv[a], cv[b], dr[a], dr[b], alpha, threshold_pp, criterion, ratio_threshold)
    pred_ok = {(a, b): c["meaningful"] and cv[b] > cv[a] for (a, b), c in comps.items()}
    pred = _winner(cv, pred_ok)
    defined = {lvl: v for lvl, v in cv.items() if math.isfinite(v)}
    best_cv = min(defined, key=defined.get) if defined else None
    runner = min((lvl for lvl in defined if lvl != best_cv), key=defined.get, default=None)
    detail = comps.get((best_cv, runner)) if runner else None
    return {"compare": factor, "within": within, "performance": perf, "predictability": pred,
            "performance_order": perf_order, "predictability_order": ordering(cv, pred_ok),
            "mean": raw_means, "cv": cv, "cv_criterion": criterion,
            "cv_diff_pp": detail["cv_diff_pp"] if detail else None,
            "cv_diff_ci_pp": detail["cv_diff_ci_pp"] if detail else None,
            "cv_ratio": detail["cv_ratio"] if detail else None,
            "cv_ratio_ci": detail["cv_ratio_ci"] if detail else None,
            "cv_comparison": [best_cv, runner] if runner else None}
