"""Per-cell statistics, intervals, adequacy and the robust/diagnostic pieces."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from faascope.analysis import analyze, cell_stats, cv_test, ecdf
from faascope.analysis.cells import median_ci_ranks, n_for_rel_halfwidth
from faascope.analysis.design import build_design
from faascope.analysis.diagnostics import _marginal_means
from faascope.analysis.anova import fit_anova
from faascope.analysis.intervals import MIN_N, too_few
from faascope.analysis.io import prepare


def lognormal_frame(seed=3, n=40, levels_a=("x", "y"), levels_b=("p", "q", "r")):
    rng = np.random.default_rng(seed)
    rows = []
    for i, (a, b) in enumerate(itertools.product(levels_a, levels_b)):
        for v in rng.lognormal(-3 + 0.2 * i, 0.4 + 0.1 * i, n):
            rows.append((a, b, v))
    return pd.DataFrame(rows, columns=["A", "B", "lat"])


def test_descriptives_match_numpy_and_r_type7():
    df = lognormal_frame()
    cells = cell_stats(df, "lat", ["A", "B"], n_boot=0)
    for c in cells:
        x = df.loc[(df.A == c["levels"]["A"]) & (df.B == c["levels"]["B"]), "lat"].to_numpy()
        assert c["n"] == len(x)
        assert math.isclose(c["mean"], x.mean(), rel_tol=1e-12)
        assert math.isclose(c["std"], x.std(ddof=1), rel_tol=1e-10)
        assert math.isclose(c["cv"], x.std(ddof=1) / x.mean(), rel_tol=1e-10)
        assert c["median"] == np.median(x) and c["min"] == x.min() and c["max"] == x.max()
        # R's quantile(type = 7): h = (n-1)p, linear interpolation between order statistics
        xs = np.sort(x)
        for key, p in (("p90", 0.9), ("p95", 0.95), ("p99", 0.99)):
            h = (len(x) - 1) * p
            lo = int(math.floor(h))
            expect = xs[lo] + (h - lo) * (xs[min(lo + 1, len(x) - 1)] - xs[lo])
            assert math.isclose(c[key], expect, rel_tol=1e-12)
        assert c["p999"] is None  # n < 1000
        # 40 values without resampling: the t interval on the log scale needs 300 (intervals.MIN_N),
        # so no interval, and why; the planning half-width stays Student's t
        assert c["mean_ci"] is None and c["mean_ci_why"] == too_few(40, MIN_N["log-t"])
        t = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
        assert math.isclose(c["ci_halfwidth_rel"], t / x.mean())


def test_r_quantile_type7_textbook_value():
    # R: quantile(1:10, 0.9) is 9.1 (type 7 default; documented in ?quantile)
    df = pd.DataFrame({"A": ["a"] * 10 + ["b"] * 10, "y": list(range(1, 11)) * 2})
    c = cell_stats(df, "y", ["A"], n_boot=0)[0]
    assert math.isclose(c["p90"], 9.1)


def test_median_ci_order_statistics():
    # n = 10 at 95 %: [x(2), x(9)], coverage 1 - 2 P(B <= 1) = 1 - 22/1024 (e.g. Conover,
    # Practical Nonparametric Statistics, quantile test CI; also R's DescTools::MedianCI exact)
    l, u, cov = median_ci_ranks(10, 0.05)
    assert (l, u) == (2, 9) and math.isclose(cov, 1 - 22 / 1024)
    assert median_ci_ranks(5, 0.05) is None      # 1 - 2/32 < 0.95: even [min, max] falls short
    assert median_ci_ranks(6, 0.05)[:2] == (1, 6)
    for n in (6, 7, 20, 50, 150, 1001):
        l, u, cov = median_ci_ranks(n, 0.05)
        assert cov >= 0.95 and u == n - l + 1
        assert 1 - 2 * stats.binom.cdf(l, n, 0.5) < 0.95  # the next narrower interval is too short


def test_small_cell_median_ci_is_null():
    df = pd.DataFrame({"A": ["a"] * 4 + ["b"] * 4, "y": [1.0, 2, 3, 4, 2, 3, 4, 5]})
    c = cell_stats(df, "y", ["A"], n_boot=0)[0]
    assert c["median_ci"] is None and c["median_ci_level"] is None


def test_cv_ci_only_for_tight_cells_with_enough_values():
    rng = np.random.default_rng(5)
    tight = rng.lognormal(0, 0.1, 400)
    df = pd.DataFrame({"A": ["tight"] * 400 + ["few"] * 60 + ["skewed"] * 400,
                       "y": np.concatenate([tight, tight[:60], rng.lognormal(0, 0.6, 400)])})
    c = {r["levels"]["A"]: r for r in cell_stats(df, "y", ["A"], n_boot=0)}
    ok = c["tight"]
    assert ok["cv_ci_method"] == "delta method, log scale" and ok["cv_ci_why"] is None
    assert 0 < ok["cv_ci"][0] < ok["cv"] < ok["cv_ci"][1]
    assert c["few"]["cv_ci"] is None and c["few"]["cv_ci_why"] == too_few(60, MIN_N["cv-log-t"])
    assert c["skewed"]["cv_ci"] is None and c["skewed"]["cv_ci_why"].startswith("too skewed for a CV interval")


def test_n_for_target_is_minimal():
    for s, m, r in [(1.0, 10.0, 0.05), (3.0, 1.0, 0.05), (0.2, 1.0, 0.01), (5.0, 1.0, 0.1)]:
        n = n_for_rel_halfwidth(s, m, r, 0.05)
        f = lambda k: stats.t.ppf(0.975, k - 1) * s / (math.sqrt(k) * m)
        assert f(n) <= r and (n == 2 or f(n - 1) > r)


def test_ecdf():
    df = lognormal_frame(n=10)
    e = ecdf(df, "lat", ["A", "B"])
    assert len(e) == 6 and e[0]["F"][-1] == 1.0 and np.all(np.diff(e[0]["x"]) >= 0)


def test_art_alignment_strips_other_effects():
    """ART's defining property (Wobbrock et al. 2011): in a balanced design, the ANOVA of the
    aligned (not yet ranked) response for effect E has zero sum of squares for every other effect."""
    df = lognormal_frame(n=8, levels_b=("p", "q", "r", "s"))
    data, lv = prepare(df, "lat", ["A", "B"])
    d = build_design(data, "lat", ["A", "B"], lv)
    resid = d.y - d.means[d.row_cell]
    for t in [(0,), (1,), (0, 1)]:
        eff = np.zeros(len(d.counts))
        for r in range(len(t) + 1):
            for sub in itertools.combinations(t, r):
                eff += (-1) ** (len(t) - r) * _marginal_means(d, sub)
        fit = fit_anova(d.with_response(resid + eff[d.row_cell]), "full", "I")
        for row in fit.rows[:-1]:
            name = ":".join(d.factors[j] for j in t)
            if row["source"] != name:
                assert abs(row["sum_sq"]) < 1e-10
            else:
                assert row["sum_sq"] > 0


def test_robust_section_and_disagreement_report():
    # a pure scale effect on skewed data: the plain ANOVA and the rank-based test can disagree
    df = lognormal_frame(n=30)
    res = analyze(df, "lat", ["A", "B"], n_boot=0)
    rob = res["robust"]
    assert {r["source"] for r in rob["art_anova"]} == {"A", "B", "A:B"}
    assert {r["source"] for r in rob["log_anova"]} >= {"A", "B", "A:B", "Residual"}
    assert {r["source"] for r in rob["kruskal_wallis"]} == {"A", "B"}
    for dis in rob["disagreements"]:
        assert any(dis["source"] in w for w in res["warnings"])
    assert res["diagnostics"]["equal_variance"]["test"] == "brown-forsythe"
    assert all(c["normality"]["test"] == "shapiro-wilk" for c in res["cells"])


def test_log_transform_anova():
    df = lognormal_frame(n=30)
    res = analyze(df, "lat", ["A", "B"], transform="log", n_boot=0, robust=False)
    df2 = df.assign(lat=np.log(df["lat"]))
    ref = analyze(df2, "lat", ["A", "B"], n_boot=0, robust=False)
    for a, b in zip(res["anova"], ref["anova"]):
        assert math.isclose(a["sum_sq"], b["sum_sq"], rel_tol=1e-10)
    assert res["cells"][0]["mean"] == pytest.approx(df.loc[(df.A == "x") & (df.B == "p"), "lat"].mean())


def test_predictability_and_decisions():
    rng = np.random.default_rng(11)
    rows = []
    for plat, tier in itertools.product(["GCF", "LAMBDA"], ["T1", "T5"]):
        mean = {"GCF": 1.0, "LAMBDA": 2.0}[plat]
        cv = {"GCF": 0.02, "LAMBDA": 0.15}[plat]  # both tight: the CV comparison has an interval
        for v in rng.normal(mean, cv * mean, 150):
            rows.append((plat, tier, abs(v)))
    df = pd.DataFrame(rows, columns=["platform", "tier", "lat"])
    res = analyze(df, "lat", ["platform", "tier"], n_boot=500, robust=False)
    top = res["decisions"][0]
    assert top["within"] == {"tier": "all"}
    assert top["performance"] == "GCF" and top["predictability"] == "GCF"
    assert len(res["decisions"]) == 3
    pf = next(p for p in res["predictability"]["factors"] if p["factor"] == "platform")
    comp = pf["comparisons"][0]
    assert comp["meaningful"] and comp["cv_diff_pp"] > 10 and comp["ci_why"] is None
    assert comp["test"] == cv_test.NAME and comp["p_adj"] <= 0.05 and comp["test_why"] is None
    # a skewed level (CV 50 %): its CVs have no interval that covers (none is shown), but the CV
    # test needs none: 2 % against 50 % from 150 values a cell is decided by it
    skewed = df.assign(lat=np.where(df.platform == "LAMBDA", np.abs(rng.normal(2.0, 1.0, len(df))), df.lat))
    res3 = analyze(skewed, "lat", ["platform", "tier"], n_boot=300, robust=False)
    comp3 = next(p for p in res3["predictability"]["factors"] if p["factor"] == "platform")["comparisons"][0]
    assert comp3["cv_diff_ci_pp"] is None and comp3["ci_why"].startswith("too skewed for a CV interval")
    assert comp3["meaningful"] and comp3["p_adj"] <= 0.05 and comp3["statistic"] > 0
    assert res3["decisions"][0]["predictability"] == "GCF"
    # below the test's minimum n nothing is compared, and the row says why
    few = skewed.groupby(["platform", "tier"]).head(cv_test.MIN_N - 1)
    res4 = analyze(few, "lat", ["platform", "tier"], n_boot=300, robust=False)
    assert res4["decisions"][0]["predictability"] == "-"
    assert res4["decisions"][0]["predictability_order"] == (
        f"no CV comparison (too few (n = {cv_test.MIN_N - 1}; needs ≥ {cv_test.MIN_N}); 3 more cell(s) without a CV test)")
    # nothing to choose between identical platforms
    df2 = df.copy()
    df2["platform"] = np.where(rng.random(len(df)) < 0.5, "GCF", "LAMBDA")
    res2 = analyze(df2[df2.tier == "T1"].assign(tier2=lambda d: np.where(np.arange(len(d)) % 2, "u", "v")),
                   "lat", ["platform", "tier2"], n_boot=300, robust=False)
    assert res2["decisions"][0]["predictability"] == "-"


def test_midranks_and_kruskal_match_scipy():
    from faascope.analysis.diagnostics import kruskal_by_factor, midranks

    rng = np.random.default_rng(2)
    x = np.round(rng.lognormal(0, 1, 500), 1)  # many ties
    assert np.array_equal(midranks(x), stats.rankdata(x))
    df = pd.DataFrame({"A": rng.choice(["a", "b", "c"], 500), "B": rng.choice(["u", "v"], 500), "y": x})
    data, lv = prepare(df, "y", ["A", "B"])
    d = build_design(data, "y", ["A", "B"], lv)
    for row in kruskal_by_factor(d, 0.05):
        ref = stats.kruskal(*[df.loc[df[row["source"]] == v, "y"] for v in lv[row["source"]]])
        assert math.isclose(row["H"], ref.statistic, rel_tol=1e-10)
        assert math.isclose(row["p_value"], ref.pvalue, rel_tol=1e-8)
