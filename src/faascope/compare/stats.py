"""What changed in one cell, from the invocations' values: the descriptive and within-run
statistics of `faascope compare`.

For each cell (a combination of the factors' levels) with ``base`` and ``new`` its response
values (every run of a side pooled):

- mean, median, CV (sd with n − 1 over the mean) and 99th percentile (R's type 7, numpy's
  default) of both sides, and their changes;
- **exact** differences: when neither side varies (within rounding: the criterion `analyze`
  uses, :func:`faascope.analysis.anova.variation_status`), the difference is stated exactly and
  no test is made — a t statistic of 10^14 from rounding noise is no evidence;
- the **within-run** comparison: the difference of means with **Welch's** t interval and test
  (``scipy.stats.ttest_ind(equal_var=False)``, R's ``t.test(new, base)``) and of medians with a
  **bootstrap percentile** interval (``scipy.stats.bootstrap``, each side resampled on its own,
  seeded); Welch p-values adjusted over the cells with **Holm** (R's ``p.adjust(p, "holm")``).

The within-run numbers treat invocations as independent draws of one distribution per side.
Between two runs that is false — runs drift — so they are evidence of a change only inside one
interleaved campaign or when the user assumes no drift (``--assume-no-drift``); the tests that
count runs or blocks as the unit are in :mod:`faascope.compare.between`. Intervals are printed
only from the sample sizes :mod:`faascope.compare.minimums` allows.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from faascope.analysis.anova import variation_status
from faascope.analysis.io import as_level_strings
from faascope.compare.minimums import too_few
from faascope.errors import BadInput

#: values a cell needs on each side to be described at all (a CV needs two)
MIN_PER_SIDE = 2


def cell_values(df: pd.DataFrame, response: str, factors: Sequence[str],
                extra: Sequence[str] = ()) -> dict[tuple, np.ndarray]:
    """{levels tuple (as text): the response's values} of one input, in its row order; with
    ``extra`` columns, {levels: {extra levels tuple: values}} (e.g. per block)."""
    y = pd.to_numeric(df[response], errors="coerce")
    keep = y.notna()
    if not keep.any():
        raise BadInput(f"{response!r} has no numeric values", field="--response")
    d = df.loc[keep]
    keys = [as_level_strings(d[f]) for f in factors]
    more = [as_level_strings(d[c]) for c in extra]
    out: dict = {}
    for i, v in enumerate(y[keep].to_numpy(dtype=float)):
        key = tuple(k.iat[i] for k in keys)
        if more:
            out.setdefault(key, {}).setdefault(tuple(m.iat[i] for m in more), []).append(v)
        else:
            out.setdefault(key, []).append(v)
    if more:
        return {k: {b: np.asarray(v) for b, v in g.items()} for k, g in out.items()}
    return {k: np.asarray(v) for k, v in out.items()}


def summary(x: np.ndarray) -> dict:
    mean = float(np.mean(x))
    sd = float(np.std(x, ddof=1)) if len(x) > 1 else float("nan")
    return {"n": int(len(x)), "mean": mean, "median": float(np.median(x)),
            "cv": sd / mean if mean != 0 and len(x) > 1 else None,
            "p99": float(np.quantile(x, 0.99))}


def exactness(base: np.ndarray, new: np.ndarray) -> str | None:
    """"constant" (every value of both sides equal within rounding), "exact" (neither side
    varies within rounding, the sides differ) or None (there is variation to test against)."""
    y = np.concatenate([base, new])
    sst = float(np.sum((y - y.mean()) ** 2))
    rss = float(np.sum((base - base.mean()) ** 2) + np.sum((new - new.mean()) ** 2))
    status = variation_status(sst, rss, len(y), float(np.spacing(np.max(np.abs(y)))))
    return {"constant": "constant", "perfect_fit": "exact"}.get(status)


def welch(base: np.ndarray, new: np.ndarray, alpha: float) -> dict:
    """new − base: Welch's t interval and two-sided test (R's ``t.test(new, base)``), on the
    last axis (arrays of samples give arrays of results)."""
    res = stats.ttest_ind(new, base, equal_var=False, axis=-1)
    ci = res.confidence_interval(confidence_level=1 - alpha)
    return {"diff": np.mean(new, -1) - np.mean(base, -1), "ci": (ci.low, ci.high),
            "t": res.statistic, "df": res.df, "p": res.pvalue}


def median_diff(base: np.ndarray, new: np.ndarray, alpha: float, n_boot: int, seed: int) -> dict:
    """new − base medians with a bootstrap percentile interval (each sample resampled with
    replacement on its own), on the last axis."""
    diff = np.median(new, -1) - np.median(base, -1)
    if n_boot <= 0:
        return {"diff": diff, "ci": None}

    def stat(a, b, axis=-1):
        return np.median(a, axis=axis) - np.median(b, axis=axis)

    res = stats.bootstrap((new, base), stat, n_resamples=n_boot, confidence_level=1 - alpha,
                          method="percentile", vectorized=True, axis=-1,
                          rng=np.random.default_rng(seed))
    return {"diff": diff, "ci": (res.confidence_interval.low, res.confidence_interval.high)}


def _f(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def _snapped(base: np.ndarray, new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both samples shifted by BASE's median (Welch's difference, interval and t do not change
    with a common shift), and a side that is constant within rounding (a couple of ulps: the
    criterion of :func:`exactness`) made exactly constant: its variance is 0, not the rounding
    noise scipy warns about ("catastrophic cancellation")."""
    ref = float(np.median(base))
    out = []
    for x in (base, new):
        x = x - ref
        if np.ptp(x) <= 4 * np.spacing(np.max(np.abs(x)) + abs(ref)):
            x = np.full(len(x), float(np.median(x)))
        out.append(x)
    return out[0], out[1]


def within_run(base: np.ndarray, new: np.ndarray, alpha: float, n_boot: int, seed: int) -> dict:
    """The per-invocation comparison of one cell: Welch's difference of means and the bootstrap
    difference of medians, each interval None with its reason below its minimum n; no test at
    all for an exact cell."""
    n = min(len(base), len(new))
    out: dict = {"mean_diff": float(np.mean(new) - np.mean(base)),
                 "median_diff": float(np.median(new) - np.median(base)),
                 "exact": exactness(base, new)}
    if out["exact"]:
        out.update(mean_diff_ci=None, t=None, df=None, p=None, median_diff_ci=None,
                   mean_diff_ci_why="no variation within either side: the difference is exact",
                   median_diff_ci_why="no variation within either side: the difference is exact")
        return out
    w = welch(*_snapped(base, new), alpha)
    why = too_few("welch", n)
    out.update(mean_diff_ci=None if why else [_f(w["ci"][0]), _f(w["ci"][1])],
               mean_diff_ci_why=why, t=_f(w["t"]), df=_f(w["df"]), p=_f(w["p"]))
    why = too_few("median", n)
    if why or n_boot <= 0:
        out.update(median_diff_ci=None, median_diff_ci_why=why or "no bootstrap (--bootstrap 0)")
    else:
        ci = median_diff(base, new, alpha, n_boot, seed)["ci"]
        lo, hi = _f(ci[0]), _f(ci[1])
        out.update(median_diff_ci=None if lo is None or hi is None else [lo, hi],
                   median_diff_ci_why=None)
    return out
