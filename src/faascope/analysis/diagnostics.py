"""Model checks and robust alternatives.

Latency is right-skewed and its spread grows with its level, so the plain ANOVA's assumptions
(normal residuals, equal variances) rarely hold. faascope checks them and re-tests every term two
other ways, reporting where the conclusions differ:

- Normality per cell: Shapiro-Wilk for 3 ≤ n ≤ 5000 (scipy's p-value is only accurate up to
  5000), D'Agostino-Pearson K² above.
- Equal variances across cells: Brown-Forsythe (Levene's test about the cell medians), plus the
  largest-to-smallest SD ratio.
- ANOVA on log(y) (when every y > 0): a multiplicative model, which usually fits latency better.
- Aligned rank transform ANOVA (Wobbrock et al., CHI 2011, as in R's ARTool): for each term,
  align the response (residual from the cell means + the term's estimated effect from marginal
  means, by inclusion-exclusion), rank it (mid-ranks), fit the full factorial ANOVA on the ranks
  and keep only that term's F test. ART is defined for the full factorial; with --model additive
  only main effects are reported, still aligned on the full factorial.
- Kruskal-Wallis per factor (marginal groups, ignoring the other factors), for a familiar check.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import stats

from faascope.analysis.anova import fit_anova
from faascope.analysis.design import Design, model_terms, term_name


def normality(x: np.ndarray) -> dict:
    n = len(x)
    if n < 3 or np.ptp(x) == 0:
        return {"test": None, "statistic": None, "p_value": None}
    if n <= 5000:
        r = stats.shapiro(x)
        return {"test": "shapiro-wilk", "statistic": float(r.statistic), "p_value": float(r.pvalue)}
    r = stats.normaltest(x)
    return {"test": "dagostino-pearson", "statistic": float(r.statistic), "p_value": float(r.pvalue)}


#: fewest rows per cell for the checks: Shapiro-Wilk is defined from 3 values; with 2 values per
#: cell the absolute deviations from the cell median are equal, so Brown-Forsythe's F has no
#: within-cell variation (R's car::leveneTest gives F = 6e29, p = 6e-89 on such data).
MIN_ROWS_CHECK = 3


def check_assumptions(design: Design, alpha: float) -> tuple[dict, list[dict], list[str]]:
    """(summary, per-cell normality, plain-language warnings). A check that the data cannot
    support is skipped, and the summary says why (`skipped`), rather than reporting a p-value."""
    groups = [design.y[idx] - design.offset for idx in design.rows_of_cells()]  # centred: no cancellation
    per_cell = [normality(g) for g in groups]
    tested = [r for r in per_cell if r["p_value"] is not None]
    non_normal = [i for i, r in enumerate(per_cell) if r["p_value"] is not None and r["p_value"] < alpha]
    small = [i for i, g in enumerate(groups) if len(g) < MIN_ROWS_CHECK]
    flat = [i for i, g in enumerate(groups) if len(g) >= MIN_ROWS_CHECK and np.ptp(g) == 0]
    skew = [float(stats.skew(g)) for g in groups if len(g) >= MIN_ROWS_CHECK and np.ptp(g) > 0]
    norm_skip = None
    if not tested:
        norm_skip = (f"skipped: Shapiro-Wilk needs at least {MIN_ROWS_CHECK} rows per cell and values that "
                     f"vary; {_why_untestable(design, small, flat)}")
    elif small or flat:
        norm_skip = f"{len(small) + len(flat)} cell(s) not tested: {_why_untestable(design, small, flat)}"
    varying = design.counts > 1
    sds = np.sqrt(design.ss_within[varying] / (design.counts[varying] - 1))
    sd_ratio = (float(sds.max() / sds.min()) if len(sds) and sds.min() > 0 else
                (None if not len(sds) or sds.max() == 0 else float("inf")))
    ev_skip, bf = None, None
    if len(groups) < 2:
        ev_skip = "skipped: one cell"
    elif small:
        ev_skip = (f"skipped: Brown-Forsythe needs at least {MIN_ROWS_CHECK} rows per cell "
                   f"(the smallest cell has {int(design.counts.min())}: with 2 values the deviations from "
                   "the median are equal, and the test's p-value means nothing)")
    elif all(np.ptp(g) == 0 for g in groups):
        ev_skip = "skipped: no cell's responses vary"
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            bf = stats.levene(*groups, center="median")
        if not np.isfinite(bf.pvalue):
            bf, ev_skip = None, "skipped: the absolute deviations from the cell medians do not vary within any cell"
    summary = {
        "normality": {"cells_tested": len(tested), "cells_non_normal": len(non_normal),
                      "tests": sorted({r["test"] for r in tested}), "skipped": norm_skip},
        "equal_variance": {"test": "brown-forsythe",
                           "statistic": float(bf.statistic) if bf is not None else None,
                           "p_value": float(bf.pvalue) if bf is not None else None,
                           "sd_ratio_max_min": sd_ratio, "skipped": ev_skip},
        "skewness_max": max(skew) if skew else None,
    }
    warnings = []
    if non_normal:
        names = [", ".join(f"{k}={v}" for k, v in design.cell_label(i).items()) for i in non_normal[:3]]
        warnings.append(
            f"{len(non_normal)} of {len(tested)} cells are not normal at α={alpha:g} "
            f"(e.g. {'; '.join(names)}{'; …' if len(non_normal) > 3 else ''}), largest skewness "
            f"{max(skew):.2g}. With many replications per cell the F test still holds up reasonably, "
            "but compare with the log-scale and rank-based results below (--transform log).")
    if bf is not None and bf.pvalue < alpha:
        warnings.append(
            f"Variances differ between cells (Brown-Forsythe p={bf.pvalue:.3g}; the largest SD is "
            f"{sd_ratio:.3g}x the smallest). The ANOVA and Tukey intervals assume equal variances; "
            "a log transform often equalises them (--transform log).")
    return summary, per_cell, warnings


def _why_untestable(design: Design, small: list[int], flat: list[int]) -> str:
    parts = []
    if small:
        parts.append(f"{len(small)} of {len(design.counts)} cells have fewer than {MIN_ROWS_CHECK} rows "
                     f"(smallest: {int(design.counts.min())})")
    if flat:
        parts.append(f"{len(flat)} cell(s) have identical responses")
    return "; ".join(parts) if parts else "no cell could be tested"


def midranks(x: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (= scipy.stats.rankdata(x, "average")),
    with an unstable quicksort, which is several times faster than rankdata on 1M values.
    Sorted neighbours at most `tol` apart count as tied (values equal in exact arithmetic that
    rounding made differ in their last bits)."""
    n = len(x)
    order = np.argsort(x)
    xs = x[order]
    new = np.empty(n, dtype=bool)
    new[:1] = True
    if tol > 0:
        np.greater(xs[1:] - xs[:-1], tol, out=new[1:])
    else:
        np.not_equal(xs[1:], xs[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, n))
    avg = starts + (counts + 1) / 2.0
    ranks = np.empty(n)
    ranks[order] = np.repeat(avg, counts)
    return ranks


