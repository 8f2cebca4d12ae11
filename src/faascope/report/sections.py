"""The report's sections: a short, ordered registry.

Each entry names a section and the function that builds it from the data. ``scope="report"``
sections run once (overview, decision table); ``scope="scenario"`` sections run once per
scenario. A builder returns a `Block` (heading + text, tables and figures) or None when it has
nothing to say for this input (e.g. no cold-start column). A later capability adds its figures
by writing one builder and adding one line to `SECTIONS` (see docs/report.md), e.g.:

    SectionDef("bandwidth", "Bandwidth over time", "scenario", bandwidth_section,
               "bytes/s per time bin, per cell; needs the bytes column")

Figures are drawn twice from the same prepared arrays: plotly for report.html, matplotlib for
figures/. Where a plot of every row would be unreadable or heavy (large inputs), the builder
summarises and says so in the figure's `note`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from faascope.analysis import render
from faascope.report.data import ReportData, fmt_duration
from faascope.report.figures import (
    GREY, PALETTE, Fig, auto_log, bin_edges, log_axis, plotly_layout, quantile_grid, scale_buttons,
)
from faascope.report.items import Block, Details, KeyValues, Text, table
from faascope.report.scenarios import Cell, Scenario

# ---- thresholds for large inputs (module constants so tests and users can see them)
ECDF_EXACT_MAX = 5000      # per cell: draw every step up to this many rows, else a quantile grid
ECDF_GRID = 1001           # probabilities of that grid (0, 0.001, …, 1)
HIST_BINS = 60
TS_POINTS_MAX = 4000       # per scenario: a dot per invocation up to this many rows, else time bins
TS_BINS = 240
MIN_HOURS_FOR_TOD = 4      # distinct hours of day needed for the time-of-day figure
DRIFT_MIN_ROWS = 10        # per cell, for the first-fifth vs last-fifth drift table
TUKEY_MAX_ROWS = 30        # more comparisons than this: draw main effects + one-factor-apart pairs
STRIP_MAX = 300            # per cell and start state: draw the individual values up to this many


@dataclass
class Ctx:
    data: ReportData
    scenarios: list[Scenario]
    alpha: float = 0.05
    log_x: bool | None = None          # None: decide per scenario from the data
    extra: dict = field(default_factory=dict)

    @property
    def response(self) -> str:
        return self.data.response

    @property
    def unit(self) -> str:
        r = self.response.lower()
        if r.endswith(("_seconds", "_s", "_sec")) or r in ("latency", "seconds"):
            return "s"
        if r.endswith("_ms"):
            return "ms"
        if r.endswith("_bytes"):
            return "B"
        return ""

    def axis(self, what: str | None = None) -> str:
        base = what or self.response
        return f"{base} ({self.unit})" if self.unit else base

    @property
    def conf(self) -> str:
        return f"{100 * (1 - self.alpha):g}%"

    def log_for(self, sc: Scenario) -> tuple[bool, str]:
        if self.log_x is not None:
            return self.log_x, ("log scale (--log-x)" if self.log_x else "linear scale (--linear-x)")
        y = np.concatenate([c.y for c in sc.cells]) if sc.cells else np.array([])
        if auto_log(y):
            return True, "log scale, chosen because the values span more than 50× (the interactive report can switch)"
        return False, "linear scale"


@dataclass(frozen=True)
class SectionDef:
    key: str
    title: str
    scope: str                      # "report" or "scenario"
    build: Callable                 # (ctx) -> Block | None, or (ctx, scenario) -> Block | None
    about: str = ""


def _title(mf, text: str) -> None:
    mf.suptitle(text, x=0.01, ha="left", fontsize=10)


def _legend_outside(ax, title: str | None, **kw) -> None:
    ax.legend(title=title or None, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, **kw)


def labelled(ctx: Ctx, title: str, headers: list[str], rows: list[list[str]], notes=None, caption=None):
    """A table whose factor columns show the levels' labels (10 KB rather than 10000)."""
    info = ctx.data.info
    cols = [i for i, h in enumerate(headers) if h in info and info[h].kind != "plain"]
    if cols:
        rows = [[info[headers[i]].label(c) if i in cols and c not in ("", "all") else c for i, c in enumerate(r)]
                for r in rows]
    return table(title, headers, rows, notes, caption)


def _g(v) -> str:
    return render.g4(v)


def _fmt_s(v: float, unit: str = "s") -> str:
    return f"{render.g4(v)} {unit}".strip()


# ============================================================================ report-level sections
def overview_section(ctx: Ctx) -> Block:
    d = ctx.data
    src = d.source
    b = Block("overview", "Campaign overview" if src.kind == "store" else "Input overview")
    if src.kind == "store":
        _store_overview(ctx, b)
    else:
        _table_overview(ctx, b)
    fac = [(f"factor {f}" + (" (compared)" if f == d.compare else ""),
            f"{d.info[f].describe_levels()}") for f in d.factors]
    sel = [("response", f"`{d.response}`" + (f" ({ctx.unit})" if ctx.unit else ""))] + fac
    if d.scenario_cols:
        sel.append(("scenarios", " × ".join(d.scenario_cols) + (" (chosen automatically)" if d.scenario_auto else "")
                    + f": {len(ctx.scenarios)} scenario(s)"))
    sel.append(("rows analysed", f"{d.counts['analysed']:,}"))
    if d.time_source:
        t = d.data[d.time_col]
        sel.append(("time span", f"{_ts(t.min())} → {_ts(t.max())} ({fmt_duration((t.max() - t.min()).total_seconds())}; "
                    f"from column `{d.time_source}`)"))
    b.items.append(KeyValues(sel, "What is analysed"))
    for n in d.notes:
        b.items.append(Text(n, "note"))
    b.items.append(Text(
        f"Statistics per scenario: per-cell mean with a t-based {ctx.conf} CI, median with an order-statistic "
        f"CI, coefficient of variation (CV = s/mean, the predictability metric; lower is more predictable) "
        f"with a bootstrap CI, ANOVA with interactions (share of variation = SS/SST), Tukey HSD at "
        f"{ctx.conf} family-wise confidence. Lower latency is better.", "note"))
    return b


def _ts(t) -> str:
    if t is None or pd.isna(t):
        return "–"
    return pd.Timestamp(t).strftime("%Y-%m-%d %H:%M:%S UTC")


