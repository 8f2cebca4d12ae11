"""Cells where this host, not the modelled cloud, was the bottleneck (local campaigns).

A local campaign probes at its start what the host delivers per stand-in and device
(:mod:`faascope.standins.capacity`, the ``host_capacity`` event). Per cell, the **aggregate
demand** on a stand-in is the bytes the cell's invocations moved through it divided by the time
during which at least one of them was in its workload (the union of the agents'
workload intervals: 16 concurrent functions that each write 4 MiB in 0.3 s demand ~16 x 13 MiB/s;
the idle time between bursts or sequential invocations does not count). A cell is
**host-bound** when that demand reaches :data:`HOST_BOUND_FRACTION` of the probed capacity and
its invocations ran concurrently (``concurrency``, the most workloads in progress at once, at
least 2): one function at a time queues behind nobody, whatever share of the server it uses.

Why one half: a stand-in is a server on this host, and a server whose utilisation is rho
delays requests by queueing. For fixed-size requests arriving at random (M/D/1, the
Pollaczek-Khinchine mean), the response time is S·(1 + rho/(2·(1 − rho))): at rho = 0.5 the host's
queueing alone makes it x1.5 the service time, the tolerance at which `platform fidelity`
counts a local figure as the published one (WITHIN). From there on the host's contention can
account for a whole "miss" or "match", so the cell's contrast is confounded.
``tests/analysis/test_host_bound.py`` checks the x1.5 at rho = 0.5 on a simulated queue.

**CPU.** The probe measures the stand-ins, not the CPUs that run the functions. A profile gives
each instance a CPU quota (the provider's vCPU for its memory, ``instance_cpu_quota``, as the
agent read it from its cgroup); when the quotas of a cell's instances in their workloads at one
instant add up to more than the CPUs the host has (``instance_num_cpu``), the kernel cannot give
every instance what the modelled cloud promises it: the cell's ``cpu`` says so
(``oversubscribed``, the peak vCPU promised against the host's CPUs). It is not a verdict of
host-bound: an instance waiting on I/O uses little of its quota, and the agent does not report
the CPU it used, so only a cell whose functions are CPU-bound measures the host there.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: a cell's aggregate demand on a stand-in from this fraction of the probed capacity is
#: host-bound (see the module's docstring)
HOST_BOUND_FRACTION = 0.5


def busy_seconds(starts_ns, ends_ns) -> float:
    """The length of the union of the intervals [start, end] (ns in, seconds out)."""
    iv = sorted((int(s), int(e)) for s, e in zip(starts_ns, ends_ns) if e >= s)
    total, cur_s, cur_e = 0, None, None
    for s, e in iv:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total / 1e9


def max_overlap(starts_ns, ends_ns) -> int:
    """The most intervals [start, end) in progress at one instant."""
    return int(peak_weighted_overlap(starts_ns, ends_ns, [1] * len(starts_ns)))


def peak_weighted_overlap(starts_ns, ends_ns, weights) -> float:
    """The largest sum of ``weights`` of intervals [start, end) in progress at one instant."""
    marks = sorted([(int(s), 1, float(w)) for s, w in zip(starts_ns, weights)]
                   + [(int(e), -1, float(w)) for e, w in zip(ends_ns, weights)],
                   key=lambda m: (m[0], m[1]))   # an end before a start at the same instant
    now = best = 0.0
    for _, sign, w in marks:
        now += sign * w
        best = max(best, now)
    return best


def _measured_rows(df: pd.DataFrame, need: list[str]) -> pd.DataFrame:
    """The ``need`` columns (the first the cell key, the rest numbers) of the successful,
    measured (not warm-up) rows that have all of them; empty when a column is missing."""
    if not set(need) <= set(df.columns):
        return pd.DataFrame(columns=need)
    keep = np.ones(len(df), dtype=bool)
    if "ok" in df.columns:
        keep &= (df["ok"] == 1).to_numpy()
    if "warmup" in df.columns:
        keep &= (df["warmup"].fillna(0).astype(int) == 0).to_numpy()
    d = df.loc[keep, need].copy()
    for c in need[1:]:
        d[c] = pd.to_numeric(d[c], errors="coerce")
    return d.dropna()


def cpu_demand(df: pd.DataFrame) -> dict[str, dict]:
    """Per cell: the most vCPU its instances' quotas promised at once while in their workloads
    (``peak_vcpu``) and the host's CPUs (``host_cpus``); cells without both are left out."""
    d = _measured_rows(df, ["cell_key", "agent_workload_start_ns", "agent_workload_end_ns",
                            "instance_cpu_quota", "instance_num_cpu"])
    out = {}
    for key, g in d.groupby("cell_key", sort=False):
        out[key] = {"peak_vcpu": peak_weighted_overlap(g["agent_workload_start_ns"],
                                                       g["agent_workload_end_ns"],
                                                       g["instance_cpu_quota"]),
                    "host_cpus": int(g["instance_num_cpu"].max())}
    return out


