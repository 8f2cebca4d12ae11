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

from faascope.analysis.anova import ModelFit, fit_anova, term_means
from faascope.analysis.design import Design, build_design
from faascope.analysis.io import prepare
from faascope.analysis.predictability import compare_cvs, level_cvs
from faascope.analysis.tukey import tukey_all


def separations(tukey_rows: list[dict], term: str) -> dict[tuple[str, str], bool]:
    """{(lower, higher): True} for every pair of `term` Tukey HSD separates (meandiff is the
    second group's mean minus the first's, as in R's TukeyHSD)."""
    sig = {}
    for r in tukey_rows:
        if r["term"] == term and r["reject"]:
            a, b = r["group1"], r["group2"]
            lower, higher = (a, b) if r["meandiff"] > 0 else (b, a)
            sig[(lower, higher)] = True
    return sig


def _winner(means: dict[str, float], better: dict[tuple[str, str], bool]) -> str:
    """Lowest-mean level if `better[(best, other)]` holds against every other level, else "-"."""
    if not means or any(not math.isfinite(v) for v in means.values()):
        return "-"
    best = min(means, key=means.get)
    others = [lvl for lvl in means if lvl != best]
    return best if others and all(better.get((best, o), False) for o in others) else "-"


def _cuts(values: dict[str, float], better: dict[tuple[str, str], bool]) -> tuple[list[str], set[int]]:
    """The defined levels from lowest to highest value, and the positions i where every level
    before i is separated from every level from i on (the '<' of an ordering)."""
    lv = sorted((lvl for lvl in values if math.isfinite(values[lvl])), key=values.get)
    sep = {(a, b) for (a, b), ok in better.items() if ok}
    k = len(lv)
    return lv, {i for i in range(1, k) if all((lv[a], lv[b]) in sep for a in range(i) for b in range(i, k))}


def first_group(values: dict[str, float], better: dict[tuple[str, str], bool]) -> list[str]:
    """The levels that may be best: the lowest, and every level before the first '<' of
    :func:`ordering` that the data do not separate from it (all of them when the ties form a
    group; fewer in a '≤' group: in "a ≤ b ≤ c (a < c)" a and b). None when no value is defined."""
    lv, cuts = _cuts(values, better)
    block = lv[:min(cuts)] if cuts else lv
    sep = {(a, b) for (a, b), ok in better.items() if ok}
    return block[:1] + [x for x in block[1:] if (block[0], x) not in sep]


def relabel(text: str, levels: list[str], label) -> str:
    """`text` (an ordering) with every level written as `label` shows it, in one pass (so a level
    that is part of another's label, 12 in "128 MB", is not replaced twice)."""
    import re

    names = sorted((lv for lv in levels if label(lv) != lv), key=len, reverse=True)
    if not names:
        return text
    pat = re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in names) + r")(?![\w.])")
    return pat.sub(lambda m: label(m.group(1)), text)


def ordering(values: dict[str, float], better: dict[tuple[str, str], bool], pair_note=None) -> str:
    """The levels from lowest to highest value with the separations `better[(low, high)]` says
    the data support: '<' between groups separated pairwise, '=' within a group none of whose
    pairs is separated; a group that is neither is joined by '≤' and its separated pairs are
    listed in brackets. Levels with an undefined value are named at the end."""
    undefined = [lvl for lvl, v in values.items() if not math.isfinite(v)]
    lv, cut_set = _cuts(values, better)
    sep = {(a, b) for (a, b), ok in better.items() if ok}
    k = len(lv)
    cuts = sorted(cut_set)
    blocks = [lv[i:j] for i, j in zip([0] + cuts, cuts + [k])]
    texts, inside = [], []
    for b in blocks:
        pairs = [(x, y) for x, y in itertools.combinations(b, 2) if (x, y) in sep or (y, x) in sep]
        if pairs:
            texts.append(" ≤ ".join(b))
            inside += [(f"{x} < {y}" if (x, y) in sep else f"{y} < {x}") + (pair_note(x, y) if pair_note else "")
                       for x, y in pairs]
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
    sig = separations(tukey_rows, f)
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
        sig_cells = separations(tukey_rows, top_name)
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
            "mean": raw_means, "tested_mean": dict(means), "cv": cv, "cv_criterion": criterion,
            "cv_diff_pp": detail["cv_diff_pp"] if detail else None,
            "cv_diff_ci_pp": detail["cv_diff_ci_pp"] if detail else None,
            "cv_ratio": detail["cv_ratio"] if detail else None,
            "cv_ratio_ci": detail["cv_ratio_ci"] if detail else None,
            "cv_comparison": [best_cv, runner] if runner else None}


