"""The answer of ``faascope tune``: per memory size the warm latency (mean ± CI, median), the
cold starts, the cost per million invocations with its CI, the Pareto front of cost and latency,
and the three choices with their ties:

- cheapest: the lowest mean cost per invocation;
- fastest: the lowest mean warm latency;
- balanced: on the Pareto front, the lowest cost/cheapest + latency/fastest (both relative to the
  best, equal weights: Power Tuning's "balanced" idea, on means).

A tie is a size whose mean is not distinguishable from the choice's: Welch's t-test at α = 0.05
(scipy.stats.ttest_ind, equal_var=False) does not reject equal means; ties are stated with p.
"""
from __future__ import annotations

import math
import warnings
from typing import Optional

import numpy as np
import pandas as pd
from scipy import stats

from faascope.analysis.per_cell import mean_ci
from faascope.cost.report import pareto_front


def per_size(samples: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(samples)
    rows = []
    several_arches = df["arch"].nunique() > 1
    for (m, arch), g in df.groupby(["memory_mb", "arch"], sort=True):
        warm = g[(g["start"] == "warm") & (g["ok"] == 1)]
        cold = g[(g["start"] == "cold") & (g["ok"] == 1)]
        lat = warm["latency_seconds"].astype(float).to_numpy()
        mean, lo, hi, n = mean_ci(lat)
        cost = warm["cost_usd"].astype(float).to_numpy()
        cmean, clo, chi, _ = mean_ci(cost)
        init = pd.to_numeric(cold["init_duration_ms"], errors="coerce").dropna()
        rows.append({
            "memory_mb": int(m), "arch": arch, "n_warm": n,
            "size": f"{int(m)} MB" + (f" {arch}" if several_arches else ""),
            "failed": int((g["ok"] == 0).sum()), "attempts": len(g),
            "latency_mean": mean, "latency_half": None if lo is None else (hi - lo) / 2,
            "latency_median": float(np.median(lat)) if n else math.nan,
            "latency_p95": float(np.quantile(lat, 0.95)) if n else math.nan,
            "n_cold": len(cold),
            "cold_mean": float(cold["latency_seconds"].astype(float).mean()) if len(cold) else None,
            "init_mean_ms": float(init.mean()) if len(init) else None,
            "cost_per_invocation": cmean, "cost_half": None if clo is None else (chi - clo) / 2,
            "cost_per_million": cmean * 1e6 if n else math.nan,
            "_lat": lat, "_cost": cost,
        })
    table = pd.DataFrame(rows)
    if len(table):
        front = pareto_front(table, "cost_per_invocation", "latency_mean")
        table["pareto"] = table.index.isin(front.index)
    return table


def ties(table: pd.DataFrame, best: int, values: str, alpha: float = 0.05) -> list[tuple[str, float]]:
    """(size label, p) of the sizes whose mean of ``values`` Welch's t-test cannot tell from the
    best's."""
    b = table.loc[best, values]
    out = []
    for i, r in table.iterrows():
        if i == best or len(r[values]) < 2 or len(b) < 2:
            continue
        with warnings.catch_warnings():  # identical costs (same billed ms): p is nan or 1
            warnings.simplefilter("ignore", RuntimeWarning)
            p = float(stats.ttest_ind(b, r[values], equal_var=False).pvalue)
        if not (p < alpha) and math.isfinite(p):
            out.append((r["size"], p))
        elif not math.isfinite(p):  # both constant and equal
            out.append((r["size"], 1.0))
    return out


def choices(table: pd.DataFrame) -> dict[str, Optional[dict]]:
    ok = table[table["n_warm"] >= 2]
    if not len(ok):
        return {"cheapest": None, "fastest": None, "balanced": None}
    cheap = ok["cost_per_invocation"].idxmin()
    fast = ok["latency_mean"].idxmin()
    front = ok[ok["pareto"]]
    score = (front["cost_per_invocation"] / ok.loc[cheap, "cost_per_invocation"]
             + front["latency_mean"] / ok.loc[fast, "latency_mean"])
    bal = score.idxmin()
    return {
        "cheapest": {"row": cheap, "ties": ties(ok, cheap, "_cost")},
        "fastest": {"row": fast, "ties": ties(ok, fast, "_lat")},
        "balanced": {"row": bal, "ties": []},
    }


def public(table: pd.DataFrame) -> list[dict]:
    return table.drop(columns=[c for c in table.columns if c.startswith("_")]).to_dict("records")