def _store_overview(ctx: Ctx, b: Block) -> None:
    d = ctx.data
    src = d.source
    camp = src.campaign or {}
    plan = src.plan or {}
    spec = src.spec or {}
    rows = d.all_rows
    pairs = [("campaign", f"{camp.get('name')} (status: {camp.get('status')})"),
             ("results store", f"`{src.path}`")]
    if spec.get("description"):
        pairs.append(("description", " ".join(str(spec["description"]).split())))
    pairs.append(("provider", str(camp.get("provider"))))
    fn = spec.get("function") or {}
    if fn:
        pairs.append(("function", ", ".join(f"{k}={v}" for k, v in fn.items() if v is not None)))
    wl = spec.get("workload") or {}
    if wl:
        pairs.append(("workload", ", ".join(f"{k}={v}" for k, v in wl.items() if v is not None)))
    t0 = _parse_one(rows.get("started_at"), "min")
    t1 = _parse_one(rows.get("ended_at"), "max")
    if t0 is not None and t1 is not None:
        pairs.append(("duration", f"{fmt_duration((t1 - t0).total_seconds())} ({_ts(t0)} → {_ts(t1)}; first "
                      "invocation sent → last one answered)"))
    pairs.append(("created / completed", f"{camp.get('created_at')} / {camp.get('completed_at') or '–'}"))
    mach = camp.get("machine") or {}
    if mach:
        pairs.append(("machine", ", ".join(str(mach[k]) for k in ("hostname", "cpu_model") if mach.get(k))
                      + f"; {mach.get('cpus')} CPUs; {mach.get('system')} {mach.get('release')} {mach.get('machine')}; "
                      f"time zone {mach.get('timezone')}"))
    vers = [f"faascope {camp.get('faascope_version')}"]
    vers += [f"{k} {mach[k]}" for k in ("python", "boto3", "botocore") if mach.get(k)]
    pairs.append(("versions", ", ".join(vers)))
    pairs.append(("spec hash", f"`{str(camp.get('spec_hash'))[:16]}`"))
    b.items.append(KeyValues(pairs, "Campaign"))

    # design
    dz = [("design", str(plan.get("design", "–"))),
          ("factors", "; ".join(f"{f['name']} ({f.get('field')}): {', '.join(map(str, f.get('levels', [])))}"
                                for f in src.factor_meta) or "–"),
          ("cells run", f"{len(plan.get('cells', []))}"),
          ("cells excluded", f"{len(plan.get('excluded', []))} (by the compatibility rules below)"),
          ("replications per cell", str(plan.get("replications", camp.get("replications")))),
          ("warm-ups per cell", str(plan.get("warmup_per_cell", 0))),
          ("forced cold starts", str(plan.get("cold", "none"))),
          ("run order", ("randomised" if plan.get("randomize") else "replication by replication")
           + f", seed {plan.get('seed', camp.get('seed'))}"),
          ("blocks", f"{plan.get('blocks', 1)}" + (f", {plan['block_interval_s']:g} s apart"
                                                  if plan.get("block_interval_s") else ""))]
    rules = (spec.get("design") or {}).get("rules") or []
    if rules:
        dz.append(("compatibility rules", "; ".join(f"`{r}`" for r in rules)))
    b.items.append(KeyValues(dz, "Design"))
    exc = plan.get("excluded") or []
    if exc:
        names = list(exc[0]["levels"])
        b.items.append(table(f"Excluded cells ({len(exc)})", names + ["excluded by rule"],
                             [[_level_text(ctx, k, e["levels"].get(k)) for k in names] + [e.get("rule", "")]
                              for e in exc],
                             caption="Combinations the design does not run, and the first rule each breaks."))

    # counts, errors, retries
    n_rec = len(rows)
    warm = int(pd.to_numeric(rows.get("warmup", pd.Series(dtype=float)), errors="coerce").fillna(0).sum())
    status = rows["status"].value_counts() if "status" in rows else pd.Series(dtype=int)
    retries = pd.to_numeric(rows.get("retries", pd.Series(dtype=float)), errors="coerce").fillna(0)
    cold = pd.to_numeric(rows.get("cold", pd.Series(dtype=float)), errors="coerce")
    forced = pd.to_numeric(rows.get("cold_forced", pd.Series(dtype=float)), errors="coerce").fillna(0)
    cz = [("planned invocations", f"{src.planned_runs:,}" if src.planned_runs is not None else "–"),
          ("recorded", f"{n_rec:,}" + (f" ({src.planned_runs - n_rec:,} missing: the campaign did not finish; "
                                       "resume it with `faascope run … --resume`)"
                                       if src.planned_runs and n_rec < src.planned_runs else "")),
          ("measured / warm-ups", f"{n_rec - warm:,} / {warm:,}"),
          ("outcome", ", ".join(f"{k}: {v:,}" for k, v in status.items()) or "–"),
          ("retries", f"{int(retries.sum()):,} in total; {int((retries > 0).sum()):,} invocation(s) needed one or more"),
          ("cold starts", f"{int((cold == 1).sum()):,} of {int(cold.notna().sum()):,} invocations reported cold"
                          + (f" ({int(forced.sum()):,} forced by the plan)" if forced.sum() else ""))]
    events = pd.Series([e["kind"] for e in src.events]).value_counts() if src.events else pd.Series(dtype=int)
    if len(events):
        cz.append(("events", ", ".join(f"{k}: {v}" for k, v in events.items())))
    b.items.append(KeyValues(cz, "Invocations"))
    if "ok" in rows:
        bad = rows[pd.to_numeric(rows["ok"], errors="coerce").fillna(0) == 0]
        if len(bad):
            g = bad.groupby([bad["status"].fillna(""), bad["error_type"].fillna("")], sort=True)
            err_rows = []
            for (st, et), grp in g:
                msg = str(grp["error_message"].dropna().iloc[0])[:160] if grp["error_message"].notna().any() else ""
                err_rows.append([st, et or "–", str(len(grp)), msg])
            b.items.append(table("Errors", ["status", "error type", "count", "first message"], err_rows,
                                 caption="Failed invocations (left out of the statistics)."))
        else:
            b.items.append(Text("No failed invocations.", "note"))
    if camp.get("spec_text"):
        b.items.append(Details(f"Spec as written ({camp.get('spec_path') or 'spec'})", camp["spec_text"], "yaml"))


def _parse_one(s: pd.Series | None, how: str):
    if s is None or len(s) == 0:
        return None
    t = pd.to_datetime(s, errors="coerce", utc=True, format="ISO8601")
    v = t.min() if how == "min" else t.max()
    return None if pd.isna(v) else v


def _level_text(ctx: Ctx, factor: str, value) -> str:
    from faascope.report.data import factor_info
    info = ctx.data.info.get(factor)
    s = "" if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
    if info is not None:
        return info.label(s)
    return factor_info(factor, [s]).label(s) if s else s


