"""The decision table: per scenario, which level of the compared factor (e.g. the platform) is best
for performance and which for predictability ("-" when no single level is), and the ordering
of all levels the data support: "1769 MB = 3008 MB < 512 MB" ('<' where the levels are
separated, '=' where they are not; when the ties do not form groups, e.g. a = b, b = c but
a < c, the levels are joined by '≤' and the separated pairs follow in brackets). When higher is
better (throughput) the orderings run from the highest down: "2048 MB > 1024 MB = 512 MB".

- Performance (lower mean is better unless `higher_is_better`): the best level wins only if the
  row's test finds it significantly better than *every* other level. The tests do not assume
  equal variances (pairwise.py): over the whole scenario (row "all") the levels' estimated
  marginal means (each cell weighted equally, as R's emmeans) are compared pairwise with Welch
  standard errors and Welch-Satterthwaite df, Games-Howell-adjusted over the family of the k
  levels; within one combination of the other factors (rows "within") the k cells are compared by
  Games-Howell. Tukey HSD on the pooled error term (tukey.py) stays in the ANOVA section only:
  one cell's variance, pooled, decided other cells' pairs. Every row carries its `test` and its
  `pairs`, which the answer and the tables read: one source of separations.
- Predictability (lower CV is better): the level with the lowest CV wins only if, against every
  other level, the CV test (cv_test.py: studentized permutation test of the CV ratio, Holm over
  the row's pairs of levels) rejects at α and the CV difference is at least the negligible
  threshold (percentage points; or the ratio, with --cv-criterion ratio). Every row carries its
  `cv_test` and its `cv_pairs`. See predictability.py for how a level's CV is defined.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from faascope.analysis.anova import ModelFit, fit_anova
from faascope.analysis.design import Design, build_design
from faascope.analysis.intervals import mean_min_n, too_few
from faascope.analysis.io import prepare
from faascope.analysis.pairwise import GAMES_HOWELL, IDENTICAL, WELCH_EMM, Cells, compare_levels, emm_coefficients
from faascope.analysis.cv_test import CvTest
from faascope.analysis.predictability import CV_TEST, compare_cvs, cv_comparisons, cv_test, level_cvs


def separations(tukey_rows: list[dict], term: str) -> dict[tuple[str, str], bool]:
    """{(lower, higher): True} for every pair of `term` Tukey HSD separates (meandiff is the
    second group's mean minus the first's, as in R's TukeyHSD). For reading the ANOVA section's
    Tukey table only: the decisions separate by their own pairs (:func:`pair_separations`)."""
    sig = {}
    for r in tukey_rows:
        if r["term"] == term and r["reject"]:
            a, b = r["group1"], r["group2"]
            lower, higher = (a, b) if r["meandiff"] > 0 else (b, a)
            sig[(lower, higher)] = True
    return sig


def pair_separations(pairs: list[dict]) -> dict[tuple[str, str], bool]:
    """{(lower, higher): True} for every pair a decision row separates (its `pairs`, whose
    `diff` is group2 - group1 on the tested scale)."""
    return {((p["group1"], p["group2"]) if p["diff"] > 0 else (p["group2"], p["group1"])): True
            for p in pairs if p["separated"]}


def pair_p_values(pairs: list[dict]) -> dict[frozenset, float]:
    """The adjusted p-value of every tested pair of a decision row ({a, b} -> p adj)."""
    return {frozenset((p["group1"], p["group2"])): p["p_adj"] for p in pairs if p.get("p_adj") is not None}


def _precedes(x: str, y: str, sep: set, higher_is_better: bool) -> bool:
    """x is separated from y and better than it (sep holds (lower, higher) pairs)."""
    return (y, x) in sep if higher_is_better else (x, y) in sep


def _sorted(values: dict[str, float], higher_is_better: bool) -> list[str]:
    """The defined levels from best to worst."""
    return sorted((lvl for lvl in values if math.isfinite(values[lvl])), key=values.get, reverse=higher_is_better)


def _winner(means: dict[str, float], better: dict[tuple[str, str], bool], higher_is_better: bool = False) -> str:
    """The best level (lowest mean, or highest with `higher_is_better`) if it is separated from
    every other level (`better[(lower, higher)]`), else "-"."""
    if not means or any(not math.isfinite(v) for v in means.values()):
        return "-"
    best = (max if higher_is_better else min)(means, key=means.get)
    others = [lvl for lvl in means if lvl != best]
    sep = {k for k, ok in better.items() if ok}
    return best if others and all(_precedes(best, o, sep, higher_is_better) for o in others) else "-"


def _cuts(values: dict[str, float], better: dict[tuple[str, str], bool],
          higher_is_better: bool = False) -> tuple[list[str], set[int]]:
    """The defined levels from best to worst value, and the positions i where every level
    before i is separated from every level from i on (the '<' or '>' of an ordering)."""
    lv = _sorted(values, higher_is_better)
    sep = {(a, b) for (a, b), ok in better.items() if ok}
    k = len(lv)
    return lv, {i for i in range(1, k)
                if all(_precedes(lv[a], lv[b], sep, higher_is_better) for a in range(i) for b in range(i, k))}


def first_group(values: dict[str, float], better: dict[tuple[str, str], bool],
                higher_is_better: bool = False) -> list[str]:
    """The levels that may be best: the best, and every level before the first '<' ('>') of
    :func:`ordering` that the data do not separate from it (all of them when the ties form a
    group; fewer in a '≤' group: in "a ≤ b ≤ c (a < c)" a and b). None when no value is defined."""
    lv, cuts = _cuts(values, better, higher_is_better)
    block = lv[:min(cuts)] if cuts else lv
    sep = {(a, b) for (a, b), ok in better.items() if ok}
    return block[:1] + [x for x in block[1:] if not _precedes(block[0], x, sep, higher_is_better)]


def relabel(text: str, levels: list[str], label) -> str:
    """`text` (an ordering) with every level written as `label` shows it, in one pass (so a level
    that is part of another's label, 12 in "128 MB", is not replaced twice)."""
    import re

    names = sorted((lv for lv in levels if label(lv) != lv), key=len, reverse=True)
    if not names:
        return text
    pat = re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in names) + r")(?![\w.])")
    return pat.sub(lambda m: label(m.group(1)), text)


