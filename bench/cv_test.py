"""Simulated false-call rates and power of the CV test behind the predictability decisions: the
tables in docs/analysis.md ("Predictability") and the evidence for faascope.analysis.cv_test.MIN_N.

    PYTHONPATH=src python3 bench/cv_test.py [--quick] [--reps R]

Nulls, power cases and the tests compared: faascope.analysis.cv_test_simulation. Rates at
nominal 5 % with B = 199 re-allocations; the Monte-Carlo standard error of a rate near 0.05 is
√(0.05·0.95/R). A full run (R = 4000) takes a few minutes on two cores; --quick uses R = 500.
"""
from __future__ import annotations

import argparse

from faascope.analysis import cv_test as ct
from faascope.analysis import cv_test_simulation as cs
from faascope.analysis.interval_coverage import FAMILIES

#: (n1, n2) of the null grid: equal n, and unequal n both ways
SIZES = [(10, 10), (30, 30), (90, 90), (150, 150), (10, 30), (30, 10), (30, 150), (150, 30), (90, 300), (300, 90)]
CROSS_SIZES = [(10, 10), (30, 30), (50, 50), (90, 90), (150, 150), (300, 300), (90, 300), (300, 90)]
TESTS = ["cv", "cv unstudentized", "levene", "fligner"]
POWER_N = [10, 30, 90, 150]


def table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(out + ["| " + " | ".join(r) + " |" for r in rows])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=4000)
    a = ap.parse_args()
    reps = 500 if a.quick else a.reps
    se = cs.Rate("", "", 0, 0, reps, 0).mc_se
    print(f"R = {reps} replicates a cell of the tables (MC standard error at 5 %: {se:.4f}); the second cell "
          f"3× the first (equal CV); B = 199 re-allocations.\n")

    print("**False calls, same shape (equal CV), the CV test** (minimum n "
          f"{ct.MIN_N}: rows below it are what the test would do there)\n")
    rows = []
    for n1, n2 in SIZES:
        rows.append([f"{n1} / {n2}"] + [f"{cs.same_family_rate(f, n1, n2, reps, seed=1000 * i + n1 + 7 * n2).rate:.3f}"
                                         for i, f in enumerate(FAMILIES)])
    print(table(["n (first / second)"] + [FAMILIES[f].label for f in FAMILIES], rows) + "\n")

    print("**False calls, equal CV and different shapes, every test compared**\n")
    rows = []
    for case in cs.CROSS:
        for n1, n2 in CROSS_SIZES:
            rates = [cs.cross_rate(case, n1, n2, reps if t.startswith("cv") else reps // 4, seed=n1 + 7 * n2,
                                   test=t).rate for t in TESTS]
            rows.append([case, f"{n1} / {n2}"] + [f"{r:.3f}" for r in rates])
    print(table(["equal-CV pair", "n"] + TESTS, rows) + "\n")

    print("**False calls, same shape, the tests not chosen** (levene = Brown-Forsythe on log values)\n")
    rows = []
    for f in FAMILIES:
        for n1, n2 in [(10, 10), (30, 150), (150, 30)]:
            rows.append([FAMILIES[f].label, f"{n1} / {n2}"] +
                        [f"{cs.same_family_rate(f, n1, n2, reps // 4, seed=5 + n1 + 7 * n2, test=t).rate:.3f}"
                         for t in TESTS[1:]])
    print(table(["family", "n"] + TESTS[1:], rows) + "\n")

    print(f"**Two strata (the 'all' row), same shape in both levels**: "
          + "; ".join(f"n = {n}: {cs.strata_rate(n, reps // 4, seed=n).rate:.3f}" for n in (ct.MIN_N, 150)) + "\n")

    print("**Power: the lower CV called more predictable** (p ≤ 0.05 and ΔCV ≥ 10 pp, the right way)\n")
    rows = [[case] + [f"{cs.power(case, n, n, reps // 2, seed=n).rate:.3f}" for n in POWER_N] for case in cs.POWER]
    print(table(["case"] + [f"n = {n}" for n in POWER_N], rows))


if __name__ == "__main__":
    main()