def _table_overview(ctx: Ctx, b: Block) -> None:
    d = ctx.data
    src = d.source
    size = src.path.stat().st_size
    pairs = [("file", f"`{src.path}` ({size:,} bytes, {src.path.suffix.lstrip('.') or 'table'})"),
             ("rows read", f"{src.rows_read:,}"),
             ("columns", f"{len(src.columns)}: " + ", ".join(f"`{c}`" for c in src.columns[:60])
              + (" …" if len(src.columns) > 60 else ""))]
    if d.mapping:
        pairs.append(("column mapping (--map)", ", ".join(f"`{o}` → `{n}`" for o, n in d.mapping.items())))
    pairs.append(("filters (--filter)", " ".join(f"`{f}`" for f in d.filters) or "none"))
    pairs.append(("--latest", f"{d.latest} most recent rows per cell" if d.latest else "all rows"))
    for col in ("status", "ok"):
        if col in d.all_rows:
            vc = d.all_rows[col].astype(str).value_counts()
            pairs.append((f"values of `{col}`", ", ".join(f"{k}: {v:,}" for k, v in vc.head(8).items())))
    pairs.append(("not known", "spec, design, excluded cells, retries, machine and versions are recorded only by a "
                  "faascope results store"))
    b.items.append(KeyValues(pairs, "Input"))


def decisions_section(ctx: Ctx) -> Block | None:
    from faascope.report.scenarios import all_decisions
    rows = all_decisions(ctx.scenarios)
    b = Block("decisions", f"Decision table: best {ctx.data.compare}")
    if not rows:
        b.items.append(Text("No scenario could be analysed, so there is no decision table (see each scenario for why).",
                            "warn"))
        return b
    sec = render.decision_section(rows, ctx.data.scenario_cols, ctx.data.compare)
    sec.title = f"Best {ctx.data.compare} for performance (lower mean) and predictability (lower CV)"
    b.items.append(Text(
        f"Per scenario, and within each combination of the other factors: which level of `{ctx.data.compare}` is "
        "best. A level wins only when the data say so; '-' means no significant or meaningful difference.", "p"))
    b.items.append(labelled(ctx, sec.title, sec.headers, sec.rows, sec.notes,
                            caption=f"Means in {ctx.unit or 'response units'}; CV = s/mean in %."))
    failed = [sc for sc in ctx.scenarios if sc.error]
    for sc in failed:
        b.items.append(Text(f"Not analysed: {sc.title(ctx.data)}: {sc.error}", "warn"))
    return b


# ============================================================================ per-scenario sections
def _hover(ctx: Ctx) -> str:
    return "%{x:.4g} " + ctx.unit


def distributions_section(ctx: Ctx, sc: Scenario) -> Block:
    b = Block("distributions", "Distributions", level=3)
    log, why = ctx.log_for(sc)
    b.items.append(_ecdf_fig(ctx, sc, log, why))
    b.items.append(_hist_fig(ctx, sc, log))
    return b


def _ecdf_fig(ctx: Ctx, sc: Scenario, log: bool, why: str) -> Fig:
    import plotly.graph_objects as go

    lines = []
    sampled = []
    for c in sc.cells:
        y = np.sort(c.y)
        if len(y) > ECDF_EXACT_MAX:
            x, F = quantile_grid(y, ECDF_GRID)
            sampled.append(c)
        else:
            x = np.concatenate([[y[0]], y])
            F = np.concatenate([[0.0], np.arange(1, len(y) + 1) / len(y)])
        lines.append((c, x, F))
    fig = go.Figure()
    for c, x, F in lines:
        fig.add_trace(go.Scatter(x=x, y=F, mode="lines", name=f"{c.label} (n={c.n:,})",
                                 line=dict(color=c.color, dash=c.dash_plotly, width=2, shape="hv"),
                                 hovertemplate=f"{c.label}<br>%{{x:.4g}} {ctx.unit}: %{{y:.1%}} of invocations"
                                               "<extra></extra>"))
    plotly_layout(fig, height=440, xtitle=ctx.axis(), ytitle="fraction of invocations ≤ x",
                  legend_title=sc.legend_title)
    log_axis(fig, "x", log, np.concatenate([x for _, x, _ in lines]))
    fig.update_yaxes(range=[0, 1.02], tickformat=".0%")
    fig.update_layout(updatemenus=scale_buttons(["xaxis"], log))

    def draw(mf):
        ax = mf.subplots()
        for c, x, F in lines:
            ax.step(x, F, where="post", color=c.color, linestyle=c.dash_mpl, lw=1.4, label=f"{c.label} (n={c.n:,})")
        if log:
            ax.set_xscale("log")
        ax.set_xlabel(ctx.axis())
        ax.set_ylabel("fraction of invocations ≤ x")
        ax.set_ylim(0, 1.02)
        _title(mf, f"ECDF of {ctx.response}: {sc.title(ctx.data)}")
        _legend_outside(ax, sc.legend_title)

    note = None
    if sampled:
        note = (f"Summarised: {len(sampled)} cell(s) have more than {ECDF_EXACT_MAX:,} rows (largest "
                f"{max(c.n for c in sampled):,}); their ECDF is drawn through {ECDF_GRID:,} quantiles "
                "(every 0.1 %), exact at each point. All rows enter the statistics.")
    return Fig(sc.name("ecdf", ctx.response), f"ECDF of {ctx.response} per cell", fig, draw,
               caption=(f"Empirical CDF per cell: the fraction of invocations that took at most x. Further right is "
                        f"slower; a flatter curve is less predictable. {why[0].upper() + why[1:]}."),
               note=note, size=(7.6, 4.0), height=440)


def _hist_fig(ctx: Ctx, sc: Scenario, log: bool) -> Fig:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    allv = np.concatenate([c.y for c in sc.cells])
    edges = bin_edges(allv, HIST_BINS, log)
    hists = [(c, np.histogram(c.y, bins=edges)[0]) for c in sc.cells]
    k = len(hists)
    height = max(260, 90 + 130 * k)
    fig = make_subplots(rows=k, cols=1, shared_xaxes=True, vertical_spacing=min(0.3, 42 / height) if k > 1 else 0,
                        subplot_titles=[f"{c.label} (n={c.n:,})" for c, _ in hists])
    for i, (c, h) in enumerate(hists, start=1):
        x = np.append(edges[:-1], edges[-1])
        yv = np.append(h, h[-1])
        fig.add_trace(go.Scatter(x=x, y=yv, mode="lines", line=dict(shape="hv", color=c.color, width=1.2),
                                 fill="tozeroy", name=c.label, showlegend=False,
                                 customdata=np.column_stack([edges[:-1], edges[1:], h]).tolist() + [[edges[-1], edges[-1], 0]],
                                 hovertemplate=(f"{c.label}<br>[%{{customdata[0]:.4g}}, %{{customdata[1]:.4g}}) {ctx.unit}: "
                                                "%{customdata[2]} invocations<extra></extra>")),
                      row=i, col=1)
        fig.update_yaxes(title_text="count" if k > 3 else "invocations", rangemode="tozero", row=i, col=1)
    plotly_layout(fig, height=height, showlegend=False)
    log_axis(fig, "x", log, edges)
    fig.update_xaxes(title_text=ctx.axis(), row=k, col=1)
    for ann in fig.layout.annotations:
        ann.font = dict(size=12)
        ann.x = 0
        ann.xanchor = "left"

    def draw(mf):
        axes = mf.subplots(k, 1, sharex=True, squeeze=False)[:, 0]
        for ax, (c, h) in zip(axes, hists):
            ax.stairs(h, edges, fill=True, color=c.color, alpha=0.55)
            ax.stairs(h, edges, color=c.color, lw=0.8)
            ax.set_title(f"{c.label} (n={c.n:,})", loc="left", fontsize=8, pad=2)
            ax.set_ylabel("invocations", fontsize=7)
        if log:
            axes[-1].set_xscale("log")
        axes[-1].set_xlabel(ctx.axis())
        _title(mf, f"Histogram of {ctx.response}: {sc.title(ctx.data)}")

    return Fig(sc.name("histogram", ctx.response), f"Histogram of {ctx.response} per cell", fig, draw,
               caption=(f"Invocations per bin ({HIST_BINS} {'log-spaced' if log else 'equal-width'} bins shared by all "
                        "cells, counted from every row). Serverless latencies are usually right-skewed: look for long "
                        "right tails and second modes."),
               size=(6.4, min(1.1 + 1.0 * k, 11)), height=height)


