"""Mean and median per cell with their confidence intervals, and the per-cell statistics table."""
from __future__ import annotations

import math

import numpy as np

from faascope.analysis import render
from faascope.report.figures import Fig
from faascope.report.items import Block
from faascope.report.plot.model import Axis, Legend, Panel, Plot, Points
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import cell_positions, labelled


def centre_section(ctx: Ctx, sc: Scenario) -> Block:
    b = Block("centre", f"Mean and median with {ctx.conf} confidence intervals", level=3)
    b.items.append(_means_fig(ctx, sc))
    if sc.res:
        for sec in render.analysis_sections(sc.res, heading=None, info=ctx.data.info):
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
                        "median_ci": s.get("median_ci"), "mean_ci_why": s.get("mean_ci_why"),
                        "median_ci_why": s.get("median_ci_why")})
        else:
            out.append({"mean": float(np.mean(c.y)), "median": float(np.median(c.y)), "mean_ci": None,
                        "median_ci": None, "mean_ci_why": "the analysis engine did not run here",
                        "median_ci_why": "the analysis engine did not run here"})
    return out


def _means_fig(ctx: Ctx, sc: Scenario) -> Fig:
    cells = sc.cells
    cen = _cell_centres(ctx, sc)
    pos, labels = cell_positions(cells)
    vals = [v for c in cen for v in [c["mean"], c["median"]] if v is not None and math.isfinite(v)]
    log = ctx.log_x if ctx.log_x is not None else bool(vals and min(vals) > 0 and max(vals) / min(vals) > 30)

    # on a log axis a CI reaching down to zero would stretch the axis to nothing: start at a third
    # of the smallest centre
    lower = min(v for v in vals if v > 0) / 3 if log and any(v > 0 for v in vals) else None
    floor = lower if lower is not None else 0.0

    def err(key, centre):
        # a latency cannot be negative: an interval reaching below zero (or below a log axis's
        # start) ends there, and a mark says it was clipped
        lo = [max(0.0, cc[centre] - max(cc[key][0], floor)) if cc[key] else 0.0 for cc in cen]
        hi = [max(0.0, cc[key][1] - cc[centre]) if cc[key] else 0.0 for cc in cen]
        return lo, hi

    clipped = [(i, off) for key, off in (("mean_ci", -0.13), ("median_ci", 0.13))
               for i, cc in enumerate(cen) if cc[key] and cc[key][0] < floor]

    def hover(what):
        return (f"%{{customdata[0]}}<br>{what} %{{x:.4g}} {ctx.unit}<br>CI [%{{customdata[1]:.4g}}, "
                "%{customdata[2]:.4g}]<extra></extra>")

    colors = [c.color for c in cells]
    # mean above, median below each cell's row, each with its CI
    means = Points([c["mean"] for c in cen], [p - 0.13 for p in pos], f"mean ({ctx.conf} bootstrap-t CI)", colors,
                   "circle", size=10, edge="#222222", xerr=err("mean_ci", "mean"), err_color="#333333",
                   err_width=1.6, hover=hover("mean"),
                   hover_data=[[lab, *(cc["mean_ci"] or [float("nan")] * 2)] for lab, cc in zip(labels, cen)])
    medians = Points([c["median"] for c in cen], [p + 0.13 for p in pos], f"median ({ctx.conf} order-statistic CI)",
                     colors, "diamond", size=10, open=True, xerr=err("median_ci", "median"), err_color="#777777",
                     err_width=1.2, hover=hover("median"),
                     hover_data=[[lab, *(cc["median_ci"] or [float("nan")] * 2)] for lab, cc in zip(labels, cen)])
    marks = [means, medians]
    if clipped:
        marks.append(Points([floor] * len(clipped), [pos[i] + off for i, off in clipped],
                            "CI reaches below " + ("0" if lower is None else "the axis") + " (clipped)",
                            "#B00020", "triangle-left", size=9,
                            hover="the interval reaches below here (clipped)<extra></extra>"))
    plot = Plot([Panel(marks, Axis(ctx.axis(), log=log, lower=lower),
                       Axis(sc.legend_title, ticks=(pos, labels), reversed=True))],
                title=f"Mean and median of {ctx.response}: {sc.title(ctx.data)}", legend=Legend(where="top"))
    missing = {}
    for c, cc in zip(cells, cen):
        for key, what in (("mean_ci", "mean"), ("median_ci", "median")):
            if not cc[key]:
                missing.setdefault(f"No {what} CI", []).append(f"{c.label} ({cc[key + '_why'] or 'none'})")
    no_ci = "; ".join(f"{k} for {', '.join(v)}" for k, v in missing.items())
    return Fig(sc.name("mean_median_ci", ctx.response), f"Mean and median of {ctx.response} with {ctx.conf} CIs", plot,
               caption=(f"Filled circles: mean with its {ctx.conf} CI (bootstrap-t on the log scale); open diamonds: "
                        f"median with its distribution-free {ctx.conf} CI. A CI is drawn only where the cell has the "
                        "values it needs to cover (docs/analysis.md, 'Which intervals are printed')."
                        + ("" if sc.described else " Non-overlapping medians/means suggest a real difference; the "
                           "pairwise tests of the decision test it.")
                        + (" Log scale (values span more than 30×)." if log else "")),
               note=(f"{no_ci}." if no_ci else None),
               size=(7.6, min(1.2 + 0.42 * len(cells), 10)), height=max(260, 110 + 46 * len(cells)))
