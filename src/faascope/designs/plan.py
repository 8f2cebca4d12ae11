"""Designs: which cells run, which are excluded and why, and in what order.

- ``full_factorial``: every combination of every factor's levels (n * prod(l_i) runs).
- ``two_level``: each factor at its minimum and maximum (numeric levels by value, others the first
  and the last listed), so n * 2^m runs, as the 2024 local-I/O study did.

Compatibility rules (``design.rules``) exclude the cells that break them; each excluded cell
records the first rule it breaks (``rule``) and all of them (``rules``).

The run order covers every (cell, replication) pair. With ``randomize: true`` (the default) it is
a random permutation drawn from ``random.Random(seed)``; the seed is recorded (drawn at random when
the spec has none) and the full order is stored with the campaign, so a resumed run continues the
same order. With ``randomize: false`` it is replication-major (all cells once, then again …).

Blocking by time: with ``blocking: {blocks: B, interval: I}`` replication r belongs to block
r mod B; every block is ordered on its own and block b starts no earlier than start + b * I.

A periodic schedule (``design.schedule``, :mod:`faascope.designs.slots`) is blocking by slot:
slot k is block k, and every cell runs ``replications`` times in each slot (so a cell has
replications * slots in all); the driver keeps the slots' times (:mod:`faascope.driver.periodic`).

Warm-ups (``warmup: w``) are w invocations of a cell, flagged as warm-ups, just before the cell's
first measured invocation in each block. Forced cold starts: ``cold: true`` marks the first
invocation of each cell in each block, ``cold: every`` every measured invocation.
"""
from __future__ import annotations

import itertools
import json
import math
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from faascope.specs.rules import RuleError
from faascope.errors import BadInput
from faascope.provider_kinds import provider_kind
from faascope.specs.loader import LoadedSpec
from faascope.designs.slots import SlotPlan, slot_plan
from faascope.specs.model import FunctionSpec
from faascope.units import MIB, SizeError, format_size, parse_size

CONFIG_FIELDS = ("memory_mb", "ephemeral_mb", "timeout_s", "arch", "profile", "image_size",
                 "net_shape")


def code_config(code: Any) -> dict[str, Any]:
    """The configuration fields of a user's own function (FunctionConfig's ``code``,
    ``runtime``, ``handler``, ``environment``): hashable, the environment as sorted JSON."""
    return {"code": code.path, "runtime": code.runtime, "handler": code.handler,
            "environment": json.dumps(code.environment, sort_keys=True) if code.environment else None}


@dataclass
class Cell:
    index: int
    key: str
    levels: dict[str, Any]
    function: FunctionSpec
    workload: BaseModel
    payload: dict
    #: the cell's load section (bursts, staggering) as a dict; None without one
    load: dict | None = None
    #: the deployment it runs on (a spec with ``deployments``); None: the spec's provider
    deployment: str | None = None

    @property
    def burst_invocations(self) -> int:
        """Invocations one planned run of this cell makes: its burst (and warm pool), else 1."""
        if self.load is None:
            return 1
        n = int(self.load.get("burst_size", 1))
        pool = self.load.get("warm_pool", 0) if self.load.get("start", "warm") == "warm" else 0
        return n + (n if pool == "burst" else int(pool or 0))

    @property
    def workload_request(self) -> dict:
        """The workload as estimates, costs and the plan read it: the agent's request's
        ``workload``; for a user's own function only its kind (``invoke``), since what it does
        is its own (the estimates then count no workload time)."""
        if self.function.code is not None:
            return {"kind": "invoke"}
        return self.payload["workload"]

    @property
    def config(self) -> dict[str, Any]:
        out = {k: getattr(self.function, k) for k in CONFIG_FIELDS}
        if self.deployment is not None:  # only then: other campaigns' configs stay as they were
            out["deployment"] = self.deployment
        if self.function.code is not None:  # a user's own function (only then, likewise)
            out.update(code_config(self.function.code))
        return out


@dataclass
class Excluded:
    levels: dict[str, Any]
    rule: str
    rules: list[str]


