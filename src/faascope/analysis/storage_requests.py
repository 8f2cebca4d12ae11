"""Storage requests per cell (``object`` and ``kv`` workloads): per-request latency percentiles,
throughput, IOPS, and the requests that failed, were retried or throttled.

Each invocation reports the percentiles of its own requests (``request_p50_s`` … ``request_max_s``);
per cell they are averaged over invocations with a Student-t interval
(:mod:`faascope.analysis.per_cell`), so "p99" reads as "the typical invocation's p99". Counts
are summed over the cell's invocations.
"""
from __future__ import annotations

import pandas as pd

from faascope.analysis.per_cell import cell_columns, cell_means, has_values

PERCENTILES = [("request_p50_s", "p50"), ("request_p90_s", "p90"), ("request_p99_s", "p99"),
               ("request_p999_s", "p99.9"), ("request_max_s", "max")]
RATES = ["throughput_bytes_per_s", "iops"]
COUNTS = ["requests_ok", "requests_failed", "request_retries", "request_throttles"]


def has_storage_requests(df: pd.DataFrame) -> bool:
    """Storage request counters are recorded (object and kv workloads report them)."""
    return has_values(df, "requests_ok") and has_values(df, "request_p50_s")


def request_means(df: pd.DataFrame, factors: list[str], alpha: float = 0.05) -> pd.DataFrame:
    """Per cell and measure (percentiles and rates): n, mean, CI, median."""
    return cell_means(df, factors, [c for c, _ in PERCENTILES] + RATES, alpha)


def request_counts(df: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    """Per cell: invocations and the sums of requests ok, failed, retried and throttled."""
    keys = cell_columns(df, factors)
    present = [c for c in COUNTS if c in df.columns]
    num = df[keys + present].copy()
    for c in present:
        num[c] = pd.to_numeric(num[c], errors="coerce")
    out = num.groupby(keys, sort=False, dropna=False)[present].sum(min_count=1)
    out.insert(0, "invocations", num.groupby(keys, sort=False, dropna=False).size())
    return out.reset_index()
