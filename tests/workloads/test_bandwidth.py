"""The token-bucket fit on synthetic series with known parameters (no platform needed)."""
from __future__ import annotations

import numpy as np
import pytest

from faascope.analysis.bandwidth import _model_cum, fit_token_bucket, parse_net_shape

MiB = 1 << 20


def synthetic(t0=0.013, peak=256 * MiB, budget=16 * MiB, rate=16 * MiB, total=48 * MiB, dt=0.02, noise=0.0,
              seed=1):
    t = np.arange(0, 400) * dt
    c = np.minimum(_model_cum(t, t0, peak, budget, rate), total)
    y = np.diff(c)
    y = y[: np.max(np.nonzero(y > 0)) + 1]
    if noise:
        y = np.clip(y + np.random.default_rng(seed).normal(0, noise, len(y)), 0, None)
    return y


def test_exact_series_gives_exact_parameters():
    fit = fit_token_bucket(synthetic(), 0.02, bootstrap=0)
    assert fit.knee
    assert fit.budget_bytes == pytest.approx(16 * MiB, rel=1e-3)
    assert fit.refill_bytes_per_s == pytest.approx(16 * MiB, rel=1e-3)
    assert fit.burst_bytes_per_s == pytest.approx(256 * MiB, rel=1e-2)
    assert fit.burst_end_s == pytest.approx(0.013 + 16 / 240, rel=1e-2)


def test_noisy_series_is_within_ten_percent_and_covered_by_the_interval():
    fit = fit_token_bucket(synthetic(noise=0.05 * MiB), 0.02)
    assert fit.budget_bytes == pytest.approx(16 * MiB, rel=0.1)
    assert fit.refill_bytes_per_s == pytest.approx(16 * MiB, rel=0.1)
    lo, hi = fit.ci95["refill_bytes_per_s"]
    assert lo <= 16 * MiB <= hi and fit.se["refill_bytes_per_s"] > 0


def test_lumpy_burst_still_gives_the_budget():
    # Bursts arrive in bunches (a stall, then more than the line rate): the cumulative fit is
    # insensitive to how bytes are distributed inside the burst.
    y = synthetic(peak=400 * MiB)
    y[1], y[2] = y[1] + y[2], 0.0
    fit = fit_token_bucket(y, 0.02, bootstrap=0)
    assert fit.budget_bytes == pytest.approx(16 * MiB, rel=0.05)
    assert fit.refill_bytes_per_s == pytest.approx(16 * MiB, rel=0.02)


def test_steady_series_has_no_knee():
    fit = fit_token_bucket([1 * MiB] * 50, 0.02)
    assert not fit.knee and fit.budget_bytes is None
    assert fit.refill_bytes_per_s == pytest.approx(50 * MiB, rel=0.01)


def test_too_short_series_is_an_error():
    with pytest.raises(ValueError):
        fit_token_bucket([1, 2], 0.02)


def test_parse_net_shape():
    e = parse_net_shape(f"size={8 * MiB},refill_ms=500,one_time_burst={8 * MiB},out_peak=1000")
    assert e["in"] == {"budget_bytes": 16 * MiB, "refill_bytes_per_s": 16 * MiB, "burst_bytes_per_s": None}
    assert e["out"]["burst_bytes_per_s"] == 1000
    lam = parse_net_shape("lambda")["in"]
    assert lam["budget_bytes"] == 300 * MiB and lam["refill_bytes_per_s"] == 75 * MiB
