"""ANOVA: the share of variation per factor and interaction, the ANOVA table, robustness checks
and the assumption warnings."""
from __future__ import annotations

from faascope.analysis import render
from faascope.report.figures import Fig
from faascope.report.items import Block, Text, table
from faascope.report.plot.model import Axis, Bars, Labels, Panel, Plot
from faascope.report.plot.style import GREY, PALETTE
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx


def anova_section(ctx: Ctx, sc: Scenario) -> Block | None:
    if sc.described:  # nothing varies here: nothing to explain
        return None
    b = Block("anova", "ANOVA: which factors matter", level=3)
    if not sc.res:
        b.items.append(Text(f"No ANOVA for this scenario: {sc.error}", "warn"))
        return b
    b.items.append(_variation_fig(ctx, sc))
    for sec in render.analysis_sections(sc.res, heading=None, info=ctx.data.info):
        if sec.title.startswith("ANOVA") or sec.title.startswith("Robustness"):
            b.items.append(table(sec.title, sec.headers, sec.rows, sec.notes))
        elif sec.title.startswith("Checks"):
            for n in sec.notes:
                b.items.append(Text(n.lstrip("⚠ ").strip(), "warn" if n.startswith("⚠") else "note"))
    for n in sc.res.get("notes", []):
        b.items.append(Text(n, "note"))
    return b


def _variation_fig(ctx: Ctx, sc: Scenario) -> Fig:
    rows = sc.res["anova"]
    src = [r["source"] for r in rows]
    pct = [r["pct_variation"] for r in rows]
    pos = list(range(len(rows)))
    # significant sources in the palette's blue, others pale, the residual (noise) grey
    colors = [GREY if r["source"] == "Residual" else (PALETTE[0] if r.get("significant") else "#9ecae1") for r in rows]
    txt = [f"  {p:.1f} %" + ("" if r["source"] == "Residual" else (" *" if r.get("significant") else ""))
           for p, r in zip(pct, rows)]
    bars = Bars(pct, pos, colors, hover="%{customdata[0]}: %{x:.2f} % of variation<br>F %{customdata[2]}, "
                                        "p %{customdata[1]}<extra></extra>",
                hover_data=[[r["source"], render.fmt_p(r.get("p_value")), render.g4(r.get("F"))] for r in rows])
    plot = Plot([Panel([bars, Labels(pct, pos, txt)],
                       Axis("share of total variation, SS / SST (%)", range=(0, max(pct + [1]) * 1.18)),
                       Axis(ticks=(pos, src), reversed=True))],
                title=f"ANOVA of {ctx.response}: {sc.title(ctx.data)}")
    bal = "" if sc.res.get("balanced") else " Unbalanced design: the shares need not add up to 100 %."
    return Fig(sc.name("anova_variation", ctx.response), f"Share of variation of {ctx.response} per source", plot,
               caption=(f"Share of the total sum of squares explained by each factor and interaction; * = significant at "
                        f"α = {ctx.alpha:g} (F > F crit). Residual is what the factors do not explain (noise).{bal}"),
               size=(6.0, min(1.0 + 0.3 * len(rows), 8)), height=max(220, 90 + 34 * len(rows)))
