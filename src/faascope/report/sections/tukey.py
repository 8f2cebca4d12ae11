"""Tukey HSD: pairwise differences of means with family-wise intervals."""
from __future__ import annotations

from faascope.analysis import render
from faascope.report.figures import Fig
from faascope.report.items import Block, Text, table
from faascope.report.plot.model import Axis, Legend, Panel, Plot, Points, RefLine
from faascope.report.plot.style import GREY, PALETTE
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx

TUKEY_MAX_ROWS = 30        # more comparisons than this: draw main effects + one-factor-apart pairs


def _group_label(ctx: Ctx, term: str, group: str) -> str:
    fs = term.split(":")
    parts = group.split(":")
    if len(parts) != len(fs):
        return group
    return " · ".join(ctx.data.info[f].label(p) if f in ctx.data.info else p for f, p in zip(fs, parts))


def tukey_section(ctx: Ctx, sc: Scenario) -> Block | None:
    if sc.described:
        return None
    b = Block("tukey", f"Tukey HSD: pairwise differences ({ctx.conf} family-wise)", level=3)
    if not sc.res:
        b.items.append(Text(f"No Tukey HSD for this scenario: {sc.error}", "warn"))
        return b
    b.items.append(_tukey_fig(ctx, sc))
    for sec in render.analysis_sections(sc.res, heading=None, info=ctx.data.info):
        if sec.title.startswith("Tukey"):
            b.items.append(table(sec.title, sec.headers, sec.rows, sec.notes))
    return b


def _tukey_fig(ctx: Ctx, sc: Scenario) -> Fig:
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
    log_note = " (on log scale: differences of log means)" if sc.res.get("transform") == "log" else ""
    xt = f"difference of means{log_note} ({ctx.unit})" if ctx.unit else f"difference of means{log_note}"
    marks = []
    for sig in (True, False):  # significant pairs filled orange, the others open grey
        idx = [i for i, r in enumerate(rows) if bool(r["reject"]) == sig]
        if not idx:
            continue
        marks.append(Points(
            [d[i] for i in idx], [pos[i] for i in idx], "significant" if sig else "not significant",
            PALETTE[1] if sig else GREY, "circle", size=8, open=not sig,
            xerr=([lo[i] for i in idx], [hi[i] for i in idx]), err_width=1.6,
            hover=(f"%{{customdata[0]}}<br>diff %{{x:.4g}} {ctx.unit}<br>[%{{customdata[1]:.4g}}, "
                   "%{customdata[2]:.4g}], p adj %{customdata[3]}<extra></extra>"),
            hover_data=[[labels[i], rows[i]["lower"], rows[i]["upper"], render.fmt_p(rows[i]["p_adj"])] for i in idx]))
    marks.append(RefLine(0))
    plot = Plot([Panel(marks, Axis(xt, max_ticks=6), Axis(ticks=(pos, labels), reversed=True, small_ticks=True))],
                title=f"Tukey HSD ({ctx.conf}) of {ctx.response}: {sc.title(ctx.data)}", legend=Legend(where="top"))
    return Fig(sc.name("tukey", ctx.response), f"Tukey HSD intervals of {ctx.response}", plot,
               caption=(f"Each row: the difference of mean {ctx.response} between two groups (first named minus second) "
                        f"with its {ctx.conf} family-wise interval. Intervals that do not cross the dashed zero line "
                        "(orange, filled) are significant differences."), note=note,
               size=(7.0, min(1.2 + 0.24 * len(rows), 12)), height=max(240, 110 + 26 * len(rows)))