def ordering(values: dict[str, float], better: dict[tuple[str, str], bool], pair_note=None,
             higher_is_better: bool = False) -> str:
    """The levels from best to worst value (lowest first; highest first with `higher_is_better`)
    with the separations `better[(low, high)]` says the data support: '<' ('>') between groups
    separated pairwise, '=' within a group none of whose pairs is separated; a group that is
    neither is joined by '≤' ('≥') and its separated pairs are listed in brackets. Levels with an
    undefined value are named at the end."""
    undefined = [lvl for lvl, v in values.items() if not math.isfinite(v)]
    lv, cut_set = _cuts(values, better, higher_is_better)
    sep = {(a, b) for (a, b), ok in better.items() if ok}
    rel, weak = (" > ", " ≥ ") if higher_is_better else (" < ", " ≤ ")
    k = len(lv)
    cuts = sorted(cut_set)
    blocks = [lv[i:j] for i, j in zip([0] + cuts, cuts + [k])]
    texts, inside = [], []
    for b in blocks:
        pairs = [(x, y) for x, y in itertools.combinations(b, 2) if (x, y) in sep or (y, x) in sep]
        if pairs:
            texts.append(weak.join(b))
            inside += [(f"{x}{rel}{y}" if _precedes(x, y, sep, higher_is_better) else f"{y}{rel}{x}")
                       + (pair_note(x, y) if pair_note else "") for x, y in pairs]
        else:
            texts.append(" = ".join(b))
    out = rel.join(texts) + (f" ({'; '.join(inside)})" if inside else "")
    if undefined:
        out += ("; " if out else "") + f"undefined: {', '.join(undefined)}"
    return out


def _status_text(status: str) -> str:
    return f"no test ({status.replace('_', ' ')})"


def level_comparison(design: Design, terms: list, compare: int, alpha: float, status: str | None = None, *,
                     higher_is_better: bool = False, transform: str = "none",
                     cells: Cells | None = None) -> dict:
    """The performance half of the whole-scenario row: the compared factor's levels by their
    estimated marginal means over the other factors (each cell weighted equally), compared
    pairwise by Welch tests with a Games-Howell-type adjustment (pairwise.py); with one factor
    the EMMs are the cell means and the test is Games-Howell. `design` is on the tested scale
    (log values with transform "log": the means reported are then exp(EMM), geometric)."""
    cells = cells or Cells.of_design(design)
    levels = design.levels[design.factors[compare]]
    coef = emm_coefficients(design, compare, terms)
    test = WELCH_EMM if len(design.factors) > 1 else GAMES_HOWELL
    kind = "estimated marginal mean (each cell weighted equally)" if len(design.factors) > 1 else "cell mean"
    return _performance(levels, coef, cells, alpha, status, higher_is_better, transform, test, kind)


