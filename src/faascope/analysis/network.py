"""Network throughput over time per cell and the token bucket fitted to it (the ``network``
workload; Skyrise, Bodner et al. 2024, saw a burst then a baseline on Lambda).

The input is the receiver's series of bytes per interval (``store.reader.ResultsFile.
network_samples``: 20 ms by default, counted where the bytes arrive). Per cell and direction the
series of its invocations are averaged sample by sample (sample i = the i-th interval from the
transfer's start; an invocation that finished earlier no longer counts), so the rate over time
is the typical invocation's. :func:`faascope.analysis.bandwidth.fit_token_bucket` is fitted to
that mean series: burst rate, budget and refill rate with its bootstrap intervals (residuals
resampled within the series). With several invocations per cell the per-invocation fits are
also given, so the spread between invocations is visible beside the interval of the fit.

A sandbox's bucket outlives its invocations: with warm replications the second invocation
starts with what the first left. Invocations are therefore grouped by the state of their
bucket as they began (``bucket_state``: fresh, partial, drained, recorded by the local platform,
:mod:`faascope.store.bucket_state`; a cold start without a record starts fresh, as a new
execution environment does; a warm one without a record is ``unknown``) and each state is
fitted apart: a fit to series that started from different budgets describes no bucket. Such a
pooled fit is not reported where the budgets may differ: partial invocations whose starting
budgets spread over more than ``DRAINED_FRACTION`` of the capacity, and unknown ones of which
any shows a burst, get their per-invocation fits only (``reason`` says why).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from faascope.analysis.bandwidth import TokenBucketFit, fit_token_bucket
from faascope.analysis.per_cell import cell_columns
from faascope.store.bucket_state import BUCKET_STATES, DRAINED_FRACTION, FRESH, PARTIAL, bucket_columns
from faascope.store.reader import ResultsFile

#: the state of invocations whose bucket was not recorded and that were not cold starts
UNKNOWN = "unknown"
MiB = 1 << 20
PARAMETERS = [("burst_bytes_per_s", "burst rate"), ("budget_bytes", "budget"),
              ("refill_bytes_per_s", "refill rate")]


def load_samples(path: str | Path) -> pd.DataFrame:
    """Every network invocation's samples (invocation_id, direction, sample, interval_s, bytes)."""
    with ResultsFile(path, field="INPUT") as rf:
        return rf.network_samples()


def _states(df: pd.DataFrame) -> pd.DataFrame:
    """Per invocation and direction: ``bucket_state`` and ``bucket_bytes``/``bucket_capacity_bytes``
    (the bucket as the invocation began; see the module's docstring)."""
    cold = (df["cold"] if "cold" in df.columns else pd.Series(None, index=df.index)).map(
        lambda v: str(v).lower() in ("1", "true", "1.0"))
    parts = []
    for d in ("in", "out"):
        avail, cap, state = bucket_columns(d)
        st = df[state] if state in df.columns else pd.Series(None, index=df.index, dtype=object)
        st = st.where(st.notna(), np.where(cold, FRESH, UNKNOWN))
        parts.append(pd.DataFrame({
            "invocation_id": df["invocation_id"], "direction": d, "bucket_state": st.astype(str),
            "bucket_bytes": pd.to_numeric(df[avail], errors="coerce") if avail in df.columns else np.nan,
            "bucket_capacity_bytes": pd.to_numeric(df[cap], errors="coerce") if cap in df.columns else np.nan}))
    return pd.concat(parts, ignore_index=True)