def _positions(cells: list[Cell]) -> tuple[list[int], list[str]]:
    return list(range(len(cells))), [c.label for c in cells]


def centre_section(ctx: Ctx, sc: Scenario) -> Block:
    b = Block("centre", f"Mean and median with {ctx.conf} confidence intervals", level=3)
    b.items.append(_means_fig(ctx, sc))
    if sc.res:
        for sec in render.analysis_sections(sc.res, heading=None):
            if sec.title.startswith("Per-cell statistics"):
                b.items.append(labelled(ctx, f"Per-cell statistics ({ctx.unit or 'response units'}; CV in %)",
                                        sec.headers, sec.rows, sec.notes))
    return b


def _cell_centres(ctx: Ctx, sc: Scenario) -> list[dict]:
    out = []
    for c in sc.cells:
        s = c.stats
        if s:
            out.append({"mean": s["mean"], "median": s["median"], "mean_ci": s.get("mean_ci"),
                        "median_ci": s.get("median_ci")})
        else:
            out.append({"mean": float(np.mean(c.y)), "median": float(np.median(c.y)), "mean_ci": None,
                        "median_ci": None})
    return out


def _means_fig(ctx: Ctx, sc: Scenario) -> Fig:
    import plotly.graph_objects as go

    cells = sc.cells
    cen = _cell_centres(ctx, sc)
    pos, labels = _positions(cells)
    vals = [v for c in cen for v in [c["mean"], c["median"]] if v is not None and math.isfinite(v)]
    log = ctx.log_x if ctx.log_x is not None else bool(vals and min(vals) > 0 and max(vals) / min(vals) > 30)

    def err(key, centre):
        lo = [max(0.0, cc[centre] - cc[key][0]) if cc[key] else 0.0 for cc in cen]
        hi = [max(0.0, cc[key][1] - cc[centre]) if cc[key] else 0.0 for cc in cen]
        return lo, hi

    mlo, mhi = err("mean_ci", "mean")
    dlo, dhi = err("median_ci", "median")
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[c["mean"] for c in cen], y=[p - 0.13 for p in pos], mode="markers", name=f"mean ({ctx.conf} t CI)",
        marker=dict(symbol="circle", size=10, color=[c.color for c in cells], line=dict(width=1, color="#222")),
        error_x=dict(type="data", symmetric=False, array=mhi, arrayminus=mlo, thickness=1.6, width=5, color="#333"),
        customdata=[[lab, *(cc["mean_ci"] or [float("nan")] * 2)] for lab, cc in zip(labels, cen)],
        hovertemplate=f"%{{customdata[0]}}<br>mean %{{x:.4g}} {ctx.unit}<br>CI [%{{customdata[1]:.4g}}, "
                      f"%{{customdata[2]:.4g}}]<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=[c["median"] for c in cen], y=[p + 0.13 for p in pos], mode="markers",
        name=f"median ({ctx.conf} order-statistic CI)",
        marker=dict(symbol="diamond-open", size=10, color=[c.color for c in cells], line=dict(width=2)),
        error_x=dict(type="data", symmetric=False, array=dhi, arrayminus=dlo, thickness=1.2, width=4, color="#777"),
        customdata=[[lab, *(cc["median_ci"] or [float("nan")] * 2)] for lab, cc in zip(labels, cen)],
        hovertemplate=f"%{{customdata[0]}}<br>median %{{x:.4g}} {ctx.unit}<br>CI [%{{customdata[1]:.4g}}, "
                      f"%{{customdata[2]:.4g}}]<extra></extra>"))
    height = max(260, 110 + 46 * len(cells))
    plotly_layout(fig, height=height, xtitle=ctx.axis(), legend_title="")
    fig.update_yaxes(tickvals=pos, ticktext=labels, autorange="reversed", title_text=sc.legend_title, automargin=True)
    log_axis(fig, "x", log, vals + [v for cc in cen for k in ("mean_ci", "median_ci") for v in (cc[k] or [])])
    fig.update_layout(legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0, xanchor="left"))

    def draw(mf):
        ax = mf.subplots()
        for p, c, cc, a, b2, e, f in zip(pos, cells, cen, mlo, mhi, dlo, dhi):
            ax.errorbar(cc["mean"], p - 0.13, xerr=[[a], [b2]], fmt="o", color=c.color, mec="#222", ecolor="#333",
                        capsize=3, ms=6)
            ax.errorbar(cc["median"], p + 0.13, xerr=[[e], [f]], fmt="D", mfc="white", color=c.color, ecolor="#777",
                        capsize=2, ms=5)
        ax.set_yticks(pos, labels)
        ax.invert_yaxis()
        if log:
            ax.set_xscale("log")
        ax.set_xlabel(ctx.axis())
        ax.set_ylabel(sc.legend_title)
        from matplotlib.lines import Line2D
        ax.legend(handles=[Line2D([], [], marker="o", ls="", color="#555", label=f"mean ({ctx.conf} t CI)"),
                           Line2D([], [], marker="D", ls="", mfc="white", color="#555",
                                  label=f"median ({ctx.conf} CI)")], loc="upper left", bbox_to_anchor=(1.01, 1),
                  frameon=False)
        if log:
            lo_ = min(v for v in vals if v > 0)
            ax.set_xlim(left=lo_ / 3)
        _title(mf, f"Mean and median of {ctx.response}: {sc.title(ctx.data)}")

    no_ci = [c.label for c, cc in zip(cells, cen) if not cc["mean_ci"]]
    return Fig(sc.name("mean_median_ci", ctx.response), f"Mean and median of {ctx.response} with {ctx.conf} CIs", fig,
               draw, caption=(f"Filled circles: mean with its t-based {ctx.conf} CI; open diamonds: median with its "
                              f"distribution-free {ctx.conf} CI. Non-overlapping medians/means suggest a real difference; "
                              "Tukey HSD below tests it." + (" Log scale (values span more than 30×)." if log else "")),
               note=(f"No CIs for {', '.join(no_ci)} (the analysis engine did not run here)." if no_ci else None),
               size=(7.6, min(1.2 + 0.42 * len(cells), 10)), height=height)


