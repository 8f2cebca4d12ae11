"""What a local campaign's figures rest on: per cell, the calibration entries that bound it
(its profile's /tmp, shared-FS, network, CPU and cold-start figures, the stand-ins' request
latencies when they were shaped), each with the role its table gives it, and what no entry
models at all (this machine's page cache, an unshaped stand-in).

Why: a number measured on the local platform is the model's number. Where the model rests on a
fitted or published figure, a user can weigh it against that source; where it rests on an
*assumed* one (no published measurement: e.g. the lambda profile's /tmp write limits, set equal
to the fitted read limits because a Firecracker drive has one bucket for both), the absolute
value may be far from the cloud's, and the report says so before anyone quotes it.

The rules here name entries; their values, roles and sources are read from the tables
(:mod:`faascope.calibration`), the one place they live, and a test fails if a rule names an
entry a table does not have.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from faascope import calibration
from faascope.designs.model_inputs import Inputs
from faascope.schemas import workload_def
from faascope.store.schema import STANDINS_EVENT, latest_event_detail
from faascope.tiers import CPU_TIERS_TABLE as CPU_TABLE
from faascope.tiers import LAMBDA_TIER_KEY, TierError, gcf_tier_key

#: the profiles with a table of their own (``platform-<profile>``)
PROFILE_TABLE = calibration.PLATFORM_TABLES
STANDINS_TABLE = calibration.STANDINS_TABLE
LATENCY_ENTRIES = calibration.STANDIN_LATENCY_ENTRIES


@dataclass(frozen=True)
class Figure:
    """One calibration entry a cell rests on."""
    table: str          # name@version
    key: str
    role: str           # published, fit or assumed (the table's)
    value: float
    unit: str
    bounds: str         # what in the cell it bounds
    source: str         # the table's source of the entry

    @property
    def anchor(self) -> str:
        return f"{self.table}:{self.key}"


@dataclass
class CellBasis:
    figures: list[Figure]
    unmodelled: list[str]   # what no entry models: the cell's time there is this machine's

    @property
    def assumed(self) -> list[Figure]:
        return [f for f in self.figures if f.role == "assumed"]


def _concurrent(cell: Mapping[str, Any]) -> bool:
    load = cell.get("load") or {}
    return int(load.get("burst_size") or 1) > 1 or int((cell.get("levels") or {}).get("burst_size") or 1) > 1


def cell_basis(cell: Mapping[str, Any], shaped: Iterable[str] = ()) -> CellBasis:
    """The figures one plan cell (its resolved ``function`` and ``workload``, and ``load`` for
    bursts) rests on. ``shaped``: the stand-in kinds (s3, dynamodb) whose latencies were shaped
    for the cell's profile, as the campaign's ``standins`` event recorded it."""
    fn = cell.get("function") or {}
    wl = cell.get("workload") or {}
    profile = fn.get("profile")
    memory = int(fn.get("memory_mb") or 0)
    kind = wl.get("kind")
    need: list[tuple[str, str, str]] = []     # (table, key, what it bounds)
    unmodelled: list[str] = []
    if profile not in PROFILE_TABLE:
        return CellBasis([], [f"no calibrated profile ({profile or 'none'}): every time is this machine's, "
                              "with only the memory limit and CPU share set"])
    ptable = PROFILE_TABLE[profile]
    pentries = calibration.load_table(ptable).entries

    def plat(key: str, what: str) -> None:
        if key in pentries:
            need.append((ptable, key, what))

    def tmp(write: bool, what: str) -> None:
        side = "write" if write else "read"
        if f"tmp_{side}_bps" not in pentries:
            unmodelled.append(f"{profile}'s /tmp is memory, as the cloud's is: no device limit; {what} run at "
                              "this machine's memory speed")
            return
        plat(f"tmp_{side}_bps", f"{what}: bandwidth")
        plat(f"tmp_{side}_iops", f"{what}: operations per second")
        if Inputs().tmp_memory_factor(profile, memory) < 1:   # the platform's memory scale applies
            plat("tmp_limits_memory", f"{what}: the memory size the limits hold from")
            plat("tmp_limits_memory_exponent", f"{what}: how the limits shrink below it")
        plat("device_cpu", f"{what}: each request's CPU time, paid from the function's quota")
        if _concurrent(cell):
            plat(f"host_tmp_{side}_bps", f"{what} of co-resident functions together: bandwidth")
            plat(f"host_tmp_{side}_iops", f"{what} of co-resident functions together: operations per second")

    if kind == "fileio":
        op = wl.get("op")
        direct, fsync = bool(wl.get("direct")), (wl.get("fsync") or "none") != "none"
        if op == "read" and direct:
            tmp(False, "direct /tmp reads")
        elif op == "read":
            unmodelled.append("buffered /tmp reads are served from this machine's page cache (the cloud "
                              "guest's own page cache is not modelled apart)")
        elif direct or fsync:
            tmp(True, "/tmp writes that reach the device (direct or fsync)")
        else:
            unmodelled.append("buffered /tmp writes without fsync land in this machine's page cache; "
                              "the write-back is not charged to the sandbox")
        if wl.get("source") == "urandom" or wl.get("engine") == "dd":
            need += _cpu(profile, memory, "CPU (dd and /dev/urandom run inside the timing)")
        plat("syscall_cost", "every system call: its cost in the provider's sandbox")
        plat("close_cost", "every close: a short program's fixed cost in the provider's sandbox")
    elif kind == "sharedfs":
        side = "write" if wl.get("op") == "write" else "read"
        plat(f"shared_{side}_bps", f"shared-file-system {side}s: bandwidth")
        plat(f"shared_{side}_iops", f"shared-file-system {side}s: operations per second")
    elif kind == "network":
        for key in ("net_one_time_burst", "net_bucket_size", "net_peak_rate", "net_refill_rate"):
            plat(key, "network transfer: token bucket")
    elif kind in ("object", "kv", "transfer", "app"):
        services = _services(wl)
        for s in services:
            if s in shaped:
                side = ("write",) if wl.get("op") in ("put", "write") else ("read",) if wl.get("op") else ("write", "read")
                for d in side:
                    for q in ("median", "p99"):
                        need.append((STANDINS_TABLE, f"{LATENCY_ENTRIES[s]}_{d}_{q}", f"{s} request latency"))
            else:
                unmodelled.append(f"{s} requests go to its stand-in on this machine unshaped: their latency "
                                  "is this machine's, not the cloud's")
        if kind == "app" and wl.get("storage") == "sharedfs":
            for side in ("read", "write"):
                plat(f"shared_{side}_bps", f"shared-file-system {side}s: bandwidth")
        if kind == "app":
            need += _cpu(profile, memory, "CPU (the application's compute phase)")
    elif kind == "spin":
        need += _cpu(profile, memory, "CPU (the workload is a CPU loop)")
    if fn.get("image_size") or cell.get("cold"):
        plat("cold_start_fixed", "cold start: fixed part")
        plat("cold_start_fetch_rate", "cold start: package fetch")
        plat("init_vcpu", "cold start: the CPU the runtime's INIT gets")
        plat("init_overhead", "cold start: the sandbox's part of INIT")
    return CellBasis(_resolve(need), unmodelled)


def _default(kind: str, field: str) -> Any:
    """A workload field's default, from the agent's request schema (the one source)."""
    return workload_def(kind)["properties"][field].get("default")


def _services(wl: Mapping[str, Any]) -> list[str]:
    """The storage services a workload's requests go to (stand-in kinds: s3, dynamodb, redis)."""
    kind = wl.get("kind")
    backend = wl.get("backend") or (_default(kind, "backend") if kind in ("kv", "transfer", "app") else None)
    if kind == "object":
        return ["s3"]
    if kind == "kv":
        return [backend]
    if kind == "transfer":
        via = wl.get("via") or _default(kind, "via")
        return ["s3"] if via == "object" else ([backend] if via == "kv" else [])
    if kind == "app":
        storage = wl.get("storage") or _default(kind, "storage")
        return ["s3"] if storage == "object" else ([backend] if storage == "kv" else [])
    return []


