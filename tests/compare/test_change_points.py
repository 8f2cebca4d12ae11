"""How often `faascope compare`'s timeline marks a change point where nothing changed, and how
often it finds a real 20 % shift: a seeded simulation through compare/timeline.py's own
change_points (seconds). docs/analysis.md ("Change points") has the table this prints with
`pytest -s`.

Nulls (no change anywhere): k campaigns of n invocations each from
- normal: 1 + 0.1·Z (CV 10 %),
- lognormal: exp(0.5·Z),
- cold-start mixture: 5 % of the invocations at 8× a lognormal exp(0.1·Z) warm latency,
without and with drift between campaigns (each campaign multiplied by exp(0.05·Z)).
Main's PELT on MAD-scaled invocations marked a change in 99.6-100 % of the cold-start nulls and
5-14 % of the lognormal ones; five identical campaigns got ten change points.

A false-alarm rate is "≤ 5 %" when the simulated rate does not exceed 5 % by more than two
standard errors of its own Monte Carlo noise (the method is calibrated to exactly α = 5 % for
normal campaign levels, so an exact point estimate would straddle 5 % by chance).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from faascope.compare.timeline import change_points
from null_families import draw

ALPHA = 0.05
REPS = 1000
NULLS = [  # (distribution, campaigns, invocations per campaign, drift between campaigns)
    ("normal", 10, 30, 0.0), ("lognormal", 10, 30, 0.0), ("cold", 10, 30, 0.0),
    ("normal", 5, 30, 0.05), ("lognormal", 5, 30, 0.05), ("cold", 5, 30, 0.05),
    ("cold", 20, 10, 0.05),
]
SHIFTS = [("normal", 10, 30, 0.05), ("lognormal", 10, 30, 0.05), ("cold", 10, 30, 0.05)]


def simulate(kind, k, n, drift, shift, reps, seed):
    """(share of series with any change point, share with the true one among them)."""
    rng = np.random.default_rng(seed)
    anything = exact = 0
    for _ in range(reps):
        y = draw(rng, kind, (k, n)) * np.exp(drift * rng.standard_normal((k, 1)))
        if shift:
            y[k // 2:] *= 1 + shift
        found = change_points(list(y))  # alpha 0.05, the default (main has no alpha)
        anything += bool(found)
        exact += k // 2 in found
    return anything / reps, exact / reps


def bound(rate: float, reps: int) -> float:
    return rate + 2 * math.sqrt(rate * (1 - rate) / reps)


@pytest.fixture(scope="module")
def nulls():
    return {c: simulate(*c, 0.0, REPS, seed=i)[0] for i, c in enumerate(NULLS)}


@pytest.fixture(scope="module")
def power():
    return {c: simulate(*c, 0.20, 300, seed=100 + i) for i, c in enumerate(SHIFTS)}


def test_false_alarms_stay_at_alpha_on_every_null(nulls):
    print("\nfalse-alarm rate (any change point), no change:")
    for (kind, k, n, drift), rate in nulls.items():
        print(f"  {kind:9s} k={k:2d} n={n:2d} drift σ={drift:.2f}: {rate:.3f}")
    for c, rate in nulls.items():
        assert rate <= bound(ALPHA, REPS), (c, rate)
    pooled = sum(nulls.values()) / len(nulls)
    reps = REPS * len(nulls)
    assert pooled <= bound(ALPHA, reps)
    # … and not bought by never finding anything: calibrated, not conservative
    assert pooled >= ALPHA - 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_a_real_20_percent_shift_is_found_where_it_is(power):
    print("\npower for a 20 % shift after campaign k/2 (any change point / the true one):")
    for (kind, k, n, drift), (anything, exact) in power.items():
        print(f"  {kind:9s} k={k:2d} n={n:2d} drift σ={drift:.2f}: {anything:.3f} / {exact:.3f}")
    assert power[SHIFTS[0]][0] >= 0.9 and power[SHIFTS[2]][0] >= 0.9
    # lognormal σ = 0.5 is noisy: a campaign median of 30 moves ±11 % (1 sd); still found often
    assert power[SHIFTS[1]][0] >= 0.3
    for c in (SHIFTS[0], SHIFTS[2]):  # mostly found at the right boundary (else one off)
        assert power[c][1] >= 0.8 * power[c][0]


def test_five_identical_campaigns_get_no_change_point():
    """The issue's five identical campaigns (ten change points on main): cold-start latencies."""
    rng = np.random.default_rng(25)
    assert change_points(list(draw(rng, "cold", (5, 40)))) == []
