"""Transfer chains (the ``transfer`` workload; STeLLAR, Ustiugov et al., IISWC 2021): per cell,
the chain's time and the time the payload spent between hops with intervals, and the timeline of
a typical chain.

Each hop reports its own timestamps (``store.reader.ResultsFile.hops``). A hop's time splits into
segments, measured from the chain's start (hop 0's ``start_ns``):

| segment | from → to |
|---|---|
| ``invoked`` | the previous hop's invoke → this hop received the invocation (the Invoke call, a cold start if any) |
| ``work`` | received (hop 0: its start) → its invoke of the next hop (the last hop: its end): reading and writing the payload |
| ``waiting`` | invoke of the next hop → its return (the rest of the chain) |
| ``after`` | the next hop's return → this hop's end |

Timestamps of different hops come from different instances' clocks (one clock on the local
platform; synchronised machines on AWS). The typical chain of a cell is its invocation whose
``chain_s`` is the median (the lower one of two middle values), a real chain rather than an
average of chains that would mix cold and warm hops.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from faascope.analysis.per_cell import cell_columns, cell_means, has_values

MEASURES = ["chain_s", "transfer_s"]
SEGMENTS = ["invoked", "work", "waiting", "after"]


def has_transfers(df: pd.DataFrame) -> bool:
    return has_values(df, "chain_s")


def chain_means(df: pd.DataFrame, factors: list[str], alpha: float = 0.05) -> pd.DataFrame:
    """Per cell: chain_s and transfer_s (n, mean, CI, median)."""
    return cell_means(df, factors, MEASURES, alpha)


def typical_chains(df: pd.DataFrame, factors: list[str]) -> dict:
    """Per cell (its key as ``cell_columns`` gives it): the invocation id of the median chain."""
    keys = cell_columns(df, factors)
    out = {}
    for key, g in df.groupby(keys, sort=False, dropna=False):
        g = g[pd.to_numeric(g["chain_s"], errors="coerce").notna()]
        if g.empty:
            continue
        order = g.sort_values("chain_s", kind="stable")
        if keys == ["cell_key"]:      # the cell's key as the report spells it: the cell_key itself
            key = key[0] if isinstance(key, tuple) else key
        elif not isinstance(key, tuple):
            key = (key,)
        out[key] = int(order["invocation_id"].iloc[(len(order) - 1) // 2])
    return out


def hop_segments(hops: pd.DataFrame, invocation_id: int) -> pd.DataFrame:
    """The segments of one chain: hop, segment, start_s, end_s (seconds from the chain's start),
    plus the hop's cold flag. Segments whose timestamps are missing are left out."""
    h = hops[hops["invocation_id"] == invocation_id].sort_values("hop")
    if h.empty:
        return pd.DataFrame(columns=["hop", "segment", "start_s", "end_s", "cold"])
    t0 = float(h["start_ns"].min())
    rows = []
    prev_invoke = None
    for _, r in h.iterrows():
        rel = {c: (float(r[c]) - t0) / 1e9 if pd.notna(r[c]) else None
               for c in ("start_ns", "received_ns", "invoke_ns", "return_ns", "end_ns")}
        begin = rel["received_ns"] if rel["received_ns"] is not None else rel["start_ns"]
        last = rel["invoke_ns"] is None
        spans = [("invoked", prev_invoke, rel["received_ns"]),
                 ("work", begin, rel["end_ns"] if last else rel["invoke_ns"]),
                 ("waiting", rel["invoke_ns"], rel["return_ns"]),
                 ("after", rel["return_ns"], None if last else rel["end_ns"])]
        for seg, a, b in spans:
            if a is not None and b is not None and b >= a:
                rows.append({"hop": int(r["hop"]), "segment": seg, "start_s": a, "end_s": b,
                             "cold": None if pd.isna(r["cold"]) else bool(r["cold"])})
        prev_invoke = rel["invoke_ns"]
    return pd.DataFrame(rows)


def hop_transfer_means(hops: pd.DataFrame, df: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    """Per cell and hop (≥ 1): the mean ``transfer_s`` of that hop over the cell's invocations."""
    keys = cell_columns(df, factors)
    j = hops.merge(df[keys + ["invocation_id"]], on="invocation_id")
    j["transfer_s"] = pd.to_numeric(j["transfer_s"], errors="coerce")
    j = j[np.isfinite(j["transfer_s"].to_numpy(dtype=float))]
    return j.groupby(keys + ["hop"], sort=False)["transfer_s"].mean().reset_index()