def predictability_section(ctx: Ctx, sc: Scenario) -> Block:
    b = Block("predictability", "Predictability: coefficient of variation", level=3)
    b.items.append(_cv_fig(ctx, sc))
    if sc.res:
        for sec in render.analysis_sections(sc.res, heading=None):
            if sec.title.startswith("Predictability"):
                b.items.append(table(sec.title + " per factor level", sec.headers, sec.rows, sec.notes))
    return b


def _cv_fig(ctx: Ctx, sc: Scenario) -> Fig:
    import plotly.graph_objects as go

    cells = sc.cells
    pos, labels = _positions(cells)
    cv, lo, hi, methods = [], [], [], set()
    for c in cells:
        s = c.stats
        v = s["cv"] if s and s.get("cv") is not None else (float(np.std(c.y, ddof=1) / np.mean(c.y)) if c.n > 1 else float("nan"))
        cv.append(100 * v)
        ci = s.get("cv_ci") if s else None
        if ci and all(x is not None for x in ci):
            lo.append(max(0.0, 100 * (v - ci[0])))
            hi.append(max(0.0, 100 * (ci[1] - v)))
            methods.add(s.get("cv_ci_method") or "")
        else:
            lo.append(0.0)
            hi.append(0.0)
    fig = go.Figure(go.Bar(
        x=cv, y=pos, orientation="h", marker=dict(color=[c.color for c in cells], opacity=0.8),
        error_x=dict(type="data", symmetric=False, array=hi, arrayminus=lo, thickness=1.5, width=5, color="#333"),
        customdata=labels, name="CV", hovertemplate="%{customdata}<br>CV %{x:.1f} %<extra></extra>"))
    cv_text = [f"  {v:.1f} %" if math.isfinite(v) else f"  n/a (n={c.n})" for v, c in zip(cv, cells)]
    fig.add_trace(go.Scatter(x=[v + h if math.isfinite(v) else 0 for v, h in zip(cv, hi)], y=pos, mode="text",
                             text=cv_text,
                             textposition="middle right", hoverinfo="skip", showlegend=False, cliponaxis=False))
    height = max(240, 100 + 40 * len(cells))
    plotly_layout(fig, height=height, xtitle="coefficient of variation, CV = s / mean (%)", showlegend=False)
    fig.update_yaxes(tickvals=pos, ticktext=labels, autorange="reversed", title_text=sc.legend_title, automargin=True)
    fig.update_xaxes(range=[0, max([v + h for v, h in zip(cv, hi) if math.isfinite(v + h)] + [1]) * 1.18])

    def draw(mf):
        ax = mf.subplots()
        ax.barh(pos, cv, xerr=[lo, hi], color=[c.color for c in cells], alpha=0.8, capsize=3,
                error_kw=dict(ecolor="#333", lw=1))
        for p, v, h, t in zip(pos, cv, hi, cv_text):
            ax.text(v + h if math.isfinite(v) else 0, p, t, va="center", ha="left", fontsize=7, color="#222")
        ax.set_yticks(pos, labels)
        ax.invert_yaxis()
        ax.set_xlabel("coefficient of variation, CV = s / mean (%)")
        ax.set_ylabel(sc.legend_title)
        ax.set_xlim(0, max([v + h for v, h in zip(cv, hi) if math.isfinite(v + h)] + [1]) * 1.15)
        _title(mf, f"CV of {ctx.response}: {sc.title(ctx.data)}")

    meth = ", ".join(sorted(m for m in methods if m)) or "none"
    thr = (sc.res or {}).get("predictability", {}).get("threshold_pp", 10)
    return Fig(sc.name("cv", ctx.response), f"Coefficient of variation of {ctx.response} per cell", fig, draw,
               caption=(f"CV per cell with its {ctx.conf} CI ({meth}). Lower is more predictable; differences under "
                        f"{thr:g} percentage points are treated as negligible."),
               size=(6.4, min(1.2 + 0.38 * len(cells), 10)), height=height)


def anova_section(ctx: Ctx, sc: Scenario) -> Block:
    b = Block("anova", "ANOVA: which factors matter", level=3)
    if not sc.res:
        b.items.append(Text(f"No ANOVA for this scenario: {sc.error}", "warn"))
        return b
    b.items.append(_variation_fig(ctx, sc))
    for sec in render.analysis_sections(sc.res, heading=None):
        if sec.title.startswith("ANOVA") or sec.title.startswith("Robustness"):
            b.items.append(table(sec.title, sec.headers, sec.rows, sec.notes))
        elif sec.title.startswith("Checks"):
            for n in sec.notes:
                b.items.append(Text(n.lstrip("⚠ ").strip(), "warn" if n.startswith("⚠") else "note"))
    for n in sc.res.get("notes", []):
        b.items.append(Text(n, "note"))
    return b


def _variation_fig(ctx: Ctx, sc: Scenario) -> Fig:
    import plotly.graph_objects as go

    rows = sc.res["anova"]
    src = [r["source"] for r in rows]
    pct = [r["pct_variation"] for r in rows]
    colors = [GREY if r["source"] == "Residual" else (PALETTE[0] if r.get("significant") else "#9ecae1") for r in rows]
    txt = [f"{p:.1f} %" + ("" if r["source"] == "Residual" else (" *" if r.get("significant") else "")) for p, r in zip(pct, rows)]
    fig = go.Figure(go.Bar(x=pct, y=src, orientation="h", marker_color=colors, text=txt, textposition="outside",
                           cliponaxis=False,
                           customdata=[[render.fmt_p(r.get("p_value")), _g(r.get("F"))] for r in rows],
                           hovertemplate="%{y}: %{x:.2f} % of variation<br>F %{customdata[1]}, p %{customdata[0]}"
                                         "<extra></extra>"))
    height = max(220, 90 + 34 * len(rows))
    plotly_layout(fig, height=height, xtitle="share of total variation, SS / SST (%)", showlegend=False)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(range=[0, max(pct + [1]) * 1.18])

    def draw(mf):
        ax = mf.subplots()
        yy = np.arange(len(rows))
        ax.barh(yy, pct, color=colors)
        for y_, p, t in zip(yy, pct, txt):
            ax.text(p, y_, " " + t, va="center", fontsize=7)
        ax.set_yticks(yy, src)
        ax.invert_yaxis()
        ax.set_xlim(0, max(pct + [1]) * 1.2)
        ax.set_xlabel("share of total variation, SS / SST (%)")
        _title(mf, f"ANOVA of {ctx.response}: {sc.title(ctx.data)}")

    bal = "" if sc.res.get("balanced") else " Unbalanced design: the shares need not add up to 100 %."
    return Fig(sc.name("anova_variation", ctx.response), f"Share of variation of {ctx.response} per source", fig, draw,
               caption=(f"Share of the total sum of squares explained by each factor and interaction; * = significant at "
                        f"α = {ctx.alpha:g} (F > F crit). Residual is what the factors do not explain (noise).{bal}"),
               size=(6.0, min(1.0 + 0.3 * len(rows), 8)), height=height)


