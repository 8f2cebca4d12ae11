"""ANOVA: the share of variation per factor and interaction, the ANOVA table, robustness checks
and the assumption warnings."""
from __future__ import annotations

import numpy as np

from faascope.analysis import render
from faascope.report.figures import GREY, PALETTE, Fig, plotly_layout
from faascope.report.items import Block, Text, table
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import figure_title


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
                           customdata=[[render.fmt_p(r.get("p_value")), render.g4(r.get("F"))] for r in rows],
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
        figure_title(mf, f"ANOVA of {ctx.response}: {sc.title(ctx.data)}")

    bal = "" if sc.res.get("balanced") else " Unbalanced design: the shares need not add up to 100 %."
    return Fig(sc.name("anova_variation", ctx.response), f"Share of variation of {ctx.response} per source", fig, draw,
               caption=(f"Share of the total sum of squares explained by each factor and interaction; * = significant at "
                        f"α = {ctx.alpha:g} (F > F crit). Residual is what the factors do not explain (noise).{bal}"),
               size=(6.0, min(1.0 + 0.3 * len(rows), 8)), height=height)
