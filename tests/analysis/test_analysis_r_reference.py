"""ANOVA and Tukey HSD against R's published output for R's own example data sets.

The data are typed in tests/data/ from R's `datasets` package (warpbreaks: Tippett 1950 via
?warpbreaks; ToothGrowth: Crampton 1947 via ?ToothGrowth). Each expected number below is R's
printed output for the call named in the comment, compared to 4 significant digits. None of
them was produced by faascope.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from faascope.analysis import analyze

DATA = Path(__file__).resolve().parents[1] / "data"


def sig4(a: float, b: float) -> bool:
    """a and b agree to 4 significant digits (relative difference below 5e-4 of b)."""
    if b == 0:
        return abs(a) < 1e-12
    return math.isclose(a, b, rel_tol=5e-4)


def as_printed(x: float, printed: str) -> bool:
    """x rounds to R's printed value, for numbers R printed with fewer than 4 significant digits."""
    digits = len(printed.replace(".", "").replace("-", "").lstrip("0"))
    return f"{x:.{digits}g}" == f"{float(printed):.{digits}g}"


def rows(res, key="anova"):
    return {r["source"]: r for r in res[key]}


@pytest.fixture(scope="module")
def warpbreaks():
    return pd.read_csv(DATA / "warpbreaks.csv", dtype=str)


@pytest.fixture(scope="module")
def toothgrowth():
    return pd.read_csv(DATA / "toothgrowth.csv", dtype=str)


WB_LEVELS = {"tension": ["L", "M", "H"]}  # R's factor order in warpbreaks


def test_warpbreaks_cell_means_match_data_set(warpbreaks):
    # model.tables(aov(breaks ~ wool * tension, warpbreaks), "means") - guards the typed-in data
    res = analyze(warpbreaks, "breaks", ["wool", "tension"], levels=WB_LEVELS, robust=False, n_boot=0)
    means = {(c["levels"]["wool"], c["levels"]["tension"]): c["mean"] for c in res["cells"]}
    expected = {("A", "L"): 44.56, ("A", "M"): 24.00, ("A", "H"): 24.56,
                ("B", "L"): 28.22, ("B", "M"): 28.78, ("B", "H"): 18.78}
    for k, v in expected.items():
        assert round(means[k], 2) == v


@pytest.mark.parametrize("ss_type", ["1", "2", "3"])
def test_warpbreaks_full_model_anova(warpbreaks, ss_type):
    # R, example of ?warpbreaks:  anova(fm1 <- lm(breaks ~ wool * tension, data = warpbreaks))
    #              Df Sum Sq Mean Sq F value    Pr(>F)
    # wool          1  450.7  450.67  3.7653 0.0582130 .
    # tension       2 2034.3 1017.13  8.4980 0.0006926 ***
    # wool:tension  2 1002.8  501.39  4.1891 0.0210442 *
    # Residuals    48 5745.1  119.69
    # (identical to summary(aov(breaks ~ wool * tension, data = warpbreaks)); balanced, so the
    # SS type must not matter)
    res = analyze(warpbreaks, "breaks", ["wool", "tension"], levels=WB_LEVELS, ss_type=ss_type,
                  robust=False, n_boot=0)
    a = rows(res)
    expected = {"wool": (1, 450.67, 450.67, 3.7653, 0.0582130),
                "tension": (2, 2034.3, 1017.13, 8.4980, 0.0006926),
                "wool:tension": (2, 1002.8, 501.39, 4.1891, 0.0210442)}
    for src, (df, ss, ms, F, p) in expected.items():
        assert a[src]["df"] == df
        assert sig4(a[src]["sum_sq"], ss) and sig4(a[src]["mean_sq"], ms)
        assert sig4(a[src]["F"], F) and sig4(a[src]["p_value"], p)
    assert a["Residual"]["df"] == 48
    assert sig4(a["Residual"]["sum_sq"], 5745.1) and sig4(a["Residual"]["mean_sq"], 119.69)
    assert [r["source"] for r in res["anova"]] == ["wool", "tension", "wool:tension", "Residual"]
    assert math.isclose(sum(r["pct_variation"] for r in res["anova"]), 100.0)


