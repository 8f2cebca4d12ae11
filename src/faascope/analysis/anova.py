"""Factorial ANOVA on the cell summaries of a `Design`.

Sums of squares:
- Type I (sequential, R's `aov()`/`anova()`): the squared effects of a QR decomposition of the
  weighted cell-level model matrix, columns in R's term order.
- Type II (Langsrud; `car::Anova(type = 2)`): SS(T | every term that does not contain T).
- Type III (`car::Anova(type = 3)` with `contr.sum`): SS(T | every other term).
For balanced data the three coincide. faascope's default for unbalanced data is Type II (see
docs/analysis.md).

The fit uses the design's centred cell means (design.py), so a large common offset costs no
precision. Two data sets get sums of squares but no F test (`status`, rows with F and p None):
- "constant": no variation at all (total SS within a couple of ulps of the data); R prints F = 1
  or NaN from rounding noise with an "essentially perfect fit" warning.
- "perfect_fit": the residual SS is below 1e-10 of the total (R's anova.lm criterion), e.g. every
  cell constant while the cell means differ; R prints F ≈ 1e31. `pct_variation` is SS / SST * 100 with SST the total sum of squares about the
grand mean, so for balanced data the column sums to 100.

Why not statsmodels' `ols(...).fit()` + `anova_lm`? It gives the same numbers (the tests check
this), but builds an N x p design matrix through patsy: seconds and gigabytes on a million rows.
The cell-level fit here is exact for any categorical model and takes milliseconds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from faascope.analysis.design import Design, Term, cell_design_matrix, model_terms, term_df, term_name

SS_TYPES = {"1": "I", "I": "I", "2": "II", "II": "II", "3": "III", "III": "III"}


@dataclass
class ModelFit:
    design: Design
    terms: list[Term]
    ss_type: str
    df_resid: int
    rss: float
    mse: float
    rows: list[dict]
    seq_effects: dict  # term -> per-cell sequential projection (R's proj(), unweighted scale)
    grand_mean: float
    status: str | None = None  # None, "constant" or "perfect_fit": no F tests (see the module doc)

    @property
    def tested(self) -> bool:
        return self.status is None


def _weighted(design: Design):
    w = np.sqrt(design.counts.astype(float))
    return w, w * design.cmeans


def fit_status(design: Design, rss: float) -> str | None:
    """"constant", "perfect_fit" or None (see the module doc)."""
    return variation_status(design.sst, rss, design.n, design.resolution)


def variation_status(sst: float, rss: float, n: int, resolution: float) -> str | None:
    """"constant" (the total sum of squares ``sst`` of ``n`` values is within a couple of ulps,
    ``resolution``, of the data), "perfect_fit" (the residual sum of squares ``rss`` is below
    1e-10 of the total: R's anova.lm criterion) or None. `faascope compare` asks the same of two
    samples (groups: the two sides), so both commands call the same data untestable."""
    if sst <= n * (2.0 * resolution) ** 2:
        return "constant"
    if rss <= 1e-10 * sst:
        return "perfect_fit"
    return None


def _lof(Z: np.ndarray, z: np.ndarray) -> float:
    """Weighted lack of fit ||z - Z b||^2 of the least-squares fit on the columns of Z."""
    if Z.shape[1] == 0:
        return float(z @ z)
    b, *_ = np.linalg.lstsq(Z, z, rcond=None)
    r = z - Z @ b
    return float(r @ r)


def fit_anova(design: Design, model: str = "full", ss_type: str = "II", alpha: float = 0.05,
              terms: list[Term] | None = None) -> ModelFit:
    ss_type = SS_TYPES[str(ss_type).upper()]
    terms = model_terms(len(design.factors), model) if terms is None else terms
    X, slices = cell_design_matrix(design, terms)
    w, z = _weighted(design)
    Z = X * w[:, None]
    p = X.shape[1]
    n = design.n
    df_resid = n - p
    if df_resid <= 0:
        raise ValueError(f"no residual degrees of freedom ({n} rows, {p} parameters)")

    Q, R = np.linalg.qr(Z)
    diag = np.abs(np.diag(R))
    if diag.min() <= 1e-10 * diag.max():
        raise ValueError("the model matrix is rank deficient (an empty or aliased cell)")
    effects = Q.T @ z
    fitted_w = Q @ effects
    lof = float((z - fitted_w) @ (z - fitted_w))
    rss = float(design.ss_within.sum()) + lof
    mse = rss / df_resid
    sst = design.sst

    # sequential projections per term (constant within a cell), for R's model.tables("means")
    seq_effects = {(): (Q[:, :1] @ effects[:1]) / w}  # centred scale: design.offset not added
    for t in terms:
        s = slices[t]
        seq_effects[t] = (Q[:, s] @ effects[s]) / w

    ss: dict[Term, float] = {}
    if ss_type == "I":
        for t in terms:
            ss[t] = float(effects[slices[t]] @ effects[slices[t]])
    else:
        def cols(ts):
            idx = [0] + [i for t in ts for i in range(slices[t].start, slices[t].stop)]
            return Z[:, idx]
        lof_full = _lof(Z, z)
        for t in terms:
            others = [u for u in terms if u != t]
            if ss_type == "II":
                base = [u for u in others if not set(t) < set(u)]
                ss[t] = max(_lof(cols(base), z) - _lof(cols(base + [t]), z), 0.0)
            else:
                ss[t] = max(_lof(cols(others), z) - lof_full, 0.0)

    status = fit_status(design, rss)
    if status == "constant":  # whatever is left is rounding noise: exactly nothing to explain
        ss = {t: 0.0 for t in terms}
        rss = mse = 0.0
    elif status == "perfect_fit":
        rss = mse = 0.0
    rows = []
    for t in terms:
        df = term_df(design, t)
        ms = ss[t] / df
        F_crit = float(stats.f.ppf(1 - alpha, df, df_resid))
        if status is None:
            F = ms / mse
            p_value = float(stats.f.sf(F, df, df_resid))
        else:
            F = p_value = None
        rows.append({"source": term_name(design, t), "df": df, "sum_sq": ss[t],
                     "pct_variation": 100.0 * ss[t] / sst if status != "constant" else 0.0,
                     "mean_sq": ms, "F": F, "F_crit": F_crit, "p_value": p_value,
                     "significant": bool(p_value is not None and p_value < alpha)})
    rows.append({"source": "Residual", "df": df_resid, "sum_sq": rss,
                 "pct_variation": 100.0 * rss / sst if status != "constant" else 0.0, "mean_sq": mse})
    return ModelFit(design, terms, ss_type, df_resid, rss, mse, rows, seq_effects, design.grand_mean, status)


def term_means(fit: ModelFit, term: Term, centred: bool = False) -> tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]:
    """R's `model.tables(aov, "means")` for one term, with the replications per group.

    The table of a term T is the grand mean plus the sequential projections of T and of every
    model term contained in T, averaged over the rows of each level combination of T. For
    balanced data these are the plain marginal means; for unbalanced data they are what R's
    TukeyHSD() compares. Returns (level-index tuples in R's expand.grid order - first factor
    fastest -, means, counts). `centred`: the means less design.offset (differences between them
    keep every digit when the data sit on a large offset).
    """
    d = fit.design
    val = fit.seq_effects[()].copy()
    for t in fit.terms:
        if set(t) <= set(term):
            val = val + fit.seq_effects[t]
    dims = [len(d.levels[d.factors[j]]) for j in term]
    # group index in expand.grid order: first factor of the term varies fastest
    g = np.zeros(len(d.counts), dtype=np.int64)
    mult = 1
    for j, L in zip(term, dims):
        g += d.cell_codes[:, j] * mult
        mult *= L
    n_groups = mult
    cnt = np.bincount(g, weights=d.counts, minlength=n_groups)
    means = np.bincount(g, weights=d.counts * val, minlength=n_groups) / cnt
    if not centred:
        means = means + d.offset
    combos = []
    for gi in range(n_groups):
        rem, combo = gi, []
        for L in dims:
            combo.append(rem % L)
            rem //= L
        combos.append(tuple(combo))
    return combos, means, cnt
