"""Per-cell means of several measures with their confidence intervals: what the workload-kind
report sections (phases, storage requests, transfers) tabulate and draw. The intervals and the
rule for when a cell has too few invocations for one are faascope.analysis.intervals'.

A cell is one combination of the campaign's factor levels (``cell_key`` in a results file, or
the factor columns of a table). Each invocation contributes one value per measure (an
invocation's per-request p99 is one value), so the interval is over invocations: the
replications of the design, which is the variation a repeated campaign would see.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from faascope.analysis.intervals import mean_interval


def mean_ci(values, alpha: float = 0.05) -> tuple[float, float | None, float | None, int]:
    """(mean, CI low, CI high, n) of the finite values; the CI is mean ± t(1-α/2, n-1)·s/√n and
    None with fewer than 2 values. NaN mean when there is no value. The plain Student-t
    arithmetic for planning (precision targets); a printed interval comes from
    :func:`faascope.analysis.intervals.mean_interval`, which knows when n is too small."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    n = int(v.size)
    if n == 0:
        return math.nan, None, None, 0
    m = float(v.mean())
    if n < 2:
        return m, None, None, n
    half = float(stats.t.ppf(1 - alpha / 2, n - 1) * v.std(ddof=1) / math.sqrt(n))
    return m, m - half, m + half, n


def cell_columns(df: pd.DataFrame, factors: list[str]) -> list[str]:
    """The columns that identify a cell: ``cell_key`` when present (a results file), else the
    factors."""
    return ["cell_key"] if "cell_key" in df.columns else list(factors)


def cell_means(df: pd.DataFrame, factors: list[str], measures: list[str],
               alpha: float = 0.05, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per cell and measure with data: the cell's factor levels, ``measure``, ``n``,
    ``mean``, ``ci_low``, ``ci_high`` (None when the cell has too few invocations), ``ci_why``
    (then why: "too few (n = 3; needs ≥ 100)"), ``median`` (cells in their order of appearance)."""
    keys = cell_columns(df, factors)
    rows = []
    for i, (key, g) in enumerate(df.groupby(keys, sort=False, dropna=False)):
        levels = {f: g[f].iloc[0] for f in factors if f in g.columns}
        if keys == ["cell_key"]:
            levels["cell_key"] = key[0] if isinstance(key, tuple) else key
        for m in measures:
            if m not in g.columns:
                continue
            v = pd.to_numeric(g[m], errors="coerce").to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            if v.size == 0:
                continue
            ci = mean_interval(v, alpha, n_boot, [seed, i])
            rows.append({**levels, "measure": m, "n": int(v.size), "mean": float(v.mean()), "ci_low": ci.low,
                         "ci_high": ci.high, "ci_why": ci.why, "median": float(np.median(v))})
    return pd.DataFrame(rows)


def has_values(df: pd.DataFrame, column: str) -> bool:
    """Whether the column exists and holds at least one number."""
    return column in df.columns and pd.to_numeric(df[column], errors="coerce").notna().any()
