"""Bursts, co-residency and staggering: what a burst campaign's results say.

Per invocation (the metrics of Roy et al.'s I/O-scalability study, IISWC 2021), from the client's send time
and the agent's own timestamps:

| column | from → to |
|---|---|
| ``delay_s`` | the burst's start → this member's send (what staggering or the arrival process adds) |
| ``wait_s`` | send → the agent received the invocation (platform queueing, cold start, network) |
| ``start_s`` | the burst's start → the agent received it (``delay_s + wait_s``) |
| ``run_s`` | agent received → workload end |
| ``service_s`` | send → workload end (``wait_s + run_s``) |
| ``completion_s`` | the burst's start → workload end (``start_s + run_s``) |
| ``read_s``, ``write_s`` | the workload's timed reads / writes (an app-shaped workload's ``read_s`` / ``write_s``; ``elapsed_s`` of a fileio/sharedfs/object/kv read or write) |
| ``compute_s`` | the workload's compute part (``compute_s``; ``elapsed_s`` of spin) |
| ``io_s`` | ``read_s + write_s`` |

Clock domains: send times are the client's wall clock, ``received_ns`` and ``workload_end_ns``
the function's. On the local platform both are this machine's clock. On a cloud they are two
machines' NTP-disciplined clocks (typically within a few ms); ``wait_s`` then carries that
offset, while ``run_s`` (one clock) and spreads (differences on one side) do not.

Per burst: p50/p95/p99/max of each metric over its successful invocations, the statuses,
throttles, the dispatch spread, and co-residency from the agent's identifiers (``instance.id``:
one sandboxed process; ``instance.sandbox``: its cgroup; ``instance.boot_id``: the host or
micro-VM): how many instances and hosts served the burst, how many invocations reused an
instance, and how many ran at the same time on one host.

Staggering: % improvement of a staggered cell over the all-at-once cell (same other levels;
``delay == 0`` or ``batch_size >= burst_size``) per metric, ``100 * (base - staggered) / base`` of
the mean over bursts of the per-burst statistic, with Fieller's interval over bursts from
:data:`faascope.analysis.improvement.MIN_BURSTS_PER_SIDE` bursts a side (analysis/improvement.py).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pandas as pd

from faascope.analysis.improvement import (
    MIN_BURSTS_PER_SIDE, RESULT_KEYS, ci_excludes_zero, improvement,
)
from faascope.analysis.intervals import mean_interval
from faascope.errors import BadInput
from faascope.store.measures import describe
from faascope.store.reader import ResultsFile, measured_only

METRICS = ["delay_s", "wait_s", "start_s", "run_s", "service_s", "completion_s", "read_s",
           "write_s", "io_s", "compute_s", "round_trip_s", "send_lag_s"]
STATS = {"p50": 0.5, "p95": 0.95, "p99": 0.99, "max": 1.0}
#: (metric, statistic) pairs of the staggering heatmaps: median and tail write, tail read,
#: wait, service time (the study's), and completion after the burst's start (what a user waits)
STAGGER_METRICS = [("write_s", "p50"), ("write_s", "p95"), ("read_s", "p95"), ("wait_s", "p50"),
                   ("service_s", "p50"), ("service_s", "p95"), ("start_s", "p50"),
                   ("completion_s", "max")]


@dataclass
class BurstData:
    path: Path
    invocations: pd.DataFrame   # one row per burst member (warm-ups included, flag ``warmup``)
    bursts: pd.DataFrame        # one row per burst attempt (the bursts table)
    factors: list[str]
    campaign: dict = field(default_factory=dict)

    @property
    def measured(self) -> pd.DataFrame:
        """Members that are not warm-ups (failures kept: a burst's statistics count them)."""
        return measured_only(self.invocations, keep_failed=True)[0]


def load_bursts(path: str | Path) -> BurstData:
    """The burst members and bursts of a results store written by a burst campaign."""
    p = Path(path)
    with ResultsFile(p, field="INPUT") as rf:
        inv, bursts = rf.burst_frames()   # read_s, write_s, compute_s, io_s: the store's MEASURES
        factors = rf.factor_names()
        campaign = rf.campaign() or {}
    # the burst's start: the attempt's schedule start (recorded per attempt)
    starts = {}
    for _, b in bursts.iterrows():
        d = json.loads(b["detail_json"]) if isinstance(b["detail_json"], str) else {}
        starts[(b["cell_key"], b["burst"], b["kind"], b["attempt"])] = d.get("schedule_start_ns",
                                                                             b["start_ns"])
    kind = np.where(inv["warmup"] == 1, "warmup", "measure")
    t0 = [starts.get((ck, bu, k, a)) for ck, bu, k, a in
          zip(inv["cell_key"], inv["burst"], kind, inv["attempt"])]
    inv["burst_start_ns"] = pd.to_numeric(pd.Series(t0, index=inv.index), errors="coerce")
    inv["delay_s"] = (inv["client_send_ns"] - inv["burst_start_ns"]) / 1e9
    inv["start_s"] = (inv["agent_received_ns"] - inv["burst_start_ns"]) / 1e9
    inv["completion_s"] = (inv["agent_workload_end_ns"] - inv["burst_start_ns"]) / 1e9
    details = [json.loads(x) if isinstance(x, str) else {} for x in bursts["detail_json"]]
    scheds = [json.loads(x) if isinstance(x, str) else {} for x in bursts["schedule_json"]]
    bursts = bursts.assign(split=[bool(s.get("split")) for s in scheds],
                           throttled=[d.get("throttled", 0) for d in details],
                           failed=[d.get("failed", 0) for d in details],
                           arrival_spread_est_s=[d.get("arrival_spread_est_s") for d in details],
                           received_spread_s=[d.get("received_spread_s") for d in details],
                           send_lag_max_s=[(d.get("send_lag_s") or {}).get("max") for d in details],
                           error_budget_exceeded=[bool((d.get("error_budget") or {}).get("exceeded"))
                                                  for d in details],
                           stopped=[d.get("stopped") for d in details])
    return BurstData(path=p, invocations=inv, bursts=bursts, factors=factors, campaign=campaign)


# ------------------------------------------------------------------------------------ per burst
def _coresidency(g: pd.DataFrame) -> dict[str, Any]:
    ok = g[g["ok"] == 1]
    out: dict[str, Any] = {}
    ids = ok["instance_id"].dropna()
    per_inst = ids.value_counts()
    out["instances"] = int(per_inst.size)
    out["max_per_instance"] = int(per_inst.max()) if per_inst.size else 0
    out["reused_fraction"] = float((ids.map(per_inst) > 1).mean()) if ids.size else None
    out["sandboxes"] = int(ok["sandbox"].dropna().nunique())
    hosts = ok["boot_id"].dropna()
    per_host = hosts.value_counts()
    out["hosts"] = int(per_host.size)
    out["max_per_host"] = int(per_host.max()) if per_host.size else 0
    # the most invocations running at the same moment on one host (interval sweep)
    peak = 0
    for _, h in ok.dropna(subset=["boot_id", "agent_received_ns", "agent_workload_end_ns"]).groupby("boot_id"):
        ev = np.concatenate([np.stack([h["agent_received_ns"].to_numpy(np.int64),
                                       np.ones(len(h), np.int64)], 1),
                             np.stack([h["agent_workload_end_ns"].to_numpy(np.int64),
                                       -np.ones(len(h), np.int64)], 1)])
        ev = ev[np.lexsort((ev[:, 1], ev[:, 0]))]  # ends before starts at the same instant
        peak = max(peak, int(np.cumsum(ev[:, 1]).max()))
    out["max_concurrent_per_host"] = peak
    out["cold"] = int((ok["cold"] == 1).sum())
    return out


def burst_stats(data: BurstData, metrics: list[str] | None = None,
                include_split: bool = False) -> pd.DataFrame:
    """One row per measured burst: cell levels, counts, spread, co-residency and, per metric,
    p50/p95/p99/max over the burst's successful invocations (columns ``<metric>_<stat>``)."""
    metrics = metrics or METRICS
    m = data.measured
    rows = []
    b = data.bursts[data.bursts["kind"] == "measure"]
    split = b.groupby(["cell_key", "burst"])["attempt"].max() > 1
    for (ck, burst), g in m.groupby(["cell_key", "burst"], sort=False):
        is_split = bool(split.get((ck, burst), False))
        if is_split and not include_split:
            continue
        bb = b[(b["cell_key"] == ck) & (b["burst"] == burst)]
        row: dict[str, Any] = {"cell_key": ck, "burst": int(burst)}
        for f in data.factors:
            if f in g.columns:
                row[f] = g[f].iloc[0]
        ok = g[g["ok"] == 1]
        row.update(planned=int(bb["planned"].sum()), sent=int(bb["sent"].fillna(0).sum()),
                   recorded=len(g), ok=len(ok), failed=int((g["ok"] != 1).sum()),
                   throttled=int(g["error_type"].isin(["TooManyRequestsException",
                                                       "ThrottlingException"]).sum()),
                   split=is_split,
                   send_spread_s=float((g["client_send_ns"].max() - g["client_send_ns"].min()) / 1e9)
                   if g["client_send_ns"].notna().any() else None,
                   arrival_spread_est_s=(bb["arrival_spread_est_s"].iloc[0] if len(bb) else None),
                   send_lag_max_s=(float(g["send_lag_s"].max()) if g["send_lag_s"].notna().any() else None),
                   error_budget_exceeded=bool(bb["error_budget_exceeded"].any()) if len(bb) else False)
        row.update(_coresidency(g))
        for met in metrics:
            v = ok[met].dropna().to_numpy(float) if met in ok.columns else np.array([])
            for s, q in STATS.items():
                row[f"{met}_{s}"] = float(np.quantile(v, q)) if v.size else None
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------ staggering
def _stagger_cols(data: BurstData) -> tuple[str, str]:
    fs = set(data.factors)
    b = "batch_size" if "batch_size" in fs else next((f for f in data.factors if f.endswith("batch_size")), None)
    d = "delay" if "delay" in fs else next((f for f in data.factors if f.endswith("stagger.delay")), None)
    if b is None or d is None:
        raise BadInput("the campaign has no batch_size and delay factors (a staggering grid)",
                       field="factors")
    return b, d


def _burst_size_of(data: BurstData) -> dict[str, int]:
    plan = json.loads(data.campaign.get("plan_json") or "{}")
    return {c["key"]: int((c.get("load") or {}).get("burst_size", 1)) for c in plan.get("cells", [])}


def stagger_improvements(data: BurstData, metrics: list[tuple[str, str]] | None = None,
                         alpha: float = 0.05) -> pd.DataFrame:
    """% improvement over all-at-once, per group of other factors × batch size × delay × metric.

    The all-at-once baseline of a group is its cell with ``delay == 0`` or ``batch_size >=
    burst_size`` (a design can keep just one, e.g. with the rule ``delay > 0 or batch_size ==
    burst_size``)."""
    metrics = metrics or STAGGER_METRICS
    bcol, dcol = _stagger_cols(data)
    stats = burst_stats(data, sorted({m for m, _ in metrics}))
    if stats.empty:
        return pd.DataFrame()
    sizes = _burst_size_of(data)
    stats["burst_size_"] = stats["cell_key"].map(sizes).fillna(0).astype(int)
    stats["is_baseline"] = (stats[dcol].astype(float) == 0) | (stats[bcol].astype(float) >= stats["burst_size_"])
    others = [f for f in data.factors if f not in (bcol, dcol)]
    rows = []
    groups = stats.groupby(others, sort=False, dropna=False) if others else [((), stats)]
    for gkey, g in groups:
        gkey = gkey if isinstance(gkey, tuple) else (gkey,)
        base = g[g["is_baseline"]]
        for (b, d), c in g[~g["is_baseline"]].groupby([bcol, dcol], sort=True):
            for met, st in metrics:
                col = f"{met}_{st}"
                r = improvement(c[col].to_numpy(float), base[col].to_numpy(float), alpha=alpha,
                                higher_is_better=describe(met).higher_is_better)
                if r["n_bursts"] == 0 and r["n_baseline"] == 0:
                    continue  # the workload does not report this metric (e.g. no reads)
                rows.append({**dict(zip(others, gkey)), "batch_size": b, "delay": d,
                             "metric": met, "stat": st, **r})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------ heatmap data
def metric_label(met: str, st: str) -> str:
    """A per-burst statistic in words, e.g. ('write_s', 'p50') -> 'median write time'."""
    names = {"write_s": "write time", "read_s": "read time", "wait_s": "wait time",
             "service_s": "service time", "start_s": "start after burst start",
             "completion_s": "completion after burst start", "io_s": "I/O time",
             "run_s": "run time", "compute_s": "compute time"}
    return f"{'median' if st == 'p50' else st} {names.get(met, met)}"


def too_few_note(imp: pd.DataFrame) -> str | None:
    """A sentence for a table or figure of comparisons some of which are below the rule (none when
    every comparison has its interval)."""
    if imp.empty or "too_few" not in imp.columns:
        return None
    few = imp[imp["too_few"].map(lambda v: isinstance(v, str))]
    if few.empty:
        return None
    n = int(np.minimum(few["n_bursts"], few["n_baseline"]).min())
    return (f"{len(few)} of {len(imp)} comparison(s) rest on fewer than {MIN_BURSTS_PER_SIDE} bursts a "
            f"side (as few as {n}): they get the point estimate only, no interval, no p-value and no "
            f"significance mark; run at least {MIN_BURSTS_PER_SIDE} replications (bursts) of every "
            "cell for them (the rule and its coverage simulation: docs/analysis.md, Staggering).")


def group_columns(imp: pd.DataFrame) -> list[str]:
    """The columns of `stagger_improvements` that name a group (the other factors' levels)."""
    return [c for c in imp.columns if c not in ("batch_size", "delay", "metric", "stat", *RESULT_KEYS)]


def heatmap_panels(imp: pd.DataFrame) -> list[dict]:
    """One panel per (group, metric, stat) with data: rows batch sizes, columns delays, `z` the
    % improvements (NaN where no comparison). report/stagger_heatmaps.py draws them."""
    if imp.empty:
        return []
    panels = []
    others = group_columns(imp)
    for key, g in imp.groupby(others + ["metric", "stat"], sort=False, dropna=False) if others else \
            imp.groupby(["metric", "stat"], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        if g["improvement_pct"].notna().sum() == 0:
            continue
        bs = sorted(g["batch_size"].unique(), key=float)
        ds = sorted(g["delay"].unique(), key=float)
        z = np.full((len(bs), len(ds)), np.nan)
        significant = np.zeros((len(bs), len(ds)), dtype=bool)
        too_few = np.zeros((len(bs), len(ds)), dtype=bool)
        for _, r in g.iterrows():
            if r["improvement_pct"] is not None and not pd.isna(r["improvement_pct"]):
                i, j = bs.index(r["batch_size"]), ds.index(r["delay"])
                z[i, j] = r["improvement_pct"]
                significant[i, j] = ci_excludes_zero(r["ci_low"], r["ci_high"])
                too_few[i, j] = isinstance(r.get("too_few"), str)
        group = dict(zip(others, key[:len(others)]))
        met, st = key[len(others)], key[len(others) + 1]
        panels.append({"group": group, "metric": met, "stat": st, "title": metric_label(met, st),
                       "batch_sizes": bs, "delays": ds, "z": z, "significant": significant,
                       "too_few": too_few})
    return panels


# ------------------------------------------------------------------------------------ against burst size
#: the (metric, statistic) pairs drawn against the burst size: the S3-vs-EFS study's figure
#: (Roy et al., IISWC 2021: wait, run and service time at the median, p95 and p100)
SCALING_METRICS = ["wait_s", "run_s", "service_s"]
SCALING_STATS = ["p50", "p95", "max"]


def burst_size_column(data: BurstData) -> str | None:
    """The factor that sets the burst size, if the design varies it."""
    return next((f for f in data.factors if f == "burst_size" or f.endswith(".burst_size")), None)


def with_burst_size(data: BurstData, stats: pd.DataFrame) -> pd.DataFrame:
    """`stats` (one row per burst) with ``burst_size_``: the planned members of its cell's bursts."""
    sizes = _burst_size_of(data)
    out = stats.copy()
    out["burst_size_"] = out["cell_key"].map(sizes)
    if out["burst_size_"].isna().any():  # a plan without load sizes: the burst's planned members
        out["burst_size_"] = out["burst_size_"].fillna(out["planned"])
    out["burst_size_"] = out["burst_size_"].astype(int)
    return out


def _group_by_others(data: BurstData, stats: pd.DataFrame, value_cols: list[str],
                     alpha: float) -> pd.DataFrame:
    """Mean over bursts (with its interval, or why there is none) of each value column, per group of the
    factors other than the burst size × burst size."""
    size_col = burst_size_column(data)
    others = [f for f in data.factors if f != size_col and f in stats.columns
              and f not in ("batch_size", "delay")]
    rows = []
    keys = others + ["burst_size_"]
    for key, g in stats.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        for col in value_cols:
            if col not in g.columns:
                continue
            v = pd.to_numeric(g[col], errors="coerce").to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            if v.size:
                ci = mean_interval(v, alpha)  # the rule for every printed interval (intervals.py)
                rows.append({**dict(zip(keys, key)), "column": col, "mean": float(v.mean()), "ci_low": ci.low,
                             "ci_high": ci.high, "ci_why": ci.why, "n_bursts": int(v.size)})
    out = pd.DataFrame(rows)
    if not out.empty:
        out = out.rename(columns={"burst_size_": "burst_size"}).sort_values(
            others + ["burst_size"], kind="stable").reset_index(drop=True)
    return out


def scaling_curves(data: BurstData, stats: pd.DataFrame | None = None,
                   alpha: float = 0.05) -> pd.DataFrame:
    """Wait, run and service time at p50/p95/max per burst, averaged over the bursts of each
    group (factors other than the burst size) × burst size, with intervals over bursts; columns
    ``<metric>_<stat>`` in ``column``. Empty when fewer than two burst sizes were run."""
    stats = burst_stats(data) if stats is None else stats
    if stats.empty:
        return pd.DataFrame()
    stats = with_burst_size(data, stats)
    if stats["burst_size_"].nunique() < 2:
        return pd.DataFrame()
    cols = [f"{m}_{s}" for m in SCALING_METRICS for s in SCALING_STATS]
    return _group_by_others(data, stats, cols, alpha)


def burst_bandwidth(data: BurstData) -> pd.DataFrame:
    """Per measured burst (split bursts left out): the co-location view of Kim & Lee (I/O
    resource isolation of FaaS runtimes): ``per_function_bytes_per_s``, the median over members
    of bytes / run time, and ``aggregate_bytes_per_s``, the bytes of every successful member over
    the burst's span (first member received → last workload end). Empty when the workload
    moves no bytes."""
    m = data.measured
    if "bytes" not in m.columns:
        return pd.DataFrame()
    ok = m[(m["ok"] == 1) & (pd.to_numeric(m["bytes"], errors="coerce") > 0)]
    if ok.empty:
        return pd.DataFrame()
    b = data.bursts[data.bursts["kind"] == "measure"]
    split = b.groupby(["cell_key", "burst"])["attempt"].max() > 1
    rows = []
    for (ck, burst), g in ok.groupby(["cell_key", "burst"], sort=False):
        if bool(split.get((ck, burst), False)):
            continue
        nbytes = pd.to_numeric(g["bytes"], errors="coerce").astype(float)
        run = pd.to_numeric(g["run_s"], errors="coerce").astype(float)
        per = (nbytes / run)[run > 0]
        span = (g["agent_workload_end_ns"].max() - g["agent_received_ns"].min()) / 1e9
        row = {"cell_key": ck, "burst": int(burst), "members": len(g),
               "per_function_bytes_per_s": float(per.median()) if len(per) else None,
               "aggregate_bytes_per_s": float(nbytes.sum() / span) if span and span > 0 else None}
        for f in data.factors:
            if f in g.columns:
                row[f] = g[f].iloc[0]
        rows.append(row)
    return pd.DataFrame(rows)


def bandwidth_curves(data: BurstData, alpha: float = 0.05) -> pd.DataFrame:
    """Per-function and aggregate bandwidth (bytes/s), averaged over bursts per group × burst
    size, with intervals over bursts (``column``: per_function_bytes_per_s or
    aggregate_bytes_per_s). Empty without bytes or with a single burst size."""
    bw = burst_bandwidth(data)
    if bw.empty:
        return pd.DataFrame()
    bw = with_burst_size(data, bw.assign(planned=bw["members"]))
    if bw["burst_size_"].nunique() < 2:
        return pd.DataFrame()
    return _group_by_others(data, bw, ["per_function_bytes_per_s", "aggregate_bytes_per_s"], alpha)
