"""Latency over the campaign: every invocation (or time-binned medians) over time, the median
by hour of day, and a drift table (needs a timestamp column)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from faascope.analysis import render
from faascope.report.numbers import fmt_duration
from faascope.report.figures import Fig
from faascope.report.items import Block, Text, table
from faascope.report.plot.model import Axis, Legend, Line, Panel, Plot, Points
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx

TS_POINTS_MAX = 4000       # per scenario: a dot per invocation up to this many rows, else time bins
TS_BINS = 240
MIN_HOURS_FOR_TOD = 4      # distinct hours of day needed for the time-of-day figure
DRIFT_MIN_ROWS = 10        # per cell, for the first-fifth vs last-fifth drift table


def time_section(ctx: Ctx, sc: Scenario) -> Block | None:
    tcol = ctx.data.time_col
    if tcol is None:
        return None
    b = Block("time", "Latency over the campaign", level=3)
    t = sc.rows[tcol]
    span = (t.max() - t.min()).total_seconds()
    b.items.append(_timeseries_fig(ctx, sc, t))
    hours = t.dt.hour
    if hours.nunique() >= MIN_HOURS_FOR_TOD:
        b.items.append(_timeofday_fig(ctx, sc, hours))
    else:
        b.items.append(Text(f"This scenario ran within {fmt_duration(span)} ({hours.nunique()} distinct hour(s) of "
                            "the day): no time-of-day view.", "note"))
    drift = _drift_table(ctx, sc, t)
    if drift is not None:
        b.items.append(drift)
    return b


def _timeseries_fig(ctx: Ctx, sc: Scenario, t: pd.Series) -> Fig:
    n = len(sc.rows)
    log = ctx.log_for(sc)[0]
    tv = t.to_numpy(dtype="datetime64[ns]")
    series = []
    binned = n > TS_POINTS_MAX
    if binned:
        t0 = tv.min().astype("int64")
        t1 = tv.max().astype("int64") + 1
        edges = np.linspace(t0, t1, TS_BINS + 1)
        centres = ((edges[:-1] + edges[1:]) / 2).astype("int64").astype("datetime64[ns]")
        for c in sc.cells:
            ti = tv[c.pos].astype("int64")
            b_ = np.clip(np.searchsorted(edges, ti, side="right") - 1, 0, TS_BINS - 1)
            order = np.lexsort((c.y, b_))
            bs, ys = b_[order], c.y[order]
            med = np.full(TS_BINS, np.nan)
            cnt = np.bincount(bs, minlength=TS_BINS)
            starts = np.concatenate([[0], np.cumsum(cnt)])
            for k in np.flatnonzero(cnt):
                med[k] = np.median(ys[starts[k]:starts[k + 1]])
            series.append((c, centres, med, cnt))
    else:
        for c in sc.cells:
            o = np.argsort(tv[c.pos], kind="stable")
            series.append((c, tv[c.pos][o], c.y[o], None))
    marks = []
    for c, x, y, cnt in series:
        if binned:
            marks.append(Line(x, y, c.label, c.color, c.dash, width=1.5, marker=c.marker, marker_size=4,
                              hover_data=cnt, hover=(f"{c.label}<br>%{{x}}<br>median %{{y:.4g}} {ctx.unit} of "
                                                     "%{customdata} invocations<extra></extra>")))
        else:
            marks.append(Points(x, y, c.label, c.color, c.marker, size=6, opacity=0.75,
                                hover=f"{c.label}<br>%{{x}}<br>%{{y:.4g}} {ctx.unit}<extra></extra>"))
    plot = Plot([Panel(marks, Axis("time (UTC)", date=True), Axis(ctx.axis(), log=log, log_switch=True))],
                title=f"{ctx.response} over time: {sc.title(ctx.data)}", legend=Legend(sc.legend_title))
    note = (f"Summarised: {n:,} invocations; drawn as the median of each of {TS_BINS} equal time bins per cell "
            "(gaps = no invocations in that bin).") if binned else None
    return Fig(sc.name("timeseries", ctx.response), f"{ctx.response} over the campaign", plot,
               caption=("Every invocation at the time it was sent" if not binned else "Median per time bin")
               + " (UTC). Look for drift (a trend), steps (a change on the platform) and periodic patterns.",
               note=note, size=(8.2, 3.8), height=420)


def _timeofday_fig(ctx: Ctx, sc: Scenario, hours: pd.Series) -> Fig:
    h = hours.to_numpy()
    log = ctx.log_for(sc)[0]
    series = []
    for c in sc.cells:
        hc = h[c.pos]
        df = pd.DataFrame({"h": hc, "y": c.y}).groupby("h")["y"].agg(["median", "size"])
        series.append((c, df.index.to_numpy(), df["median"].to_numpy(), df["size"].to_numpy()))
    marks = [Line(x, y, c.label, c.color, c.dash, width=1.5, marker=c.marker, marker_size=7, hover_data=cnt,
                  hover=(f"{c.label}<br>%{{x}}:00–%{{x}}:59 UTC<br>median %{{y:.4g}} {ctx.unit} "
                         "of %{customdata} invocations<extra></extra>"))
             for c, x, y, cnt in series]
    plot = Plot([Panel(marks, Axis("hour of day (UTC)", range=(-0.5, 23.5), tick_step=2),
                       Axis(f"median {ctx.axis()}", log=log))],
                title=f"{ctx.response} by hour of day: {sc.title(ctx.data)}", legend=Legend(sc.legend_title))
    return Fig(sc.name("time_of_day", ctx.response), f"Median {ctx.response} by hour of day", plot,
               caption=("Median per hour of the day (UTC) over the whole campaign; hover for the number of invocations "
                        "behind each point. Hours with few invocations are noisy."),
               size=(7.8, 3.6), height=400)


def _drift_table(ctx: Ctx, sc: Scenario, t: pd.Series):
    tv = t.to_numpy(dtype="datetime64[ns]")
    rows = []
    for c in sc.cells:
        if c.n < DRIFT_MIN_ROWS:
            continue
        o = np.argsort(tv[c.pos], kind="stable")
        y = c.y[o]
        k = max(2, c.n // 5)
        first, last = float(np.median(y[:k])), float(np.median(y[-k:]))
        change = (last / first - 1) * 100 if first else float("nan")
        rows.append([c.label, f"{k:,}", render.g4(first), render.g4(last), f"{change:+.1f} %"])
    if not rows:
        return None
    return table(f"Drift: median of the first and the last fifth of each cell's invocations ({ctx.unit or 'response units'})",
                 [sc.legend_title or "cell", "invocations per fifth", "median first fifth", "median last fifth", "change"],
                 rows, caption="A large change between the start and the end of the campaign points at drift.")
