"""The `concurrency` section (burst campaigns only): one row per burst (wait/run/service
percentiles, throttles, co-residency), then the staggering heatmaps and their table. The numbers
come from `faascope.analysis.concurrency`; this module lays them out."""
from __future__ import annotations

import json
import math

import pandas as pd

from faascope.analysis.concurrency import (
    SCALING_METRICS, SCALING_STATS, bandwidth_curves, burst_stats, heatmap_panels, load_bursts,
    metric_label, scaling_curves, stagger_improvements, too_few_note,
)
from faascope.analysis.improvement import MIN_BURSTS_PER_SIDE, excludes_zero_text, format_ci
from faascope.analysis.intervals import without_ci
from faascope.errors import BadInput
from faascope.report.figures import Fig
from faascope.report.items import Block, Text, table
from faascope.report.plot.model import Axis, Legend, Line, Panel, Plot
from faascope.report.plot.style import DASHES, MARKERS, PALETTE
from faascope.report.sections.context import Ctx
from faascope.report.stagger_heatmaps import (
    SIGNIFICANCE_NOTE, TITLE, delay_label, heatmaps_plot, html_height, static_size,
)
from faascope.store.reader import is_burst_results
from faascope.units import format_duration

MiB = 1 << 20
STAT_WORDS = {"p50": "median", "p95": "p95", "max": "p100 (max)"}
METRIC_WORDS = {"wait_s": "wait", "run_s": "run", "service_s": "service"}


def _group_columns(curves: pd.DataFrame) -> list[str]:
    return [c for c in curves.columns if c not in ("burst_size", "column", "mean", "ci_low", "ci_high", "ci_why",
                                                   "n_bursts")]


def _group_lines(curves: pd.DataFrame, column: str, scale: float = 1.0, legend: bool = True) -> list[Line]:
    """One line per group (the factors other than the burst size) of `column` against burst size."""
    groups = _group_columns(curves)
    sub = curves[curves["column"] == column]
    lines = []
    items = sub.groupby(groups, sort=False, dropna=False) if groups else [((), sub)]
    # colour by the first grouping factor (e.g. the storage), line style by the others
    firsts = list(dict.fromkeys(curves[groups[0]])) if groups else []
    rests = list(dict.fromkeys(tuple(r) for r in curves[groups[1:]].itertuples(index=False))) if groups else []
    for key, g in items:
        key = key if isinstance(key, tuple) else (key,)
        name = " · ".join(f"{v}" for v in key) or "all"
        ci = firsts.index(key[0]) if groups else 0
        ri = rests.index(tuple(key[1:])) if groups and tuple(key[1:]) in rests else 0
        g = g.sort_values("burst_size")
        lines.append(Line(g["burst_size"].astype(float).tolist(), (g["mean"] / scale).tolist(), name=name,
                          color=PALETTE[ci % len(PALETTE)], dash=DASHES[ri % len(DASHES)],
                          marker=MARKERS[ri % len(MARKERS)], legend=legend,
                          hover=f"{name}: %{{y:.4g}} at burst size %{{x}}<extra></extra>"))
    return lines


def _burst_axis(curves: pd.DataFrame) -> Axis:
    sizes = sorted(float(v) for v in curves["burst_size"].unique())
    # sizes usually double (1, 2, 4, 8 … 1000): a log axis spaces them evenly
    log = max(sizes) / max(min(sizes), 1) >= 4
    return Axis("burst size (concurrent invocations)", log=log,
                ticks=(sizes, [f"{v:g}" for v in sizes]),
                range=(min(sizes) / 1.3, max(sizes) * 1.3) if log else None)


def scaling_fig(curves: pd.DataFrame) -> Fig:
    """Wait, run and service time at p50/p95/p100 against the burst size (rows: metrics;
    columns: statistics), one line per group."""
    panels = []
    for met in SCALING_METRICS:
        for st in SCALING_STATS:
            panels.append(Panel(_group_lines(curves, f"{met}_{st}", legend=not panels),
                                _burst_axis(curves), Axis(f"{METRIC_WORDS[met]} (s)"),
                                title=f"{STAT_WORDS[st]} {METRIC_WORDS[met]} time"))
    groups = _group_columns(curves)
    if not groups:  # one line per panel: nothing for a legend to tell apart
        for p in panels:
            for m in p.marks:
                m.legend = False
    return Fig("burst_scaling_wait_run_service", "Wait, run and service time against burst size",
               Plot(panels, title="Wait, run and service time against burst size", cols=len(SCALING_STATS),
                    legend=Legend(" · ".join(groups), where="top") if groups else None),
               caption="Each point is the mean over the bursts of that size of the per-burst statistic "
                       "(median, p95, max over the burst's successful members). wait = send → function start, "
                       "run = start → workload end, service = wait + run.",
               size=(8.0, 6.8), height=820)


