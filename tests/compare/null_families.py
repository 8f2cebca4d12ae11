"""The null families the compare simulations draw from (tests/compare/test_change_points.py and
test_compare_coverage.py): normal (CV 10 %), lognormal (sigma 0.5) and warm lognormal (sigma
0.1) with 5 % cold starts at 8x."""
from __future__ import annotations

import numpy as np


def draw(rng, kind: str, size) -> np.ndarray:
    if kind == "normal":
        return 1 + 0.1 * rng.standard_normal(size)
    if kind == "lognormal":
        return np.exp(0.5 * rng.standard_normal(size))
    warm = np.exp(0.1 * rng.standard_normal(size))
    return np.where(rng.random(size) < 0.05, 8 * warm, warm)
