"""Tests whose unit is a run or a block, not an invocation: the statistics that let `faascope
compare` call a change a change although runs drift.

Runs of one spec on one host differ by more than the noise within a run (two identical specs
run back to back differed by 24.9 %, which a per-invocation Welch test called significant at
p = 0.019). So the unit of replication is the run — or, in an interleaved campaign, the block
in which BASE and NEW both ran — and each unit contributes one value: the **log of its mean**.
Logs because a change of latency or throughput is a ratio ("20 % slower"), because a host's
drift multiplies both sides alike (the log turns it into a shift that pairing removes), and
because a ratio's interval then stays positive. The estimate is the ratio NEW / BASE of the
(geometric mean over units of the) unit means; the relative change is ratio − 1.

- :func:`paired_log_t`: an interleaved campaign (randomised complete blocks; duet
  benchmarking, Bulej et al., ICPE 2020): the paired t test on log(NEW block mean) −
  log(BASE block mean) over the blocks holding both (R: ``t.test(log(new), log(base),
  paired = TRUE)``).
- :func:`welch_log_t`: several runs per side: Welch's t on the log run means (R:
  ``t.test(log(new), log(base))``), so the between-run variance is the error term.
- :func:`drift_log_t`: too few runs on a side for their own variance, but runs that estimate
  the drift — A/A runs of BASE's spec (``--aa``) or BASE's own runs: the difference of the
  sides' mean log run means against that spread, s·√(1/k_base + 1/k_new) with the drift
  runs' k − 1 degrees of freedom (R: ``t.test(new, base, var.equal = TRUE)`` when the drift
  runs are BASE's and NEW has one run). It assumes NEW's runs vary as the drift runs do.

Every function works on the last axis of its arrays, so the coverage simulation
(tests/compare/test_compare_coverage.py) runs thousands of replicates through this very code.
"""
from __future__ import annotations

import numpy as np
from scipy import stats


def _result(est, se, df, alpha: float) -> dict:
    """t, two-sided p and the 1 − alpha interval of a log ratio, back-transformed to ratios."""
    est, se, df = np.asarray(est, float), np.asarray(se, float), np.asarray(df, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = est / se
        q = stats.t.ppf(1 - alpha / 2, df)
        p = 2 * stats.t.sf(np.abs(t), df)
        lo, hi = np.exp(est - q * se), np.exp(est + q * se)
    return {"log_ratio": est, "se": se, "df": df, "t": t, "p": p, "ratio": np.exp(est),
            "ratio_ci": (lo, hi)}


def paired_log_t(base: np.ndarray, new: np.ndarray, alpha: float = 0.05) -> dict:
    """Paired t on log(new) − log(base); ``base`` and ``new`` are the blocks' means, aligned."""
    d = np.log(np.asarray(new, float)) - np.log(np.asarray(base, float))
    b = d.shape[-1]
    return _result(d.mean(-1), d.std(-1, ddof=1) / np.sqrt(b), np.full(d.shape[:-1], b - 1.0),
                   alpha)


def welch_log_t(base: np.ndarray, new: np.ndarray, alpha: float = 0.05) -> dict:
    """Welch's t on the log run means of each side (at least two runs a side)."""
    lb, ln = np.log(np.asarray(base, float)), np.log(np.asarray(new, float))
    kb, kn = lb.shape[-1], ln.shape[-1]
    vb, vn = lb.var(-1, ddof=1) / kb, ln.var(-1, ddof=1) / kn
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (vb + vn) ** 2 / (vb ** 2 / (kb - 1) + vn ** 2 / (kn - 1))
    return _result(ln.mean(-1) - lb.mean(-1), np.sqrt(vb + vn), df, alpha)


def drift_log_t(base: np.ndarray, new: np.ndarray, drift: np.ndarray, alpha: float = 0.05) -> dict:
    """The sides' mean log run means compared against the spread of the ``drift`` runs' log
    means (A/A runs; ``drift`` may be ``base`` itself)."""
    lb, ln = np.log(np.asarray(base, float)), np.log(np.asarray(new, float))
    ld = np.log(np.asarray(drift, float))
    kb, kn, kd = lb.shape[-1], ln.shape[-1], ld.shape[-1]
    s = ld.std(-1, ddof=1)
    se = s * np.sqrt(1 / kb + 1 / kn)
    out = _result(ln.mean(-1) - lb.mean(-1), se, np.full(s.shape, kd - 1.0), alpha)
    q = stats.t.ppf(1 - alpha / 2, kd - 1)
    # the band NEW / BASE − 1 stays within, with probability 1 − alpha, when nothing changed
    # but the drift: "within the drift" and "not significant" are the same statement
    out["drift_band"] = (np.exp(-q * se) - 1, np.exp(q * se) - 1)
    out["drift_sd_log"] = s
    return out


def scalar(res: dict) -> dict:
    """One comparison's result as plain floats (None where not finite)."""
    def f(v):
        v = float(v)
        return v if np.isfinite(v) else None
    out = {}
    for k, v in res.items():
        out[k] = [f(x) for x in v] if isinstance(v, tuple) else f(v)
    return out