def _marginal_means(design: Design, subset: tuple[int, ...]) -> np.ndarray:
    """Per-cell value of the raw marginal mean of `subset`'s level combination (centred scale,
    y - design.offset)."""
    if not subset:
        return np.full(len(design.counts), design.centred_grand_mean)
    dims = [len(design.levels[design.factors[j]]) for j in subset]
    g = np.ravel_multi_index(tuple(design.cell_codes[:, j] for j in subset), dims)
    n_g = int(np.prod(dims))
    s = np.bincount(g, weights=design.counts * design.cmeans, minlength=n_g)
    c = np.bincount(g, weights=design.counts, minlength=n_g)
    return (s / c)[g]


def art_anova(design: Design, model: str, alpha: float, ss_type: str) -> list[dict]:
    """Aligned rank transform ANOVA: one row per term (the term's own F test on its aligned ranks).

    Aligned values that are equal in exact arithmetic come out of the sums of means differing in
    their last bits; they are ranked as ties (average ranks), as exact arithmetic ranks them: the
    tolerance is a few hundred ulps of the largest centred value (the sums have at most 2^k + 2
    terms of that size), far below any difference the data can hold."""
    full_terms = model_terms(len(design.factors), "full")
    wanted = model_terms(len(design.factors), model)
    yc = design.y - design.offset
    resid = yc - design.cmeans[design.row_cell]
    scale = float(np.max(np.abs(yc))) if design.n else 0.0
    tol = 2.0 ** (len(design.factors) + 6) * np.finfo(float).eps * scale
    rows = []
    for t in wanted:
        effect = np.zeros(len(design.counts))
        for r in range(len(t) + 1):
            for sub in itertools.combinations(t, r):
                effect += (-1) ** (len(t) - r) * _marginal_means(design, sub)
        aligned = resid + effect[design.row_cell]
        ranks = midranks(aligned, tol)
        fit = fit_anova(design.with_response(ranks), "full", ss_type, alpha, terms=full_terms)
        row = next(r for r in fit.rows if r["source"] == term_name(design, t))
        rows.append({"source": row["source"], "df": row["df"], "df_resid": fit.df_resid,
                     "F": row["F"], "p_value": row["p_value"], "significant": row["significant"]})
    return rows