def with_states(samples: pd.DataFrame, df: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    """The samples of the invocations in ``df`` with their cell's columns and their bucket's
    state (``bucket_state``, ``bucket_bytes``, ``bucket_capacity_bytes``) in that direction."""
    keys = cell_columns(df, factors)
    j = samples.merge(df[keys + ["invocation_id"]], on="invocation_id")
    return j.merge(_states(df), on=["invocation_id", "direction"], how="left")


def cell_series(samples: pd.DataFrame, df: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    """Per cell, direction, bucket state and sample index: the mean bytes over the invocations
    that have that sample (``invocations``), the interval, and ``t_s`` (the interval's end) and
    ``rate_bytes_per_s``. Only invocations in ``df`` (the selected, measured rows) count."""
    keys = cell_columns(df, factors)
    j = with_states(samples, df, factors)
    if j.empty:
        return pd.DataFrame(columns=keys + ["direction", "bucket_state", "sample", "interval_s", "bytes",
                                            "invocations", "t_s", "rate_bytes_per_s"])
    j["bytes"] = pd.to_numeric(j["bytes"], errors="coerce").astype(float)
    g = j.groupby(keys + ["direction", "bucket_state", "sample"], sort=False)
    out = g.agg(interval_s=("interval_s", "first"), bytes=("bytes", "mean"),
                invocations=("invocation_id", "nunique")).reset_index()
    # states in their order (most budget first), whatever order the invocations ran in
    out["_order"] = out["bucket_state"].map({st: i for i, st in enumerate(BUCKET_STATES + (UNKNOWN,))})
    out = out.sort_values(keys + ["direction", "_order", "sample"], kind="stable").drop(columns="_order")
    out["t_s"] = (out["sample"] + 1) * out["interval_s"]
    out["rate_bytes_per_s"] = out["bytes"] / out["interval_s"]
    return out.reset_index(drop=True)


def _fit_or_reason(samples: np.ndarray, interval_s: float, seed: int) -> tuple[TokenBucketFit | None, str]:
    try:
        return fit_token_bucket(samples, interval_s, seed=seed), ""
    except ValueError as exc:
        return None, str(exc)


def _unpooled(state: str, mine: pd.DataFrame, singles: list[TokenBucketFit]) -> str:
    """Why the invocations of one state must not be fitted as one bucket ("" when they may)."""
    if state == PARTIAL:
        b = mine.drop_duplicates("invocation_id")
        spread = float(b["bucket_bytes"].max() - b["bucket_bytes"].min())
        cap = float(b["bucket_capacity_bytes"].max())
        if spread > DRAINED_FRACTION * cap:
            return (f"partial buckets starting from {b['bucket_bytes'].min() / MiB:.4g}–"
                    f"{b['bucket_bytes'].max() / MiB:.4g} MiB: no one bucket; per-invocation fits only")
    if state == UNKNOWN and any(f.knee for f in singles):
        return ("warm invocations whose bucket state was not recorded, some with a burst: each may "
                "have started from a different budget; per-invocation fits only")
    return ""


def fit_cells(series: pd.DataFrame, samples: pd.DataFrame, df: pd.DataFrame, factors: list[str],
              seed: int = 0) -> pd.DataFrame:
    """One row per cell, direction and bucket state (``bucket_state``): the fit of the mean
    series (``fit``: a TokenBucketFit or None, ``reason`` when it was not fitted or must not be
    read as one bucket), its parameters with 95 % intervals (``<param>``, ``<param>_ci``),
    ``invocations``, the range of the buckets' starting bytes (``bucket_bytes``: (min, max) or
    None), and the range of per-invocation fits (``<param>_per_invocation``: (min, max) over
    invocations with a knee)."""
    keys = cell_columns(df, factors)
    per_inv = with_states(samples, df, factors)
    rows = []
    for key, g in series.groupby(keys + ["direction", "bucket_state"], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        interval = float(g["interval_s"].iloc[0])
        mine = per_inv
        for k, v in zip(keys + ["direction", "bucket_state"], key):
            mine = mine[mine[k] == v]
        singles = []
        for _, s in mine.groupby("invocation_id"):
            f, _ = _fit_or_reason(pd.to_numeric(s.sort_values("sample")["bytes"]).to_numpy(float),
                                  interval, seed)
            if f is not None:
                singles.append(f)
        reason = _unpooled(key[-1], mine, singles)
        fit = None
        if not reason:
            fit, reason = _fit_or_reason(g["bytes"].to_numpy(float), interval, seed)
        row = dict(zip(keys + ["direction", "bucket_state"], key))
        row.update(fit=fit, reason=reason, interval_s=interval,
                   invocations=int(g["invocations"].max()))
        for p, _ in PARAMETERS:
            row[p] = getattr(fit, p) if fit else None
            row[f"{p}_ci"] = fit.ci95.get(p) if fit else None
        start = mine.drop_duplicates("invocation_id")["bucket_bytes"].dropna()
        row["bucket_bytes"] = (float(start.min()), float(start.max())) if len(start) else None
        for p, _ in PARAMETERS:
            vals = [getattr(f, p) for f in singles if getattr(f, p) is not None]
            row[f"{p}_per_invocation"] = (min(vals), max(vals)) if len(vals) >= 2 else None
        rows.append(row)
    return pd.DataFrame(rows)


def fitted_rate(fit: TokenBucketFit, t_end: float) -> tuple[list[float], list[float]]:
    """The rate the fitted bucket allows over time, as a step function's corners (x, y): 0 until
    the transfer starts, the burst rate until the budget is spent, then the refill rate."""
    t0 = max(fit.start_s, 0.0)
    if not fit.knee or fit.burst_end_s is None:
        return [t0, t_end], [fit.refill_bytes_per_s, fit.refill_bytes_per_s]
    end = min(fit.burst_end_s, t_end)
    x = [t0, end, end, t_end]
    y = [fit.burst_bytes_per_s, fit.burst_bytes_per_s, fit.refill_bytes_per_s, fit.refill_bytes_per_s]
    return x, [v if v is not None and math.isfinite(v) else 0.0 for v in y]