def bandwidth_fig(curves: pd.DataFrame) -> Fig:
    """Per-function and aggregate bandwidth against the burst size (the co-location view)."""
    groups = _group_columns(curves)
    panels = [Panel(_group_lines(curves, "per_function_bytes_per_s", MiB), _burst_axis(curves),
                    Axis("MiB/s per function"), title="per function: bytes / run time (median member)"),
              Panel(_group_lines(curves, "aggregate_bytes_per_s", MiB, legend=False), _burst_axis(curves),
                    Axis("MiB/s, all members"), title="aggregate: all bytes / the burst's span")]
    if not groups:
        for p in panels:
            for m in p.marks:
                m.legend = False
    return Fig("burst_bandwidth_per_function_and_aggregate", "Per-function and aggregate bandwidth per burst",
               Plot(panels, title="Bandwidth per function and in aggregate against burst size", cols=2,
                    legend=Legend(" · ".join(groups), where="top") if groups else None),
               caption="Per function: the median member's bytes / run time; aggregate: every member's bytes / "
                       "the burst's span (first member received → last workload end). What the curves show, "
                       "group by group, is said under the table that follows.",
               size=(7.6, 3.2), height=420)


def _direction(lo: pd.Series, hi: pd.Series) -> str:
    """How a curve went from its smallest to its largest burst size, judged by the two means'
    intervals: a change only where they do not overlap (conservative), none claimed without them."""
    if any(v is None or pd.isna(v) for v in (lo["ci_low"], lo["ci_high"], hi["ci_low"], hi["ci_high"])):
        why = next((w for w in (lo.get("ci_why"), hi.get("ci_why")) if isinstance(w, str) and w), "no intervals")
        return f"no direction claimed (intervals: {why})"
    if hi["ci_high"] < lo["ci_low"]:
        return "fell (the intervals do not overlap)"
    if hi["ci_low"] > lo["ci_high"]:
        return "rose (the intervals do not overlap)"
    return "no change beyond the intervals"


def bandwidth_sentences(curves: pd.DataFrame, conf: str) -> list[str]:
    """One sentence per group saying what its per-function and aggregate bandwidth did from the
    smallest to the largest burst size, from the numbers in the table (never a fixed claim: the
    co-location finding is Kim & Lee's, a local platform or another cloud may show otherwise)."""
    groups = _group_columns(curves)
    out = []
    for key, g in (curves.groupby(groups, sort=False, dropna=False) if groups else [((), curves)]):
        key = key if isinstance(key, tuple) else (key,)
        parts = []
        for col, word in (("per_function_bytes_per_s", "per-function"), ("aggregate_bytes_per_s", "aggregate")):
            c = g[g["column"] == col].sort_values("burst_size")
            if len(c) < 2:
                continue
            lo, hi = c.iloc[0], c.iloc[-1]
            parts.append(f"{word} bandwidth {lo['mean'] / MiB:.4g} → {hi['mean'] / MiB:.4g} MiB/s "
                         f"(×{hi['mean'] / lo['mean']:.2f}): {_direction(lo, hi)}")
        if not parts:
            continue
        sizes = sorted(g["burst_size"].unique())
        where = ", ".join(f"{k}={v}" for k, v in zip(groups, key))
        out.append(f"{where + ': ' if where else ''}from {sizes[0]:g} to {sizes[-1]:g} functions at once, "
                   + "; ".join(parts) + f" ({conf} intervals of the means over bursts).")
    return out


