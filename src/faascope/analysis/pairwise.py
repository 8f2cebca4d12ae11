"""Comparisons of levels that do not assume equal variances: Games-Howell among cells, and Welch
tests of estimated marginal means (EMMs) over the other factors. The decision table's tests.

Why not Tukey HSD (tukey.py, which stays as R's TukeyHSD for the ANOVA section): it tests every
pair against the model's one pooled residual variance. Latency cells differ in SD by two or
three orders of magnitude (a cold-start cell beside warm ones; one platform's smallest tier
beside its largest), and then the pooled variance is wrong for every pair: far too large for the
quiet cells, so real differences read as ties (0.227 ms against 0.893 ms "equal", their samples
not even overlapping), and far too small for a noisy cell with few rows, so noise reads as a
difference. Each test here uses every cell's own variance instead.

Every quantity compared is a fixed linear combination L = sum_c a_c ybar_c of independent cell
means, so whatever the cells' variances

    Var(L) = sum_c a_c^2 s_c^2 / n_c
    df     = Var(L)^2 / sum_c (a_c^2 s_c^2 / n_c)^2 / (n_c - 1)

(Welch 1947, Biometrika 34; Satterthwaite 1946, Biometrics Bull. 2). Pairs of the k levels are
tested with t = (L_j - L_i) / se, p = ptukey(|t| sqrt(2), k, df, lower.tail = FALSE) and the
simultaneous interval diff ± qtukey(1 - alpha, k, df) / sqrt(2) · se, each pair with its own df:

- Games-Howell (Games & Howell 1976, J. Educ. Stat. 1(2), 113-125): the k groups are k cells,
  a = ±1 (rstatix::games_howell_test).
- EMMs (Searle, Speed & Milliken 1980, Am. Stat. 34(4); R's emmeans, Lenth): a level's EMM is the
  mean of the model's predictions over every combination of the other factors, each combination
  weighted equally, not by its row count. For the full factorial model the predictions are the
  cell means (a = 1/m on the level's m cells); for the additive model they are the least-squares
  fit's, a = the hat matrix's rows averaged over the grid (which also predicts empty cells).
  Differences of EMMs are tested as above with k = the number of levels (emmeans'
  ``pairs(adjust = "tukey")`` with a df per contrast).

Degenerate cases are said, never computed through: a combination whose every cell with a
nonzero weight has no spread has se = 0, an exact difference with no test (or identical values),
never t = diff / 0; a cell with one value has no variance, so nothing that weighs it is tested,
and the pair names that cell.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from faascope.analysis.design import Design, Term, build_design_from_codes, cell_design_matrix
from faascope.analysis.tukey import q_crit, studentized_range_sf

#: what a pair says when the se is 0 and the difference is not: every value of each side is the same
EXACT = "exact difference, no test (no spread on either side)"
#: ... and when the difference is 0 too
IDENTICAL = "identical values, no test"
GAMES_HOWELL = "Games-Howell"
WELCH_EMM = "Welch EMM (Games-Howell adjustment)"


@dataclass(frozen=True)
class Cells:
    """Independent cells' summaries: centred means (cmeans + offset = the means, as in design.py,
    so differences keep every digit), unbiased variances (NaN where n < 2), counts, labels."""
    labels: list[str]
    cmeans: np.ndarray
    offset: float
    variances: np.ndarray
    counts: np.ndarray

    @classmethod
    def of_design(cls, design: Design) -> "Cells":
        n = design.counts.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            var = np.where(n >= 2, design.ss_within / (n - 1), np.nan)
        labels = [":".join(design.cell_label(c).values()) for c in range(len(n))]
        return cls(labels, np.asarray(design.cmeans, float), float(design.offset), var, n)

    @classmethod
    def of_samples(cls, samples: dict[str, "np.ndarray | list[float]"]) -> "Cells":
        """Cells from raw samples (one per group), in the order given."""
        names = list(samples)
        y = np.concatenate([np.asarray(samples[g], dtype=float) for g in names])
        codes = np.repeat(np.arange(len(names)), [len(samples[g]) for g in names]).reshape(-1, 1)
        d = build_design_from_codes(["group"], {"group": names}, y, codes)
        if len(d.counts) != len(names):
            raise ValueError("every group needs at least one value")
        return cls.of_design(d)


def welch_satterthwaite(coef, variances, counts) -> tuple[np.ndarray, np.ndarray]:
    """Var and Welch-Satterthwaite df of sum_c coef_c ybar_c (coef (..., C); variances may carry
    leading axes, e.g. simulated replicates). Var is NaN where a cell with a nonzero weight has
    no variance (n < 2); df is NaN where Var is 0 or NaN."""
    coef = np.asarray(coef, dtype=float)
    v = np.asarray(variances, dtype=float)
    n = np.asarray(counts, dtype=float)
    used = coef != 0
    with np.errstate(invalid="ignore", divide="ignore"):
        term = np.where(used, coef * coef * v / n, 0.0)
        var = term.sum(axis=-1)
        den = np.where(used & (term > 0), term * term / (n - 1), 0.0).sum(axis=-1)
        df = np.where((den > 0) & np.isfinite(var), var * var / den, np.nan)
    return var, df


def tukey_adjusted_p(t, k: int, df) -> np.ndarray:
    """ptukey(|t| sqrt(2), k, df, lower.tail = FALSE) elementwise, df per element (k = 2: the
    two-sided t p-value, exactly). tukey.studentized_range_sf does the work, once per distinct df."""
    t = np.abs(np.asarray(t, dtype=float))
    df = np.broadcast_to(np.asarray(df, dtype=float), t.shape)
    if k == 2:
        return np.minimum(1.0, 2.0 * stats.t.sf(t, df))
    out = np.empty(t.shape)
    for d in np.unique(df):
        sel = df == d
        out[sel] = studentized_range_sf(t[sel] * math.sqrt(2.0), k, float(d))
    return out


def tukey_adjusted_crit(k: int, df: float, alpha: float) -> float:
    """The simultaneous interval's multiplier qtukey(1 - alpha, k, df) / sqrt(2) (k = 2: t's
    1 - alpha/2 quantile)."""
    if k == 2:
        return float(stats.t.ppf(1.0 - alpha / 2.0, df))
    return q_crit(1.0 - alpha, k, float(df)) / math.sqrt(2.0)


def _no_variance(coef: np.ndarray, cells: Cells) -> str | None:
    lone = [cells.labels[c] for c in np.flatnonzero((coef != 0) & ~np.isfinite(cells.variances))]
    if not lone:
        return None
    return (f"no test: {', '.join(lone[:3])}{' …' if len(lone) > 3 else ''} "
            f"{'has' if len(lone) == 1 else 'have'} one value (a variance needs at least 2)")


def _resolution(coef: np.ndarray, cells: Cells) -> float:
    """A difference this small between cells without spread is rounding, not a difference."""
    used = coef != 0
    if not used.any():
        return 0.0
    big = abs(cells.offset) + float(np.max(np.abs(cells.cmeans[used])))
    return 4.0 * int(used.sum()) * float(np.spacing(big))


def compare_levels(names: list[str], coef: np.ndarray, cells: Cells, alpha: float = 0.05) -> tuple[dict, list[dict]]:
    """Estimates of k levels, level i = sum_c coef[i, c] ybar_c, and every pair of them.

    Returns ({level: {"estimate", "se", "df", "ci", "no_test"}}, [pair]); each pair (i < j, in
    the order of `names`): group1, group2, diff = estimate(group2) - estimate(group1), se, df,
    t, p_adj (Games-Howell-type, k = len(names)), lower/upper (simultaneous 1 - alpha),
    separated (p_adj < alpha, or an exact difference), exact, no_test (None, or why not)."""
    coef = np.asarray(coef, dtype=float)
    k = len(names)
    est_c = coef @ cells.cmeans
    var, df = welch_satterthwaite(coef, cells.variances, cells.counts)
    estimates = {}
    for i, name in enumerate(names):
        e = cells.offset + float(est_c[i])
        why = _no_variance(coef[i], cells)
        se = None if why else math.sqrt(float(var[i]))
        d = float(df[i]) if np.isfinite(df[i]) else None
        ci = None
        if se and d:
            h = float(stats.t.ppf(1.0 - alpha / 2.0, d)) * se
            ci = [e - h, e + h]
        estimates[name] = {"estimate": e, "se": se, "df": d, "ci": ci,
                           "no_test": why or ("no spread: exact" if se == 0 else None)}
    pairs = []
    for i, j in itertools.combinations(range(k), 2):
        a = coef[j] - coef[i]
        diff = float(a @ cells.cmeans)
        pv, pdf = welch_satterthwaite(a, cells.variances, cells.counts)
        pv, pdf = float(pv), float(pdf)
        row = {"group1": names[i], "group2": names[j], "diff": diff, "se": None, "df": None, "t": None,
               "p_adj": None, "lower": None, "upper": None, "separated": False, "exact": False, "no_test": None}
        why = _no_variance(a, cells)
        if why:
            row["no_test"] = why
        elif pv == 0.0:
            exact = abs(diff) > _resolution(a, cells)
            row.update(se=0.0, exact=exact, separated=exact, no_test=EXACT if exact else IDENTICAL,
                       diff=diff if exact else 0.0)
        else:
            se = math.sqrt(pv)
            t = diff / se
            p = float(tukey_adjusted_p(t, k, pdf))
            h = tukey_adjusted_crit(k, pdf, alpha) * se
            row.update(se=se, df=pdf, t=t, p_adj=p, lower=diff - h, upper=diff + h, separated=bool(p < alpha))
        pairs.append(row)
    return estimates, pairs


def games_howell(samples: dict[str, "np.ndarray | list[float]"], alpha: float = 0.05) -> list[dict]:
    """Games-Howell pairwise comparisons of independent samples (rstatix::games_howell_test):
    the pairs of :func:`compare_levels` with one cell per group."""
    cells = Cells.of_samples(samples)
    return compare_levels(list(samples), np.eye(len(samples)), cells, alpha)[1]


def emm_coefficients(design: Design, factor: int, terms: list[Term]) -> np.ndarray:
    """(levels x cells) weights a with EMM(level) = sum_c a[level, c] ybar_c: the mean of the
    model's predictions over every combination of the other factors' levels (each weighted
    equally; R's emmeans with its default weights = "equal")."""
    f = design.factors[factor]
    L = len(design.levels[f])
    C = len(design.counts)
    coef = np.zeros((L, C))
    saturated = design.complete and tuple(range(len(design.factors))) in terms
    if saturated:  # the predictions are the cell means
        for lv in range(L):
            sel = design.cell_codes[:, factor] == lv
            coef[lv, sel] = 1.0 / sel.sum()
        return coef
    # the least-squares predictions of every combination: X_grid (X' N X)^-1 X' N ybar
    X, _ = cell_design_matrix(design, terms)
    shape = design.shape
    grid = np.array(list(itertools.product(*(range(s) for s in shape))), dtype=np.int64).reshape(-1, len(shape))
    Xg, _ = cell_design_matrix(design, terms, codes=grid)
    XtN = X.T * design.counts.astype(float)
    hat = Xg @ np.linalg.solve(XtN @ X, XtN)
    for lv in range(L):
        coef[lv] = hat[grid[:, factor] == lv].mean(axis=0)
    return coef
