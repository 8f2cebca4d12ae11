"""Enough bursts for Roy et al.'s "object storage stays flat": the findings' rule calls a part
flat only when the whole 95 % interval of the ratio lies in [1/1.5, 1.5], and a shaped S3 PUT's
latency is a lognormal draw, so too few bursts can never show it, however flat the platform is.
Checked by simulation with the shaper's own spread (standins-aws): at the old 10 bursts a truly
flat platform is called flat in under a fifth of the runs; at ROY_UNITS' 40, in most."""
from __future__ import annotations

import math

import numpy as np

from faascope import calibration
from faascope.fidelity.compare import WITHIN
from faascope.fidelity.findings_battery import CONCURRENT, ROY_UNITS
from faascope.fidelity.ratio import ratio_interval

Z99 = 2.3263478740408408


def _sigma_s3_write() -> float:
    t = calibration.load_table("standins-aws")
    med = t.entries["s3_standard_write_median"].value
    p99 = t.entries["s3_standard_write_p99"].value
    return math.log(p99 / med) / Z99


def _flat_rate(n: int, runs: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    sigma = _sigma_s3_write()
    flat = 0
    for r in range(runs):
        alone = np.exp(rng.normal(0, sigma, n))                       # one PUT a burst
        together = np.median(np.exp(rng.normal(0, sigma, (n, CONCURRENT))), axis=1)
        _, (lo, hi) = ratio_interval(together, alone, "median", n_boot=1000, seed=r)
        flat += (lo >= 1 / WITHIN) and (hi <= WITHIN)
    return flat / runs


def test_roy_units_can_show_flat_where_ten_cannot():
    assert ROY_UNITS[1] >= 40
    ten, full = _flat_rate(10, 60, seed=1), _flat_rate(ROY_UNITS[1], 60, seed=2)
    print(f"flat called: n=10 {ten:.0%}, n={ROY_UNITS[1]} {full:.0%}")
    assert ten < 0.2 and full > 0.6
