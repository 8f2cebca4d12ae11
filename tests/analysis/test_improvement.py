"""The staggering improvement's interval (faascope.analysis.improvement): checked against R, and
the one rule — MIN_BURSTS_PER_SIDE — checked by a seeded coverage simulation on burst statistics
built as a burst campaign builds them (per-member latencies → one statistic per burst).

The table in docs/analysis.md ("Staggering") is this simulation's output:
``python3 tests/analysis/test_improvement.py`` prints it.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from faascope.analysis.improvement import (
    MIN_BURSTS_PER_SIDE, ci_excludes_zero, excludes_zero_text, format_ci, improvement, p_not_better,
    ratio_interval, ratio_intervals, too_few,
)

R_FIXTURE = Path(__file__).parent / "data" / "r" / "improvement.json"

# ------------------------------------------------------------------------------------ against R
CASES = json.loads(R_FIXTURE.read_text())["cases"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_fieller_interval_and_welch_p_agree_with_r(name):
    """R inverts its own t.test(cand, rho * base) with uniroot; faascope bisects Welch's
    statistic: the same interval to 1e-9 relative, the same one-sided p-value."""
    case = CASES[name]
    c, b = np.array(case["cand"]), np.array(case["base"])
    lo, hi = ratio_interval(c.mean(), c.var(ddof=1) / c.size, c.size, b.mean(), b.var(ddof=1) / b.size, b.size)
    assert lo == pytest.approx(case["ratio_low"], rel=1e-9, abs=1e-12)
    if case["ratio_high"] == "Inf":
        assert hi == math.inf
    else:
        assert hi == pytest.approx(case["ratio_high"], rel=1e-9)
    assert p_not_better(c, b) == pytest.approx(case["p_less"], rel=1e-9, abs=1e-15)
    if min(c.size, b.size) >= MIN_BURSTS_PER_SIDE:
        r = improvement(c, b)
        assert r["improvement_pct"] == pytest.approx(case["improvement_pct"], rel=1e-12)
        assert r["ci_high"] == pytest.approx(100 * (1 - case["ratio_low"]), rel=1e-9)
        if case["ratio_high"] == "Inf":
            assert r["ci_low"] == -math.inf and format_ci(r).startswith("[−∞, ")
        # the interval excludes 0 % exactly when Welch's two-sided test rejects at 5 %
        assert ci_excludes_zero(r["ci_low"], r["ci_high"]) == (min(case["p_less"], 1 - case["p_less"]) < 0.025)


def test_constant_bursts_give_an_exact_ratio():
    lo, hi = ratio_interval(0.5, 0.0, 5, 1.0, 0.0, 5)
    assert lo == hi == 0.5
    r = improvement([0.25] * 5, [0.26] * 5)
    assert r["ci_low"] == r["ci_high"] == pytest.approx(100 * (1 - 0.25 / 0.26))
    assert r["p_value"] == 0.0


# ------------------------------------------------------------------------------------ the rule
def test_below_the_rule_there_is_no_interval_no_p_value_and_no_verdict():
    """A stagger grid of 2 replications printed "–" as its CI yet "CI excludes 0: no": below the
    rule every one of them says why it is missing."""
    r = improvement([0.9, 1.2], [1.0, 1.3])
    assert r["improvement_pct"] == pytest.approx(100 * (1 - 1.05 / 1.15))
    assert r["ci_low"] is None and r["p_value"] is None
    assert r["too_few"] == too_few(2) == f"too few (n = 2 bursts; needs ≥ {MIN_BURSTS_PER_SIDE})"
    assert format_ci(r) == r["too_few"] and excludes_zero_text(r) == "too few"
    n = MIN_BURSTS_PER_SIDE
    rng = np.random.default_rng(0)
    r = improvement(0.5 + 0.01 * rng.standard_normal(n), 1.0 + 0.01 * rng.standard_normal(n))
    assert r["too_few"] is None and excludes_zero_text(r) == "yes" and r["p_value"] < 0.001
    # the smaller side decides
    r = improvement(np.full(n + 3, 0.5) + 0.01 * rng.standard_normal(n + 3), [1.0, 1.1, 0.9])
    assert r["too_few"] == too_few(3)


# ------------------------------------------------------------------------------------ coverage
MEMBERS = 16   # invocations per burst (the shipped stagger examples' burst size)
STATS = ("p50", "p95", "max")
#: (name, staggered, all at once); each side: (warm median, member spread σ, burst-to-burst σ,
#: share of cold members, cold factor). Per member: burst effect × lognormal warm time × (cold
#: factor if cold); per burst: p50 / p95 / max over its members. Cold starts 5 % at 8x: issue
#: #25's mixture; "1 % vs 5 %": staggering reuses warm instances. The size of the change needs
#: no second scenario: the interval is equivariant in scale (staggered × c, ratio × c), so with
#: the same seed "no change" covers exactly as "40 % better" does.
SCENARIOS = [
    ("warm, 40 % better", (0.6, .3, .1, 0, 1), (1, .3, .1, 0, 1)),
    ("skewed members (σ 0.8)", (0.6, .8, .2, 0, 1), (1, .8, .2, 0, 1)),
    ("very skewed + 2 % cold x8", (0.6, 1.2, .2, .02, 8), (1, 1.2, .2, .02, 8)),
    ("noisy bursts (σ 0.5)", (0.6, .3, .5, 0, 1), (1, .3, .5, 0, 1)),
    ("burst noise 0.1 vs 0.3", (0.6, .3, .1, 0, 1), (1, .3, .3, 0, 1)),
    ("burst noise 0.3 vs 0.1", (0.6, .3, .3, 0, 1), (1, .3, .1, 0, 1)),
    ("5 % cold x8 both", (0.6, .3, .1, .05, 8), (1, .3, .1, .05, 8)),
    ("cold 1 % vs 5 % x8", (0.6, .3, .1, .01, 8), (1, .3, .1, .05, 8)),
    ("1 % cold x8 both", (0.6, .3, .1, .01, 8), (1, .3, .1, .01, 8)),
]
#: a cold mode only the all-at-once side has (2 % of members, so 28 % of its bursts): no n up to
#: 20 reaches 0.93 on p95/max, but every miss understates the improvement (checked below)
ONE_SIDED_MODE = ("cold 0 % vs 2 % x8", (0.6, .3, .1, 0, 8), (1, .3, .1, .02, 8))
REPS = 2000


def _bursts(rng, reps, n, warm, sig, bsig, p, k):
    effect = np.exp(bsig * rng.standard_normal((reps, n, 1)))
    member = warm * np.exp(sig * rng.standard_normal((reps, n, MEMBERS)))
    cold = rng.random((reps, n, MEMBERS)) < p
    x = effect * member * np.where(cold, k, 1.0)
    return {"p50": np.quantile(x, 0.5, axis=2), "p95": np.quantile(x, 0.95, axis=2), "max": x.max(2)}


@functools.lru_cache(maxsize=None)
def _truth(cand, base, seed=99):
    """The true ratio of means (staggered / all at once) per statistic: 100 000 bursts a side."""
    rng = np.random.default_rng(seed)
    c, b = _bursts(rng, 1, 100_000, *cand), _bursts(rng, 1, 100_000, *base)
    return {s: c[s].mean() / b[s].mean() for s in STATS}


def coverage(scenario, n: int, seed: int = 7) -> dict[str, tuple[float, float, float]]:
    """Per statistic: (coverage, share of intervals wholly below the true ratio — the improvement
    overstated —, share wholly above it) of the 95 % interval with n bursts a side."""
    _, cand, base = scenario
    truth = _truth(cand, base)
    rng = np.random.default_rng(seed)
    c, b = _bursts(rng, REPS, n, *cand), _bursts(rng, REPS, n, *base)
    out = {}
    for s in STATS:
        lo, hi = ratio_intervals(c[s].mean(1), c[s].var(1, ddof=1) / n, n, b[s].mean(1),
                                 b[s].var(1, ddof=1) / n, n)
        r = truth[s]
        out[s] = (float(np.mean((lo <= r) & (r <= hi))), float(np.mean(hi < r)), float(np.mean(lo > r)))
    return out


def test_the_rule_is_the_smallest_n_whose_interval_covers():
    """At MIN_BURSTS_PER_SIDE bursts a side every scenario's coverage is ≥ 0.93; one burst fewer,
    some scenario falls below: the constant is neither too low nor wastefully high."""
    at = {name: coverage((name, c, b), MIN_BURSTS_PER_SIDE) for name, c, b in SCENARIOS}
    worst = min(v[0] for cov in at.values() for v in cov.values())
    assert worst >= 0.93, at
    below = {name: coverage((name, c, b), MIN_BURSTS_PER_SIDE - 1) for name, c, b in SCENARIOS}
    assert min(v[0] for cov in below.values() for v in cov.values()) < 0.93, below


def test_a_mode_only_one_side_has_makes_the_interval_err_towards_no_improvement():
    cov = coverage(ONE_SIDED_MODE, MIN_BURSTS_PER_SIDE)
    assert cov["p50"][0] >= 0.93
    for s in ("p95", "max"):
        assert cov[s][0] < 0.93           # the limit, stated in docs/analysis.md
        assert cov[s][1] <= 0.025          # overstated no more often than a 95 % interval's tail
        assert cov[s][2] > 0.05            # the misses: the improvement understated


def test_the_old_percentile_bootstrap_did_not_cover():
    """What the rule replaces: a percentile bootstrap of the improvement (2000 resamples) at the
    old minimum of 5 bursts a side covered about 0.87 on warm bursts."""
    _, cand, base = SCENARIOS[0]
    truth = _truth(cand, base)["p50"]
    rng = np.random.default_rng(3)
    reps, n, boots = 400, 5, 1000
    c, b = _bursts(rng, reps, n, *cand)["p50"], _bursts(rng, reps, n, *base)["p50"]
    hit = 0
    for i in range(reps):
        cm = rng.choice(c[i], (boots, n)).mean(1)
        bm = rng.choice(b[i], (boots, n)).mean(1)
        ratio = cm / bm
        hit += np.quantile(ratio, 0.025) <= truth <= np.quantile(ratio, 0.975)
    assert hit / reps < 0.90


if __name__ == "__main__":  # the table of docs/analysis.md
    print("| scenario | " + " | ".join(f"n={n}: {s}" for n in (MIN_BURSTS_PER_SIDE - 1, MIN_BURSTS_PER_SIDE)
                                          for s in STATS) + " |")
    for sc in SCENARIOS + [ONE_SIDED_MODE]:
        row = [coverage(sc, n)[s][0] for n in (MIN_BURSTS_PER_SIDE - 1, MIN_BURSTS_PER_SIDE) for s in STATS]
        print(f"| {sc[0]} | " + " | ".join(f"{v:.3f}" for v in row) + " |")


# ------------------------------------------------------------------------------------ one source
ROOT = Path(__file__).resolve().parents[2]


def test_shipped_stagger_grids_meet_the_rule_and_the_docs_state_it():
    """The examples are grids a user runs first: each gives every comparison an interval. The
    docs and examples that quote the rule's number quote MIN_BURSTS_PER_SIDE."""
    import re

    import yaml

    grids = [p for p in sorted((ROOT / "examples").glob("*.yaml"))
             if {"batch_size", "delay"} <= set((yaml.safe_load(p.read_text()).get("factors") or {}))]
    assert len(grids) >= 2
    for p in grids:
        assert yaml.safe_load(p.read_text())["design"]["replications"] >= MIN_BURSTS_PER_SIDE, p.name
    quoted = 0
    for p in [*grids, *sorted((ROOT / "docs").glob("*.md"))]:
        text = p.read_text()
        for m in re.finditer(r"bursts; needs ≥ (\d+)\)|(\d+) bursts a side|MIN_BURSTS_PER_SIDE`? = (\d+)|(\d+) fresh bursts", text):
            assert int(next(g for g in m.groups() if g)) == MIN_BURSTS_PER_SIDE, (p.name, m.group(0))
            quoted += 1
    assert quoted >= 4