def _performance(levels, coef, cells, alpha, status, higher_is_better, transform, test, kind) -> dict:
    est, pairs = compare_levels(list(levels), coef, cells, alpha)
    tested = {lvl: e["estimate"] for lvl, e in est.items()}
    log = transform == "log"
    back = math.exp if log else (lambda v: v)
    if status is not None:  # nothing to test (anova.py): the pairs say so, nothing is separated
        for p in pairs:
            p.update(separated=False, p_adj=None, no_test=_status_text(status))
        sig, order = {}, _status_text(status)
    else:
        sig = pair_separations(pairs)
        order = ordering(tested, sig, higher_is_better=higher_is_better)
        # a pair with no test is not a tie: say so rather than let '=' read as one
        untested = [p for p in pairs if p["p_adj"] is None and not p["exact"] and p["no_test"] != IDENTICAL]
        if untested and len(untested) == len(pairs):
            order = f"no test ({untested[0]['no_test'].removeprefix('no test: ')})"
        elif untested:
            order += f" (untested: {', '.join(p['group1'] + ' vs ' + p['group2'] for p in untested)})"
    if log:
        for p in pairs:
            p["ratio"] = math.exp(p["diff"])
            p["ratio_ci"] = [math.exp(p["lower"]), math.exp(p["upper"])] if p["lower"] is not None else None
    # a level's interval is printed only where each cell behind it has the values a mean's
    # interval needs to cover (faascope.analysis.intervals: the same rule as a cell's own)
    need = mean_min_n()
    thin = {lvl: int(cells.counts[np.abs(coef[i]) > 0].min()) for i, lvl in enumerate(levels)
            if np.any(np.abs(coef[i]) > 0) and cells.counts[np.abs(coef[i]) > 0].min() < need}
    return {"performance": _winner(tested, sig, higher_is_better), "performance_order": order,
            "test": test, "higher_is_better": higher_is_better,
            "mean": {lvl: back(v) for lvl, v in tested.items()},
            "mean_ci": {lvl: ([back(x) for x in e["ci"]] if e["ci"] and lvl not in thin else None)
                        for lvl, e in est.items()},
            "mean_ci_why": {lvl: too_few(n, need) + " in a cell behind it" for lvl, n in thin.items()},
            "mean_kind": ("geometric " if log else "") + kind,
            "tested_mean": tested, "pairs": pairs}


