"""Simulated coverage of faascope's confidence intervals at nominal 95 %: the table in
docs/analysis.md ("Which intervals are printed") and the minimum n each method needs, to compare
with faascope.analysis.intervals.MIN_N.

    PYTHONPATH=src python3 bench/interval_coverage.py [--quick] [--json OUT] [--from-json IN]

(--from-json prints the table of an earlier run's --json without simulating again.)

Families and methods: faascope.analysis.interval_coverage. A full run takes a few minutes on two
cores; --quick uses a tenth of the replicates (a smoke test: its figures are noisy).
"""
from __future__ import annotations

import argparse
import json
import sys

from faascope.analysis import interval_coverage as ic
from faascope.analysis import intervals as iv

FAM = list(ic.FAMILIES)

# (method, grid of n, replicates, function(family or pair, n, reps, seed))
PLAN = [
    ("t", [2, 3, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000], 20000,
     lambda f, n, r, s: ic.mean_coverage("t", ic.FAMILIES[f], n, r, s)),
    ("log-t", [2, 3, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000], 20000,
     lambda f, n, r, s: ic.mean_coverage("log-t", ic.FAMILIES[f], n, r, s)),
    ("boot-t-log", [5, 10, 20, 30, 50, 75, 100, 150, 200, 300], 4000,
     lambda f, n, r, s: ic.mean_coverage("boot-t-log", ic.FAMILIES[f], n, r, s, n_boot=499)),
    ("boot-t", [5, 10, 20, 30, 50, 75, 100, 150, 200, 300], 4000,
     lambda f, n, r, s: ic.mean_coverage("boot-t", ic.FAMILIES[f], n, r, s, n_boot=499)),
    ("order-statistic", [5, 6, 8, 10, 20, 50, 100], 20000,
     lambda f, n, r, s: ic.median_coverage(ic.FAMILIES[f], n, r, s)),
    ("cv-bca (before)", [3, 5, 10, 30, 100], 2000,
     lambda f, n, r, s: ic.cv_bca_coverage(ic.FAMILIES[f], n, r, s, n_boot=499)),
    ("cv-log-t (every sample)", [10, 30, 100, 300, 1000, 2000, 5000, 20000], 4000,
     lambda f, n, r, s: ic.cv_coverage(ic.FAMILIES[f], n, r if n < 5000 else r // 4, s, rule=False)),
    ("cv-log-t", [10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000, 2000], 8000,
     lambda f, n, r, s: ic.cv_coverage(ic.FAMILIES[f], n, r if n < 1000 else r // 4, s)),
]
COMPARISONS = [
    ("cv-ratio percentile bootstrap (before)", [5, 10, 30, 100], 2000,
     lambda p, n, r, s: ic.ratio_percentile_bootstrap_coverage(ic.FAMILIES[p[0]], n, r, s, n_boot=499)),
    ("cv-ratio", [10, 20, 30, 50, 75, 100, 150, 200, 300, 500], 4000,
     lambda p, n, r, s: ic.comparison_coverage(p, n, r, s, "ratio")),
    ("cv-difference", [10, 20, 30, 50, 75, 100, 150, 200, 300, 500], 4000,
     lambda p, n, r, s: ic.comparison_coverage(p, n, r, s, "difference")),
]
#: what each block of the table is
TITLES = {
    "t": "Mean, Student t (before issue #25; now for responses with values ≤ 0 from n = 300)",
    "log-t": "Mean, t interval on the log scale (from n = 300, or with --bootstrap 0)",
    "boot-t-log": "Mean, bootstrap-t on the log scale (the default, from n = 100)",
    "boot-t": "Mean, bootstrap-t (responses with values ≤ 0, from n = 150)",
    "order-statistic": "Median, order statistics (exact; from n = 6)",
    "cv-bca (before)": "CV, BCa bootstrap (before issue #25)",
    "cv-log-t (every sample)": "CV, log-scale delta method, every sample (why skewed cells get none)",
    "cv-log-t": "CV, log-scale delta method, tight cells only (from n = 150; share printed in brackets)",
    "cv-ratio percentile bootstrap (before)": "CV ratio, percentile bootstrap (before issue #25), two cells of one family",
    "cv-ratio": "CV ratio, log-scale draws, both cells tight (from n = 75)",
    "cv-difference": "CV difference, log-scale draws, both cells tight (from n = 75)",
}
#: the table's methods whose minimum n is a MIN_N entry
KEYS = {"log-t": "log-t", "boot-t-log": "boot-t-log", "boot-t": "boot-t", "t": "t", "cv-log-t": "cv-log-t",
        "cv-ratio": "cv-comparison", "cv-difference": "cv-comparison"}


def run(quick: bool) -> list[ic.Coverage]:
    out = []
    seed = 0
    for method, grid, reps, fn in PLAN + COMPARISONS:
        targets = ic.PAIRS if (method, grid, reps, fn) in COMPARISONS else FAM
        if method.endswith("(before)") and targets is ic.PAIRS:
            targets = [(f, f) for f in FAM]
        for t in targets:
            for n in grid:
                seed += 1
                out.append(fn(t, n, max(200, reps // 10) if quick else reps, seed))
                print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def cell(c: ic.Coverage) -> str:
    if c.printed == 0 or c.covered != c.covered:
        return "–"
    text = f"{c.covered:.3f}"
    if c.printed < 0.995:
        text += f" ({c.printed:.0%})"
    return f"**{text}**" if not ic.meets_floor(c) else text


def table(results: list[ic.Coverage]) -> str:
    lines = []
    methods = list(dict.fromkeys(c.method for c in results))
    for m in methods:
        rows = [c for c in results if c.method == m]
        ns = sorted({c.n for c in rows})
        more = "; a quarter at n ≥ 1000" if m == "cv-log-t" else "; a quarter at n ≥ 5000" if m.startswith("cv-log") else ""
        lines.append(f"\n**{TITLES.get(m, m)}** ({rows[0].reps} replicates{more})\n")
        lines.append("| family | " + " | ".join(f"n = {n}" for n in ns) + " |")
        lines.append("|---|" + "---:|" * len(ns))
        for fam in dict.fromkeys(c.family for c in rows):
            by_n = {c.n: c for c in rows if c.family == fam}
            lines.append(f"| {fam} | " + " | ".join(cell(by_n[n]) if n in by_n else "" for n in ns) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--from-json")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as fh:
            results = [ic.Coverage(**d) for d in json.load(fh)]
    else:
        results = run(a.quick)
    print(table(results))
    print("\nminimum n (smallest n from which every family meets the floor at every larger n simulated):\n")
    for m in dict.fromkeys(c.method for c in results):
        found = ic.minimum_n([c for c in results if c.method == m])
        key = KEYS.get(m)
        have = iv.MIN_N.get(key) if key else None
        print(f"- {m}: {found if found is not None else 'none in the grid'}"
              + (f" (intervals.MIN_N[{key!r}] = {have})" if key else ""))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump([c.__dict__ for c in results], fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