@dataclass
class PlannedRun:
    order: int
    cell_key: str
    replication: int
    kind: str  # "measure" or "warmup"
    block: int
    force_cold: bool

    def as_dict(self) -> dict:
        return dict(order=self.order, cell_key=self.cell_key, replication=self.replication,
                    kind=self.kind, block=self.block, force_cold=self.force_cold)


@dataclass
class Plan:
    spec: LoadedSpec
    design_type: str
    cells: list[Cell]
    excluded: list[Excluded]
    runs: list[PlannedRun]
    seed: int
    replications: int
    warmup: int
    cold_mode: str
    blocks: int
    block_interval_s: float | None
    notes: list[str] = field(default_factory=list)
    #: a periodic campaign's slots (each slot is a block); None otherwise
    schedule: SlotPlan | None = None
    #: what the design asked for: replications per slot when scheduled, else per cell
    design_replications: int = 0

    @property
    def invocations(self) -> int:
        if any(c.load is not None for c in self.cells):  # a planned run is a burst
            by_key = self.cells_by_key
            return sum(by_key[r.cell_key].burst_invocations for r in self.runs)
        return len(self.runs)

    @property
    def measured_invocations(self) -> int:
        if any(c.load is not None for c in self.cells):
            by_key = self.cells_by_key
            return sum(int((by_key[r.cell_key].load or {}).get("burst_size", 1))
                       for r in self.runs if r.kind == "measure")
        return sum(1 for r in self.runs if r.kind == "measure")

    @property
    def cells_by_key(self) -> dict[str, Cell]:
        return {c.key: c for c in self.cells}

    def factor_levels(self) -> dict[str, list[Any]]:
        """The levels each factor takes in this design (after two-level selection)."""
        out: dict[str, list[Any]] = {}
        for f in self.spec.factors:
            seen: list[Any] = []
            for c in self.cells:
                v = c.levels[f.name]
                if v not in seen:
                    seen.append(v)
            out[f.name] = seen
        return out

    def to_json(self, estimate: dict | None = None) -> dict:
        """The plan JSON of the command-line contract (docs/specs.md) (cells, excluded, invocations), plus extra keys."""
        d: dict[str, Any] = {
            "cells": [
                {"levels": c.levels, "replications": self.replications, "key": c.key,
                 "function": c.function.model_dump(mode="json"), "workload": c.workload_request,
                 **({"load": c.load} if c.load is not None else {})}
                for c in self.cells
            ],
            "excluded": [{"levels": e.levels, "rule": e.rule, "rules": e.rules} for e in self.excluded],
            "invocations": self.invocations,
            "name": self.spec.spec.name,
            "design": self.design_type,
            "factors": [f.name for f in self.spec.factors],
            "replications": self.replications,
            "warmup_per_cell": self.warmup,
            "measured_invocations": self.measured_invocations,
            "warmup_invocations": self.invocations - self.measured_invocations,
            "cold": self.cold_mode,
            "seed": self.seed,
            "randomize": self.spec.spec.design.randomize,
            "blocks": self.blocks,
            "block_interval_s": self.block_interval_s,
            "spec_hash": self.spec.spec_hash,
            "notes": self.notes,
        }
        if self.schedule is not None:
            d["schedule"] = {**self.schedule.describe(),
                             "replications_per_slot": self.design_replications}
        if estimate is not None:
            d["estimate"] = estimate
        return d


def cell_key(levels: dict[str, Any]) -> str:
    """A stable, readable key: ``profile="gcf"|memory=128|file_size=10000`` (factor order)."""
    if not levels:
        return "base"
    return "|".join(f"{k}={json.dumps(v, sort_keys=True)}" for k, v in levels.items())


def _two_level(values: list[Any], numeric: bool) -> list[Any]:
    if len(values) <= 2 and not numeric:
        return list(values)
    if numeric:
        lo, hi = min(values), max(values)
        return [lo] if lo == hi else [lo, hi]
    return [values[0], values[-1]]


def _show(v: Any) -> str:
    return format_size(v) if isinstance(v, int) and not isinstance(v, bool) and v >= 1000 else str(v)


