"""The `phases` section (app-shaped workloads): read, compute and write time stacked per cell,
means with their intervals. Statistics: `faascope.analysis.phases`."""
from __future__ import annotations

import math

from faascope.analysis.per_cell import cell_columns
from faascope.analysis.phases import PHASES, has_phases, phase_means
from faascope.report.figures import Fig
from faascope.report.items import Block, Text, table
from faascope.report.plot.model import Axis, Bars, Legend, Panel, Plot
from faascope.report.sections.context import Ctx
from faascope.report.sections.workload_cells import (
    all_factors, cell_styles, key_of, measured_rows, row_ci, seconds,
)

PHASE_COLORS = {"read_s": "#0072B2", "compute_s": "#E69F00", "write_s": "#D55E00"}
PHASE_NAMES = {"read_s": "read", "compute_s": "compute", "write_s": "write"}


def phases_section(ctx: Ctx) -> Block | None:
    df = measured_rows(ctx)
    if not has_phases(df):
        return None
    factors = [f for f in all_factors(ctx) if f in df.columns]
    means = phase_means(df, factors, ctx.alpha)
    cells = cell_styles(ctx, df)
    keys = cell_columns(df, factors)
    by = {(key_of(r, keys), r["measure"]): r for _, r in means.iterrows()}
    pos = list(range(len(cells)))
    marks = []
    base = [0.0] * len(cells)
    for ph in PHASES:
        rows = [by.get((c.key, ph)) for c in cells]
        if all(r is None for r in rows):
            continue
        x = [r["mean"] if r is not None else 0.0 for r in rows]
        # a time is never below 0 (the intervals are on the log scale; this only guards the drawing)
        lo = [min(r["mean"], max(0.0, r["mean"] - r["ci_low"])) if r is not None and r["ci_low"] is not None
              else 0.0 for r in rows]
        hi = [max(0.0, r["ci_high"] - r["mean"]) if r is not None and r["ci_high"] is not None else 0.0 for r in rows]
        marks.append(Bars(x, pos, color=PHASE_COLORS[ph], name=PHASE_NAMES[ph], legend=True, base=list(base),
                          xerr=(lo, hi), height=0.6,
                          hover=f"%{{y}}: {PHASE_NAMES[ph]} %{{x:.4g}} s<extra></extra>"))
        base = [b + v for b, v in zip(base, x)]
    plot = Plot([Panel(marks, Axis("mean time per invocation (s)"),
                       Axis("", ticks=(pos, [c.label for c in cells]), reversed=True))],
                title="Read, compute and write time per cell", legend=Legend("phase", where="top"))
    b = Block("phases", "Application phases: read, compute, write")
    b.items.append(Fig("phases_read_compute_write", "Read, compute and write time per cell (means)", plot,
                       caption=f"Each bar is the mean time of the phases one after another; the whisker at the "
                               f"end of each segment is the {ctx.conf} interval of that phase's mean over the "
                               "cell's invocations.",
                       size=(6.4, max(2.4, 0.35 * len(cells) + 1.2)), height=max(260, 34 * len(cells) + 120)))
    rows = []
    for c in cells:
        r = [c.label]
        total = 0.0
        n = 0
        for ph in PHASES:
            m = by.get((c.key, ph))
            r.append(row_ci(seconds, m) if m is not None else "–")
            if m is not None and math.isfinite(m["mean"]):
                total += m["mean"]
                n = max(n, int(m["n"]))
        rows.append(r + [seconds(total), n])
    b.items.append(table(f"Phases per cell (mean [{ctx.conf} CI])", ["cell", "read", "compute", "write",
                                                                     "sum of means", "invocations"], rows))
    b.items.append(Text("read = reading the input, compute = the application's work, write = writing the "
                        "output (`read_s`, `compute_s`, `write_s` of the results file).", "note"))
    return b