def _group_label(ctx: Ctx, term: str, group: str) -> str:
    fs = term.split(":")
    parts = group.split(":")
    if len(parts) != len(fs):
        return group
    return " · ".join(ctx.data.info[f].label(p) if f in ctx.data.info else p for f, p in zip(fs, parts))


def tukey_section(ctx: Ctx, sc: Scenario) -> Block:
    b = Block("tukey", f"Tukey HSD: pairwise differences ({ctx.conf} family-wise)", level=3)
    if not sc.res:
        b.items.append(Text(f"No Tukey HSD for this scenario: {sc.error}", "warn"))
        return b
    b.items.append(_tukey_fig(ctx, sc))
    for sec in render.analysis_sections(sc.res, heading=None):
        if sec.title.startswith("Tukey"):
            b.items.append(table(sec.title, sec.headers, sec.rows, sec.notes))
    return b


def _tukey_fig(ctx: Ctx, sc: Scenario) -> Fig:
    import plotly.graph_objects as go

    all_rows = sc.res["tukey"]
    rows = all_rows
    note = None
    if len(all_rows) > TUKEY_MAX_ROWS:
        # interaction pairs whose groups differ in two or more factors are rarely what a reader wants;
        # keep main effects and the one-factor-apart interaction pairs (those the decision table uses)
        def one_apart(r):
            a, b = r["group1"].split(":"), r["group2"].split(":")
            return len(a) != len(b) or sum(x != y for x, y in zip(a, b)) <= 1
        rows = [r for r in all_rows if ":" not in r["term"] or one_apart(r)]
        if len(rows) < len(all_rows):
            note = (f"Summarised: {len(rows)} of {len(all_rows)} comparisons drawn: every main effect, and the "
                    "interaction pairs that differ in one factor only (the others are in the table below).")
    labels = [f"{r['term']}: {_group_label(ctx, r['term'], r['group2'])} − {_group_label(ctx, r['term'], r['group1'])}"
              for r in rows]
    pos = list(range(len(rows)))
    d = [r["meandiff"] for r in rows]
    lo = [r["meandiff"] - r["lower"] for r in rows]
    hi = [r["upper"] - r["meandiff"] for r in rows]
    col = [PALETTE[1] if r["reject"] else GREY for r in rows]
    log_note = " (on log scale: differences of log means)" if sc.res.get("transform") == "log" else ""
    xt = f"difference of means{log_note} ({ctx.unit})" if ctx.unit else f"difference of means{log_note}"
    fig = go.Figure()
    for sig in (True, False):
        idx = [i for i, r in enumerate(rows) if bool(r["reject"]) == sig]
        if not idx:
            continue
        fig.add_trace(go.Scatter(
            x=[d[i] for i in idx], y=[pos[i] for i in idx], mode="markers",
            name="significant" if sig else "not significant",
            marker=dict(color=PALETTE[1] if sig else GREY, size=8, symbol="circle" if sig else "circle-open"),
            error_x=dict(type="data", symmetric=False, array=[hi[i] for i in idx], arrayminus=[lo[i] for i in idx],
                         color=PALETTE[1] if sig else GREY, thickness=1.6, width=4),
            customdata=[[labels[i], rows[i]["lower"], rows[i]["upper"], render.fmt_p(rows[i]["p_adj"])] for i in idx],
            hovertemplate=f"%{{customdata[0]}}<br>diff %{{x:.4g}} {ctx.unit}<br>[%{{customdata[1]:.4g}}, "
                          "%{customdata[2]:.4g}], p adj %{customdata[3]}<extra></extra>"))
    height = max(240, 110 + 26 * len(rows))
    plotly_layout(fig, height=height, xtitle=xt, legend_title="")
    fig.add_vline(x=0, line=dict(color="#444", width=1, dash="dash"))
    fig.update_yaxes(tickvals=pos, ticktext=labels, autorange="reversed", automargin=True, tickfont=dict(size=11))
    fig.update_layout(legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0, xanchor="left"))

    def draw(mf):
        ax = mf.subplots()
        for p, di, a, b2, c, r in zip(pos, d, lo, hi, col, rows):
            ax.errorbar(di, p, xerr=[[a], [b2]], fmt="o" if r["reject"] else "o", color=c,
                        mfc=c if r["reject"] else "white", capsize=2, ms=4, lw=1.2)
        ax.axvline(0, color="#444", lw=0.8, ls="--")
        ax.set_yticks(pos, labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(xt)
        ax.xaxis.set_major_locator(MaxNLocator(6))
        _title(mf, f"Tukey HSD ({ctx.conf}) of {ctx.response}: {sc.title(ctx.data)}")

    return Fig(sc.name("tukey", ctx.response), f"Tukey HSD intervals of {ctx.response}", fig, draw,
               caption=(f"Each row: the difference of mean {ctx.response} between two groups (first named minus second) "
                        f"with its {ctx.conf} family-wise interval. Intervals that do not cross the dashed zero line "
                        "(orange, filled) are significant differences."), note=note,
               size=(7.0, min(1.2 + 0.24 * len(rows), 12)), height=height)


def scenario_decision_section(ctx: Ctx, sc: Scenario) -> Block | None:
    if not sc.res:
        return None
    b = Block("decision", f"Decision: best {ctx.data.compare}", level=3)
    sec = render.decision_section(sc.res["decisions"], [], ctx.data.compare, level=3)
    b.items.append(labelled(ctx, sec.title, sec.headers, sec.rows, sec.notes,
                            caption=f"Means in {ctx.unit or 'response units'}; CV = s/mean in %."))
    return b


def _alpha(hex_color: str, a: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{a})"


def _rgba(hex_color: str, a: float) -> tuple:
    h = hex_color.lstrip("#")
    return tuple(int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)) + (a,)


