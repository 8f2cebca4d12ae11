"""The `storage` section (object and kv workloads): per-request latency percentiles, throughput
and IOPS per cell, and the requests that failed, were retried or throttled. Statistics:
`faascope.analysis.storage_requests`."""
from __future__ import annotations

import math

from faascope.analysis.per_cell import cell_columns
from faascope.analysis.storage_requests import (
    PERCENTILES, has_storage_requests, request_counts, request_means,
)
from faascope.report.figures import Fig
from faascope.report.items import Block, Text, table
from faascope.report.plot.model import Axis, Legend, Panel, Plot, Points
from faascope.report.sections.context import Ctx
from faascope.report.sections.workload_cells import (
    MiB, all_factors, cell_styles, error_bars, key_of, log_scale, measured_rows, mib_per_s, row_ci, seconds,
)

#: the percentiles drawn (p99.9 equals the max below 1000 requests an invocation, the usual case)
SHOWN = ("p50", "p90", "p99", "max")
#: one marker and shade per percentile, light (median) to dark (max)
PCT_STYLE = {"p50": ("#9ecae1", "circle"), "p90": ("#4292c6", "square"), "p99": ("#08519c", "diamond"),
             "p99.9": ("#08306b", "triangle-up"), "max": ("#000000", "x")}


def _int(v) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{int(v):,}"


def storage_section(ctx: Ctx) -> Block | None:
    df = measured_rows(ctx)
    if not has_storage_requests(df):
        return None
    factors = [f for f in all_factors(ctx) if f in df.columns]
    keys = cell_columns(df, factors)
    means = request_means(df, factors, ctx.alpha)
    counts = request_counts(df, factors)
    by = {(key_of(r, keys), r["measure"]): r for _, r in means.iterrows()}
    cnt = {key_of(r, keys): r for _, r in counts.iterrows()}
    cells = cell_styles(ctx, df)
    pos = list(range(len(cells)))
    ticks = Axis("", ticks=(pos, [c.label for c in cells]), reversed=True)

    def points(measure, name, color, marker, scale=1.0, legend=True):
        got = [(p, by[(c.key, measure)]) for p, c in zip(pos, cells) if (c.key, measure) in by]
        if not got:
            return None
        x = [r["mean"] / scale for _, r in got]
        lo, hi = error_bars(x, [None if r["ci_low"] is None else r["ci_low"] / scale for _, r in got],
                            [None if r["ci_high"] is None else r["ci_high"] / scale for _, r in got])
        return Points(x, [p for p, _ in got], name=name, color=color, marker=marker, size=8, xerr=(lo, hi),
                      err_width=1, legend=legend, hover=f"%{{y}}: {name} %{{x:.4g}}<extra></extra>")

    lat_marks = [m for col, name in PERCENTILES if name in SHOWN
                 for m in [points(col, name, *PCT_STYLE[name])] if m is not None]
    lat_vals = [v for m in lat_marks for v in m.x]
    panels = [Panel(lat_marks, Axis("latency of one request (s)", log=log_scale(lat_vals), log_switch=True),
                    ticks, title="per-request latency (mean of each invocation's percentile)")]
    tp = points("throughput_bytes_per_s", "throughput", "#009E73", "circle", scale=MiB, legend=False)
    if tp is not None:
        panels.append(Panel([tp], Axis("throughput (MiB/s)", log=log_scale(tp.x), log_switch=True), ticks,
                            title="throughput"))
    height = max(280, 34 * len(cells) + 140)
    b = Block("storage", "Storage requests: latency percentiles, throughput, retries")
    b.items.append(Fig("storage_request_latency", "Per-request latency and throughput per cell",
                       Plot(panels, title="Storage requests per cell", legend=Legend("percentile", where="top"),
                            cols=len(panels)),
                       caption=f"Each invocation reports the percentiles of its own requests; a marker is their "
                               f"mean over the cell's invocations with its {ctx.conf} interval.",
                       size=(7.2 if len(panels) > 1 else 6.4, max(2.6, 0.35 * len(cells) + 1.4)), height=height))
    rows = []
    for c in cells:
        def m(col, fmt=seconds):
            r = by.get((c.key, col))
            return row_ci(fmt, r) if r is not None else "–"
        k = cnt.get(c.key)
        rows.append([c.label, m("request_p50_s"), m("request_p99_s"), m("request_max_s"),
                     m("throughput_bytes_per_s", mib_per_s), m("iops", lambda v: f"{v:,.0f}"),
                     _int(k["invocations"]) if k is not None else "–"]
                    + [_int(k.get(col)) if k is not None else "–"
                       for col in ("requests_ok", "requests_failed", "request_retries", "request_throttles")])
    b.items.append(table(f"Requests per cell (mean [{ctx.conf} CI] over invocations; counts summed)",
                         ["cell", "p50", "p99", "max", "throughput", "IOPS", "invocations", "ok", "failed",
                          "retries", "throttled"], rows))
    thr = int(counts["request_throttles"].fillna(0).sum()) if "request_throttles" in counts else 0
    if thr:
        b.items.append(Text(f"{thr:,} storage request attempt(s) were throttled (S3 SlowDown, DynamoDB "
                            "throughput exceeded, HTTP 429/503).", "warn"))
    return b