def decide(fit: ModelFit, cell_cv: np.ndarray, draws: np.ndarray, compare: int, alpha: float,
           threshold_pp: float, raw_means: np.ndarray, criterion: str = "difference",
           ratio_threshold: float = 1.5, *, higher_is_better: bool = False, transform: str = "none",
           cv_design: Design | None = None, test: CvTest | None = None) -> list[dict]:
    """The decision rows of one analysis: "all" (EMMs, Welch tests with a Games-Howell-type
    adjustment) and, with the full model, one per combination of the other factors (Games-Howell
    among its cells). `fit` is on the tested scale; `raw_means` are the cells' arithmetic means
    on the original scale (each row keeps the levels' raw means under `raw_mean`). `cv_design`:
    the design on the original scale, whose CVs are compared (default: the fit's); `test`: the
    CV test on its cells (predictability.cv_test)."""
    d: Design = fit.design
    raw = cv_design if cv_design is not None else d
    test = test or cv_test(raw, draws.shape[1], 0)
    f = d.factors[compare]
    levels = d.levels[f]
    others = [j for j in range(len(d.factors)) if j != compare]
    cells = Cells.of_design(d)
    crit = (criterion, ratio_threshold)

    def pred(cell_idx=None):
        return cv_comparisons(raw, test, compare, cell_cv, draws, alpha, threshold_pp, criterion, ratio_threshold,
                              None if cell_idx is None else np.array(cell_idx))

    rows = []
    # ---- whole scenario
    perf = level_comparison(d, fit.terms, compare, alpha, fit.status, higher_is_better=higher_is_better,
                            transform=transform, cells=cells)
    perf["raw_mean"] = _raw_level_means(d, compare, raw_means)
    rows.append(_row(f, {d.factors[j]: "all" for j in others}, perf, *pred(), alpha, threshold_pp, crit,
                     level_cvs(raw, cell_cv, draws, compare)[1]))

    # ---- within each combination of the other factors (full model only)
    top = tuple(range(len(d.factors)))
    if others and top in fit.terms:
        for oc in itertools.product(*(range(len(d.levels[d.factors[j]])) for j in others)):
            within = {d.factors[j]: d.levels[d.factors[j]][k] for j, k in zip(others, oc)}
            cell_idx = []
            for li in range(len(levels)):
                codes = [0] * len(d.factors)
                codes[compare] = li
                for j, k in zip(others, oc):
                    codes[j] = k
                cell_idx.append(d.cell_of(tuple(codes)))
            coef = np.zeros((len(levels), len(d.counts)))
            coef[np.arange(len(levels)), cell_idx] = 1.0
            perf = _performance(levels, coef, cells, alpha, fit.status, higher_is_better, transform,
                                GAMES_HOWELL, "cell mean")
            perf["raw_mean"] = {lvl: float(raw_means[c]) for lvl, c in zip(levels, cell_idx)}
            rows.append(_row(f, within, perf, *pred(cell_idx), alpha, threshold_pp, crit,
                             level_cvs(raw, cell_cv, draws, compare, np.array(cell_idx))[1]))
    return rows


def _raw_level_means(d: Design, compare: int, raw_means: np.ndarray) -> dict[str, float]:
    """Each level's arithmetic mean over its rows (cells weighted by their row counts)."""
    w = d.counts.astype(float)
    out = {}
    for k, lvl in enumerate(d.levels[d.factors[compare]]):
        sel = d.cell_codes[:, compare] == k
        out[lvl] = float(np.dot(w[sel], raw_means[sel]) / w[sel].sum())
    return out


def _row(factor, within, perf, cv, cv_pairs, alpha, threshold_pp, crit, dr) -> dict:
    """The performance keys (`perf`, from :func:`level_comparison`) and the predictability ones:
    `cv` the level CVs, `cv_pairs` their tested pairs (predictability.cv_comparisons), `dr` the
    level CVs' draws. When no pair could be tested the ordering says why instead of reading as
    ties; a pair without a test is named as untested."""
    criterion, ratio_threshold = crit
    pred_ok = {}
    for c in cv_pairs:
        a, b = c["group1"], c["group2"]
        if c["meaningful"]:
            pred_ok[(a, b) if cv[a] < cv[b] else (b, a)] = True
    pred = _winner(cv, pred_ok)
    untested = [c for c in cv_pairs if c["p_value"] is None and not c.get("undefined")]
    if untested and len(untested) == len(cv_pairs):
        pred_order = f"no CV comparison ({untested[0]['test_why']})"
    else:
        pred_order = ordering(cv, pred_ok)
        if untested:
            pred_order += f" (untested: {', '.join(c['group1'] + ' vs ' + c['group2'] for c in untested)})"
    defined = {lvl: v for lvl, v in cv.items() if math.isfinite(v)}
    best_cv = min(defined, key=defined.get) if defined else None
    runner = min((lvl for lvl in defined if lvl != best_cv), key=defined.get, default=None)
    tested = next((c for c in cv_pairs if {c["group1"], c["group2"]} == {best_cv, runner}), None) if runner else None
    detail = compare_cvs(cv[best_cv], cv[runner], dr[best_cv], dr[runner], alpha, threshold_pp, criterion,
                         ratio_threshold, tested["p_adj"]) if tested else None
    return {"compare": factor, "within": within, "performance": perf["performance"], "predictability": pred,
            "performance_order": perf["performance_order"], "predictability_order": pred_order,
            **{k: v for k, v in perf.items() if k not in ("performance", "performance_order")},
            "cv": cv, "cv_criterion": criterion, "cv_test": CV_TEST, "cv_pairs": cv_pairs,
            "cv_diff_pp": detail["cv_diff_pp"] if detail else None,
            "cv_diff_ci_pp": detail["cv_diff_ci_pp"] if detail else None,
            "cv_ratio": detail["cv_ratio"] if detail else None,
            "cv_ratio_ci": detail["cv_ratio_ci"] if detail else None,
            "cv_p_adj": tested["p_adj"] if tested else None,
            "cv_comparison": [best_cv, runner] if runner else None}