# Limits a cell cannot pass on its platform, whatever is measured: ``faascope plan`` refuses such
# cells (exit 2) unless a rule excludes them, so nothing is deployed for a run that must fail.
S3_MAX_OBJECT = 5 * 1024**3          # S3's single-PUT limit (the agent's object_size maximum)
DYNAMODB_MAX_ITEM = 400 * 1024       # DynamoDB's item limit (the agent caps kv items there)
INLINE_MAX_PAYLOAD = 6 * MIB - 64 * 1024  # Lambda's 6 MiB request less the chain's envelope
STORED_MAX_PAYLOAD = 1024**3         # the agent's bound on a payload passed through object storage
# A tmpfs /tmp (the gcf profile, GCF 2nd gen, Cloud Run) is charged to the function's memory, as
# are the agent (about 12 MiB resident measured with 1 MiB I/O; the rest is headroom for Go's
# garbage collector, which lets the heap grow to twice the live data, and for the kernel's own
# per-cgroup charges) and its I/O buffer of io_size bytes.
TMPFS_RESERVE = 32 * MIB


def _bytes(v: Any) -> int | None:
    """A size from a resolved (not yet validated) cell; None when unreadable (validation says why)."""
    try:
        return parse_size(v) if v is not None else None
    except SizeError:
        return None


def cell_limit(fn: dict, wl: dict, provider: str, by_profile: bool = False) -> tuple[str, str] | None:
    """``(why, rule)`` when the cell with function ``fn`` and workload ``wl`` cannot work on
    ``provider`` (a limit of the platform or the storage), with a rule that would exclude it;
    None when it can. ``by_profile``: the profile is a factor, so a /tmp rule names it (the
    lambda profile's limit is not the gcf profile's)."""
    kind = wl.get("kind")
    profile = fn.get("profile")
    if kind == "fileio":
        size, io = _bytes(wl.get("file_size")), _bytes(wl.get("io_size")) or 0
        if size is None:
            return None
        d = provider_kind(provider)
        tmp = d.tmp_of(profile) if d is not None else None
        if tmp == "ephemeral":
            eph = fn.get("ephemeral_mb") or 512
            if size > eph * MIB:
                rule = "file_size <= ephemeral"
                return (f"file_size {format_size(size)} ({size:,} B) does not fit the function's "
                        f"/tmp: ephemeral_mb {eph} = {eph * MIB:,} B",
                        f"profile != 'lambda' or {rule}" if by_profile else rule)
        elif tmp == "memory":
            mem = fn.get("memory_mb") or 128
            room = mem * MIB - TMPFS_RESERVE
            if size + io > room:
                rule = f"file_size + io_size <= memory - {TMPFS_RESERVE // MIB}MiB"
                return (f"/tmp is in memory here, so file_size {format_size(size)} plus the "
                        f"agent's io_size buffer ({size + io:,} B) must fit memory_mb {mem} "
                        f"({mem * MIB:,} B) less {TMPFS_RESERVE // MIB} MiB for the agent "
                        f"({room:,} B)", f"profile != 'gcf' or {rule}" if by_profile else rule)
    elif kind == "object":
        size = _bytes(wl.get("object_size"))
        if size is not None and size > S3_MAX_OBJECT:
            return (f"object_size {format_size(size)} is above S3's single-PUT limit of 5 GiB "
                    f"({S3_MAX_OBJECT:,} B)", "object_size <= 5GiB")
    elif kind == "kv":
        size = _bytes(wl.get("item_size"))
        if size is not None and size > DYNAMODB_MAX_ITEM:
            return (f"item_size {format_size(size)} is above DynamoDB's item limit of 400 KiB "
                    f"({DYNAMODB_MAX_ITEM:,} B), which the agent applies to every backend",
                    "item_size <= 400KiB")
    elif kind == "transfer":
        size, via = _bytes(wl.get("payload_size")), wl.get("via", "inline")
        limit = {"inline": INLINE_MAX_PAYLOAD, "kv": DYNAMODB_MAX_ITEM,
                 "object": STORED_MAX_PAYLOAD}.get(via)
        if size is not None and limit is not None and size > limit:
            what = {"inline": "the inline limit (Lambda's 6 MiB request less 64 KiB of envelope)",
                    "kv": "the kv limit (DynamoDB's item size, applied to every backend)",
                    "object": "the agent's limit for via object"}[via]
            return (f"payload_size {format_size(size)} via {via} is above {what}: {limit:,} B",
                    f"via != '{via}' or payload_size <= {format_size(limit)}")
    elif kind == "app" and wl.get("storage") == "kv" and wl.get("backend") == "dynamodb":
        for name in ("input_size", "output_size"):
            size = _bytes(wl.get(name))
            if size is not None and size > DYNAMODB_MAX_ITEM:
                return (f"the app's {name} {format_size(size)} is one DynamoDB item, above its "
                        f"limit of 400 KiB ({DYNAMODB_MAX_ITEM:,} B)",
                        f"storage != 'kv' or {name} <= 400KiB")
    return None


