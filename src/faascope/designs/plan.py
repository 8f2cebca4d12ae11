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

Warm-ups (``warmup: w``) are w invocations of a cell, flagged as warm-ups, just before the cell's
first measured invocation in each block. Forced cold starts: ``cold: true`` marks the first
invocation of each cell in each block, ``cold: every`` every measured invocation.
"""
from __future__ import annotations

import itertools
import json
import random
import secrets
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from faascope.specs.rules import RuleError
from faascope.errors import BadInput
from faascope.specs.loader import LoadedSpec
from faascope.specs.model import FunctionSpec
from faascope.units import format_size

CONFIG_FIELDS = ("memory_mb", "ephemeral_mb", "timeout_s", "arch", "profile", "image_size")


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

    @property
    def burst_invocations(self) -> int:
        """Invocations one planned run of this cell makes: its burst (and warm pool), else 1."""
        if self.load is None:
            return 1
        n = int(self.load.get("burst_size", 1))
        pool = self.load.get("warm_pool", 0) if self.load.get("start", "warm") == "warm" else 0
        return n + (n if pool == "burst" else int(pool or 0))

    @property
    def config(self) -> dict[str, Any]:
        return {k: getattr(self.function, k) for k in CONFIG_FIELDS}


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
                 "function": c.function.model_dump(mode="json"), "workload": c.payload["workload"],
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


def build_plan(spec: LoadedSpec, replications: int | None = None, seed: int | None = None) -> Plan:
    d = spec.spec.design
    reps = replications if replications is not None else d.replications
    if reps < 1:
        raise BadInput("must be at least 1", field="--replications")
    if seed is None:
        seed = d.seed if d.seed is not None else secrets.randbelow(2**32)
    notes: list[str] = []
    blocks = d.blocking.blocks if d.blocking else 1
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

    cells: list[Cell] = []
    excluded: list[Excluded] = []
    for combo in itertools.product(*level_lists):
        levels = dict(zip(names, combo))
        where = ", ".join(f"{k}={_show(v)}" for k, v in levels.items())
        fn, wl = spec.resolve(levels)
        load = spec.resolve_load(levels)
        env = spec.env(fn, wl, load)
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
        func, work = spec.validate_cell(fn, wl, where)
        if load is not None:
            spec.validate_load(load, where)
        cells.append(Cell(index=len(cells), key=cell_key(levels), levels=levels, function=func,
                          workload=work, payload=spec.payload(work), load=load))
    if not cells:
        raise BadInput("every cell is excluded by the rules; nothing to run", field="design.rules")

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
                block_interval_s=d.blocking.interval if d.blocking else None, notes=notes)
