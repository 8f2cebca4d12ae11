"""A rough duration estimate for a plan (documented in docs/specs.md).

The model is deliberately simple: it is meant to tell "minutes" from "hours" from "days", not to
predict a measurement. Per invocation:

    t = overhead + [forced cold start] + workload

- overhead: the client/platform round trip of a warm invocation (local 5 ms, cloud 60 ms);
- forced cold start: UpdateFunctionConfiguration plus a fresh instance (local 0.4 s, cloud 1.5 s);
- workload:
  - noop: 0; spin: iterations x 4 ns / cpu;
  - fileio: ops = ceil(file_size / io_size) operations moving file_size bytes:
      ops x per-op cost / cpu  +  bytes / bandwidth  (+ producing urandom data / cpu)
      (+ fsync: bytes / disk bandwidth at the end, or 1 ms per op with fsync every)
      (+ for reads, preparing the file the same way as a buffered write, outside the timed region
        but inside the invocation);
    per-op cost: 2 us buffered, 60 us O_DIRECT on a disk (on the gcf profile /tmp is tmpfs, where
    O_DIRECT does not apply); bandwidth: 1.5 GB/s buffered write, 3 GB/s buffered read,
    0.5 GB/s direct read from disk, 0.6 GB/s fsync;
  - cpu: the share of a CPU the function gets (lambda: memory/1769 MB; gcf: the tier table;
    capped at 1 for this single-threaded work).
Plus one deployment per distinct function configuration (local 1 s, cloud 10 s) and the waits
between time blocks. The constants were calibrated on the development machine's local platform
(see docs/specs.md); on other disks and clouds expect a factor of two either way.
"""
from __future__ import annotations

import math
from typing import Any

from faascope.designs.plan import Cell, Plan

GCF_TIERS = [(128, 0.083), (256, 0.167), (512, 0.333), (1024, 0.583), (2048, 1.0), (4096, 2.0),
             (8192, 2.0), (16384, 4.0), (32768, 8.0)]

OVERHEAD_S = {"local": 0.005, "cloud": 0.06}
COLD_S = {"local": 0.4, "cloud": 1.5}
DEPLOY_S = {"local": 1.0, "cloud": 10.0}
SPIN_UNIT_S = 4e-9
PER_OP_BUFFERED_S = 2e-6
PER_OP_DIRECT_S = 60e-6
BW_WRITE = 1.5e9
BW_READ = 3.0e9
BW_DIRECT_READ = 0.5e9
BW_FSYNC = 0.6e9
BW_URANDOM = 0.5e9  # getrandom() per second of one CPU
FSYNC_EVERY_S = 1e-3


def cpu_share(profile: str | None, memory_mb: int) -> float:
    if profile == "gcf":
        share = next((c for m, c in GCF_TIERS if memory_mb <= m), 8.0)
    elif profile == "unlimited":
        share = 1.0
    else:  # lambda, and AWS itself
        share = memory_mb / 1769
    return min(1.0, share)


def workload_seconds(cell: Cell) -> float:
    w = cell.payload["workload"]
    cpu = cpu_share(cell.function.profile, cell.function.memory_mb)
    kind = w.get("kind")
    if kind == "spin":
        return w["iterations"] * SPIN_UNIT_S / cpu
    if kind != "fileio":
        return 0.0
    size, io = w["file_size"], w["io_size"]
    ops = math.ceil(size / io)
    tmpfs = cell.function.profile == "gcf"
    direct = w.get("direct") and not tmpfs
    urandom = w.get("source") == "urandom"
    t = 0.0
    if w.get("op") == "read":
        if direct:
            t += ops * PER_OP_DIRECT_S / max(cpu, 0.25) + size / BW_DIRECT_READ
        else:
            t += ops * PER_OP_BUFFERED_S / cpu + size / BW_READ
        if w.get("prepare", True):
            t += size / BW_WRITE + (size / BW_URANDOM / cpu if urandom else 0.0)
    else:
        t += ops * PER_OP_BUFFERED_S / cpu + size / BW_WRITE
        if urandom:
            t += size / BW_URANDOM / cpu
        fsync = w.get("fsync", "none")
        if fsync == "end" and not tmpfs:
            t += size / BW_FSYNC
        elif fsync == "every" and not tmpfs:
            t += ops * FSYNC_EVERY_S
    return t


def estimate(plan: Plan) -> dict[str, Any]:
    where = "local" if plan.spec.provider_kind == "local" else "cloud"
    per_cell = {c.key: OVERHEAD_S[where] + workload_seconds(c) for c in plan.cells}
    total = 0.0
    for r in plan.runs:
        total += per_cell[r.cell_key] + (COLD_S[where] if r.force_cold else 0.0)
    configs = {tuple(sorted(c.config.items(), key=lambda kv: kv[0])) for c in plan.cells}
    total += len(configs) * DEPLOY_S[where]
    waits = (plan.blocks - 1) * (plan.block_interval_s or 0.0)
    return {
        "seconds": round(max(total, waits + total / max(plan.blocks, 1)), 3),
        "busy_seconds": round(total, 3),
        "functions": len(configs),
        "per_invocation_seconds": {k: round(v, 6) for k, v in per_cell.items()},
        "model": "rough: overhead + forced cold start + workload (ops x per-op cost / cpu + "
                 "bytes / bandwidth); see docs/specs.md",
    }


def human_duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{seconds:.0f} s" if seconds >= 1 else f"{seconds:.2f} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    if s < 86400:
        return f"{s // 3600} h {(s % 3600) // 60:02d} min"
    return f"{s // 86400} d {(s % 86400) // 3600} h"
