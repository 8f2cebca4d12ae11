"""Distributions per cell: the ECDF (every step, or a quantile grid for large cells) and
histograms on shared bins (one small panel per cell)."""
from __future__ import annotations

import numpy as np

from faascope.report.figures import Fig, bin_edges, quantile_grid
from faascope.report.items import Block
from faascope.report.plot.model import Axis, Legend, Line, Panel, Plot, Stairs
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx

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
        lines.append(Line(x, F, f"{c.label} (n={c.n:,})", c.color, c.dash, width=2, step=True,
                          hover=f"{c.label}<br>%{{x:.4g}} {ctx.unit}: %{{y:.1%}} of invocations<extra></extra>"))
    plot = Plot([Panel(lines, Axis(ctx.axis(), log=log, log_switch=True),
                       Axis("fraction of invocations ≤ x", range=(0, 1.02), percent=True))],
                title=f"ECDF of {ctx.response}: {sc.title(ctx.data)}", legend=Legend(sc.legend_title))
    note = None
    if sampled:
        note = (f"Summarised: {len(sampled)} cell(s) have more than {ECDF_EXACT_MAX:,} rows (largest "
                f"{max(c.n for c in sampled):,}); their ECDF is drawn through {ECDF_GRID:,} quantiles "
                "(every 0.1 %), exact at each point. All rows enter the statistics.")
    return Fig(sc.name("ecdf", ctx.response), f"ECDF of {ctx.response} per cell", plot,
               caption=(f"Empirical CDF per cell: the fraction of invocations that took at most x. Further right is "
                        f"slower; a flatter curve is less predictable. {why[0].upper() + why[1:]}."),
               note=note, size=(7.6, 4.0), height=440)


def _hist_fig(ctx: Ctx, sc: Scenario, log: bool) -> Fig:
    allv = np.concatenate([c.y for c in sc.cells])
    edges = bin_edges(allv, HIST_BINS, log)  # shared by all cells, so their shapes compare
    k = len(sc.cells)
    panels = [Panel([Stairs(edges, np.histogram(c.y, bins=edges)[0], c.color, c.label,
                            hover=(f"{c.label}<br>[%{{customdata[0]:.4g}}, %{{customdata[1]:.4g}}) {ctx.unit}: "
                                   "%{customdata[2]} invocations<extra></extra>"))],
                    Axis(ctx.axis(), log=log), Axis("count" if k > 3 else "invocations"),
                    title=f"{c.label} (n={c.n:,})")
              for c in sc.cells]
    plot = Plot(panels, title=f"Histogram of {ctx.response}: {sc.title(ctx.data)}", share_x=True)
    return Fig(sc.name("histogram", ctx.response), f"Histogram of {ctx.response} per cell", plot,
               caption=(f"Invocations per bin ({HIST_BINS} {'log-spaced' if log else 'equal-width'} bins shared by all "
                        "cells, counted from every row). Serverless latencies are usually right-skewed: look for long "
                        "right tails and second modes."),
               size=(6.4, min(1.1 + 1.0 * k, 11)), height=max(260, 90 + 130 * k))