def curves_table(curves: pd.DataFrame, columns: list[str], fmt) -> tuple[list[str], list[list]]:
    groups = _group_columns(curves)
    rows = []
    wide = curves[curves["column"].isin(columns)]
    for key, g in wide.groupby(groups + ["burst_size"], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        cells = []
        for col in columns:
            r = g[g["column"] == col]
            if r.empty:
                cells.append("–")
                continue
            r = r.iloc[0]
            why = r.get("ci_why")
            cells.append(without_ci(fmt(r["mean"]), why if isinstance(why, str) else None)
                         if r["ci_low"] is None or pd.isna(r["ci_low"])
                         else f"{fmt(r['mean'])} [{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]")
        rows.append(list(key) + [int(g["n_bursts"].max())] + cells)
    return groups + ["burst size", "bursts"], rows


def burst_senders(bursts: pd.DataFrame) -> dict[tuple[str, int], str]:
    """(cell, burst) -> the sender that dispatched its measured members (``go`` or ``python``), for
    the bursts that recorded it (files written before the choice existed record none)."""
    out: dict[tuple[str, int], str] = {}
    for _, b in bursts[bursts["kind"] == "measure"].iterrows():
        sched = json.loads(b["schedule_json"]) if isinstance(b["schedule_json"], str) else {}
        if sched.get("dispatcher"):
            out[(b["cell_key"], int(b["burst"]))] = str(sched["dispatcher"])
    return out


def burst_table_rows(stats: pd.DataFrame,
                     senders: dict[tuple[str, int], str] | None = None) -> tuple[list[str], list[list]]:
    """Headers and rows of the per-burst table (times in ms below a second); with ``senders``
    (bursts that recorded their sender) also the sender and the arrival spread."""
    def f(v, ms=True):
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return "–"
        return f"{v * 1e3:.3g} ms" if ms and v < 1 else (f"{v:.3g} s" if ms else f"{v}")

    dispatch = ["sender", "send spread", "arrival spread"] if senders else ["spread"]
    headers = ["cell", "burst", "ok/planned", "throttled", *dispatch, "wait p50", "wait p99",
               "run p50", "service p95", "service max", "cold", "instances", "max/host conc."]
    rows = []
    for _, r in stats.iterrows():
        spreads = ([senders.get((r["cell_key"], int(r["burst"])), "–"), f(r["send_spread_s"]),
                    f(r.get("arrival_spread_est_s"))] if senders else [f(r["send_spread_s"])])
        rows.append([r["cell_key"], r["burst"], f"{r['ok']}/{r['planned']}", r["throttled"],
                     *spreads, f(r.get("wait_s_p50")), f(r.get("wait_s_p99")),
                     f(r.get("run_s_p50")), f(r.get("service_s_p95")), f(r.get("service_s_max")),
                     r["cold"], r["instances"], r["max_concurrent_per_host"]])
    return headers, rows


def _spread(v: pd.Series) -> str:
    """Median [min–max] of a per-burst spread in seconds, in ms below a second; – when none."""
    v = pd.to_numeric(v, errors="coerce").dropna()
    if v.empty:
        return "–"
    f = format_duration
    return f(float(v.median())) + (f" [{f(float(v.min()))}–{f(float(v.max()))}]" if len(v) > 1 else "")


def dispatch_spread_table(stats: pd.DataFrame, senders: dict[tuple[str, int], str]):
    """The dispatch spread this campaign's bursts were sent with, per cell (None without one):
    a burst's results describe invocations that left the client over its send spread and reached
    the functions over its arrival spread, so both are stated beside the results they qualify."""
    if stats.empty or stats["send_spread_s"].isna().all():
        return None
    rows = []
    for ck, g in stats.groupby("cell_key", sort=False):
        sent_by = sorted({senders.get((ck, int(b)), "") for b in g["burst"]} - {""})
        rows.append([ck, len(g), int(g["planned"].max()), ", ".join(sent_by) or "–",
                     _spread(g["send_spread_s"]), _spread(g.get("arrival_spread_est_s", pd.Series(dtype=float)))])
    worst_send = pd.to_numeric(stats["send_spread_s"], errors="coerce").max()
    arr = pd.to_numeric(stats.get("arrival_spread_est_s", pd.Series(dtype=float)), errors="coerce")
    worst = f"at most {format_duration(float(worst_send))} to send"
    if arr.notna().any():
        worst += f" and {format_duration(float(arr.max()))} to arrive"
    notes = [f"Measured for this campaign's {len(stats)} burst(s): {worst}. Send spread = last − first "
             "send of a burst at the client; arrival spread = the same at the functions (their "
             "received time, less the platform's cold-start set-up where it reports it). Median "
             "[min–max] over a cell's bursts. A burst is as simultaneous as these spreads: read its "
             "wait and service times against them."]
    return table("Dispatch spread (measured)", ["cell", "bursts", "members", "sender", "send spread",
                                                "arrival spread"], rows, notes)


def concurrency_section(ctx: Ctx) -> Block | None:
    """Bursts, co-residency and the staggering heatmaps; None when the input is not a burst campaign."""
    path = getattr(ctx.data.source, "path", None)
    if path is None or not is_burst_results(path):
        return None
    data = load_bursts(path)
    stats = burst_stats(data, include_split=True)
    b = Block("concurrency", "Bursts, co-residency and staggering")
    if stats.empty:
        b.items.append(Text("No measured burst is recorded yet.", "note"))
        return b
    senders = burst_senders(data.bursts)
    headers, rows = burst_table_rows(stats, senders)
    notes = ["wait = send → function start, run = start → workload end, service = wait + run; "
             "spread = last send − first send of the burst (client side)"]
    if senders:
        notes = ["wait = send → function start, run = start → workload end, service = wait + run; "
                 "send spread = last send − first send of the burst (client side), arrival spread "
                 "= the same at the functions (received, less the platform's cold-start set-up "
                 "where it says it); sender = go (the Go dispatcher: one pre-opened connection and "
                 "one write per member at its instant) or python (the asyncio sender)"]
    if stats["split"].any():
        notes.append(f"{int(stats['split'].sum())} burst(s) were resumed after an interruption "
                     "(split): they are left out of the staggering comparison")
    spread = dispatch_spread_table(stats, senders)
    if spread is not None:
        b.items.append(spread)
    b.items.append(table("Per burst", headers, rows, notes))
    thr = int(stats["throttled"].sum())
    if thr:
        b.items.append(Text(f"{thr:,} invocation(s) were throttled (TooManyRequestsException); "
                            "they are recorded as client errors, never retried.", "warn"))
    curves = scaling_curves(data, alpha=ctx.alpha)
    if not curves.empty:
        b.items.append(scaling_fig(curves))
        cols = [f"{m}_{st}" for m in SCALING_METRICS for st in SCALING_STATS]
        heads, rows = curves_table(curves, cols, lambda v: f"{v * 1e3:.3g} ms" if v < 1 else f"{v:.3g} s")
        b.items.append(table(f"Wait, run and service time per burst size (mean over bursts [{ctx.conf} CI])",
                             heads + [f"{STAT_WORDS[st]} {METRIC_WORDS[m]}" for m in SCALING_METRICS
                                      for st in SCALING_STATS], rows))
    bw = bandwidth_curves(data, alpha=ctx.alpha)
    if not bw.empty:
        b.items.append(bandwidth_fig(bw))
        heads, rows = curves_table(bw, ["per_function_bytes_per_s", "aggregate_bytes_per_s"],
                                   lambda v: f"{v / MiB:.4g} MiB/s")
        b.items.append(table(f"Bandwidth per burst size (mean over bursts [{ctx.conf} CI])",
                             heads + ["per function", "aggregate"], rows))
        for line in bandwidth_sentences(bw, ctx.conf):
            b.items.append(Text(line))
    try:
        imp = stagger_improvements(data, alpha=ctx.alpha)
    except BadInput:  # not a staggering grid (no batch_size and delay factors)
        imp = pd.DataFrame()
    panels = heatmap_panels(imp)
    if panels:
        few = too_few_note(imp)
        b.items.append(Fig("stagger_improvement_heatmaps", TITLE, heatmaps_plot(panels),
                           caption="Blue: the staggered cell is better (lower) than the all-at-once "
                                   "cell; red: worse. Each value compares the mean over bursts of "
                                   "the per-burst statistic. "
                                   + SIGNIFICANCE_NOTE.format(conf=ctx.conf, need=MIN_BURSTS_PER_SIDE)
                                   + (f" {few}" if few else ""),
                           size=static_size(panels), height=html_height(panels)))
        trows = [[r["batch_size"], delay_label(r["delay"]), metric_label(r["metric"], r["stat"]),
                  "–" if r["improvement_pct"] is None or pd.isna(r["improvement_pct"]) else f"{r['improvement_pct']:+.1f}%",
                  format_ci(r), excludes_zero_text(r),
                  r["n_bursts"], r["n_baseline"]] for _, r in imp.iterrows()]
        b.items.append(table("Staggering vs all at once", ["batch size", "delay", "metric",
                                                           "improvement", f"{ctx.conf} CI", "CI excludes 0",
                                                           "bursts", "baseline bursts"], trows,
                             [few] if few else None))
    return b
