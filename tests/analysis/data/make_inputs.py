"""Writes the input data sets of tests/analysis/data/ (run once; the outputs are committed).

Deterministic (seeded). R's outputs for these inputs are made by r/make_fixtures.R.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def four_factor() -> pd.DataFrame:
    """A(2) x B(3) x C(2) x D(2), unbalanced (2 to 5 rows per cell), with real effects."""
    rng = np.random.default_rng(19)
    rows = []
    for a, b, c, d in itertools.product(["a1", "a2"], ["b1", "b2", "b3"], ["lo", "hi"], ["d1", "d2"]):
        n = int(rng.integers(2, 6))
        mu = 10 + (a == "a2") * 1.5 + {"b1": 0, "b2": 0.8, "b3": 2.0}[b] + (c == "hi") * 1.0 \
            + (d == "d2") * 0.5 + (b == "b3") * (c == "hi") * 1.5 + (a == "a2") * (d == "d2") * 1.0
        for y in mu + rng.normal(0, 1.0, n):
            rows.append({"y": round(float(y), 3), "A": a, "B": b, "C": c, "D": d})
    return pd.DataFrame(rows)


def constant() -> pd.DataFrame:
    """24 identical responses (0.1 is not a binary fraction), 2 x 3 x 4 rows."""
    return pd.DataFrame([{"y": "0.1", "A": a, "B": b}
                         for a, b in itertools.product(["a1", "a2"], ["b1", "b2", "b3"]) for _ in range(4)])


def all_zero_cell() -> pd.DataFrame:
    """One cell whose responses are all 0; the others vary."""
    rng = np.random.default_rng(7)
    rows = []
    for a, b in itertools.product(["a1", "a2"], ["b1", "b2", "b3"]):
        for _ in range(4):
            y = 0.0 if (a, b) == ("a1", "b1") else round(float(rng.uniform(1, 3)), 3)
            rows.append({"y": y, "A": a, "B": b})
    return pd.DataFrame(rows)


def all_zero() -> pd.DataFrame:
    """Every response 0."""
    return pd.DataFrame([{"y": 0, "A": a, "B": b}
                         for a, b in itertools.product(["a1", "a2"], ["b1", "b2", "b3"]) for _ in range(3)])


def perfect_fit() -> pd.DataFrame:
    """Every cell constant, the cell means differ: residual SS 0."""
    vals = {("a1", "b1"): 0.1, ("a1", "b2"): 0.2, ("a1", "b3"): 0.3,
            ("a2", "b1"): 0.7, ("a2", "b2"): 0.4, ("a2", "b3"): 0.3}
    return pd.DataFrame([{"y": v, "A": a, "B": b} for (a, b), v in vals.items() for _ in range(3)])


def offset() -> pd.DataFrame:
    """Nanosecond-timestamp-like responses: 1.7e15 + small integers, A(2) x B(3) x C(2),
    unbalanced. Integers below 2^53, so the CSV text is exact in double precision."""
    rng = np.random.default_rng(1015)
    rows = []
    for a, b, c in itertools.product(["a1", "a2"], ["b1", "b2", "b3"], ["c1", "c2"]):
        n = int(rng.integers(2, 6))
        mu = (a == "a2") * 2 + {"b1": 0, "b2": 1, "b3": 3}[b] + (c == "c2") * 1
        for e in rng.integers(-5, 6, n):
            rows.append({"t_ns": str(1_700_000_000_000_000 + int(mu) + int(e)), "A": a, "B": b, "C": c})
    return pd.DataFrame(rows)


def filters() -> pd.DataFrame:
    """A results-like table: file_size_bytes blank on half the rows (an operation without a file),
    timestamps through two days, a latency and a platform."""
    rng = np.random.default_rng(5)
    rows = []
    start = pd.Timestamp("2024-05-04T18:00:00Z")
    for i in range(96):
        ts = start + pd.Timedelta(minutes=30 * i)
        size = "" if i % 2 else str([1000, 4096, 5000, 10000, 65536][i % 5])
        platform = ["p1", "p2", "p3"][i % 3]
        lat = round(0.05 + 0.01 * (platform == "p2") + float(rng.exponential(0.01)), 5)
        rows.append({"occurred_at": ts.strftime("%Y-%m-%dT%H:%M:%SZ"), "file_size_bytes": size,
                     "platform": platform, "latency_seconds": lat})
    return pd.DataFrame(rows)


def additive_n1() -> pd.DataFrame:
    """One row per cell, 3 x 4 (an additive model has 6 residual degrees of freedom)."""
    rng = np.random.default_rng(11)
    return pd.DataFrame([{"y": round(10 + i + 0.5 * j + float(rng.normal(0, 0.3)), 3), "A": f"a{i}", "B": f"b{j}"}
                         for i in range(1, 4) for j in range(1, 5)])


def additive_empty() -> pd.DataFrame:
    """3 x 4 with 3 empty cells (connected, so the additive model is estimable), 1-3 rows per cell."""
    rng = np.random.default_rng(12)
    empty = {("a1", "b4"), ("a2", "b1"), ("a3", "b2")}
    rows = []
    for i in range(1, 4):
        for j in range(1, 5):
            if (f"a{i}", f"b{j}") in empty:
                continue
            for _ in range(int(rng.integers(1, 4))):
                rows.append({"y": round(10 + i + 0.5 * j + float(rng.normal(0, 0.3)), 3), "A": f"a{i}", "B": f"b{j}"})
    return pd.DataFrame(rows)


def two_per_cell() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    return pd.DataFrame([{"y": round(float(rng.normal(5 + i, 1)), 3), "A": f"a{i}", "B": f"b{j}"}
                         for i in range(1, 3) for j in range(1, 4) for _ in range(2)])


def main() -> None:
    four_factor().to_csv(HERE / "four_factor.csv", index=False)
    constant().to_csv(HERE / "constant.csv", index=False)
    all_zero_cell().to_csv(HERE / "all_zero_cell.csv", index=False)
    all_zero().to_csv(HERE / "all_zero.csv", index=False)
    perfect_fit().to_csv(HERE / "perfect_fit.csv", index=False)
    offset().to_csv(HERE / "offset.csv", index=False)
    filters().to_csv(HERE / "filters.csv", index=False)
    additive_n1().to_csv(HERE / "additive_n1.csv", index=False)
    additive_empty().to_csv(HERE / "additive_empty.csv", index=False)
    two_per_cell().to_csv(HERE / "two_per_cell.csv", index=False)
    # the four-factor data as a European spreadsheet writes it: ';' between fields, ',' decimals
    four_factor().to_csv(HERE / "four_factor_semicolon.csv", index=False, sep=";", decimal=",")


if __name__ == "__main__":
    main()
