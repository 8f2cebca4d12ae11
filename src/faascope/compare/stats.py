"""What changed between two campaigns, per cell: the statistics of `faascope compare`.

For each cell (a combination of the factors' levels) present in both inputs, with ``base`` and
``new`` its response values:

- **difference of means** new − base with **Welch's** t interval and test (unequal variances;
  ``scipy.stats.ttest_ind(equal_var=False)``, as R's ``t.test(new, base)``), and the change
  relative to the base mean;
- **difference of medians** with a **bootstrap percentile** interval (``scipy.stats.bootstrap``,
  each input resampled on its own, seeded);
- CV (sd with n − 1 over the mean) and the 99th percentile (R's type 7, numpy's default) of both,
  and their changes;
- **significance** across cells: Welch p-values adjusted with **Holm**'s step-down method
  (``statsmodels`` ``multipletests(method="holm")``, R's ``p.adjust(method = "holm")``), which
  controls the family-wise error rate over all compared cells;
- a **regression** is a cell whose Holm-adjusted p is below alpha **and** whose mean moved in the
  worse direction by more than the threshold (relative to the base mean); an **improvement**
  likewise in the better direction. Lower is better unless ``higher_is_better`` (throughputs).

The timeline of many inputs (:mod:`faascope.compare.timeline`) uses the same cells.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from faascope.analysis.io import as_level_strings
from faascope.errors import BadInput

#: values a cell needs in each input to be compared (Welch's test needs a variance on each side)
MIN_PER_SIDE = 2


def cell_values(df: pd.DataFrame, response: str, factors: Sequence[str]) -> dict[tuple, np.ndarray]:
    """{levels tuple (as text): the response's values} of one input, in its row order."""
    y = pd.to_numeric(df[response], errors="coerce")
    keep = y.notna()
    if not keep.any():
        raise BadInput(f"{response!r} has no numeric values", field="--response")
    d = df.loc[keep]
    keys = [as_level_strings(d[f]) for f in factors]
    out: dict[tuple, list] = {}
    for i, v in enumerate(y[keep].to_numpy(dtype=float)):
        out.setdefault(tuple(k.iat[i] for k in keys), []).append(v)
    return {k: np.asarray(v) for k, v in out.items()}


def summary(x: np.ndarray) -> dict:
    mean = float(np.mean(x))
    sd = float(np.std(x, ddof=1)) if len(x) > 1 else float("nan")
    return {"n": int(len(x)), "mean": mean, "median": float(np.median(x)),
            "cv": sd / mean if mean != 0 and len(x) > 1 else None,
            "p99": float(np.quantile(x, 0.99))}


def welch(base: np.ndarray, new: np.ndarray, alpha: float) -> dict:
    """new − base: Welch's t interval and two-sided test (R's ``t.test(new, base)``)."""
    res = stats.ttest_ind(new, base, equal_var=False)
    diff = float(np.mean(new) - np.mean(base))
    if not math.isfinite(float(res.statistic)):  # both constant: no variation to test
        same = diff == 0
        return {"diff": diff, "ci": [diff, diff], "t": None, "df": None,
                "p": 1.0 if same else 0.0}
    ci = res.confidence_interval(confidence_level=1 - alpha)
    return {"diff": diff, "ci": [float(ci.low), float(ci.high)], "t": float(res.statistic),
            "df": float(res.df), "p": float(res.pvalue)}


def median_diff(base: np.ndarray, new: np.ndarray, alpha: float, n_boot: int, seed: int) -> dict:
    """new − base medians with a bootstrap percentile interval (each sample resampled with
    replacement on its own)."""
    diff = float(np.median(new) - np.median(base))
    if n_boot <= 0:
        return {"diff": diff, "ci": None}

    def stat(a, b, axis=-1):
        return np.median(a, axis=axis) - np.median(b, axis=axis)

    res = stats.bootstrap((new, base), stat, n_resamples=n_boot, confidence_level=1 - alpha,
                          method="percentile", vectorized=True,
                          rng=np.random.default_rng(seed))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return {"diff": diff, "ci": None if math.isnan(lo) else [lo, hi]}


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (R's ``p.adjust(p, "holm")``)."""
    if not pvalues:
        return []
    return [float(p) for p in multipletests(list(pvalues), method="holm")[1]]


def compare_cells(base: dict[tuple, np.ndarray], new: dict[tuple, np.ndarray], *,
                  alpha: float = 0.05, threshold: float = 0.10, higher_is_better: bool = False,
                  n_boot: int = 2000, seed: int = 0) -> dict:
    """Every cell of ``base`` and ``new`` compared (see the module's docstring); cells found in
    only one input, or with fewer than two values on a side, are listed apart."""
    if not 0 < alpha < 1:
        raise BadInput("must be between 0 and 1", field="--alpha")
    if threshold < 0:
        raise BadInput("must not be negative", field="--threshold")
    rows, skipped = [], []
    for key in sorted(set(base) | set(new)):
        b, n = base.get(key), new.get(key)
        if b is None or n is None:
            skipped.append({"levels": key, "why": "only in base" if n is None else "only in new"})
            continue
        if len(b) < MIN_PER_SIDE or len(n) < MIN_PER_SIDE:
            skipped.append({"levels": key, "why": f"fewer than {MIN_PER_SIDE} values "
                            f"(base {len(b)}, new {len(n)})"})
            continue
        sb, sn = summary(b), summary(n)
        w = welch(b, n, alpha)
        md = median_diff(b, n, alpha, n_boot, seed)
        rel = w["diff"] / sb["mean"] if sb["mean"] != 0 else None
        rows.append({"levels": key, "base": sb, "new": sn, "mean_diff": w["diff"],
                     "mean_diff_ci": w["ci"], "mean_rel_change": rel,
                     "mean_rel_ci": ([v / sb["mean"] for v in w["ci"]] if sb["mean"] > 0 else None),
                     "welch_t": w["t"], "welch_df": w["df"], "p": w["p"],
                     "median_diff": md["diff"], "median_diff_ci": md["ci"],
                     "median_rel_change": (md["diff"] / sb["median"] if sb["median"] != 0 else None),
                     "cv_change": (None if sb["cv"] is None or sn["cv"] is None
                                   else sn["cv"] - sb["cv"]),
                     "p99_rel_change": (sn["p99"] / sb["p99"] - 1 if sb["p99"] != 0 else None)})
    for r, p_adj in zip(rows, holm([r["p"] for r in rows])):
        r["p_holm"] = p_adj
        r["significant"] = p_adj < alpha
        rel = r["mean_rel_change"]
        worse = rel is not None and ((-rel) if higher_is_better else rel) > threshold
        better = rel is not None and ((rel) if higher_is_better else -rel) > threshold
        r["regression"] = bool(r["significant"] and worse)
        r["improvement"] = bool(r["significant"] and better)
    return {"cells": rows, "skipped": skipped, "alpha": alpha, "threshold": threshold,
            "higher_is_better": higher_is_better, "n_boot": n_boot, "seed": seed,
            "regressions": sum(r["regression"] for r in rows),
            "improvements": sum(r["improvement"] for r in rows),
            "methods": {
                "mean": "difference of means new − base, Welch's t interval and test (unequal "
                        "variances; R's t.test)",
                "median": f"difference of medians, bootstrap percentile interval ({n_boot} "
                          f"resamples, seed {seed}, each input resampled on its own)",
                "multiple_comparisons": "Holm's step-down adjustment of the Welch p-values over "
                                        f"the {len(rows)} compared cells (family-wise error ≤ α)",
                "regression": f"Holm-adjusted p < {alpha:g} and the mean "
                              f"{'fell' if higher_is_better else 'rose'} by more than "
                              f"{100 * threshold:g}% of the base mean",
                "cv": "sd (n − 1) / mean", "p99": "99th percentile, linear interpolation (R type 7)"}}
