"""Mean and median per cell with their confidence intervals, and the per-cell statistics table."""
from __future__ import annotations

import math

import numpy as np

from faascope.analysis import render
from faascope.report.figures import Fig, log_axis, plotly_layout
from faascope.report.items import Block
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import cell_positions, figure_title, labelled


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
    pos, labels = cell_positions(cells)
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
        figure_title(mf, f"Mean and median of {ctx.response}: {sc.title(ctx.data)}")

    no_ci = [c.label for c, cc in zip(cells, cen) if not cc["mean_ci"]]
    return Fig(sc.name("mean_median_ci", ctx.response), f"Mean and median of {ctx.response} with {ctx.conf} CIs", fig,
               draw, caption=(f"Filled circles: mean with its t-based {ctx.conf} CI; open diamonds: median with its "
                              f"distribution-free {ctx.conf} CI. Non-overlapping medians/means suggest a real difference; "
                              "Tukey HSD below tests it." + (" Log scale (values span more than 30×)." if log else "")),
               note=(f"No CIs for {', '.join(no_ci)} (the analysis engine did not run here)." if no_ci else None),
               size=(7.6, min(1.2 + 0.42 * len(cells), 10)), height=height)
