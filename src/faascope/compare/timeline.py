"""The same cell across many campaigns, in the order given, with change points marked.

Method: **PELT** (Killick, Fearnhead & Eckley 2012, "Optimal detection of changepoints with a
linear computational cost", JASA 107(500)) for changes in the mean, as implemented by the
``ruptures`` library (Truong, Oudre & Vayatis 2020, "Selective review of offline change point
detection methods", Signal Processing 167; https://centre-borelli.github.io/ruptures-docs/).
Why a library: PELT's pruning is easy to get subtly wrong, and ruptures is a maintained,
documented implementation with tests; scipy and statsmodels have no change-point search.

Per cell, the invocations' values are taken campaign after campaign (each campaign's in its
recorded order) and divided by the cell's noise — the median absolute deviation within the
campaigns, scaled by 1.4826 to estimate a normal standard deviation — so that one penalty suits
every cell: the cost is the squared error around each segment's mean (``model="l2"``) and the
penalty per change point is 2·ln(n) (BIC for a change of mean of unit-variance normal data:
one mean and one location per added segment). Campaigns are what is compared, so a segment is
at least the smallest campaign long and the candidate positions are spaced by the greatest common
divisor of the campaign boundaries (exactly the boundaries when the campaigns have one size); a
change point that still falls inside a campaign is moved to the nearest boundary, and several
at one boundary count once.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import ruptures

#: robust standard deviation from the median absolute deviation of normal data
MAD_TO_SD = 1.4826
#: segments shorter than this are not considered (a single outlier is not a change)
MIN_SEGMENT = 2


def noise_scale(groups: Sequence[np.ndarray]) -> float:
    """The pooled within-campaign MAD × 1.4826 (deviations from each campaign's own median)."""
    dev = np.concatenate([np.abs(g - np.median(g)) for g in groups if len(g)])
    scale = MAD_TO_SD * float(np.median(dev)) if len(dev) else 0.0
    if scale <= 0:  # at least half the values equal their campaign's median
        sd = float(np.std(np.concatenate(list(groups)), ddof=1)) if sum(map(len, groups)) > 1 else 0.0
        scale = sd if sd > 0 else 1.0
    return scale


def change_points(groups: Sequence[np.ndarray]) -> list[int]:
    """Indices i (1 ≤ i < len(groups)) of the boundaries between campaign i − 1 and i where the
    cell's mean changes (PELT, see the module's docstring)."""
    sizes = [len(g) for g in groups]
    y = np.concatenate([np.asarray(g, dtype=float) for g in groups])
    n = len(y)
    if len(groups) < 2 or n < 2 * MIN_SEGMENT:
        return []
    z = (y - np.median(y)) / noise_scale(groups)
    # a segment is at least the smallest campaign long, and candidate change points are spaced
    # by the greatest common divisor of the boundaries (exactly the boundaries when campaigns
    # are of one size): a change is between campaigns, not a few outliers inside one
    bounds = np.cumsum(sizes)[:-1]  # where campaign i starts, i = 1 … k−1
    jump = math.gcd(*map(int, bounds)) if len(bounds) else 1
    algo = ruptures.Pelt(model="l2", min_size=max(MIN_SEGMENT, min(sizes)),
                         jump=max(jump, 1)).fit(z.reshape(-1, 1))
    bkps = algo.predict(pen=2 * math.log(n))[:-1]  # the last is n itself
    out = set()
    for b in bkps:
        out.add(int(np.argmin(np.abs(bounds - b))) + 1)
    return sorted(out)


def timeline(groups_by_cell: dict[tuple, list[np.ndarray]], names: Sequence[str]) -> list[dict]:
    """Per cell: each campaign's n, mean, median and p99 (None where it has no values), and the
    change points with the mean before and after each (the segments between change points)."""
    out = []
    for key, groups in sorted(groups_by_cell.items()):
        present = [i for i, g in enumerate(groups) if len(g)]
        points = [{"source": names[i], "n": len(g),
                   "mean": float(np.mean(g)) if len(g) else None,
                   "median": float(np.median(g)) if len(g) else None,
                   "p99": float(np.quantile(g, 0.99)) if len(g) else None}
                  for i, g in enumerate(groups)]
        kept = [groups[i] for i in present]
        cps = [present[i] for i in change_points(kept)]
        segments = [0, *cps, len(groups)]
        changes = []
        for j, cp in enumerate(cps):
            before = np.concatenate([groups[i] for i in range(segments[j], cp) if len(groups[i])])
            after = np.concatenate([groups[i] for i in range(cp, segments[j + 2]) if len(groups[i])])
            mb, ma = float(np.mean(before)), float(np.mean(after))
            changes.append({"before": names[cp - 1], "at": names[cp], "mean_before": mb,
                            "mean_after": ma, "rel_change": (ma / mb - 1) if mb else None})
        out.append({"levels": key, "points": points, "change_points": changes})
    return out
