"""How long does `faascope analyze` take on a million rows?

Synthetic data: 3 factors with 2 x 3 x 4 levels (24 cells), log-normal latency whose location
and spread depend on the cell, ~41,667 rows per cell (balanced) or 20k-60k per cell (--unbalanced).
Prints seconds per stage. The headline figure ("ANOVA + Tukey + per-cell statistics") is the
sum of the design, cells, anova and tukey stages; the robust checks (log ANOVA, aligned-rank
ANOVA with 7 rankings of 1M values, Kruskal-Wallis), predictability and the whole analyze()
call are timed separately.

    PYTHONPATH=src python bench/analysis_scale.py [--rows 1000000] [--unbalanced] [--statsmodels]
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from faascope.analysis import analyze
from faascope.analysis.anova import fit_anova
from faascope.analysis.cells import cell_stats_design
from faascope.analysis.design import build_design
from faascope.analysis.diagnostics import check_assumptions, robust_checks
from faascope.analysis.io import prepare
from faascope.analysis.predictability import cv_draws, predictability
from faascope.analysis.tukey import tukey_all


def synthetic(n_rows: int, unbalanced: bool, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    levels = [["lambda", "gcf"], ["512", "4096", "131072"], ["TIER_1", "TIER_2", "TIER_3", "TIER_5"]]
    cells = list(itertools.product(*[range(len(lv)) for lv in levels]))
    if unbalanced:
        w = rng.uniform(0.5, 1.5, len(cells))
        counts = np.floor(w / w.sum() * n_rows).astype(int)
        counts[0] += n_rows - counts.sum()
    else:
        counts = np.full(len(cells), n_rows // len(cells))
        counts[: n_rows - counts.sum()] += 1
    codes = np.repeat(np.arange(len(cells)), counts)
    cell_arr = np.array(cells)[codes]
    mu = -3 + 0.4 * cell_arr[:, 0] - 0.3 * cell_arr[:, 1] - 0.2 * cell_arr[:, 2] + 0.1 * cell_arr[:, 0] * cell_arr[:, 2]
    sigma = 0.3 + 0.1 * cell_arr[:, 2]
    y = rng.lognormal(mu, sigma)
    return pd.DataFrame({
        "platform": np.array(levels[0], dtype=object)[cell_arr[:, 0]],
        "io_size": np.array(levels[1], dtype=object)[cell_arr[:, 1]],
        "tier": np.array(levels[2], dtype=object)[cell_arr[:, 2]],
        "latency_seconds": y,
    })


def timed(label, fn, times):
    t0 = time.perf_counter()
    out = fn()
    times[label] = time.perf_counter() - t0
    print(f"{label:<44s} {times[label]:8.3f} s", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="100,000 rows")
    ap.add_argument("--out", default=None, help="also write the timings as JSON here")
    ap.add_argument("--unbalanced", action="store_true")
    ap.add_argument("--statsmodels", action="store_true", help="also time statsmodels ols + anova_lm for comparison")
    a = ap.parse_args()
    if a.quick:
        a.rows = min(a.rows, 100_000)
    factors = ["platform", "io_size", "tier"]
    df = synthetic(a.rows, a.unbalanced)
    print(f"{len(df):,} rows, 2 x 3 x 4 = 24 cells, {'unbalanced' if a.unbalanced else 'balanced'}")
    t: dict[str, float] = {}
    data, lv = timed("validate (prepare)", lambda: prepare(df, "latency_seconds", factors), t)
    d = timed("design (codes, cell sums)", lambda: build_design(data, "latency_seconds", factors, lv), t)
    cells = timed("per-cell statistics", lambda: cell_stats_design(d, 0.05, 2000, 0), t)
    fit = timed("ANOVA full model, Type II", lambda: fit_anova(d, "full", "II"), t)
    timed("ANOVA full model, Type I", lambda: fit_anova(d, "full", "I"), t)
    timed("ANOVA full model, Type III", lambda: fit_anova(d, "full", "III"), t)
    tk = timed(f"Tukey HSD (all 7 terms)", lambda: tukey_all(fit, 0.05), t)
    timed("diagnostics (normality, Brown-Forsythe)", lambda: check_assumptions(d, 0.05), t)
    timed("robust (log ANOVA, ART ANOVA, Kruskal-Wallis)",
          lambda: robust_checks(d, "full", 0.05, "II", fit.rows, "none"), t)
    cv = np.array([c["cv"] for c in cells])
    timed("predictability (CV draws + comparisons)",
          lambda: predictability(d, cv, cv_draws(d, 2000, 0), 0.05, 10.0), t)
    headline = t["validate (prepare)"] + t["design (codes, cell sums)"] + t["per-cell statistics"] + \
        t["ANOVA full model, Type II"] + t["Tukey HSD (all 7 terms)"]
    print(f"{'=> ANOVA + Tukey + per-cell statistics':<44s} {headline:8.3f} s  ({len(tk)} Tukey pairs)")
    timed("whole analyze() incl. robust and decisions",
          lambda: analyze(df, "latency_seconds", factors), t)
    if a.out:
        import json
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps({"rows": len(df), "seconds": t, "headline_s": headline,
                                           "command": "python bench/analysis_scale.py " + " ".join(sys.argv[1:])}, indent=2))
    if a.statsmodels:
        import statsmodels.formula.api as smf
        from statsmodels.stats.anova import anova_lm

        def sm():
            m = smf.ols("latency_seconds ~ C(platform, Sum) * C(io_size, Sum) * C(tier, Sum)", df).fit()
            return anova_lm(m, typ=2)
        tab = timed("statsmodels ols + anova_lm typ=2 (reference)", sm, t)
        ours = {r["source"]: r["sum_sq"] for r in fit.rows}
        worst = max(abs(ours["Residual"] - tab.loc["Residual", "sum_sq"]) / tab.loc["Residual", "sum_sq"],
                    abs(ours["platform"] - tab.iloc[0]["sum_sq"]) / tab.iloc[0]["sum_sq"])
        print(f"max relative difference vs statsmodels: {worst:.2e}")


if __name__ == "__main__":
    main()
