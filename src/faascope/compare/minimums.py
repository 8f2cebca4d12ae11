"""The fewest values (or units) at which each interval `faascope compare` prints covers what it
claims: one place for every minimum, so that the check, the message and the docs cannot drift.

Each number is the smallest n at which a seeded simulation found a coverage of at least 0.93 at
the nominal 95 % for every n from it up, on three nulls: normal (CV 10 %), lognormal (σ = 0.5)
and a cold-start mixture (5 % of the values at 8× a lognormal σ = 0.1) — and, for the unit-level
tests, with between-run or between-block drift (lognormal, σ 0 to 0.3) and a 20 % change.
tests/compare/test_compare_coverage.py runs that simulation with faascope's own functions and
fails when a minimum is too small (coverage below 0.93 at it) or not needed (the coverage just
below it is not short anywhere); docs/analysis.md has its table.

Below a minimum the interval is not printed: the table says "too few (n = 2; needs ≥ 5)" and
the JSON has ``null`` with the reason.
"""
from __future__ import annotations

#: method -> (minimum, what is counted)
MIN_N: dict[str, tuple[int, str]] = {
    # Welch's t interval of the difference of means, values per side (within one run): the
    # cold-start mixture covers 0.90-0.92 at n = 10-20 (a sample without a cold start gives a
    # narrow interval away from the mean) and ≥ 0.93 from n = 25
    "welch": (25, "values per side"),
    # bootstrap percentile interval of the difference of medians, values per side: 0.65 at
    # n = 2, 0.91-0.93 at n = 3-4, ≥ 0.95 from 5
    "median": (5, "values per side"),
    # paired t on the log of each block's BASE and NEW means (an interleaved campaign), blocks
    # holding both: ≥ 0.93 from 2 blocks on every null, one value a side per block included
    "blocks": (2, "blocks"),
    # Welch's t on the log of each run's mean, runs per side: with 2 or 3 runs on one side and
    # 10-20 on the other 0.89-0.93 (Welch-Satterthwaite's df overstates a few-df variance);
    # ≥ 0.93 from 4 a side
    "runs": (4, "runs per side"),
    # the between-run drift estimated from A/A runs (--aa, or BASE's own runs): runs ...
    "drift_runs": (3, "A/A runs"),
    # ... and values per run in the cell: 2 A/A runs, or runs of fewer than 25 values of the
    # cold-start mixture, cover 0.86-0.92
    "drift_run_values": (25, "values per run"),
}


def minimum(method: str) -> int:
    return MIN_N[method][0]


def too_few(method: str, n: int) -> str | None:
    """None when ``n`` is enough for ``method``'s interval, else the words the table prints."""
    need, what = MIN_N[method]
    if n >= need:
        return None
    return f"too few (n = {n}; needs ≥ {need} {what})"
