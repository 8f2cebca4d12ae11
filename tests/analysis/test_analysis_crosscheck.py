"""Cross-checks against independent implementations (no published numbers involved):
statsmodels' OLS + anova_lm on the row-level data (patsy formulas, a completely different code
path from faascope's cell-level fit), scipy's one-way ANOVA, statsmodels' one-way Tukey HSD, and
textbook formulas."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multicomp import pairwise_tukeyhsd

from faascope.analysis import analyze
from faascope.analysis.anova import fit_anova, term_means
from faascope.analysis.design import build_design
from faascope.analysis.io import prepare

DATA = Path(__file__).resolve().parents[1] / "data"
WB_LEVELS = {"tension": ["L", "M", "H"]}


def close(a, b, rel=1e-9, abs_=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


@pytest.fixture(scope="module")
def warpbreaks():
    return pd.read_csv(DATA / "warpbreaks.csv", dtype=str)


@pytest.fixture(scope="module")
def unbalanced(warpbreaks):
    """warpbreaks with 7 rows removed from different cells: unbalanced, all cells present."""
    return warpbreaks.drop(index=[0, 1, 9, 20, 30, 31, 45]).reset_index(drop=True)


def _sm(df, formula, typ):
    d = df.copy()
    d["y"] = d["breaks"].astype(float)
    fit = smf.ols(formula, data=d).fit()
    return anova_lm(fit, typ=typ), fit


@pytest.mark.parametrize("typ", [1, 2, 3])
def test_unbalanced_ss_types_match_statsmodels(unbalanced, typ):
    formula = "y ~ C(wool, Sum) * C(tension, Sum)"
    tab, fit = _sm(unbalanced, formula, typ)
    res = analyze(unbalanced, "breaks", ["wool", "tension"], ss_type=str(typ), levels=WB_LEVELS,
                  robust=False, n_boot=0)
    assert res["balanced"] is False and res["ss_type"] == ["I", "II", "III"][typ - 1]
    ours = {r["source"]: r for r in res["anova"]}
    names = {"wool": "C(wool, Sum)", "tension": "C(tension, Sum)",
             "wool:tension": "C(wool, Sum):C(tension, Sum)", "Residual": "Residual"}
    for src, sm in names.items():
        assert close(ours[src]["sum_sq"], tab.loc[sm, "sum_sq"], rel=1e-8)
        assert ours[src]["df"] == int(tab.loc[sm, "df"])
        if src != "Residual":
            assert close(ours[src]["F"], tab.loc[sm, "F"], rel=1e-8)
            assert close(ours[src]["p_value"], tab.loc[sm, "PR(>F)"], rel=1e-6)
    sst = float(((unbalanced["breaks"].astype(float) - unbalanced["breaks"].astype(float).mean()) ** 2).sum())
    assert close(res["total_sum_sq"], sst)
    assert close(ours["wool"]["pct_variation"], 100 * ours["wool"]["sum_sq"] / sst)


def test_additive_unbalanced_type1_depends_on_order(unbalanced):
    a = analyze(unbalanced, "breaks", ["wool", "tension"], model="additive", ss_type="1", robust=False, n_boot=0)
    b = analyze(unbalanced, "breaks", ["tension", "wool"], model="additive", ss_type="1", robust=False, n_boot=0)
    tab, _ = _sm(unbalanced, "y ~ C(tension) + C(wool)", 1)
    wool_b = next(r for r in b["anova"] if r["source"] == "wool")
    wool_a = next(r for r in a["anova"] if r["source"] == "wool")
    assert close(wool_b["sum_sq"], tab.loc["C(wool)", "sum_sq"], rel=1e-8)
    assert not close(wool_a["sum_sq"], wool_b["sum_sq"], rel=1e-6)


def test_one_way_matches_scipy_f_oneway_and_statsmodels_tukey(warpbreaks):
    # one factor: faascope's Tukey must be exactly the classical one-way Tukey HSD
    d = warpbreaks.copy()
    d["g"] = d["wool"] + d["tension"]
    res = analyze(d, "breaks", ["g"], robust=False, n_boot=0)
    groups = [d.loc[d["g"] == g, "breaks"].astype(float) for g in sorted(d["g"].unique())]
    f = stats.f_oneway(*groups)
    a = res["anova"][0]
    assert close(a["F"], f.statistic, rel=1e-10) and close(a["p_value"], f.pvalue, rel=1e-8)
    sm = pairwise_tukeyhsd(d["breaks"].astype(float), d["g"], alpha=0.05)
    sm_rows = {(r[0], r[1]): r for r in sm.summary().data[1:]}
    for r in res["tukey"]:
        s = sm_rows[(r["group1"], r["group2"])]
        assert round(r["meandiff"], 4) == s[2]
        assert round(r["lower"], 4) == s[4] and round(r["upper"], 4) == s[5]
        assert math.isclose(r["p_adj"], float(sm.pvalues[list(sm_rows).index((r["group1"], r["group2"]))]), abs_tol=2e-3)


def test_full_model_top_interaction_equals_one_way_tukey_on_cells(warpbreaks):
    """In the full factorial model the residual MSE is the pooled within-cell variance, so the
    Tukey family of the highest interaction equals a one-way Tukey HSD on the cells."""
    res = analyze(warpbreaks, "breaks", ["wool", "tension"], levels=WB_LEVELS, robust=False, n_boot=0)
    d = warpbreaks.copy()
    d["cell"] = d["wool"] + ":" + d["tension"]
    sm = pairwise_tukeyhsd(d["breaks"].astype(float), d["cell"], alpha=0.05)
    sm_rows = {}
    for (g1, g2, md, p, lo, hi, rej) in sm.summary().data[1:]:
        sm_rows[(g1, g2)] = (md, lo, hi, rej)
        sm_rows[(g2, g1)] = (-md, -hi, -lo, rej)
    inter = [r for r in res["tukey"] if r["term"] == "wool:tension"]
    assert len(inter) == 15
    for r in inter:
        md, lo, hi, rej = sm_rows[(r["group1"], r["group2"])]
        assert round(r["meandiff"], 4) == pytest.approx(md, abs=1e-4)
        assert round(r["lower"], 4) == pytest.approx(lo, abs=1e-4)
        assert round(r["upper"], 4) == pytest.approx(hi, abs=1e-4)
        assert r["reject"] == rej


def test_main_effect_tukey_full_model_hand_computed(warpbreaks):
    """Textbook formula for a balanced two-way design: diff of marginal means, se =
    sqrt(MSE/r) with r rows per level, MSE and df of the full model, q from the studentized range."""
    res = analyze(warpbreaks, "breaks", ["wool", "tension"], levels=WB_LEVELS, robust=False, n_boot=0)
    y = warpbreaks["breaks"].astype(float)
    cell_mean = y.groupby([warpbreaks["wool"], warpbreaks["tension"]]).transform("mean")
    mse = float(((y - cell_mean) ** 2).sum()) / 48
    m = y.groupby(warpbreaks["tension"]).mean()
    q = stats.studentized_range.ppf(0.95, 3, 48)
    for r in (r for r in res["tukey"] if r["term"] == "tension"):
        diff = m[r["group2"]] - m[r["group1"]]
        se = math.sqrt(mse / 18)
        assert close(r["meandiff"], diff)
        assert close(r["upper"] - r["meandiff"], q * se, rel=1e-7)
        assert close(r["p_adj"], stats.studentized_range.sf(abs(diff) / se, 3, 48), rel=1e-6)
    # two levels: Tukey's p equals the F test's p
    wool_t = next(r for r in res["tukey"] if r["term"] == "wool")
    wool_a = next(r for r in res["anova"] if r["source"] == "wool")
    assert close(wool_t["p_adj"], wool_a["p_value"], rel=1e-5)


def test_unbalanced_tukey_means_are_r_model_tables_projections(unbalanced):
    """R's TukeyHSD compares model.tables(fit, "means"): grand mean + the sequential projections
    of the term and of the terms it contains. Recompute them from statsmodels' row-level fits of
    the nested models (fitted(A + B) - fitted(A) is B's projection)."""
    d = unbalanced.copy()
    d["y"] = d["breaks"].astype(float)
    f0 = np.full(len(d), d["y"].mean())
    fA = smf.ols("y ~ C(wool)", d).fit().fittedvalues.to_numpy()
    fAB = smf.ols("y ~ C(wool) + C(tension)", d).fit().fittedvalues.to_numpy()
    fFull = smf.ols("y ~ C(wool) * C(tension)", d).fit().fittedvalues.to_numpy()
    proj_tension = fAB - fA
    expected_tension = pd.Series(f0 + proj_tension).groupby(d["tension"]).mean()
    expected_cells = pd.Series(fFull).groupby([d["wool"], d["tension"]]).mean()

    data, lv = prepare(unbalanced, "breaks", ["wool", "tension"], WB_LEVELS)
    fit = fit_anova(build_design(data, "breaks", ["wool", "tension"], lv), "full", "I")
    combos, means, counts = term_means(fit, (1,))
    for (k,), m, n in zip(combos, means, counts):
        level = lv["tension"][k]
        assert close(m, expected_tension[level], rel=1e-10)
        assert n == (d["tension"] == level).sum()
    # for unbalanced data these are not the raw marginal means
    raw = d["y"].groupby(d["tension"]).mean()
    assert not all(close(expected_tension[k], raw[k], rel=1e-6) for k in raw.index)
    combos, means, _ = term_means(fit, (0, 1))
    for (i, j), m in zip(combos, means):
        assert close(m, expected_cells[(lv["wool"][i], lv["tension"][j])], rel=1e-10)


def test_tukey_unbalanced_uses_tukey_kramer_se(unbalanced):
    res = analyze(unbalanced, "breaks", ["wool", "tension"], levels=WB_LEVELS, robust=False, n_boot=0)
    mse = next(r for r in res["anova"] if r["source"] == "Residual")["mean_sq"]
    n = unbalanced.groupby("tension").size()
    for r in (r for r in res["tukey"] if r["term"] == "tension"):
        se = math.sqrt(mse / 2 * (1 / n[r["group1"]] + 1 / n[r["group2"]]))
        assert close(r["se"], se)


def test_three_factor_full_model_matches_statsmodels():
    rng = np.random.default_rng(7)
    rows = []
    for a in ["a1", "a2"]:
        for b in ["b1", "b2", "b3"]:
            for c in ["c1", "c2", "c3", "c4"]:
                k = int(rng.integers(3, 8))  # unbalanced
                for v in rng.lognormal(0.1 * len(a + b + c) + (a == "a2") * 0.3, 0.5, k):
                    rows.append((a, b, c, v))
    df = pd.DataFrame(rows, columns=["P", "Q", "R", "y"])  # not "C": patsy's C() would clash
    for typ in (1, 2, 3):
        fit = smf.ols("y ~ C(P, Sum) * C(Q, Sum) * C(R, Sum)", df).fit()
        tab = anova_lm(fit, typ=typ)
        data, lv = prepare(df, "y", ["P", "Q", "R"])  # ANOVA only: 395 Tukey pairs would be slow
        ours = {r["source"]: r for r in fit_anova(build_design(data, "y", ["P", "Q", "R"], lv),
                                                  "full", str(typ)).rows}
        for src in ["P", "Q", "R", "P:Q", "P:R", "Q:R", "P:Q:R"]:
            sm = ":".join(f"C({x}, Sum)" for x in src.split(":"))
            assert close(ours[src]["sum_sq"], tab.loc[sm, "sum_sq"], rel=1e-7), (typ, src)
        assert close(ours["Residual"]["sum_sq"], tab.loc["Residual", "sum_sq"], rel=1e-9)


def test_large_offset_is_numerically_stable():
    """Latencies with a huge mean and tiny spread: sums of squares come from centred data."""
    rng = np.random.default_rng(1)
    a = np.repeat(["x", "y"], 200)
    b = np.tile(np.repeat(["p", "q"], 100), 2)
    e = rng.normal(0, 1e-3, 400)
    df = pd.DataFrame({"A": a, "B": b, "y": 1e6 + e + (a == "y") * 1e-3})
    small = df.assign(y=df["y"] - 1e6)
    r1 = analyze(df, "y", ["A", "B"], robust=False, n_boot=0)["anova"]
    r2 = analyze(small, "y", ["A", "B"], robust=False, n_boot=0)["anova"]
    for x, z in zip(r1, r2):
        assert math.isclose(x["sum_sq"], z["sum_sq"], rel_tol=1e-4)


def test_studentized_range_helpers_match_scipy():
    from faascope.analysis.tukey import P_FLOOR, q_crit, studentized_range_sf

    for k, df in [(2, 5), (2, 48), (3, 48), (6, 20), (24, 500)]:
        for conf in (0.95, 0.99):
            assert math.isclose(q_crit(conf, k, float(df)), stats.studentized_range.ppf(conf, k, df), rel_tol=1e-8)
        q = np.array([0.5, 2.0, 3.5, 5.0, 6.5])
        ref = stats.studentized_range.sf(q, k, df)
        ours = studentized_range_sf(q, k, float(df))
        ok = ref > 1e-6
        assert np.allclose(ours[ok], ref[ok], rtol=1e-6)
    # far tail: never the integrator's noise floor, always at most the floor
    p = studentized_range_sf(np.array([40.0]), 3, 48.0)[0]
    assert 0 < p <= P_FLOOR


def test_additive_model_with_a_missing_cell_matches_statsmodels(warpbreaks):
    """Like the thesis' time-of-day data (no business hours at weekends): one empty cell, the
    additive model is still estimable; the full model is an error naming the cell."""
    d = warpbreaks[~((warpbreaks.wool == "B") & (warpbreaks.tension == "H"))].reset_index(drop=True)
    res = analyze(d, "breaks", ["wool", "tension"], model="additive", levels=WB_LEVELS, n_boot=0)
    assert len(res["cells"]) == 5 and res["balanced"] is False
    assert res["robust"]["art_anova"] is None and any("no data" in n for n in res["notes"])
    tab, _ = _sm(d, "y ~ C(wool) + C(tension)", 2)
    ours = {r["source"]: r for r in res["anova"]}
    assert close(ours["wool"]["sum_sq"], tab.loc["C(wool)", "sum_sq"], rel=1e-8)
    assert close(ours["tension"]["sum_sq"], tab.loc["C(tension)", "sum_sq"], rel=1e-8)
    assert close(ours["Residual"]["sum_sq"], tab.loc["Residual", "sum_sq"], rel=1e-8)
    from faascope.errors import BadInput
    with pytest.raises(BadInput, match="cell wool=B, tension=H has 0 row"):
        analyze(d, "breaks", ["wool", "tension"], model="full", levels=WB_LEVELS)