def _show_level(name: str, v: Any) -> str:
    if name.rpartition(".")[2] in ("memory", "memory_mb", "ephemeral", "ephemeral_mb") \
            and isinstance(v, int) and not isinstance(v, bool):
        return f"{v} MB"
    return _show(v)


def refusal(impossible: list[tuple[dict[str, Any], tuple[str, str]]]) -> BadInput:
    """One error for every cell that cannot work, naming its levels and the limit, and the
    rules that would exclude them."""
    lines = [f"  cell {', '.join(f'{k}={_show_level(k, v)}' for k, v in levels.items()) or 'base'}: {why}"
             for levels, (why, _) in impossible[:10]]
    if len(impossible) > 10:
        lines.append(f"  ... and {len(impossible) - 10} more")
    rules = list(dict.fromkeys(rule for _, (_, rule) in impossible))
    return BadInput(f"{len(impossible)} cell{'s' if len(impossible) > 1 else ''} cannot run on "
                    f"this platform:\n" + "\n".join(lines) + "\nexclude "
                    f"{'them' if len(impossible) > 1 else 'it'} with design.rules, e.g. "
                    + ", ".join(repr(r) for r in rules), field="design.rules")


#: the largest design a plan enumerates (the product of the factors' level counts), and the
#: most invocations a campaign plans (docs/specs.md); beyond them, exit 2 before any work
MAX_COMBINATIONS = 1_000_000
MAX_INVOCATIONS = 10_000_000


