"""The same cell across many campaigns, in the order given, with change points marked.

What is a change point between campaigns? Runs drift, so a campaign is one observation, not
its invocations: the values inside a campaign say nothing about how much a campaign's level
varies from one run to the next. (PELT on every invocation, scaled by the within-campaign MAD,
called 99.6-100 % of drift-free series with 5 % cold starts "changed".)

Method, per cell:

1. each campaign's level is the **median** of its values (robust to the rare cold start that
   moves a mean), on the log scale when every median is positive (a drift or a change
   multiplies);
2. the statistic for "one change somewhere" is the **maximally selected two-sample t**: for
   every split of the k levels into a first and a last segment of at least
   :data:`MIN_SEGMENT` campaigns, Student's t of the two segments (pooled variance: the
   spread *between campaigns* within the segments is the noise), and the largest |t| —
   the likelihood-ratio test for one shift in the mean of normal observations of unknown
   variance (Worsley 1979, "On the likelihood ratio test for a shift in location of normal
   populations", JASA 74(366));
3. its p-value is read from that maximum's null distribution for k independent normal levels,
   which does not depend on their mean or variance: simulated once per k (:data:`NULL_DRAWS`
   seeded draws) — Worsley's exact distribution, to Monte Carlo accuracy;
4. **binary segmentation**: where p < alpha the split is a change point and both segments are
   searched again the same way. Under no change only the first test can fire, so the chance of
   any change point in a drift-free series is alpha.

tests/compare/test_change_points.py simulates the false-alarm rate (normal, lognormal and
cold-start-mixture campaigns, with and without between-campaign drift) and the power for a real
20 % shift; docs/analysis.md has the table. With fewer than 2 · MIN_SEGMENT campaigns no change
can be told from drift, and none is reported.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

#: a segment is at least this many campaigns: one odd campaign is not a change
MIN_SEGMENT = 2
#: draws of the null distribution of the maximal |t| per number of campaigns
NULL_DRAWS = 20000
#: seed of those draws (the p-values are reproducible)
NULL_SEED = 20250425


def max_t(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(max |t|, the split at it) over the splits of the last axis of ``x`` into two segments
    of at least MIN_SEGMENT values (Student's t with the pooled within-segment variance;
    infinite when the segments differ and neither varies, 0 when they do not differ)."""
    x = np.atleast_2d(np.asarray(x, float))
    n = x.shape[-1]
    j = np.arange(MIN_SEGMENT, n - MIN_SEGMENT + 1)
    # "no variation" and "no difference" are judged against the data's rounding (a couple of
    # ulps of the largest value), as analyze judges a constant response
    res = 4 * np.spacing(np.max(np.abs(x), -1, keepdims=True))
    # centred first: the sums of squares below are differences of large numbers otherwise
    x = x - x.mean(-1, keepdims=True)
    c1, c2 = np.cumsum(x, -1), np.cumsum(x * x, -1)
    s1, s2 = c1[..., -1:], c2[..., -1:]
    l1, l2 = c1[..., j - 1], c2[..., j - 1]
    ml, mr = l1 / j, (s1 - l1) / (n - j)
    ss = np.maximum((l2 - j * ml ** 2) + ((s2 - l2) - (n - j) * mr ** 2), 0.0)
    diff = np.abs(mr - ml)
    scale = np.sqrt(ss / (n - 2) * (1 / j + 1 / (n - j)))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(scale <= res, np.where(diff > res, np.inf, 0.0), diff / scale)
    k = np.argmax(t, -1)
    return np.take_along_axis(t, k[..., None], -1)[..., 0], j[k]


@lru_cache(maxsize=256)
def _null(n: int) -> np.ndarray:
    """The sorted maximal |t| of NULL_DRAWS series of n independent standard normals."""
    rng = np.random.default_rng([NULL_SEED, n])
    out = []
    for start in range(0, NULL_DRAWS, 5000):  # in chunks: long series stay small in memory
        out.append(max_t(rng.standard_normal((min(5000, NULL_DRAWS - start), n)))[0])
    return np.sort(np.concatenate(out))


def p_value(t: float, n: int) -> float:
    """P(max |t| ≥ t) for n independent normal levels (the +1 keeps it above 0)."""
    null = _null(n)
    return float((1 + len(null) - np.searchsorted(null, t, side="left")) / (len(null) + 1))


def levels(groups: Sequence[np.ndarray]) -> tuple[np.ndarray, bool]:
    """Each campaign's median, and whether they are on the log scale (all positive)."""
    med = np.array([np.median(g) for g in groups], float)
    if np.all(med > 0):
        return np.log(med), True
    return med, False


def _segment(y: np.ndarray, lo: int, hi: int, alpha: float, out: list) -> None:
    if hi - lo < 2 * MIN_SEGMENT:
        return
    t, j = max_t(y[lo:hi])
    t, j = float(t[0]), int(j[0])
    p = p_value(t, hi - lo)
    if p >= alpha:
        return
    out.append((lo + j, p))
    _segment(y, lo, lo + j, alpha, out)
    _segment(y, lo + j, hi, alpha, out)


def change_points(groups: Sequence[np.ndarray], alpha: float = 0.05,
                  with_p: bool = False) -> list:
    """Indices i (MIN_SEGMENT ≤ i ≤ len(groups) − MIN_SEGMENT) of the boundaries between
    campaign i − 1 and i where the cell's level changes (see the module's docstring); with
    ``with_p``, (i, p) pairs."""
    if len(groups) < 2 * MIN_SEGMENT:
        return []
    y, _ = levels(groups)
    found: list = []
    _segment(y, 0, len(y), alpha, found)
    found.sort()
    return found if with_p else [i for i, _ in found]


def timeline(groups_by_cell: dict[tuple, list[np.ndarray]], names: Sequence[str],
             alpha: float = 0.05) -> list[dict]:
    """Per cell: each campaign's n, mean, median and p99 (None where it has no values), and the
    change points with the level (geometric mean of the campaigns' medians, or their mean when
    one is not positive) of the segments before and after each."""
    out = []
    for key, groups in sorted(groups_by_cell.items()):
        present = [i for i, g in enumerate(groups) if len(g)]
        points = [{"source": names[i], "n": len(g),
                   "mean": float(np.mean(g)) if len(g) else None,
                   "median": float(np.median(g)) if len(g) else None,
                   "p99": float(np.quantile(g, 0.99)) if len(g) else None}
                  for i, g in enumerate(groups)]
        kept = [groups[i] for i in present]
        found = change_points(kept, alpha, with_p=True)
        y, logged = levels(kept) if kept else (np.empty(0), False)
        bounds = [0, *[i for i, _ in found], len(kept)]
        changes = []
        for s, (cp, p) in enumerate(found):
            before, after = y[bounds[s]:cp].mean(), y[cp:bounds[s + 2]].mean()
            lb, la = (np.exp(before), np.exp(after)) if logged else (before, after)
            changes.append({"before": names[present[cp - 1]], "at": names[present[cp]],
                            "level_before": float(lb), "level_after": float(la),
                            "rel_change": float(la / lb - 1) if lb else None, "p": p})
        out.append({"levels": key, "points": points, "change_points": changes})
    return out


METHOD = ("change points between inputs: each input's median (log scale when positive), the "
          "maximal two-sample t over splits into segments of at least "
          f"{MIN_SEGMENT} inputs (Worsley 1979) with its null distribution for independent "
          f"normal levels ({NULL_DRAWS:,} seeded draws), binary segmentation at α; the level "
          "of a segment is the geometric mean of its inputs' medians")
