"""When each member of a burst is sent: offsets in seconds from the burst's start.

- ``burst``: every member at 0 (as close together as the client allows);
- ``stagger {batch_size b, delay d}``: member i at floor(i / b) * d, so the last batch starts at
  (ceil(N / b) - 1) * d (the mitigation of Roy et al.'s study of
  I/O scalability on Lambda, IISWC 2021);
- ``fixed {interval}``: member i at i * interval;
- ``exponential {interval, shift, seed}``: gaps shift + Exp(mean = interval) (STeLLAR's shifted
  exponential), the first member at 0; burst k of a cell draws with ``seed + k``, so every burst is
  reproducible from the recorded seed;
- ``trace``: offsets (or gaps) read from a file, one number of seconds a line; a trace shorter
  than the burst is an error, a longer one is cut.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from faascope.errors import BadInput


@dataclass(frozen=True)
class Slot:
    member: int      # index within the burst (0 … N-1)
    batch: int       # stagger batch (0 when not staggered)
    offset_s: float  # planned send time after the burst's start


def read_trace(path: str | Path, fmt: str = "offsets", base: Optional[Path] = None) -> list[float]:
    p = Path(path)
    if not p.is_absolute() and base is not None:
        p = base / p
    try:
        lines = p.read_text().splitlines()
    except OSError as exc:
        raise BadInput(f"cannot read the trace {p}: {exc}", field="load.arrival.trace") from None
    vals: list[float] = []
    for i, line in enumerate(lines, 1):
        s = line.split("#", 1)[0].strip().split(",")[0].strip()
        if not s:
            continue
        try:
            v = float(s)
        except ValueError:
            raise BadInput(f"{p} line {i}: {s!r} is not a number of seconds",
                           field="load.arrival.trace") from None
        if not math.isfinite(v) or v < 0:
            raise BadInput(f"{p} line {i}: {v} must be a non-negative number of seconds",
                           field="load.arrival.trace")
        vals.append(v)
    if fmt == "gaps":
        out, t = [], 0.0
        for i, g in enumerate(vals):
            t = 0.0 if i == 0 else t + g
            out.append(t)
        return out
    if any(b < a for a, b in zip(vals, vals[1:])):
        raise BadInput(f"{p}: offsets must not decrease (use trace_format: gaps for gaps)",
                       field="load.arrival.trace")
    first = vals[0] if vals else 0.0
    return [v - first for v in vals]


def burst_schedule(load: dict, n: Optional[int] = None, burst_index: int = 0,
                   base: Optional[Path] = None) -> list[Slot]:
    """The N slots of one burst of a cell's ``load`` (a dict as in the plan)."""
    n = int(load.get("burst_size", 1)) if n is None else n
    arrival = load.get("arrival") or {}
    process = arrival.get("process", "burst")
    stagger = load.get("stagger")
    if stagger:
        b, d = int(stagger["batch_size"]), float(stagger["delay"])
        return [Slot(i, i // b, (i // b) * d) for i in range(n)]
    if process == "burst":
        return [Slot(i, 0, 0.0) for i in range(n)]
    if process == "fixed":
        iv = float(arrival["interval"])
        return [Slot(i, 0, i * iv) for i in range(n)]
    if process == "exponential":
        seed = arrival.get("seed")
        if seed is None:
            raise BadInput("an exponential arrival process needs a seed (the runner records one)",
                           field="load.arrival.seed")
        rng = np.random.default_rng(int(seed) + burst_index)
        gaps = float(arrival.get("shift", 0.0)) + rng.exponential(float(arrival["interval"]), n - 1)
        offs = np.concatenate([[0.0], np.cumsum(gaps)])
        return [Slot(i, 0, float(offs[i])) for i in range(n)]
    if process == "trace":
        offs = read_trace(arrival["trace"], arrival.get("trace_format", "offsets"), base)
        if len(offs) < n:
            raise BadInput(f"the trace has {len(offs)} arrivals, fewer than burst_size {n}",
                           field="load.arrival.trace")
        return [Slot(i, 0, offs[i]) for i in range(n)]
    raise BadInput(f"unknown arrival process {process!r}", field="load.arrival.process")


def stagger_span(n: int, batch_size: int, delay: float) -> float:
    """When the last batch starts: (ceil(N / b) - 1) * d."""
    return (math.ceil(n / batch_size) - 1) * delay


def describe(load: dict) -> dict[str, Any]:
    """What to record about a cell's schedule."""
    out: dict[str, Any] = {"burst_size": int(load.get("burst_size", 1))}
    if load.get("stagger"):
        s = load["stagger"]
        out.update(stagger={"batch_size": s["batch_size"], "delay": s["delay"]},
                   planned_span_s=stagger_span(out["burst_size"], int(s["batch_size"]),
                                               float(s["delay"])))
    else:
        out["arrival"] = load.get("arrival") or {"process": "burst"}
    return out
