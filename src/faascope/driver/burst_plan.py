"""How a burst campaign's plan becomes invocation slots, and which slots form one burst.

The plan is the ordinary design plan (cells x replications, randomised, blocked), expanded so that
every invocation has its own slot in ``planned_runs``: burst k of a cell with N members owns the
measured replications k*N … k*N+N-1 and, with a warm pool of W, the warm-up replications
k*W … k*W+W-1. The store's UNIQUE(cell, replication, kind) then makes resuming exact: a killed
campaign resumes with the missing slots only.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from faascope.errors import BadInput


def cell_burst_shape(cell) -> tuple[int, int]:
    """(burst size N, warm pool W) of a plan cell."""
    ld = cell.load or {}
    n = int(ld.get("burst_size", 1))
    pool = ld.get("warm_pool", 0)
    if ld.get("start", "warm") != "warm":
        return n, 0  # a warm pool only precedes warm bursts
    return n, (n if pool == "burst" else int(pool or 0))


def expand_runs(plan) -> list[dict]:
    """The invocation-level ``planned_runs`` rows of a burst plan (see the module doc)."""
    cells = plan.cells_by_key
    rows: list[dict] = []
    for r in plan.runs:
        if r.kind != "measure":  # design.warmup is refused for burst specs (load.warm_pool)
            continue
        n, w = cell_burst_shape(cells[r.cell_key])
        k = r.replication
        for j in range(w):
            rows.append(dict(order=len(rows), cell_key=r.cell_key, replication=k * w + j,
                             kind="warmup", block=r.block, force_cold=False))
        for i in range(n):
            rows.append(dict(order=len(rows), cell_key=r.cell_key, replication=k * n + i,
                             kind="measure", block=r.block, force_cold=r.force_cold))
    return rows


def check_burst_spec(loaded) -> None:
    """Design settings that a burst spec expresses in ``load`` instead (exit 2 before anything)."""
    d = loaded.spec.design
    if d.warmup:
        raise BadInput("with a load section, warm up with load.warm_pool (a warm pool sent "
                       "together before each burst), not design.warmup", field="design.warmup")
    if d.cold_mode != "none":
        raise BadInput("with a load section, choose cold or warm bursts with load.start (cold, "
                       "fresh, expire or warm), not design.cold", field="design.cold")


def is_burst_spec(loaded) -> bool:
    return loaded.spec.load is not None or any(f.section == "load" for f in loaded.factors)


@dataclass
class BurstGroup:
    cell_key: str
    burst: int
    block: int
    first_order: int
    warmup: list[dict] = field(default_factory=list)
    measure: list[dict] = field(default_factory=list)


def group_pending(pending: list[dict], cells: dict) -> list[BurstGroup]:
    groups: dict[tuple[str, int], BurstGroup] = {}
    for row in pending:
        n, w = cell_burst_shape(cells[row["cell_key"]])
        size = n if row["kind"] == "measure" else w
        k = row["replication"] // max(size, 1)
        g = groups.get((row["cell_key"], k))
        if g is None:
            g = groups[(row["cell_key"], k)] = BurstGroup(row["cell_key"], k, row["block"],
                                                          row["order_index"])
        (g.measure if row["kind"] == "measure" else g.warmup).append(row)
        g.first_order = min(g.first_order, row["order_index"])
    return sorted(groups.values(), key=lambda g: g.first_order)


def derived_name(base: str, suffix: str) -> str:
    """``base + suffix`` within Lambda's 64 characters (shortened with a hash when needed)."""
    if len(base) + len(suffix) <= 64:
        return base + suffix
    h = hashlib.sha1(base.encode()).hexdigest()[:8]
    return base[:64 - len(suffix) - 9] + "-" + h + suffix
