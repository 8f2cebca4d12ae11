"""Bandwidth over time and the token bucket behind it.

A token-bucket rate limiter (Firecracker's, hence Lambda's network; the local platform's
shaper) lets a transfer run at a burst rate P until its budget B is spent, then at the
refill (baseline) rate r. Cumulative bytes received from the transfer's start t0 are

    C(t) = min(P·(t − t0), B + r·(t − t0))        for t ≥ t0, else 0,

where B counts every token available at the start (bucket size + one-time burst) and the bucket
keeps refilling during the burst, which is why B is the intercept of the baseline line, not the
bytes moved at line rate. :func:`fit_token_bucket` fits (t0, P, B, r) to a series of bytes per
interval (the `network` workload's `samples`) by least squares on the cumulative bytes (bursts
arrive in lumps; the lumps cancel in the cumulative, which pins the budget down). Uncertainty
comes from a block bootstrap of the per-interval residuals, resampled within their phase (burst
or baseline, whose noise differs by orders of magnitude), re-cumulated and refitted: ``se`` is
half the central 68 % range, ``ci95`` the 2.5–97.5 percentiles. A series with no visible knee
is reported as such (burst fields None).

Usage::

    from faascope.analysis.bandwidth import fit_token_bucket, series_frame
    from faascope.store.reader import ResultsFile
    with ResultsFile("results.db") as rf:  # faascope.store.reader: the series out of the responses
        net = rf.network_samples()
    s = net[(net.invocation_id == 7) & (net.direction == "in")]
    fit = fit_token_bucket(s["bytes"].to_numpy(), interval_s=s["interval_s"].iloc[0])
    fit.budget_bytes, fit.refill_bytes_per_s, fit.burst_bytes_per_s
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import optimize, stats

from faascope.calibration import PLATFORM_TABLES, load_table

MiB = 1 << 20


@dataclass
class TokenBucketFit:
    """A fitted token bucket; rates in bytes/s, sizes in bytes, times in s from sample 0."""

    burst_bytes_per_s: float | None
    budget_bytes: float | None
    refill_bytes_per_s: float
    start_s: float
    burst_end_s: float | None
    se: dict[str, float | None]
    ci95: dict[str, tuple[float, float] | None]
    n_samples: int
    interval_s: float
    total_bytes: int
    rmse_bytes: float
    knee: bool

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        if not self.knee:
            return f"no burst visible: steady {self.refill_bytes_per_s / MiB:.1f} MiB/s"
        return (f"burst {self.burst_bytes_per_s / MiB:.1f} MiB/s until {self.burst_end_s:.3f} s, "
                f"budget {self.budget_bytes / MiB:.2f} ± {1.96 * (self.se['budget_bytes'] or 0) / MiB:.2f} MiB, "
                f"baseline {self.refill_bytes_per_s / MiB:.2f} ± {1.96 * (self.se['refill_bytes_per_s'] or 0) / MiB:.2f} MiB/s")


def series_frame(samples, interval_s: float):
    """A pandas DataFrame of a sample series: t_s (interval end), bytes, rate_bytes_per_s, cumulative."""
    import pandas as pd

    s = np.asarray(samples, dtype=float)
    t = (np.arange(len(s)) + 1) * interval_s
    return pd.DataFrame({"t_s": t, "bytes": s, "rate_bytes_per_s": s / interval_s, "cumulative_bytes": np.cumsum(s)})


def _model_cum(t, t0, p, b, r):
    x = np.maximum(t - t0, 0.0)
    return np.minimum(p * x, b + r * x)


def _increments(params, edges):
    c = _model_cum(edges, *params)
    return np.diff(c)


def fit_token_bucket(samples, interval_s: float, drop_last: bool = True, bootstrap: int = 200,
                     seed: int = 0) -> TokenBucketFit:
    """Fit burst rate, budget and baseline refill rate to bytes-per-interval samples.

    drop_last leaves out the final interval, which the end of the transfer cuts short.
    """
    y = np.asarray(samples, dtype=float)
    total = int(y.sum())
    if drop_last and len(y) > 3:
        y = y[:-1]
    n = len(y)
    if n < 4 or y.sum() <= 0:
        raise ValueError(f"need at least 4 non-empty samples to fit a token bucket (got {n})")
    edges = np.arange(n + 1) * interval_s
    cum = np.concatenate([[0.0], np.cumsum(y)])
    t_first = float(np.argmax(y > 0)) * interval_s  # start of the first non-empty interval

    # Initial guess: a two-segment piecewise-linear fit of the cumulative bytes (scan the knee).
    best = None
    for k in range(2, n - 1):
        post_t, post_c = edges[k:], cum[k:]
        slope, icpt = np.polyfit(post_t, post_c, 1)
        pre_rate = cum[k] / max(edges[k] - t_first, interval_s)
        sse = float(np.sum((post_c - (icpt + slope * post_t)) ** 2))
        pre = np.clip(pre_rate * (edges[: k + 1] - t_first), 0, None)
        sse += float(np.sum((cum[: k + 1] - pre) ** 2))
        if best is None or sse < best[0]:
            best = (sse, k, slope, icpt, pre_rate)
    _, k, r0, icpt0, p0 = best
    r0 = max(r0, 1.0)
    b0 = max(icpt0 + r0 * t_first, 1.0)
    p0 = max(p0, r0 * 1.5)
    x0 = np.array([t_first, p0, b0, r0])
    scale = np.array([interval_s, p0, b0, r0])

    lo = np.array([(t_first - interval_s) / scale[0], 0, 0, 0])
    hi = np.array([(t_first + interval_s) / scale[0], np.inf, np.inf, np.inf])
    norm = max(cum[-1], 1.0)

    def fit(yy, z_start):
        # Least squares on cumulative bytes: the burst's lumps (bytes arrive in bunches at line
        # rate) shift only timing within the burst and cancel in the cumulative, which is what
        # pins the budget down; on increments the budget would be seen in the knee interval only.
        cc = np.concatenate([[0.0], np.cumsum(yy)])

        def resid(z):
            return (_model_cum(edges, *(z * scale)) - cc) / norm

        return optimize.least_squares(resid, z_start, bounds=(lo, hi), x_scale="jac")

    z0 = np.clip(x0 / scale, lo + 1e-9, hi - 1e-9)
    sol = fit(y, z0)
    t0, p, b, r = sol.x * scale
    fitted = _increments(sol.x * scale, edges)
    res = y - fitted
    rmse = float(np.sqrt(np.mean(res ** 2)))
    burst_end = t0 + b / (p - r) if p > r else None
    # A knee needs a budget worth at least half an interval of baseline traffic (a steady
    # stream fits with B ~ 0) and a burst clearly faster than the baseline.
    knee = bool(burst_end is not None and burst_end < edges[-1] - interval_s and p > 1.2 * r
                and b > 0.5 * r * interval_s)

    # Uncertainty: a block bootstrap of the per-interval residuals, resampled within their phase
    # (the burst is far noisier than the baseline), re-cumulated and refitted.
    names = ["start_s", "burst_bytes_per_s", "budget_bytes", "refill_bytes_per_s"]
    se: dict[str, float | None] = dict.fromkeys(names)
    ci95: dict[str, tuple[float, float] | None] = dict.fromkeys(names)
    boot = []
    if bootstrap and n >= 10:
        rng = np.random.default_rng(seed)
        block = 5
        in_burst = edges[1:] <= (burst_end if burst_end is not None else t0) + interval_s
        phases = [np.flatnonzero(in_burst), np.flatnonzero(~in_burst)]
        for _ in range(bootstrap):
            rb = np.zeros(n)
            for idx in phases:
                if len(idx) == 0:
                    continue
                pool = res[idx]
                b_ = min(block, len(pool))
                starts = rng.integers(0, len(pool) - b_ + 1, int(np.ceil(len(pool) / b_)))
                rb[idx] = np.concatenate([pool[s:s + b_] for s in starts])[:len(idx)]
            yb = np.clip(fitted + rb, 0, None)
            try:
                boot.append(fit(yb, sol.x).x * scale)
            except ValueError:
                continue
    if len(boot) >= 20:
        arr = np.array(boot)
        for i, name in enumerate(names):
            # Robust to the odd bootstrap fit that lands the knee elsewhere: half the central
            # 68 % range (= the standard deviation for a normal distribution).
            se[name] = float((np.percentile(arr[:, i], 84.135) - np.percentile(arr[:, i], 15.865)) / 2)
            ci95[name] = (float(np.percentile(arr[:, i], 2.5)), float(np.percentile(arr[:, i], 97.5)))
    tcrit = float(stats.t.ppf(0.975, max(n - 4, 1)))
    if not knee:
        # No burst visible: the whole series is the baseline.
        rate = float(y[y > 0].mean() / interval_s) if np.any(y > 0) else 0.0
        se_r = float(y[y > 0].std(ddof=1) / interval_s / np.sqrt(max(np.sum(y > 0), 1))) if np.sum(y > 0) > 1 else None
        return TokenBucketFit(None, None, rate, float(t0), None,
                              {"start_s": se["start_s"], "burst_bytes_per_s": None, "budget_bytes": None,
                               "refill_bytes_per_s": se_r},
                              {"start_s": ci95["start_s"], "burst_bytes_per_s": None, "budget_bytes": None,
                               "refill_bytes_per_s": None if se_r is None else (rate - tcrit * se_r, rate + tcrit * se_r)},
                              n, interval_s, total, rmse, False)
    return TokenBucketFit(float(p), float(b), float(r), float(t0), float(burst_end), se, ci95, n, interval_s, total,
                          rmse, True)


def expected_bucket(size: int, refill_ms: int, one_time_burst: int = 0, peak: int | None = None) -> dict:
    """What a configured bucket should look like to the fit: budget, baseline and burst rate."""
    return {"budget_bytes": size + one_time_burst, "refill_bytes_per_s": size / (refill_ms / 1000.0),
            "burst_bytes_per_s": peak}


def parse_net_shape(spec: str) -> dict[str, dict]:
    """The local platform's net-shape string ("size=B,refill_ms=N[,one_time_burst=B][,peak=B/s]",
    in_/out_ prefixes, or "lambda") as expected buckets per direction ("in", "out")."""
    if spec == "lambda":
        # the platform's "lambda" bucket is the platform-lambda table's net_* entries (one source)
        t = load_table(PLATFORM_TABLES["lambda"])
        size, burst = int(t.value("net_bucket_size")), int(t.value("net_one_time_burst"))
        one = {"budget_bytes": size + burst, "refill_bytes_per_s": float(t.value("net_refill_rate")),
               "burst_bytes_per_s": int(t.value("net_peak_rate"))}
        return {"in": dict(one), "out": dict(one)}
    cfg: dict[str, dict] = {"in": {}, "out": {}}
    for part in spec.split(","):
        k, v = part.strip().split("=", 1)
        dirs = ["in", "out"]
        for d in ("in", "out"):
            if k.startswith(d + "_"):
                k, dirs = k[len(d) + 1:], [d]
        for d in dirs:
            cfg[d][k] = int(v)
    return {d: expected_bucket(c["size"], c["refill_ms"], c.get("one_time_burst", 0), c.get("peak"))
            for d, c in cfg.items() if c}
