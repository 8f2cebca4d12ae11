"""A rough duration estimate for a plan (documented in docs/specs.md).

The model is deliberately simple: it is meant to tell "minutes" from "hours" from "days", not to
predict a measurement. Per invocation:

    t = overhead + [forced cold start] + workload

- overhead: the client/platform round trip of a warm invocation (local 5 ms, cloud 60 ms);
- forced cold start (and the first invocation of every function): local 0.3 s, cloud 1.5 s;
- workload:
  - noop: 0; spin: iterations x 4 ns / cpu;
  - fileio with ops = ceil(file_size / io_size):
      buffered write: ops x 3 us / cpu + bytes / 0.3 GB/s (+ fsync end: bytes / 150 MB/s on a
        disk; fsync every: 1 ms per op);
      buffered read (also "direct" on the gcf profile, whose tmpfs /tmp has no O_DIRECT):
        ops x 1 us / cpu + bytes / 3 GB/s;
      O_DIRECT read from disk: ops x 42 us + bytes / 1.5 GB/s;
      a read's preparation (inside the invocation, outside the timed region): bytes / 0.4 GB/s
        + fsync to disk at 150 MB/s (lambda profile; none on tmpfs);
      dd with source urandom also reads /dev/urandom inside its timing: bytes / 0.5 GB/s / cpu;
  - cpu: the share of a CPU the function gets (lambda: memory/1769 MB; gcf: the tier table;
    capped at 1 for this single-threaded work).
Plus one deployment per distinct function configuration (local 1 s, cloud 10 s) and the waits
between time blocks. The constants were calibrated on the development machine's local platform
(one replication of examples/thesis-local-fileio.yaml: 150 s measured; see docs/specs.md); on other
disks and on clouds expect a factor of two either way.
"""
from __future__ import annotations

import math
from typing import Any

from faascope.designs.plan import Cell, Plan
from faascope.designs.schedule import burst_schedule

GCF_TIERS = [(128, 0.083), (256, 0.167), (512, 0.333), (1024, 0.583), (2048, 1.0), (4096, 2.0),
             (8192, 2.0), (16384, 4.0), (32768, 8.0)]

OVERHEAD_S = {"local": 0.005, "cloud": 0.06}
COLD_S = {"local": 0.3, "cloud": 1.5}
DEPLOY_S = {"local": 1.0, "cloud": 10.0}
SPIN_UNIT_S = 4e-9
PER_OP_WRITE_S = 3e-6
PER_OP_READ_S = 1e-6
PER_OP_DIRECT_S = 42e-6
BW_WRITE = 0.3e9
BW_READ = 3.0e9
BW_DIRECT_READ = 1.5e9
BW_PREPARE = 0.4e9
BW_FSYNC = 0.15e9
BW_URANDOM = 0.5e9  # dd reading /dev/urandom, per second of one CPU
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
    dd_urandom = w.get("engine") == "dd" and w.get("source") == "urandom"
    read = w.get("op") == "read"
    t = 0.0
    if read:
        if direct:
            t += ops * PER_OP_DIRECT_S + size / BW_DIRECT_READ
        else:
            t += ops * PER_OP_READ_S / cpu + size / BW_READ
        if w.get("prepare", True):
            t += size / BW_PREPARE + (0.0 if tmpfs else size / BW_FSYNC)
    else:
        t += ops * PER_OP_WRITE_S / cpu + size / BW_WRITE
        if dd_urandom:
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
    cells = plan.cells_by_key
    for r in plan.runs:
        ld = cells[r.cell_key].load
        if ld is not None:  # a burst: its members overlap; the schedule and pause add up
            cold = ld.get("start", "warm") != "warm"
            span = burst_schedule(ld)[-1].offset_s if ld.get("arrival", {}).get("process") != "trace" else 0.0
            total += (per_cell[r.cell_key] * (2 if ld.get("warm_pool") else 1) + span
                      + float(ld.get("pause") or 0) + (COLD_S[where] if cold else 0.0))
            continue
        total += per_cell[r.cell_key] + (COLD_S[where] if r.force_cold else 0.0)
    configs = {tuple(sorted(c.config.items(), key=lambda kv: kv[0])) for c in plan.cells}
    total += len(configs) * (DEPLOY_S[where] + COLD_S[where])
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