def build_plan(spec: LoadedSpec, replications: int | None = None, seed: int | None = None,
               anchor_unix: float | None = None) -> Plan:
    """The plan of ``spec``; ``anchor_unix`` anchors a periodic schedule's slots (default: now;
    a resumed campaign passes the anchor it recorded, so its slots stay the same)."""
    d = spec.spec.design
    reps = replications if replications is not None else d.replications
    if reps < 1:
        raise BadInput("must be at least 1", field="--replications")
    design_reps = reps
    if seed is None:
        seed = d.seed if d.seed is not None else secrets.randbelow(2**32)
    notes: list[str] = []
    blocks = d.blocking.blocks if d.blocking else 1
    slots = None
    if d.schedule is not None:
        slots = slot_plan(d.schedule, time.time() if anchor_unix is None else anchor_unix)
        blocks = len(slots.due)
        reps = design_reps * blocks   # replication r runs in slot r mod slots
    if blocks > reps:
        raise BadInput(f"{blocks} blocks need at least {blocks} replications (got {reps})",
                       field="design.blocking.blocks")

    # levels per factor
    names = [f.name for f in spec.factors]
    level_lists: list[list[Any]] = []
    for f in spec.factors:
        if d.type == "two_level":
            chosen = _two_level(f.levels, f.numeric)
            dropped = [v for v in f.levels if v not in chosen]
            if dropped:
                notes.append(f"two_level: {f.name} at {', '.join(_show(v) for v in chosen)} "
                             f"(dropped {', '.join(_show(v) for v in dropped)})")
            level_lists.append(chosen)
        else:
            level_lists.append(list(f.levels))

    # refuse before enumerating: a 10^7-combination factorial took minutes and gigabytes
    # before saying anything (about 0.2 ms a combination here: the limit plans in ~3 min)
    combos = math.prod(len(levels) for levels in level_lists)
    if combos > MAX_COMBINATIONS:
        sizes = " × ".join(f"{n} {len(levels)}" for n, levels in zip(names, level_lists))
        raise BadInput(f"{sizes} = {combos:,} combinations of levels, more than the "
                       f"{MAX_COMBINATIONS:,} a plan may enumerate; use fewer factors or "
                       "levels, or the two_level design", field="factors")

    cells: list[Cell] = []
    excluded: list[Excluded] = []
    impossible: list[tuple[dict[str, Any], tuple[str, str]]] = []
    by_profile = any(f.section == "function" and f.field == "profile" for f in spec.factors)
    by_deployment = bool(spec.deployments)
    for combo in itertools.product(*level_lists):
        levels = dict(zip(names, combo))
        where = ", ".join(f"{k}={_show(v)}" for k, v in levels.items())
        fn, wl = spec.resolve(levels)
        load = spec.resolve_load(levels)
        dep = spec.deployment_of(levels)
        env = spec.env(fn, wl, load, deployment=dep.name if dep else None)
        broken = []
        for i, rule in enumerate(spec.rules):
            try:
                if not rule.evaluate(env):
                    broken.append(rule.text)
            except RuleError as exc:
                raise BadInput(f"{exc} (rule {rule.text!r}, in cell {where})",
                               field=f"design.rules[{i}]") from None
        if broken:
            excluded.append(Excluded(levels=levels, rule=broken[0], rules=broken))
            continue
        limit = cell_limit(fn, wl, spec.cell_provider_kind(levels), by_profile)
        if limit is not None:
            if by_deployment:  # the rule names the deployment whose limit it is
                why, rule = limit
                limit = (why, f"deployment != {dep.name!r} or {rule}")
            impossible.append((levels, limit))
            continue
        func, work = spec.validate_cell(fn, wl, where)
        if load is not None:
            spec.validate_load(load, where)
        cells.append(Cell(index=len(cells), key=cell_key(levels), levels=levels, function=func,
                          workload=work, payload=spec.payload(work), load=load,
                          deployment=dep.name if dep else None))
    if impossible:
        raise refusal(impossible)
    if not cells:
        raise BadInput("every cell is excluded by the rules; nothing to run", field="design.rules")

    total = len(cells) * (reps + d.warmup * blocks)
    if total > MAX_INVOCATIONS:
        raise BadInput(f"{len(cells):,} cells × ({reps} replications + {d.warmup * blocks} "
                       f"warm-ups) = {total:,} invocations, more than the {MAX_INVOCATIONS:,} a "
                       "campaign may plan", field="design.replications")

    # order
    rng = random.Random(seed)
    runs: list[PlannedRun] = []
    w = d.warmup
    cold = d.cold_mode
    if cold == "every" and w:
        notes.append("cold: every forces a cold start before each measured invocation, so the "
                     "warm-ups do not warm what is measured")
    for b in range(blocks):
        block_reps = [r for r in range(reps) if r % blocks == b]
        if d.randomize:
            pairs = [(c, r) for c in cells for r in block_reps]
            rng.shuffle(pairs)
        else:
            pairs = [(c, r) for r in block_reps for c in cells]
        started: set[str] = set()
        for c, r in pairs:
            first = c.key not in started
            if first:
                started.add(c.key)
                for i in range(w):
                    runs.append(PlannedRun(len(runs), c.key, b * w + i, "warmup", b,
                                           force_cold=(cold == "cell" and i == 0)))
            fc = cold == "every" or (cold == "cell" and first and w == 0)
            runs.append(PlannedRun(len(runs), c.key, r, "measure", b, force_cold=fc))
    return Plan(spec=spec, design_type=d.type, cells=cells, excluded=excluded, runs=runs, seed=seed,
                replications=reps, warmup=w, cold_mode=cold, blocks=blocks,
                block_interval_s=d.blocking.interval if d.blocking else None, notes=notes,
                schedule=slots, design_replications=design_reps)
