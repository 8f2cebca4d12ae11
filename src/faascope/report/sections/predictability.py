"""Predictability: the coefficient of variation per cell with its CI, and the CV comparisons."""
from __future__ import annotations

import math

import numpy as np

from faascope.analysis import render
from faascope.report.figures import Fig, plotly_layout
from faascope.report.items import Block, table
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import cell_positions, figure_title


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
    pos, labels = cell_positions(cells)
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
        figure_title(mf, f"CV of {ctx.response}: {sc.title(ctx.data)}")

    meth = ", ".join(sorted(m for m in methods if m)) or "none"
    thr = (sc.res or {}).get("predictability", {}).get("threshold_pp", 10)
    return Fig(sc.name("cv", ctx.response), f"Coefficient of variation of {ctx.response} per cell", fig, draw,
               caption=(f"CV per cell with its {ctx.conf} CI ({meth}). Lower is more predictable; differences under "
                        f"{thr:g} percentage points are treated as negligible."),
               size=(6.4, min(1.2 + 0.38 * len(cells), 10)), height=height)