def tukey_p_values(tukey_rows: list[dict], term: str) -> dict[frozenset, float]:
    """Tukey HSD's adjusted p-value of every pair of levels of `term` ({a, b} -> p adj)."""
    return {frozenset((r["group1"], r["group2"])): r["p_adj"] for r in tukey_rows
            if r["term"] == term and r.get("p_adj") is not None}


def ordering_with_p(values: dict[str, float], better: dict[tuple[str, str], bool],
                    p_adj: dict[frozenset, float], label=str, fmt_p=None) -> str:
    """:func:`ordering` with its evidence: after each '=' the p-value of the tied pair, after
    each '<' the largest p-value of the pairs it separates (every one of them is at most that):
    "1769 MB = 3008 MB (p = 0.97) < 512 MB (p ≤ 0.0012)". Orderings whose ties do not form
    groups ('≤') and undefined values are given as :func:`ordering` gives them, labelled."""
    fmt_p = fmt_p or (lambda p: f"{p:.2g}")

    def note(a: str, b: str) -> str:  # the separated pairs of a '≤' group, with their p-values
        p = p_adj.get(frozenset((a, b)))
        return f": {_p_text(fmt_p(p), '=')}" if p is not None else ""

    base = ordering(values, better)
    lv = sorted((lvl for lvl in values if math.isfinite(values[lvl])), key=values.get)
    if "≤" in base or "undefined" in base or len(lv) < 2:
        return relabel(ordering(values, better, note), list(values), label)
    lv, cuts = _cuts(values, better)
    k = len(lv)
    out = label(lv[0])
    for i in range(1, k):
        if i in cuts:
            ps = [p_adj.get(frozenset((lv[a], lv[b]))) for a in range(i) for b in range(i, k)]
            ps = [p for p in ps if p is not None]
            out += f" < {label(lv[i])}" + (f" ({_p_text(fmt_p(max(ps)), '≤')})" if ps else "")
        else:
            p = p_adj.get(frozenset((lv[i - 1], lv[i])))
            out += f" = {label(lv[i])}" + (f" ({_p_text(fmt_p(p), '=')})" if p is not None else "")
    return out


def _p_text(text: str, op: str) -> str:
    """"p = 0.97", "p ≤ 0.0012"; a formatted bound ("< 1e-16") keeps its own relation."""
    return f"p {text}" if text[:1] in "<>≤" else f"p {op} {text}"


def rank_levels(df, response: str, factors: list[str], compare: str, alpha: float = 0.05,
                levels: dict[str, list[str]] | None = None) -> dict:
    """The whole-scenario performance ordering of `compare`'s levels by `response` (lower is
    better), exactly as :func:`decide` makes it (the full model's ANOVA, Type II, and Tukey HSD
    of the compared factor's term, its model.tables means), without the rest of ``analyze()``
    (per-cell bootstrap CIs, robustness checks, the other terms' Tukey comparisons): for a second
    response of the same cells, such as the cost per invocation. Returns ``analyze()``'s keys
    ``fit_status``, ``tukey`` (the compared term's pairs) and ``decisions`` (one row:
    ``performance``, ``performance_order``, ``mean`` (raw), ``tested_mean``)."""
    data, lv = prepare(df, response, list(factors), levels, min_rows=2)
    d = build_design(data, response, list(factors), lv)
    ci = list(factors).index(compare)
    fit = fit_anova(d, "full", "II", alpha)
    tukey = tukey_all(fit, alpha, terms=[(ci,)])
    combos, means, _ = term_means(fit, (ci,), centred=True)
    names = d.levels[compare]
    tested = {names[c[0]]: float(m) for c, m in zip(combos, means)}
    sig = separations(tukey, compare)
    w = d.counts.astype(float)
    raw = {}
    for k, lvl in enumerate(names):
        sel = d.cell_codes[:, ci] == k
        raw[lvl] = float(np.dot(w[sel], d.means[sel]) / w[sel].sum())
    order = ordering(tested, sig) if fit.status is None else f"no test ({fit.status.replace('_', ' ')})"
    return {"fit_status": fit.status, "tukey": tukey,
            "decisions": [{"compare": compare, "within": {f: "all" for f in factors if f != compare},
                           "performance": _winner(tested, sig), "performance_order": order,
                           "mean": raw, "tested_mean": tested}]}
