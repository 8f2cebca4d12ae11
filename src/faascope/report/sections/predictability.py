"""Predictability: the coefficient of variation per cell with its CI, and the CV comparisons."""
from __future__ import annotations

import math

import numpy as np

from faascope.analysis import render
from faascope.report.figures import Fig
from faascope.report.items import Block, table
from faascope.report.plot.model import Axis, Bars, Labels, Panel, Plot
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import cell_positions


def predictability_section(ctx: Ctx, sc: Scenario) -> Block:
    b = Block("predictability", "Predictability: coefficient of variation", level=3)
    b.items.append(_cv_fig(ctx, sc))
    if sc.described:
        return b
    if sc.res:
        for sec in render.analysis_sections(sc.res, heading=None, info=ctx.data.info):
            if sec.title.startswith("Predictability"):
                b.items.append(table(sec.title + " per factor level", sec.headers, sec.rows, sec.notes))
    return b


def _cv_fig(ctx: Ctx, sc: Scenario) -> Fig:
    cells = sc.cells
    pos, labels = cell_positions(cells)
    cv, lo, hi, methods, why = [], [], [], set(), {}
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
            why.setdefault((s or {}).get("cv_ci_why") or "the analysis engine did not run here", []).append(c.label)
    cv_text = [f"  {v:.1f} %" if math.isfinite(v) else f"  n/a (n={c.n})" for v, c in zip(cv, cells)]
    ends = [v + h if math.isfinite(v) else 0 for v, h in zip(cv, hi)]  # the value is written past the CI
    bars = Bars(cv, pos, [c.color for c in cells], "CV", opacity=0.8, xerr=(lo, hi), hover_data=labels,
                hover="%{customdata}<br>CV %{x:.1f} %<extra></extra>")
    plot = Plot([Panel([bars, Labels(ends, pos, cv_text)],
                       Axis("coefficient of variation, CV = s / mean (%)",
                            range=(0, max([e for e in ends if math.isfinite(e)] + [1]) * 1.18)),
                       Axis(sc.legend_title, ticks=(pos, labels), reversed=True))],
                title=f"CV of {ctx.response}: {sc.title(ctx.data)}")
    meth = ", ".join(sorted(m for m in methods if m))
    thr = (sc.res or {}).get("predictability", {}).get("threshold_pp", 10)
    return Fig(sc.name("cv", ctx.response), f"Coefficient of variation of {ctx.response} per cell", plot,
               caption=((f"CV per cell with its {ctx.conf} CI ({meth})." if meth else
                         "CV per cell (no cell has the values a CI needs: the note says why).")
                        + " Lower is more predictable; differences under "
                        f"{thr:g} percentage points are treated as negligible, and larger ones count where "
                        "the CV test separates the levels (the table below)."),
               note=("No CV CI for " + "; ".join(f"{', '.join(v)} ({k})" for k, v in why.items()) + "."
                     if why else None),
               size=(6.4, min(1.2 + 0.38 * len(cells), 10)), height=max(240, 100 + 40 * len(cells)))
