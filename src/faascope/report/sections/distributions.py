"""Distributions per cell: the ECDF (every step, or a quantile grid for large cells) and
histograms on shared bins (one small panel per cell)."""
from __future__ import annotations

import numpy as np

from faascope.report.figures import Fig, bin_edges, log_axis, plotly_layout, quantile_grid, scale_buttons
from faascope.report.items import Block
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import figure_title, legend_outside

ECDF_EXACT_MAX = 5000      # per cell: draw every step up to this many rows, else a quantile grid
ECDF_GRID = 1001           # probabilities of that grid (0, 0.001, …, 1)
HIST_BINS = 60


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
        figure_title(mf, f"ECDF of {ctx.response}: {sc.title(ctx.data)}")
        legend_outside(ax, sc.legend_title)

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
        figure_title(mf, f"Histogram of {ctx.response}: {sc.title(ctx.data)}")

    return Fig(sc.name("histogram", ctx.response), f"Histogram of {ctx.response} per cell", fig, draw,
               caption=(f"Invocations per bin ({HIST_BINS} {'log-spaced' if log else 'equal-width'} bins shared by all "
                        "cells, counted from every row). Serverless latencies are usually right-skewed: look for long "
                        "right tails and second modes."),
               size=(6.4, min(1.1 + 1.0 * k, 11)), height=height)