def _cpu(profile: str, memory: int, what: str) -> list[tuple[str, str, str]]:
    out = []
    if profile == "lambda":
        out.append((CPU_TABLE, LAMBDA_TIER_KEY, f"{what}: vCPU share"))
        out.append((PROFILE_TABLE[profile], "cpu_period", f"{what}: CPU quota period"))
    elif profile == "gcf":
        try:
            out.append((CPU_TABLE, gcf_tier_key(memory), f"{what}: vCPU share"))
        except TierError:   # above GCF's largest tier: no published share to name
            pass
        out.append((PROFILE_TABLE[profile], "cpu_speed", f"{what}: speed of GCF's CPU against this machine's"))
        out.append((PROFILE_TABLE[profile], "syscall_cost", f"{what}: cost of a system call in GCF's sandbox"))
    return out


def _resolve(need: list[tuple[str, str, str]]) -> list[Figure]:
    out: list[Figure] = []
    seen = set()
    for table, key, what in need:
        if (table, key) in seen:
            continue
        seen.add((table, key))
        t = calibration.load_table(table)
        e = t[key]
        out.append(Figure(f"{t.name}@{t.version}", key, e.role, e.value, e.unit, what, e.source))
    return out


def shaped_by_profile(events: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """profile -> the stand-in kinds shaped for it, from a campaign's latest ``standins`` event
    (its ``shaping``: profile -> {endpoints: {kind: …}} or None)."""
    detail = latest_event_detail(list(events), STANDINS_EVENT) or {}
    return {p: sorted((s or {}).get("endpoints", {})) for p, s in (detail.get("shaping") or {}).items() if s}


def campaign_basis(plan: Mapping[str, Any], events: Iterable[Mapping[str, Any]] = ()) -> dict[str, CellBasis]:
    """cell key -> what it rests on, for every cell of a local campaign's plan."""
    shaped = shaped_by_profile(events)
    cold = (plan.get("cold") or "none") != "none"
    out = {}
    for c in plan.get("cells") or []:
        cell = dict(c, cold=cold)
        out[c["key"]] = cell_basis(cell, shaped.get((c.get("function") or {}).get("profile"), ()))
    return out