def kruskal_by_factor(design: Design, alpha: float) -> list[dict]:
    """Kruskal-Wallis H per factor, from one ranking of the response (textbook formula with the
    tie correction; the tests check it against scipy.stats.kruskal)."""
    if np.ptp(design.y) == 0:
        return []
    n = design.n
    ranks = midranks(design.y)
    xs = np.sort(design.y)
    _, ties = np.unique(xs, return_counts=True)
    tie_corr = 1.0 - float(np.sum(ties.astype(float) ** 3 - ties)) / (float(n) ** 3 - n)
    out = []
    for j, f in enumerate(design.factors):
        k = len(design.levels[f])
        r_sum = np.bincount(design.codes[:, j], weights=ranks, minlength=k)
        n_g = np.bincount(design.codes[:, j], minlength=k).astype(float)
        h = (12.0 / (n * (n + 1.0)) * float(np.sum(r_sum ** 2 / n_g)) - 3.0 * (n + 1.0)) / tie_corr
        p = float(stats.chi2.sf(h, k - 1))
        out.append({"source": f, "H": h, "df": k - 1, "p_value": p, "significant": bool(p < alpha)})
    return out


def robust_checks(design: Design, model: str, alpha: float, ss_type: str, plain_rows: list[dict],
                  transform: str) -> tuple[dict, list[str]]:
    """Log-scale ANOVA, ART ANOVA and Kruskal-Wallis, and warnings where they disagree with the
    primary ANOVA (`plain_rows`, on the scale given by `transform`)."""
    out: dict = {}
    if transform != "log":
        if np.all(design.y > 0):
            fit = fit_anova(design.with_response(np.log(design.y)), model, ss_type, alpha)
            out["log_anova"] = [{k: r[k] for k in ("source", "df", "sum_sq", "pct_variation", "F", "p_value", "significant") if k in r}
                                for r in fit.rows]
        else:
            out["log_anova"] = None
    n_full = int(np.prod(design.shape))
    if not design.complete:
        art_skip = "skipped: the aligned-rank test aligns on the full factorial, which needs every cell"
    elif design.n - n_full < 1:
        art_skip = ("skipped: the aligned-rank test fits the full factorial, which has no residual degrees of "
                    "freedom with one row per cell")
    else:
        art_skip = None
    art = art_anova(design, model, alpha, ss_type) if art_skip is None else []
    out["art_anova"] = art if art_skip is None else None
    out["art_skipped"] = art_skip
    out["kruskal_wallis"] = kruskal_by_factor(design, alpha)
    primary = {r["source"]: r for r in plain_rows if r["source"] != "Residual"}
    alternatives = []
    if out.get("log_anova"):
        alternatives.append(("log-scale ANOVA", {r["source"]: r for r in out["log_anova"] if r["source"] != "Residual"}))
    alternatives.append(("aligned-rank (ART) ANOVA", {r["source"]: r for r in art}))
    disagreements, warnings = [], []
    scale = "log-scale" if transform == "log" else "plain"
    for src, r in primary.items():
        for name, alt in alternatives:
            a = alt.get(src)
            if a is None or a.get("p_value") is None or r.get("p_value") is None:
                continue  # an untestable re-test (e.g. constant ranks) neither agrees nor disagrees
            if a["significant"] != r["significant"]:
                disagreements.append({"source": src, "primary_p": r["p_value"], "method": name,
                                      "p_value": a["p_value"]})
                warnings.append(
                    f"{src}: {'significant' if r['significant'] else 'not significant'} in the {scale} "
                    f"ANOVA (p={_p(r['p_value'])}) but {'significant' if a['significant'] else 'not significant'} "
                    f"in the {name} (p={_p(a['p_value'])}); treat this effect with caution.")
    out["disagreements"] = disagreements
    return out, warnings


def _p(p: float) -> str:
    return "%.3g" % p if p is not None and math.isfinite(p) else str(p)
