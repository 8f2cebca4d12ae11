"""Tukey HSD: pairwise differences of means with family-wise intervals."""
from __future__ import annotations

from matplotlib.ticker import MaxNLocator

from faascope.analysis import render
from faascope.report.figures import GREY, PALETTE, Fig, plotly_layout
from faascope.report.items import Block, Text, table
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import figure_title

TUKEY_MAX_ROWS = 30        # more comparisons than this: draw main effects + one-factor-apart pairs


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
        figure_title(mf, f"Tukey HSD ({ctx.conf}) of {ctx.response}: {sc.title(ctx.data)}")

    return Fig(sc.name("tukey", ctx.response), f"Tukey HSD intervals of {ctx.response}", fig, draw,
               caption=(f"Each row: the difference of mean {ctx.response} between two groups (first named minus second) "
                        f"with its {ctx.conf} family-wise interval. Intervals that do not cross the dashed zero line "
                        "(orange, filled) are significant differences."), note=note,
               size=(7.0, min(1.2 + 0.24 * len(rows), 12)), height=height)
