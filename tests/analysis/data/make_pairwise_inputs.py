"""Writes the inputs of the decision table's tests that do not assume equal variances (issue #25,
items 2 and 3): Games-Howell among groups and estimated marginal means over unequal cells.
Run once; the outputs are committed. Deterministic (seeded). R's answers for these inputs are
made by r/make_pairwise_fixtures.R.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def groups() -> pd.DataFrame:
    """Four independent groups, unequal n (6 to 40) and SDs 40x apart; d is 0.2 above a."""
    rng = np.random.default_rng(251)
    spec = {"a": (6, 10.0, 0.1), "b": (25, 10.5, 4.0), "c": (12, 14.0, 2.0), "d": (40, 10.2, 0.5)}
    rows = [{"y": round(float(v), 6), "g": g} for g, (n, mu, sd) in spec.items() for v in rng.normal(mu, sd, n)]
    return pd.DataFrame(rows)


#: A x B cells: (rows, mean, SD). The SDs span 100x and the cells with few rows are the noisy ones.
EMM_CELLS = {("a1", "b1"): (7, 3.0, 5.0), ("a2", "b1"): (119, 2.0, 0.1), ("a3", "b1"): (115, 2.1, 0.2),
             ("a1", "b2"): (63, 1.0, 1.0), ("a2", "b2"): (20, 4.0, 3.0), ("a3", "b2"): (9, 1.5, 0.05)}


def emm_unequal() -> pd.DataFrame:
    rng = np.random.default_rng(252)
    rows = []
    for (a, b), (n, mu, sd) in EMM_CELLS.items():
        rows += [{"y": round(float(v), 6), "A": a, "B": b} for v in rng.normal(mu, sd, n)]
    return pd.DataFrame(rows)


def emm_additive_empty() -> pd.DataFrame:
    """emm_unequal without the a3:b2 cell, for the additive model's EMMs (which predict it)."""
    d = emm_unequal()
    return d[~((d["A"] == "a3") & (d["B"] == "b2"))].reset_index(drop=True)


#: the issue's shape: after `run --target-ci` the cells had 7 / 119 / 115 / 63 rows; the 4 KiB
#: level's raw mean over its rows (2.9 ms) is its big cell's, its EMM (2.1 ms) weighs both cells
#: equally, and the two means order the sizes differently. Seconds; (rows, mean, SD).
ISSUE_CELLS = {("4096", "p1"): (7, 0.0012, 0.0001), ("4096", "p2"): (119, 0.00302, 0.0003),
               ("65536", "p1"): (115, 0.0020, 0.0002), ("65536", "p2"): (63, 0.0029, 0.0003)}


def emm_issue() -> pd.DataFrame:
    rng = np.random.default_rng(253)
    rows = []
    for (size, plat), (n, mu, sd) in ISSUE_CELLS.items():
        rows += [{"latency_seconds": round(float(v), 9), "io_size": size, "platform": plat}
                 for v in rng.normal(mu, sd, n)]
    return pd.DataFrame(rows)


def main() -> None:
    groups().to_csv(HERE / "pairwise_groups.csv", index=False)
    emm_unequal().to_csv(HERE / "emm_unequal.csv", index=False)
    emm_additive_empty().to_csv(HERE / "emm_additive_empty.csv", index=False)
    emm_issue().to_csv(HERE / "emm_issue.csv", index=False)


if __name__ == "__main__":
    main()
