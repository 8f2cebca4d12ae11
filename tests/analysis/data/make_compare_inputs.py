"""Writes compare_base.csv and compare_new.csv (run once; the outputs are committed): two
campaigns of the same 3 x 2 design, lognormal latencies (CV about 8 %), 30 base and 25 new
invocations per cell, and one injected change: memory=256, op=write is 20 % slower in the new
one. Deterministic (seeded). R's comparison of the two is made by r/make_compare_fixtures.R."""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
SLOWER = {(256, "write"): 1.20}


def campaign(seed: int, n: int, slower: dict) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for memory, op in itertools.product([128, 256, 512], ["read", "write"]):
        base = 0.050 * 128 / memory + (0.010 if op == "write" else 0.0)
        mu = base * slower.get((memory, op), 1.0)
        for y in mu * np.exp(rng.normal(0, 0.08, n)):
            rows.append({"memory": memory, "op": op, "latency_seconds": round(float(y), 7)})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    campaign(1801, 30, {}).to_csv(HERE / "compare_base.csv", index=False)
    campaign(1802, 25, SLOWER).to_csv(HERE / "compare_new.csv", index=False)