def _box_stats(y: np.ndarray) -> dict:
    q1, med, q3 = np.quantile(y, [0.25, 0.5, 0.75])
    iqr = q3 - q1
    lo = float(y[y >= q1 - 1.5 * iqr].min())
    hi = float(y[y <= q3 + 1.5 * iqr].max())
    return dict(q1=float(q1), median=float(med), q3=float(q3), lowerfence=lo, upperfence=hi, mean=float(np.mean(y)))


def coldwarm_section(ctx: Ctx, sc: Scenario) -> Block | None:
    col = ctx.data.cold_col
    if col is None:
        return None
    import plotly.graph_objects as go

    b = Block("coldwarm", "Cold vs warm starts", level=3)
    flags = sc.rows[col].to_numpy(dtype=object)
    parts = {}  # (cell index, state) -> values
    trows = []
    for i, c in enumerate(sc.cells):
        f = flags[c.pos]
        cold = c.y[f == True]  # noqa: E712 - pandas' nullable booleans
        warm = c.y[f == False]  # noqa: E712
        parts[(i, "cold")] = cold
        parts[(i, "warm")] = warm
        med_c = float(np.median(cold)) if len(cold) else None
        med_w = float(np.median(warm)) if len(warm) else None
        ratio = f"{med_c / med_w:.3g}×" if med_c and med_w else "–"
        trows.append([c.label, f"{len(cold):,}", f"{len(warm):,}", _g(med_c), _g(med_w), ratio])
    n_cold = sum(len(v) for (i, s), v in parts.items() if s == "cold")
    n_warm = sum(len(v) for (i, s), v in parts.items() if s == "warm")
    b.items.append(table(f"Cold and warm invocations per cell (medians in {ctx.unit or 'response units'})",
                         [sc.legend_title or "cell", "cold", "warm", "median cold", "median warm", "cold / warm"], trows))
    if n_cold == 0 or n_warm == 0:
        state = "warm" if n_cold == 0 else "cold"
        b.items.append(Text(f"All {n_cold + n_warm:,} invocations in this scenario were {state} starts, so there is "
                            "nothing to compare.", "note"))
        return b
    labels = [c.label for c in sc.cells]
    fig = go.Figure()
    colors = {"cold": "#0072B2", "warm": "#E69F00"}
    raw = sum(len(v) for v in parts.values()) <= 20_000
    for state in ("cold", "warm"):
        idx = [i for i in range(len(labels)) if len(parts[(i, state)])]
        if not idx:
            continue
        n_state = sum(len(parts[(i, state)]) for i in idx)
        common = dict(orientation="h", name=f"{state} (n={n_state:,})", marker_color=colors[state],
                      line=dict(width=1.3), fillcolor=_alpha(colors[state], 0.25))
        if raw:  # few rows: plotly computes the boxes and can show every point
            xs = np.concatenate([parts[(i, state)] for i in idx])
            ys = np.concatenate([[labels[i]] * len(parts[(i, state)]) for i in idx])
            few = max(len(parts[(i, state)]) for i in idx) <= STRIP_MAX
            fig.add_trace(go.Box(x=xs, y=ys, boxpoints="all" if few else "outliers", jitter=0.5, pointpos=0,
                                 marker=dict(size=5, opacity=0.8), **common))
        else:
            st = [_box_stats(parts[(i, state)]) for i in idx]
            fig.add_trace(go.Box(y=[labels[i] for i in idx], q1=[x["q1"] for x in st],
                                 median=[x["median"] for x in st], q3=[x["q3"] for x in st],
                                 lowerfence=[x["lowerfence"] for x in st], upperfence=[x["upperfence"] for x in st],
                                 mean=[x["mean"] for x in st], boxpoints=False, **common))
    log = ctx.log_for(sc)[0]
    height = max(260, 110 + 56 * len(labels))
    plotly_layout(fig, height=height, xtitle=ctx.axis(), legend_title="start")
    fig.update_layout(boxmode="group")
    fig.update_yaxes(autorange="reversed", automargin=True, title_text=sc.legend_title,
                     categoryorder="array", categoryarray=labels)
    log_axis(fig, "x", log, np.concatenate(list(parts.values())))

    def draw(mf):
        ax = mf.subplots()
        rng = np.random.default_rng(0)
        for i in range(len(labels)):
            for state in ("cold", "warm"):
                v = parts[(i, state)]
                if not len(v):
                    continue
                p = i + (-0.19 if state == "cold" else 0.19)
                s_ = _box_stats(v)
                bp = ax.bxp([{"med": s_["median"], "q1": s_["q1"], "q3": s_["q3"], "whislo": s_["lowerfence"],
                              "whishi": s_["upperfence"], "label": ""}], positions=[p], widths=0.32,
                            orientation="horizontal", patch_artist=True, showfliers=False, manage_ticks=False,
                            medianprops=dict(color="#222", lw=1.2))
                for patch in bp["boxes"]:
                    patch.set_facecolor(_rgba(colors[state], 0.3))
                    patch.set_edgecolor(colors[state])
                if len(v) <= STRIP_MAX:
                    ax.scatter(v, p + rng.uniform(-0.1, 0.1, len(v)), s=8, color=colors[state], alpha=0.8, lw=0,
                               zorder=3)
        ax.set_yticks(range(len(labels)), labels)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        if log:
            ax.set_xscale("log")
        ax.set_xlabel(ctx.axis())
        ax.set_ylabel(sc.legend_title)
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(facecolor=_rgba(colors["cold"], 0.3), edgecolor=colors["cold"],
                                 label=f"cold (n={n_cold:,})"),
                           Patch(facecolor=_rgba(colors["warm"], 0.3), edgecolor=colors["warm"],
                                 label=f"warm (n={n_warm:,})")],
                  title="start", loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
        _title(mf, f"Cold vs warm {ctx.response}: {sc.title(ctx.data)}")

    b.items.insert(0, Fig(sc.name("cold_warm", ctx.response), f"{ctx.response}: cold vs warm starts", fig, draw,
                          caption=("Boxes: quartiles and median per cell, split by whether the invocation was the "
                                   "first in a fresh instance (cold, as the agent reported it) or reused one (warm); "
                                   "whiskers reach the most extreme values within 1.5 IQR"
                                   + ("; dots are the individual invocations." if raw else "; outliers not drawn.")),
                          note=None if raw else (f"Summarised: boxes computed from all {n_cold + n_warm:,} "
                                                 "invocations; individual points not drawn."),
                          size=(7.8, min(1.3 + 0.55 * len(labels), 10)), height=height))
    return b


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
    import plotly.graph_objects as go

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
    fig = go.Figure()
    for c, x, y, cnt in series:
        if binned:
            fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=c.label, connectgaps=False,
                                     line=dict(color=c.color, dash=c.dash_plotly, width=1.5),
                                     marker=dict(size=4, color=c.color, symbol=c.marker_plotly), customdata=cnt,
                                     hovertemplate=f"{c.label}<br>%{{x}}<br>median %{{y:.4g}} {ctx.unit} of "
                                                   "%{customdata} invocations<extra></extra>"))
        else:
            fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name=c.label,
                                     marker=dict(size=6, color=c.color, symbol=c.marker_plotly, opacity=0.75),
                                     hovertemplate=f"{c.label}<br>%{{x}}<br>%{{y:.4g}} {ctx.unit}<extra></extra>"))
    plotly_layout(fig, height=420, xtitle="time (UTC)", ytitle=ctx.axis(), legend_title=sc.legend_title)
    log_axis(fig, "y", log, np.concatenate([y for _, _, y, _ in series]))
    fig.update_layout(updatemenus=scale_buttons(["yaxis"], log))

    def draw(mf):
        ax = mf.subplots()
        for c, x, y, cnt in series:
            if binned:
                ax.plot(x, y, color=c.color, ls=c.dash_mpl, marker=c.marker_mpl, ms=2.5, lw=1, label=c.label)
            else:
                ax.scatter(x, y, s=9, color=c.color, marker=c.marker_mpl, alpha=0.75, label=c.label, lw=0.5)
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("time (UTC)")
        ax.set_ylabel(ctx.axis())
        import matplotlib.dates as mdates
        loc = mdates.AutoDateLocator()  # its per-frequency defaults fit any span; one fixed maxticks does not
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
        _legend_outside(ax, sc.legend_title, markerscale=1.5)
        _title(mf, f"{ctx.response} over time: {sc.title(ctx.data)}")

    note = (f"Summarised: {n:,} invocations; drawn as the median of each of {TS_BINS} equal time bins per cell "
            "(gaps = no invocations in that bin).") if binned else None
    return Fig(sc.name("timeseries", ctx.response), f"{ctx.response} over the campaign", fig, draw,
               caption=("Every invocation at the time it was sent" if not binned else "Median per time bin")
               + " (UTC). Look for drift (a trend), steps (a change on the platform) and periodic patterns.",
               note=note, size=(8.2, 3.8), height=420)