def aggregate_demand(df: pd.DataFrame) -> pd.DataFrame:
    """Per cell (``cell_key``): ``bytes`` moved by its measured, successful invocations,
    ``busy_s`` (union of their workload intervals), ``demand_bytes_per_s`` (bytes / busy_s) and
    ``invocations`` and ``concurrency`` (:func:`max_overlap`). Rows without the agent's timestamps or bytes are left out."""
    d = _measured_rows(df, ["cell_key", "bytes", "agent_workload_start_ns", "agent_workload_end_ns"])
    rows = []
    for key, g in d.groupby("cell_key", sort=False):
        busy = busy_seconds(g["agent_workload_start_ns"], g["agent_workload_end_ns"])
        total = int(g["bytes"].sum())
        rows.append({"cell_key": key, "bytes": total, "busy_s": busy, "invocations": len(g),
                     "concurrency": max_overlap(g["agent_workload_start_ns"], g["agent_workload_end_ns"]),
                     "demand_bytes_per_s": total / busy if busy > 0 else np.nan})
    return pd.DataFrame(rows, columns=["cell_key", "bytes", "busy_s", "invocations", "concurrency",
                                       "demand_bytes_per_s"])


def host_bound_cells(df: pd.DataFrame, uses: dict[str, list[str]], capacity: dict) -> dict:
    """The ``host_bound`` event's detail: per cell, per stand-in it uses (``uses``: cell key ->
    stand-in kinds) that the probe measured (``capacity``: the ``host_capacity`` event's
    detail), the demand, the capacity, their ratio and ``host_bound``; ``cells_host_bound``
    lists the flagged cells; ``cpu`` per cell (:func:`cpu_demand`, with ``oversubscribed``) and
    ``cells_cpu_oversubscribed`` the cells whose instances were promised more vCPU at once than
    the host has."""
    probed = {k: v.get("bytes_per_s") for k, v in (capacity.get("standins") or {}).items()
              if v.get("bytes_per_s")}
    demand = aggregate_demand(df).set_index("cell_key")
    cpus = cpu_demand(df)
    cells: dict[str, dict] = {}
    for key, kinds in uses.items():
        cpu = cpus.get(key)
        if cpu is not None:
            cpu = dict(cpu, oversubscribed=bool(cpu["peak_vcpu"] > cpu["host_cpus"]))
        if key not in demand.index:
            if cpu is not None and cpu["oversubscribed"]:
                cells[key] = {"standins": {}, "cpu": cpu, "host_bound": False}
            continue
        dem = float(demand.loc[key, "demand_bytes_per_s"])
        concurrent = int(demand.loc[key, "concurrency"]) >= 2
        entry = {}
        for k in kinds:
            cap = probed.get(k)
            if not cap or not np.isfinite(dem):
                continue
            entry[k] = {"demand_bytes_per_s": dem, "capacity_bytes_per_s": cap,
                        "fraction": dem / cap,
                        "host_bound": bool(concurrent and dem >= HOST_BOUND_FRACTION * cap)}
        if entry or (cpu is not None and cpu["oversubscribed"]):
            cells[key] = {"standins": entry,
                          "host_bound": any(e["host_bound"] for e in entry.values()),
                          "invocations": int(demand.loc[key, "invocations"]),
                          "concurrency": int(demand.loc[key, "concurrency"])}
            if cpu is not None:
                cells[key]["cpu"] = cpu
    return {"fraction": HOST_BOUND_FRACTION, "cells": cells,
            "cells_host_bound": sorted(k for k, v in cells.items() if v["host_bound"]),
            "cells_cpu_oversubscribed": sorted(k for k, v in cells.items()
                                               if (v.get("cpu") or {}).get("oversubscribed"))}
