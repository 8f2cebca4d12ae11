"""The `concurrency` section (burst campaigns only): one row per burst (wait/run/service
percentiles, throttles, co-residency), then the staggering heatmaps and their table. The numbers
come from `faascope.analysis.concurrency`; this module lays them out."""
from __future__ import annotations

import math

import pandas as pd

from faascope.analysis.concurrency import (
    burst_stats, heatmap_panels, is_burst_store, load_bursts, metric_label, stagger_improvements,
)
from faascope.errors import BadInput
from faascope.report.figures import Fig
from faascope.report.items import Block, Text, table
from faascope.report.sections.context import Ctx
from faascope.report.stagger_heatmaps import TITLE, delay_label, heatmaps_plot, html_height, static_size


def burst_table_rows(stats: pd.DataFrame) -> tuple[list[str], list[list]]:
    """Headers and rows of the per-burst table (times in ms below a second)."""
    def f(v, ms=True):
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return "–"
        return f"{v * 1e3:.3g} ms" if ms and v < 1 else (f"{v:.3g} s" if ms else f"{v}")

    headers = ["cell", "burst", "ok/planned", "throttled", "spread", "wait p50", "wait p99",
               "run p50", "service p95", "service max", "cold", "instances", "max/host conc."]
    rows = []
    for _, r in stats.iterrows():
        rows.append([r["cell_key"], r["burst"], f"{r['ok']}/{r['planned']}", r["throttled"],
                     f(r["send_spread_s"]), f(r.get("wait_s_p50")), f(r.get("wait_s_p99")),
                     f(r.get("run_s_p50")), f(r.get("service_s_p95")), f(r.get("service_s_max")),
                     r["cold"], r["instances"], r["max_concurrent_per_host"]])
    return headers, rows


def concurrency_section(ctx: Ctx) -> Block | None:
    """Bursts, co-residency and the staggering heatmaps; None when the input is not a burst campaign."""
    path = getattr(ctx.data.source, "path", None)
    if path is None or not is_burst_store(path):
        return None
    data = load_bursts(path)
    stats = burst_stats(data, include_split=True)
    b = Block("concurrency", "Bursts, co-residency and staggering")
    if stats.empty:
        b.items.append(Text("No measured burst is recorded yet.", "note"))
        return b
    headers, rows = burst_table_rows(stats)
    notes = ["wait = send → function start, run = start → workload end, service = wait + run; "
             "spread = last send − first send of the burst (client side)"]
    if stats["split"].any():
        notes.append(f"{int(stats['split'].sum())} burst(s) were resumed after an interruption "
                     "(split): they are left out of the staggering comparison")
    b.items.append(table("Per burst", headers, rows, notes))
    thr = int(stats["throttled"].sum())
    if thr:
        b.items.append(Text(f"{thr:,} invocation(s) were throttled (TooManyRequestsException); "
                            "they are recorded as client errors, never retried.", "warn"))
    try:
        imp = stagger_improvements(data, alpha=ctx.alpha)
    except BadInput:  # not a staggering grid (no batch_size and delay factors)
        imp = pd.DataFrame()
    panels = heatmap_panels(imp)
    if panels:
        b.items.append(Fig("stagger_improvement_heatmaps", TITLE, heatmaps_plot(panels),
                           caption="Blue: the staggered cell is better (lower) than the all-at-once "
                                   "cell; red: worse. Each value compares the mean over bursts of "
                                   "the per-burst statistic.",
                           size=static_size(panels), height=html_height(panels)))
        trows = [[r["batch_size"], delay_label(r["delay"]), metric_label(r["metric"], r["stat"]),
                  "–" if r["improvement_pct"] is None or pd.isna(r["improvement_pct"]) else f"{r['improvement_pct']:+.1f}%",
                  "–" if r["ci_low"] is None or pd.isna(r["ci_low"]) else f"[{r['ci_low']:+.1f}, {r['ci_high']:+.1f}]",
                  r["n_bursts"], r["n_baseline"]] for _, r in imp.iterrows()]
        b.items.append(table("Staggering vs all at once", ["batch size", "delay", "metric",
                                                           "improvement", "95% CI", "bursts",
                                                           "baseline bursts"], trows))
    return b
