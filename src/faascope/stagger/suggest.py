"""The trial-burst side of `faascope stagger suggest`: a burst campaign grown round by round.

1. A campaign with one cell, all at once (batch_size N, delay 0), runs 2 pilot bursts: the
   baseline, and the run time that scales the default delays.
2. The plan is replaced (the store's ``replace_plan``; recorded bursts stay) by the baseline plus
   the candidate cells (batch_size × delay); candidates the schedule bound rules out are
   dropped before any burst (:mod:`faascope.stagger.search`).
3. Successive halving: each round runs the survivors' next bursts (and one more baseline burst,
   against drift) in a shuffled order, scores each burst by the objective, and keeps the best
   1/eta.
4. Confirmation: fresh bursts of the best and the runner-up (MIN_BURSTS_PER_SIDE each), the
   only bursts the answer's interval and p-values use.
"""
from __future__ import annotations

import copy
import json
import math
import random
import secrets
from pathlib import Path
from typing import Any, Optional

from rich.console import Console

from faascope.analysis.concurrency import burst_stats, load_bursts
from faascope.analysis.improvement import MIN_BURSTS_PER_SIDE
from faascope.designs.plan import build_plan
from faascope.driver.burst_plan import expand_runs, group_pending
from faascope.driver.bursts import BurstExecutor
from faascope.driver.campaign import Campaign
from faascope.errors import BadInput, Failure
from faascope.specs.loader import load_spec, parse_spec
from faascope.stagger.search import (
    Candidate,
    default_batch_sizes,
    default_delays,
    schedule_bound,
    successive_halving,
)

MAX_BURSTS_PER_CELL = 64
BOUNDED_METRICS = ("start_s", "completion_s", "delay_s")
QUANTILE = {"p50": 0.5, "p95": 0.95, "p99": 0.99, "max": 1.0}


def _spec_dict(loaded, n: int, batch_sizes: list[int], delays: list[float], reps: int,
               seed: int) -> dict:
    d = copy.deepcopy(loaded.raw)
    load = dict(d.get("load") or {})
    load.pop("stagger", None)
    load["burst_size"] = n
    d["load"] = load
    d["factors"] = {"batch_size": sorted(set(batch_sizes) | {n}),
                    "delay": sorted(set(delays) | {0.0})}
    design = dict(d.get("design") or {})
    design.update(replications=reps, seed=seed, randomize=False,
                  rules=[f"delay > 0 or batch_size == {n}", f"delay == 0 or batch_size < {n}"])
    design.pop("blocking", None)
    d["design"] = design
    d["name"] = (str(d.get("name", "stagger"))[:31] + "-suggest")[:40]
    return d