def _timeofday_fig(ctx: Ctx, sc: Scenario, hours: pd.Series) -> Fig:
    import plotly.graph_objects as go

    h = hours.to_numpy()
    log = ctx.log_for(sc)[0]
    series = []
    for c in sc.cells:
        hc = h[c.pos]
        df = pd.DataFrame({"h": hc, "y": c.y}).groupby("h")["y"].agg(["median", "size"])
        series.append((c, df.index.to_numpy(), df["median"].to_numpy(), df["size"].to_numpy()))
    fig = go.Figure()
    for c, x, y, cnt in series:
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=c.label,
                                 line=dict(color=c.color, dash=c.dash_plotly, width=1.5),
                                 marker=dict(symbol=c.marker_plotly, size=7, color=c.color), customdata=cnt,
                                 hovertemplate=f"{c.label}<br>%{{x}}:00–%{{x}}:59 UTC<br>median %{{y:.4g}} {ctx.unit} "
                                               "of %{customdata} invocations<extra></extra>"))
    plotly_layout(fig, height=400, xtitle="hour of day (UTC)", ytitle=f"median {ctx.axis()}",
                  legend_title=sc.legend_title)
    fig.update_xaxes(range=[-0.5, 23.5], tickmode="linear", dtick=2)
    log_axis(fig, "y", log, np.concatenate([y for _, _, y, _ in series]))

    def draw(mf):
        ax = mf.subplots()
        for c, x, y, cnt in series:
            ax.plot(x, y, color=c.color, ls=c.dash_mpl, marker=c.marker_mpl, ms=4, lw=1.2, label=c.label)
        if log:
            ax.set_yscale("log")
        ax.set_xlim(-0.5, 23.5)
        ax.set_xticks(range(0, 24, 2))
        ax.set_xlabel("hour of day (UTC)")
        ax.set_ylabel(f"median {ctx.axis()}")
        _legend_outside(ax, sc.legend_title)
        _title(mf, f"{ctx.response} by hour of day: {sc.title(ctx.data)}")

    return Fig(sc.name("time_of_day", ctx.response), f"Median {ctx.response} by hour of day", fig, draw,
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
        rows.append([c.label, f"{k:,}", _g(first), _g(last), f"{change:+.1f} %"])
    if not rows:
        return None
    return table(f"Drift: median of the first and the last fifth of each cell's invocations ({ctx.unit or 'response units'})",
                 [sc.legend_title or "cell", "invocations per fifth", "median first fifth", "median last fifth", "change"],
                 rows, caption="A large change between the start and the end of the campaign points at drift.")


def concurrency_section(ctx: Ctx) -> Block | None:
    """Bursts, co-residency and staggering heatmaps of a burst campaign (built by
    faascope.analysis.concurrency; None for any other input)."""
    try:
        from faascope.analysis.concurrency import concurrency_section as build
    except ImportError:  # pragma: no cover - that capability is not installed
        return None
    return build(ctx)


# ============================================================================ the registry
SECTIONS: list[SectionDef] = [
    SectionDef("overview", "Overview", "report", overview_section,
               "campaign (spec, design, excluded cells, counts, errors, retries, duration, machine, versions) "
               "or, for a foreign table, what is known about it"),
    SectionDef("decisions", "Decision table", "report", decisions_section,
               "best level of the compared factor for performance and for predictability, per scenario"),
    SectionDef("concurrency", "Bursts and staggering", "report", concurrency_section,
               "per-burst wait/run/service percentiles, co-residency, staggering heatmaps (burst campaigns only)"),
    SectionDef("distributions", "Distributions", "scenario", distributions_section,
               "ECDF per cell (log-x option) and histograms"),
    SectionDef("centre", "Mean and median", "scenario", centre_section,
               "mean and median with CIs per cell, and the per-cell statistics table"),
    SectionDef("predictability", "Predictability", "scenario", predictability_section,
               "CV per cell with CIs and the CV comparisons per factor"),
    SectionDef("anova", "ANOVA", "scenario", anova_section,
               "share of variation per factor/interaction, ANOVA table, robustness checks"),
    SectionDef("tukey", "Tukey HSD", "scenario", tukey_section, "pairwise differences with family-wise intervals"),
    SectionDef("decision", "Decision", "scenario", scenario_decision_section,
               "this scenario's rows of the decision table"),
    SectionDef("coldwarm", "Cold vs warm", "scenario", coldwarm_section,
               "latency of cold and warm starts per cell (needs a `cold` column)"),
    SectionDef("time", "Over time", "scenario", time_section,
               "latency over the campaign, by hour of day, and drift (needs a timestamp column)"),
]