def test_warpbreaks_additive_anova_and_tukey_ordered(warpbreaks):
    # R, example of ?TukeyHSD:
    # summary(fm1 <- aov(breaks ~ wool + tension, data = warpbreaks))
    #             Df Sum Sq Mean Sq F value  Pr(>F)
    # wool         1    451   450.7   3.339 0.07361 .
    # tension      2   2034  1017.1   7.537 0.00138 **
    # Residuals   50   6748   135.0
    # TukeyHSD(fm1, "tension", ordered = TRUE)
    # $tension
    #          diff       lwr      upr     p adj
    # M-H  4.722222 -4.6311985 14.07564 0.4474210
    # L-H 14.722222  5.3688015 24.07564 0.0011218
    # L-M 10.000000  0.6465793 19.35342 0.0336262
    res = analyze(warpbreaks, "breaks", ["wool", "tension"], model="additive", levels=WB_LEVELS,
                  tukey_ordered=True, robust=False, n_boot=0)
    a = rows(res)
    assert a["wool"]["df"] == 1 and sig4(a["wool"]["sum_sq"], 450.7) and sig4(a["wool"]["F"], 3.339)
    assert sig4(a["wool"]["p_value"], 0.07361)
    assert a["tension"]["df"] == 2 and sig4(a["tension"]["sum_sq"], 2034.3) and sig4(a["tension"]["F"], 7.537)
    assert as_printed(a["tension"]["p_value"], "0.00138")  # R printed 3 significant digits
    assert a["Residual"]["df"] == 50 and sig4(a["Residual"]["sum_sq"], 6747.9)
    assert as_printed(a["Residual"]["mean_sq"], "135.0")

    tk = [r for r in res["tukey"] if r["term"] == "tension"]
    got = {f"{r['group2']}-{r['group1']}": r for r in tk}
    assert list(got) == ["M-H", "L-H", "L-M"]  # R's row order
    expected = {"M-H": (4.722222, -4.6311985, 14.07564, 0.4474210),
                "L-H": (14.722222, 5.3688015, 24.07564, 0.0011218),
                "L-M": (10.000000, 0.6465793, 19.35342, 0.0336262)}
    for k, (diff, lwr, upr, p) in expected.items():
        r = got[k]
        assert sig4(r["meandiff"], diff) and sig4(r["lower"], lwr) and sig4(r["upper"], upr)
        assert sig4(r["p_adj"], p)
    assert [got[k]["reject"] for k in expected] == [False, True, True]


def test_toothgrowth_two_way_anova(toothgrowth):
    # R: summary(aov(len ~ supp * dose, data = ToothGrowth)) with dose as a factor, the
    # classic example reproduced in STHDA's "Two-Way ANOVA Test in R" (and countless courses):
    #             Df Sum Sq Mean Sq F value   Pr(>F)
    # supp         1  205.4   205.4  15.572 0.000231 ***
    # dose         2 2426.4  1213.2  92.000  < 2e-16 ***
    # supp:dose    2  108.3    54.2   4.107 0.021860 *
    # Residuals   54  712.1    13.2
    res = analyze(toothgrowth, "len", ["supp", "dose"], robust=False, n_boot=0)
    a = rows(res)
    assert sig4(a["supp"]["sum_sq"], 205.35) and sig4(a["supp"]["F"], 15.572)
    assert as_printed(a["supp"]["p_value"], "0.000231")
    assert sig4(a["dose"]["sum_sq"], 2426.4) and sig4(a["dose"]["F"], 92.000) and a["dose"]["p_value"] < 2e-16
    assert sig4(a["supp:dose"]["sum_sq"], 108.3) and sig4(a["supp:dose"]["F"], 4.107)
    assert sig4(a["supp:dose"]["p_value"], 0.021860)
    assert a["Residual"]["df"] == 54 and sig4(a["Residual"]["sum_sq"], 712.1)


def test_toothgrowth_tukey_dose(toothgrowth):
    # R (same source): res.aov3 <- aov(len ~ supp * dose, data = ToothGrowth)
    #                  TukeyHSD(res.aov3, which = "dose")
    # $dose
    #           diff       lwr       upr   p adj
    # D1-D0.5  9.130  6.362488 11.897512 0.0e+00
    # D2-D0.5 15.495 12.727488 18.262512 0.0e+00
    # D2-D1    6.365  3.597488  9.132512 2.7e-06
    # (STHDA relabels the doses D0.5, D1, D2. The intervals use the full model's residual mean
    # square 712.1/54 and df 54, not a one-way ANOVA on dose.)
    res = analyze(toothgrowth, "len", ["supp", "dose"], model="full", robust=False, n_boot=0)
    got = {f"{r['group2']}-{r['group1']}": r for r in res["tukey"] if r["term"] == "dose"}
    expected = {"1-0.5": (9.130, 6.362488, 11.897512), "2-0.5": (15.495, 12.727488, 18.262512),
                "2-1": (6.365, 3.597488, 9.132512)}
    for k, (diff, lwr, upr) in expected.items():
        assert sig4(got[k]["meandiff"], diff) and sig4(got[k]["lower"], lwr) and sig4(got[k]["upper"], upr)
    assert got["1-0.5"]["p_adj"] < 5e-8 and got["2-0.5"]["p_adj"] < 5e-8
    assert as_printed(got["2-1"]["p_adj"], "0.0000027")