def suggest(spec_path: str | Path, n: int, *, objective: tuple[str, str] = ("service_s", "p50"),
            batch_sizes: Optional[list[int]] = None, delays: Optional[list[float]] = None,
            eta: int = 3, budget: Optional[int] = None, results: str | Path | None = None,
            seed: Optional[int] = None, progress: bool = True, provider_factory=None,
            console: Any = None) -> dict:
    con = console or Console(stderr=True)
    spec_path = Path(spec_path)
    loaded0 = load_spec(spec_path)
    other = [f.name for f in loaded0.factors if f.name not in ("batch_size", "delay")]
    if other:
        raise BadInput(f"suggest searches one configuration; fix the factor(s) {', '.join(other)} "
                       "at one level (or run a grid with faascope run)", field="factors")
    grid = {f.name: f.levels for f in loaded0.factors}
    batch_sizes = batch_sizes or [int(b) for b in grid.get("batch_size", [])] or default_batch_sizes(n)
    batch_sizes = sorted({b for b in batch_sizes if b < n}) or [max(1, n // 2)]
    delays = delays or [float(x) for x in grid.get("delay", []) if float(x) > 0] or None
    seed = seed if seed is not None else secrets.randbelow(2**31)
    met, st = objective
    col = f"{met}_{st}"
    results = Path(results) if results else Path("results") / f"{loaded0.spec.name}-suggest.db"
    if results.exists():
        raise BadInput(f"{results} exists; give a new --results file", field="--results")
    results.parent.mkdir(parents=True, exist_ok=True)

    # 1. the pilot: all at once only
    loaded = parse_spec(_spec_dict(loaded0, n, [n], [0.0], MAX_BURSTS_PER_CELL, seed),
                        source=str(spec_path))
    campaign = Campaign.create(loaded, build_plan(loaded), results, spec_path, expand_runs,
                               provider_factory=provider_factory, progress=progress, console=con)
    executor = BurstExecutor(campaign)
    campaign.open_provider()
    base_key = f"batch_size={n}|delay=0.0"
    rng = random.Random(seed)

    def next_bursts(cell_key: str, k: int) -> list[int]:
        done = campaign.store.bursts_of_cell(campaign.id, cell_key)
        free = [b for b in range(MAX_BURSTS_PER_CELL) if b not in done]
        if len(free) < k:
            raise Failure(f"more than {MAX_BURSTS_PER_CELL} bursts of one cell; lower --budget")
        return free[:k]

    def run_bursts(pairs: list[tuple[str, int]]) -> dict[tuple[str, int], float]:
        rng.shuffle(pairs)
        want = set(pairs)
        groups = [g for g in group_pending(campaign.pending(), campaign.plan.cells_by_key)
                  if (g.cell_key, g.burst) in want]
        order = {p: i for i, p in enumerate(pairs)}
        groups.sort(key=lambda g: order[(g.cell_key, g.burst)])
        summary = campaign.summary
        summary.planned = summary.ran_now + sum(len(g.measure) + len(g.warmup) for g in groups)
        executor.deploy_for(groups)
        if executor.run_groups(groups):
            raise Failure("interrupted")
        stats = burst_stats(load_bursts(results), [met], include_split=True)
        out = {}
        for _, r in stats.iterrows():
            if (r["cell_key"], r["burst"]) in want:
                v = r.get(col)
                out[(r["cell_key"], int(r["burst"]))] = float(v) if v is not None and v == v else math.inf
        return out

    try:
        with campaign.stop:
            # 2. pilot bursts
            pilot = run_bursts([(base_key, b) for b in next_bursts(base_key, 2)])
            base_scores = list(pilot.values())
            run_med = burst_stats(load_bursts(results), ["run_s"])["run_s_p50"].median()
            if delays is None:
                delays = default_delays(float(run_med) if run_med == run_med else 0.01)
            # 3. the full plan: baseline + candidates
            loaded = parse_spec(_spec_dict(loaded0, n, batch_sizes, delays, MAX_BURSTS_PER_CELL, seed),
                                source=str(spec_path))
            campaign.replace_plan(loaded, build_plan(loaded), expand_runs, with_estimate=False,
                                  reason="stagger suggest: candidates added")
            cands = [Candidate(b, d) for b in batch_sizes for d in delays]
            bmean = sum(base_scores) / len(base_scores) if base_scores else math.inf
            if met in BOUNDED_METRICS:
                q = QUANTILE[st]
                for c in cands:
                    bound = schedule_bound(n, c.batch_size, c.delay, q)
                    if bound >= bmean:
                        c.pruned = (f"its schedule alone delays the {st} member by {bound:g} s ≥ "
                                    f"the all-at-once {st} {met} ({bmean:.3g} s)")
            key_of = {c.key: f"batch_size={c.batch_size}|delay={json.dumps(float(c.delay))}"
                      for c in cands}

            def baseline(k: int) -> list[float]:
                return list(run_bursts([(base_key, b) for b in next_bursts(base_key, k)]).values())

            def evaluate(cs: list[Candidate], k: int) -> None:
                pairs = [(key_of[c.key], b) for c in cs for b in next_bursts(key_of[c.key], k)]
                got = run_bursts(pairs)
                for c in cs:
                    for (ck, b), v in sorted(got.items()):
                        if ck == key_of[c.key]:
                            c.scores.append(v)

            res = successive_halving(cands, evaluate, baseline, eta=eta, budget=budget, seed=seed,
                                     initial_baseline=base_scores)
    finally:
        try:
            executor.close()
        finally:
            if not getattr(campaign.settings, "keep_functions", False):
                campaign.teardown()
            campaign.close_provider()
    out = _result_dict(res, n, objective, results, campaign.store.count(campaign.id), cands)
    campaign.store.set_status(campaign.id, "suggest")
    campaign.event("stagger_suggest", out)
    campaign.close()
    return out


def _span(n: int, b: int, d: float) -> float:
    return (math.ceil(n / b) - 1) * d


def _result_dict(res, n: int, objective, results: Path, invocations: int, cands) -> dict:
    def cdict(c):
        if c is None:
            return None
        if c.pruned:
            outcome = f"pruned: {c.pruned}"
        elif c is res.best:
            outcome = "best"
        elif c.eliminated_in:
            outcome = f"dropped after round {c.eliminated_in}"
        elif c.scores:
            outcome = "survived"
        else:
            outcome = "not run (budget)"
        return {"batch_size": c.batch_size, "delay": c.delay, "span_s": _span(n, c.batch_size, c.delay),
                "bursts": len(c.scores), "mean": None if not c.scores else float(sum(c.scores) / len(c.scores)),
                "scores": c.scores, "outcome": outcome}

    base = res.baseline
    return {
        "concurrency": n, "objective": list(objective), "results": str(results),
        "method": "successive halving over batch size × delay (bursts as the resource); the best "
                  "and the runner-up confirmed on fresh bursts; Fieller's interval and Welch's "
                  "one-sided p-values over those bursts",
        "best": cdict(res.best), "runner_up": cdict(res.runner_up),
        # improvement_ci[0] null with too_few null: unbounded below (the all-at-once bursts were
        # too noisy to bound a slow-down)
        "improvement_pct": res.improvement_pct,
        "improvement_ci": [v if v is None or math.isfinite(v) else None for v in res.ci],
        "too_few": res.too_few, "min_bursts_per_side": MIN_BURSTS_PER_SIDE,
        "confirm_bursts": res.confirm_bursts,
        "p_value_vs_all_at_once": res.p_value_vs_all_at_once,
        "p_value_vs_runner_up": res.p_value_vs_runner_up,
        "baseline_bursts": len(base), "baseline_mean": (sum(base) / len(base)) if base else None,
        "baseline_scores": base, "rounds": res.rounds, "trial_bursts": res.bursts,
        "trial_invocations": invocations,
        "candidates": [cdict(c) for c in sorted(cands, key=lambda c: (c.batch_size, c.delay))],
        "notes": res.notes,
    }