def tukey_p_values(tukey_rows: list[dict], term: str) -> dict[frozenset, float]:
    """Tukey HSD's adjusted p-value of every pair of levels of `term` ({a, b} -> p adj); the
    decisions' own are :func:`pair_p_values`."""
    return {frozenset((r["group1"], r["group2"])): r["p_adj"] for r in tukey_rows
            if r["term"] == term and r.get("p_adj") is not None}


def ordering_with_p(values: dict[str, float], better: dict[tuple[str, str], bool],
                    p_adj: dict[frozenset, float], label=str, fmt_p=None, higher_is_better: bool = False) -> str:
    """:func:`ordering` with its evidence: after each '=' the p-value of the tied pair, after
    each '<' ('>') the largest p-value of the pairs it separates (every one of them is at most
    that): "1769 MB = 3008 MB (p = 0.97) < 512 MB (p ≤ 0.0012)". A pair with no p-value (an
    exact difference) adds none. Orderings whose ties do not form groups ('≤') and undefined
    values are given as :func:`ordering` gives them, labelled."""
    fmt_p = fmt_p or (lambda p: f"{p:.2g}")

    def note(a: str, b: str) -> str:  # the separated pairs of a '≤' group, with their p-values
        p = p_adj.get(frozenset((a, b)))
        return f": {_p_text(fmt_p(p), '=')}" if p is not None else ""

    base = ordering(values, better, higher_is_better=higher_is_better)
    lv = _sorted(values, higher_is_better)
    if "≤" in base or "≥" in base or "undefined" in base or len(lv) < 2:
        return relabel(ordering(values, better, note, higher_is_better), list(values), label)
    lv, cuts = _cuts(values, better, higher_is_better)
    rel = " > " if higher_is_better else " < "
    k = len(lv)
    out = label(lv[0])
    for i in range(1, k):
        if i in cuts:
            ps = [p_adj.get(frozenset((lv[a], lv[b]))) for a in range(i) for b in range(i, k)]
            ps = [p for p in ps if p is not None]
            out += f"{rel}{label(lv[i])}" + (f" ({_p_text(fmt_p(max(ps)), '≤')})" if ps else "")
        else:
            p = p_adj.get(frozenset((lv[i - 1], lv[i])))
            out += f" = {label(lv[i])}" + (f" ({_p_text(fmt_p(p), '=')})" if p is not None else "")
    return out


def _p_text(text: str, op: str) -> str:
    """"p = 0.97", "p ≤ 0.0012"; a formatted bound ("< 1e-16") keeps its own relation."""
    return f"p {text}" if text[:1] in "<>≤" else f"p {op} {text}"


def rank_levels(df, response: str, factors: list[str], compare: str, alpha: float = 0.05,
                levels: dict[str, list[str]] | None = None, *, higher_is_better: bool = False) -> dict:
    """The whole-scenario performance ordering of `compare`'s levels by `response`, exactly as
    :func:`decide` makes it (estimated marginal means of the full model, Welch tests with a
    Games-Howell-type adjustment; the fit's status from the full model's ANOVA), without the
    rest of ``analyze()``: for a second response of the same cells, such as the cost per
    invocation. Returns ``analyze()``'s key ``fit_status`` and ``decisions`` (one row:
    ``performance``, ``performance_order``, ``test``, ``pairs``, ``mean`` (the EMMs),
    ``mean_ci``, ``raw_mean``, ``tested_mean``, ``higher_is_better``)."""
    data, lv = prepare(df, response, list(factors), levels, min_rows=2)
    d = build_design(data, response, list(factors), lv)
    ci = list(factors).index(compare)
    fit = fit_anova(d, "full", "II", alpha)
    perf = level_comparison(d, fit.terms, ci, alpha, fit.status, higher_is_better=higher_is_better)
    perf["raw_mean"] = _raw_level_means(d, ci, d.means)
    return {"fit_status": fit.status,
            "decisions": [{"compare": compare, "within": {f: "all" for f in factors if f != compare}, **perf}]}
