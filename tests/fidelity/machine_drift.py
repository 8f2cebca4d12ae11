"""A simulated slow stretch of this machine, shared by the tests of the paired rules (the
findings' paired parts, tests/fidelity/test_findings_paired.py, and the thesis's decisions,
tests/fidelity/test_thesis_decisions.py).

Measured 2026-11-28: a third of a campaign's invocations ran x1.35 slower for some minutes, on
either side of a comparison."""
from __future__ import annotations

import numpy as np


def slow_stretch(rng, n, effect, sigma=0.08, slow=1.35):
    """Two cells run in n blocks; a contiguous third of the blocks is a slow stretch of the
    machine in which each invocation, on either side, is x1.35 slower with probability 0.8.
    Returns (a, b), a with the given effect (a / b)."""
    stretch = np.ones(n)
    s = rng.integers(0, n - n // 3 + 1)
    stretch[s:s + n // 3] = slow
    a = effect * np.where(rng.random(n) < 0.8, stretch, 1) * rng.lognormal(0, sigma, n)
    b = np.where(rng.random(n) < 0.8, stretch, 1) * rng.lognormal(0, sigma, n)
    return a, b
