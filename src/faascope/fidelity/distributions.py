"""Whole distributions, local against published: the quantiles p50/p90/p99 (nearest rank, as
the agent and lambda-perf/Skyrise summaries use) with their ratios, and the two-sample
Kolmogorov-Smirnov distance D (the largest gap between the two empirical CDFs; scipy's
``ks_2samp``, exact p-value for small samples, asymptotic otherwise).

A median can agree while the tail does not (a stand-in with one fixed latency has the right
p50 and no spread): the quantiles say where, D says how far the shapes are apart overall.
``within`` is the fidelity bar (every quantile within ×1.5 of the published one,
:data:`faascope.fidelity.compare.WITHIN`); D and its p-value are reported beside it, not folded
into it: with hundreds of values a KS test rejects differences far too small to matter, so the
distance is the figure to read, the p-value says only whether the two could be one distribution.

The storage stand-ins' local values are raw per-request latencies: the agent keeps a bounded
systematic sample of each object/kv invocation's requests (``latency_samples``), pooled over
invocations. Where a results file keeps no raw values (written before the agent kept them),
:func:`compare_quantiles` compares the quantiles alone and says why there is no D.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from scipy import stats

from faascope.calibration.reference import Reference
from faascope.fidelity.compare import ratio, within

QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))


def quantiles(values: np.ndarray) -> dict[str, float]:
    """Nearest-rank quantiles: the smallest value with at least q·n values at or below it
    (numpy's ``inverted_cdf``)."""
    v = np.asarray(values, float)
    return {name: float(np.quantile(v, q, method="inverted_cdf")) for name, q in QUANTILES}


@dataclass
class DistributionComparison:
    reference: str                       # file:set of the published distribution
    label: str
    local_n: int
    published_n: int                     # values in the committed subset
    local: dict[str, Optional[float]]    # p50/p90/p99, seconds
    published: dict[str, float]          # of the committed subset, seconds
    ratios: dict[str, Optional[float]]
    within: bool
    ks_d: Optional[float] = None
    ks_p: Optional[float] = None
    note: str = ""
    source: str = ""
    license: str = ""
    extra: dict = field(default_factory=dict)


def compare_sample(local: np.ndarray, ref: Reference, label: str = "") -> DistributionComparison:
    """Local raw values (seconds) against a published distribution."""
    v = np.asarray(local, float)
    v = v[np.isfinite(v)]
    pub = quantiles(ref.values_s)
    if len(v) == 0:
        return DistributionComparison(ref.key, label, 0, len(ref.values_s),
                                      {k: None for k in pub}, pub, {k: None for k in pub}, False,
                                      note="no local value", source=ref.source,
                                      license=ref.license)
    loc = quantiles(v)
    ratios = {k: ratio(loc[k], pub[k]) for k in pub}
    ks = stats.ks_2samp(v, ref.values_s)
    note = ""
    if len(v) < 100:
        # with n values the local p99 is the largest value or near it, not a tail estimate
        note = f"{len(v)} local values: the p99 is at most the {len(v)}th largest, read with care"
    return DistributionComparison(ref.key, label, len(v), len(ref.values_s), loc, pub, ratios,
                                  all(within(r) for r in ratios.values()), float(ks.statistic),
                                  float(ks.pvalue), note, ref.source, ref.license)


def compare_quantiles(local: dict[str, Optional[float]], n_invocations: int, ref: Reference,
                      label: str = "", why_no_ks: str = "") -> DistributionComparison:
    """Local quantiles only (e.g. the median over invocations of each invocation's own request
    percentiles) against a published distribution: no D without raw values."""
    pub = quantiles(ref.values_s)
    ratios = {k: ratio(local.get(k), pub[k]) for k in pub}
    return DistributionComparison(
        ref.key, label, n_invocations, len(ref.values_s), {k: local.get(k) for k in pub}, pub,
        ratios, all(within(r) for r in ratios.values()),
        note=why_no_ks or "no raw local values: no KS distance", source=ref.source,
        license=ref.license)


def as_json(c: DistributionComparison) -> dict:
    return {"reference": c.reference, "label": c.label, "local_n": c.local_n,
            "published_n": c.published_n, "local_quantiles_s": c.local,
            "published_quantiles_s": c.published, "ratios": c.ratios, "within": c.within,
            "local_invocations": c.extra.get("invocations"),
            "ks_statistic": c.ks_d, "ks_pvalue": c.ks_p, "note": c.note, "source": c.source,
            "license": c.license}
