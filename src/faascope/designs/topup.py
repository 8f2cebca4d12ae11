"""Replications appended to a recorded campaign: a *round* (``run --add-replications``,
``--replications`` above the recorded count, ``--target-ci``).

A round keeps the design's order semantics (:mod:`faascope.designs.plan`) among its own runs:

- each cell's new replications are numbered after its highest recorded one;
- replication r belongs to block r mod B (time blocking), and within each block the round's
  (cell, replication) pairs are a random permutation drawn from ``random.Random("<seed>/round
  <k>")`` (``randomize: false``: replication-major), so a round is reproducible from the
  recorded seed and its number;
- every cell's first new run in a block is preceded by the design's warm-ups (the functions may
  have been deleted and redeployed since), and ``cold: cell`` forces that first run cold, as a
  block of the original plan does;
- the round's runs come after every earlier run (order indices continue).

Earlier runs are never reordered or renumbered; the round is appended in one transaction with
an event that records its number, seed string and what it added, so a kill at any moment leaves
either the whole round or none of it.
"""
from __future__ import annotations

import random
from typing import Iterable

from faascope.designs.plan import Plan


def round_seed(seed: int, round_no: int) -> str:
    return f"{seed}/round {round_no}"


def round_runs(plan: Plan, existing: Iterable[dict], additions: dict[str, int],
               round_no: int) -> list[dict]:
    """The planned_runs rows (``order, cell_key, replication, kind, block, force_cold``) of a round
    that adds ``additions[cell_key]`` measured replications to each cell, after ``existing``
    (the campaign's planned_runs rows)."""
    existing = list(existing)
    next_order = max((r["order_index"] for r in existing), default=-1) + 1
    next_rep: dict[str, int] = {}
    next_warm: dict[str, int] = {}
    for r in existing:
        book = next_rep if r["kind"] == "measure" else next_warm
        book[r["cell_key"]] = max(book.get(r["cell_key"], 0), r["replication"] + 1)
    keys = [c.key for c in plan.cells if additions.get(c.key, 0) > 0]
    blocks = max(1, plan.blocks)
    rng = random.Random(round_seed(plan.seed, round_no))
    w, cold = plan.warmup, plan.cold_mode
    runs: list[dict] = []
    for b in range(blocks):
        per_cell = {k: [r for r in range(next_rep.get(k, 0), next_rep.get(k, 0) + additions[k])
                        if r % blocks == b] for k in keys}
        if plan.spec.spec.design.randomize:
            pairs = [(k, r) for k in keys for r in per_cell[k]]
            rng.shuffle(pairs)
        else:
            depth = max((len(v) for v in per_cell.values()), default=0)
            pairs = [(k, per_cell[k][i]) for i in range(depth) for k in keys
                     if i < len(per_cell[k])]
        started: set[str] = set()
        for k, r in pairs:
            first = k not in started
            if first:
                started.add(k)
                for i in range(w):
                    rep = next_warm.get(k, 0)
                    next_warm[k] = rep + 1
                    runs.append(dict(order=next_order + len(runs), cell_key=k, replication=rep,
                                     kind="warmup", block=b,
                                     force_cold=(cold == "cell" and i == 0)))
            fc = cold == "every" or (cold == "cell" and first and w == 0)
            runs.append(dict(order=next_order + len(runs), cell_key=k, replication=r,
                             kind="measure", block=b, force_cold=fc))
    return runs
