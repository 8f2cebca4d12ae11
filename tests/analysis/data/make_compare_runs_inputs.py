"""Writes the inputs of `faascope compare`'s between-unit tests (run once; the outputs are
committed; deterministic, seeded). R's analysis of them is r/make_compare_runs_fixtures.R.

- compare_interleaved.csv: one interleaved campaign: ``variant`` base/new × ``op`` read/write,
  8 blocks, 3 invocations of each side and op per block; every block multiplies both sides'
  latencies by its own drift (lognormal, σ = 0.15); NEW's writes are 15 % slower. One block
  (7) lost its NEW reads (left out of the paired test for op=read).
- compare_runs/{base,new}{1,2,3,4}.csv, aa{1,2,3}.csv: separate runs (30 invocations per op),
  each run multiplied by its own drift (lognormal, σ = 0.08); NEW's writes are 25 % slower; the
  aa runs are more runs of BASE (an A/A estimate of the drift).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
MU = {"read": 0.020, "write": 0.035}


def interleaved(seed: int = 2501) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for block in range(8):
        drift = float(np.exp(rng.normal(0, 0.15)))
        for variant in ("base", "new"):
            for op in ("read", "write"):
                if block == 7 and variant == "new" and op == "read":
                    continue
                slower = 1.15 if (variant, op) == ("new", "write") else 1.0
                for y in MU[op] * slower * drift * np.exp(rng.normal(0, 0.10, 3)):
                    rows.append({"variant": variant, "block": block, "op": op,
                                 "latency_seconds": round(float(y), 8)})
    return pd.DataFrame(rows).sample(frac=1, random_state=seed).reset_index(drop=True)


def run(rng, slower: dict) -> pd.DataFrame:
    drift = float(np.exp(rng.normal(0, 0.08)))
    rows = []
    for op in ("read", "write"):
        for y in MU[op] * slower.get(op, 1.0) * drift * np.exp(rng.normal(0, 0.10, 30)):
            rows.append({"op": op, "latency_seconds": round(float(y), 8)})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    interleaved().to_csv(HERE / "compare_interleaved.csv", index=False)
    rng = np.random.default_rng(2502)
    for i in (1, 2, 3, 4):
        run(rng, {}).to_csv(HERE / "compare_runs" / f"base{i}.csv", index=False)
        run(rng, {"write": 1.25}).to_csv(HERE / "compare_runs" / f"new{i}.csv", index=False)
        if i < 4:
            run(rng, {}).to_csv(HERE / "compare_runs" / f"aa{i}.csv", index=False)
