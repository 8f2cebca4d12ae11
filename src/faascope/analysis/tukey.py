"""Tukey's honest significant differences, as R's `TukeyHSD(aov(...))` reports them.

Hand-written on purpose: statsmodels' `pairwise_tukeyhsd` runs a one-way ANOVA per factor, so its
error term is wrong for a multi-factor model. R's TukeyHSD.aov instead uses, for every term:
- the term's table of `model.tables(fit, "means")` (marginal means for balanced data),
- the replications per group (Tukey-Kramer for unequal groups: se = sqrt(MSE/2 (1/n_i + 1/n_j))),
- the model's residual mean square and residual degrees of freedom,
- the studentized range distribution with k = number of groups of the term.
Interaction groups are labelled like R ("A:L"), pairs in R's order (lower triangle, column by
column), and `meandiff = mean(group2) - mean(group1)` (R's row "group2-group1"; statsmodels'
convention too).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

from faascope.analysis.anova import ModelFit, term_means
from faascope.analysis.design import Term, term_name


@lru_cache(maxsize=256)
def q_crit(conf: float, k: int, df: float) -> float:
    """qtukey(conf, k, df): scipy's studentized range, solved by the secant method from
    statsmodels' table-based approximation (3-4 evaluations of scipy's cdf instead of the ~15
    that its generic ppf needs; each costs an adaptive 2-D integral). Falls back to scipy's
    ppf if the secant steps do not converge."""
    if k == 2:  # the range of two means is sqrt(2)|t|: exact
        return float(math.sqrt(2.0) * stats.t.ppf(0.5 + conf / 2.0, df))
    target = 1.0 - conf
    try:
        from statsmodels.stats.libqsturng import qsturng
        x0 = float(qsturng(conf, min(k, 200), max(df, 2.0))) if 0.1 <= conf <= 0.999 else None
    except Exception:  # pragma: no cover - approximation unavailable
        x0 = None
    if x0 and math.isfinite(x0) and x0 > 0:
        x1 = x0 * 1.002
        f0 = stats.studentized_range.sf(x0, k, df) - target
        f1 = stats.studentized_range.sf(x1, k, df) - target
        for _ in range(8):
            if f1 == f0:
                break
            x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
            if not (x2 > 0 and math.isfinite(x2)):
                break
            x0, f0 = x1, f1
            x1 = x2
            if abs(x1 - x0) <= 1e-10 * x1:
                return float(x1)
            f1 = stats.studentized_range.sf(x1, k, df) - target
    return float(stats.studentized_range.ppf(conf, k, df))


#: below this, scipy's studentized-range sf (1 - an integrated cdf, absolute error ~1e-12) has
#: lost its relative accuracy; such p-values are replaced by the Bonferroni upper bound.
P_FLOOR = 1e-9


def studentized_range_sf(q: np.ndarray, k: int, df: float) -> np.ndarray:
    """ptukey(q, k, df, lower.tail = FALSE), computed once per distinct |q|.

    k = 2: exact, the range of two means is sqrt(2)|t|, so p = 2 P(T_df > q/sqrt(2)).
    k > 2: scipy's studentized_range; where that falls below P_FLOOR it is replaced by
    min(1, C(k,2) * 2 P(T_df > q/sqrt(2))), an upper bound (the union over the pairs) that is
    accurate to within the factor C(k,2) in that far tail, rather than a number at the
    integrator's noise floor.
    """
    uq, inv = np.unique(np.round(np.abs(q), 12), return_inverse=True)
    t_two_sided = 2.0 * stats.t.sf(uq / math.sqrt(2.0), df)
    if k == 2:
        p = t_two_sided
    else:
        p = np.array([float(stats.studentized_range.sf(v, k, df)) if v > 0 else 1.0 for v in uq])
        bound = np.minimum(1.0, k * (k - 1) / 2.0 * t_two_sided)
        p = np.where(p < P_FLOOR, np.minimum(bound, P_FLOOR), p)
    return np.clip(p[inv], 0.0, 1.0)


def tukey_term(fit: ModelFit, term: Term, alpha: float = 0.05, ordered: bool = False) -> list[dict]:
    d = fit.design
    combos, means, counts = term_means(fit, term, centred=True)
    names = [":".join(d.levels[d.factors[j]][c] for j, c in zip(term, combo)) for combo in combos]
    k = len(means)
    order = np.argsort(means, kind="stable") if ordered else np.arange(k)
    means, counts, names = means[order], counts[order], [names[i] for i in order]
    jj, ii = [], []
    for j in range(k):            # R: outer(...)[lower.tri(...)] runs column by column
        for i in range(j + 1, k):
            ii.append(i)
            jj.append(j)
    ii, jj = np.array(ii, dtype=int), np.array(jj, dtype=int)
    diff = means[ii] - means[jj]
    se = np.sqrt(fit.mse / 2.0 * (1.0 / counts[ii] + 1.0 / counts[jj]))
    qc = q_crit(1.0 - alpha, k, float(fit.df_resid))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(se > 0, diff / se, np.inf)
    p = studentized_range_sf(q, k, float(fit.df_resid))
    label = term_name(d, term)
    rows = []
    for a in range(len(ii)):
        rows.append({"term": label, "group1": names[jj[a]], "group2": names[ii[a]],
                     "meandiff": float(diff[a]), "lower": float(diff[a] - qc * se[a]),
                     "upper": float(diff[a] + qc * se[a]), "p_adj": float(p[a]),
                     "reject": bool(p[a] < alpha), "se": float(se[a]), "q": float(abs(q[a])),
                     "q_crit": qc})
    return rows


def tukey_all(fit: ModelFit, alpha: float = 0.05, ordered: bool = False,
              terms: list[Term] | None = None) -> list[dict]:
    """Every term's pairs; none when the fit has no residual variation to test against
    (fit.status, see anova.py)."""
    if not fit.tested:
        return []
    out: list[dict] = []
    for t in (fit.terms if terms is None else terms):
        out.extend(tukey_term(fit, t, alpha, ordered))
    return out
