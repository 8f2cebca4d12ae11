"""The sweep: rounds over the memory sizes, in a random order each round (so drift over time is
spread over the sizes, not confounded with one), each size first set (which makes its next call
cold: that one is recorded as ``cold``) then invoked warm. Replication is the two-stage procedure
of ``run --target-ci`` (:mod:`faascope.analysis.precision`) on the warm latencies: the first
round is the pilot (``first_warm`` warm invocations per size, at least
:data:`~faascope.analysis.precision.MIN_PILOT_N`); from it each size's statistic and total n
are planned once, and the next round brings every size to its n (later rounds only replace
failed invocations). Stops when every size has its planned n, or at a budget (invocations,
seconds, dollars of this sweep) or ``max_rounds``; a size short of its planned n has *not
reached* the target, and the answer says so.

Every sample is appended to a CSV file as it completes (flushed and fsynced), so a sweep killed
at any moment keeps every sample it made; `faascope analyze` and `faascope report` read it
(factors ``memory_mb``, scenario ``start``)."""
from __future__ import annotations

import csv
import datetime as dt
import math
import os
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

from faascope.cost.model import invocation_cost
from faascope.cost.pricing import Pricing
from faascope.analysis.precision import MIN_PILOT_N, CellPrecision, cell_precision
from faascope.tune.targets import Sample

COLUMNS = ["round", "memory_mb", "arch", "start", "ok", "error_type", "latency_seconds",
           "client_latency_seconds", "billed_duration_ms", "init_duration_ms",
           "max_memory_used_mb", "cost_usd", "started_at"]


@dataclass
class SweepSettings:
    memories: list[int]
    target: float = 0.10
    stat: str = "auto"
    #: the pilot: warm invocations per size in the first round
    first_warm: int = MIN_PILOT_N
    cold: bool = True
    max_rounds: int = 10
    budget_invocations: Optional[int] = None
    budget_seconds: Optional[float] = None
    budget_dollars: Optional[float] = None
    seed: int = 0


@dataclass
class SweepResult:
    samples: list[dict] = field(default_factory=list)
    precision: dict[int, CellPrecision] = field(default_factory=dict)
    rounds: int = 0
    stopped_by: str = ""
    dollars: float = 0.0

    @property
    def short(self) -> list[int]:
        """Sizes with successful warm invocations but short of their planned n."""
        return [m for m, p in self.precision.items() if not p.met and p.n]


def sample_cost(s: Sample, platform: str, pricing: Pricing) -> Optional[float]:
    """USD of one invocation with faascope's cost model: the billed duration when the platform
    reported one, else the measured duration rounded up to the billing granularity."""
    if s.billed_duration_ms is not None:
        return invocation_cost(platform, s.memory_mb, s.billed_duration_ms / 1000, arch=s.arch,
                               billed=True, pricing=pricing).total
    d = s.latency_seconds if s.latency_seconds is not None else s.client_latency_seconds
    return invocation_cost(platform, s.memory_mb, d, arch=s.arch, pricing=pricing).total


class SampleLog:
    """The CSV file, one row per sample, durable as it goes."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        new = not path.exists() or path.stat().st_size == 0
        self.f = open(path, "a", newline="", encoding="utf-8")
        self.w = csv.DictWriter(self.f, fieldnames=COLUMNS)
        if new:
            self.w.writeheader()

    def write(self, row: dict) -> None:
        self.w.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in COLUMNS})
        self.f.flush()
        os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()


def fit_invocations(want: dict[int, int], settings: SweepSettings, made: int,
                    cold_each: int) -> dict[int, int]:
    """``want`` scaled to the invocations budget left (each size's cold start included), in
    proportion, so that a budget smaller than a round still reaches every size; {} when not
    even one warm invocation per size fits."""
    b = settings.budget_invocations
    need = sum(n + cold_each for n in want.values())
    if b is None or made + need <= b:
        return want
    left = b - made - cold_each * len(want)
    scale = left / sum(want.values()) if left > 0 else 0.0
    out = {m: math.floor(n * scale) for m, n in want.items()}
    return {m: n for m, n in out.items() if n >= 1}


def sweep(target, payload: bytes, settings: SweepSettings, log: SampleLog,
          say: Callable[[str], None] = print) -> SweepResult:
    rng = random.Random(settings.seed)
    pricing = Pricing()
    out = SweepResult()
    t0 = time.monotonic()
    want = {m: settings.first_warm for m in settings.memories}

    def spent_out() -> str:
        b = settings
        if b.budget_invocations is not None and len(out.samples) >= b.budget_invocations:
            return "invocations budget spent"
        if b.budget_seconds is not None and time.monotonic() - t0 >= b.budget_seconds:
            return "time budget spent"
        if b.budget_dollars is not None and out.dollars >= b.budget_dollars:
            return "dollars budget spent"
        return ""

    cold_each = int(settings.cold and getattr(target, "cold_supported", True))

    def judge() -> dict[int, int]:
        """Each size's precision now, and what the procedure asks for next."""
        more = {}
        for m in settings.memories:
            warm = [r["latency_seconds"] for r in out.samples
                    if r["memory_mb"] == m and r["start"] == "warm" and r["ok"]]
            tried = sum(1 for r in out.samples if r["memory_mb"] == m and r["start"] == "warm")
            # the pilot is the first first_warm of them (samples are in time order)
            p = cell_precision(warm, settings.target, settings.stat, pilot_n=settings.first_warm)
            out.precision[m] = p
            if p.met or (tried and not warm):  # met, or every call fails: more won't help
                continue
            if p.more > 0:
                more[m] = p.more
        return more

    try:
        while want and not out.stopped_by:
            if out.rounds >= settings.max_rounds:
                out.stopped_by = f"{settings.max_rounds} rounds"
                break
            want = fit_invocations(want, settings, len(out.samples), cold_each)
            if not want:
                out.stopped_by = "invocations budget spent"
                break
            out.rounds += 1
            order = sorted(want)
            rng.shuffle(order)
            say(f"round {out.rounds}: " + ", ".join(f"{m} MB ×{want[m]}" for m in order))
            for m in order:
                if out.stopped_by:
                    break
                target.set_memory(m)
                kinds = (["cold"] if settings.cold and getattr(target, "cold_supported", True)
                         else []) + ["warm"] * want[m]
                for start in kinds:
                    why = spent_out()
                    if why:
                        out.stopped_by = why
                        break
                    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
                    try:
                        s = target.invoke(payload, start)
                    except KeyboardInterrupt:  # Ctrl-C/SIGTERM: keep what is measured
                        out.stopped_by = "interrupted"
                        break
                    cost = sample_cost(s, target.cost_platform, pricing)
                    out.dollars += cost or 0.0
                    row = {**asdict(s), "round": out.rounds, "ok": int(s.ok), "cost_usd": cost,
                           "started_at": stamp}
                    log.write(row)
                    out.samples.append(row)
            want = judge()
        judge()
        out.stopped_by = out.stopped_by or ("every size has its planned n" if not out.short
                                            else "every size that can has its planned n")
        return out
    finally:
        target.restore()
