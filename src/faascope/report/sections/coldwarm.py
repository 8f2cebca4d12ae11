"""Cold vs warm starts: per cell, the latency of invocations that started a fresh instance and of
those that reused one (needs a `cold` column)."""
from __future__ import annotations

import numpy as np

from faascope.analysis import render
from faascope.report.figures import Fig
from faascope.report.items import Block, Text, table
from faascope.report.plot.model import Axis, Boxes, Legend, Panel, Plot
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx

BOX_POINTS_MAX = 20_000    # per scenario: the figure carries every value up to this many, else box statistics only
STRIP_MAX = 300            # per cell and start state: draw the individual values up to this many
COLORS = {"cold": "#0072B2", "warm": "#E69F00"}


def coldwarm_section(ctx: Ctx, sc: Scenario) -> Block | None:
    col = ctx.data.cold_col
    if col is None:
        return None
    b = Block("coldwarm", "Cold vs warm starts", level=3)
    flags = sc.rows[col].to_numpy(dtype=object)
    parts = {}  # (cell index, state) -> values
    trows = []
    for i, c in enumerate(sc.cells):
        f = flags[c.pos]
        cold = c.y[f == True]  # noqa: E712 - pandas' nullable booleans
        warm = c.y[f == False]  # noqa: E712
        parts[(i, "cold")] = cold
        parts[(i, "warm")] = warm
        med_c = float(np.median(cold)) if len(cold) else None
        med_w = float(np.median(warm)) if len(warm) else None
        ratio = f"{med_c / med_w:.3g}×" if med_c and med_w else "–"
        trows.append([c.label, f"{len(cold):,}", f"{len(warm):,}", render.g4(med_c), render.g4(med_w), ratio])
    n_cold = sum(len(v) for (i, s), v in parts.items() if s == "cold")
    n_warm = sum(len(v) for (i, s), v in parts.items() if s == "warm")
    b.items.append(table(f"Cold and warm invocations per cell (medians in {ctx.unit or 'response units'})",
                         [sc.legend_title or "cell", "cold", "warm", "median cold", "median warm", "cold / warm"], trows))
    if n_cold == 0 or n_warm == 0:
        state = "warm" if n_cold == 0 else "cold"
        b.items.append(Text(f"All {n_cold + n_warm:,} invocations in this scenario were {state} starts, so there is "
                            "nothing to compare.", "note"))
        return b
    labels = [c.label for c in sc.cells]
    raw = sum(len(v) for v in parts.values()) <= BOX_POINTS_MAX
    boxes = []
    for state in ("cold", "warm"):
        idx = [i for i in range(len(labels)) if len(parts[(i, state)])]
        if not idx:
            continue
        n_state = sum(len(parts[(i, state)]) for i in idx)
        few = max(len(parts[(i, state)]) for i in idx) <= STRIP_MAX
        boxes.append(Boxes(idx, [parts[(i, state)] for i in idx], f"{state} (n={n_state:,})", COLORS[state],
                           points=("all" if few else "outliers") if raw else "none"))
    pos = list(range(len(labels)))
    plot = Plot([Panel(boxes, Axis(ctx.axis(), log=ctx.log_for(sc)[0]),
                       Axis(sc.legend_title, ticks=(pos, labels), reversed=True))],
                title=f"Cold vs warm {ctx.response}: {sc.title(ctx.data)}", legend=Legend("start"))
    b.items.insert(0, Fig(sc.name("cold_warm", ctx.response), f"{ctx.response}: cold vs warm starts", plot,
                          caption=("Boxes: quartiles and median per cell, split by whether the invocation was the "
                                   "first in a fresh instance (cold, as the agent reported it) or reused one (warm); "
                                   "whiskers reach the most extreme values within 1.5 IQR"
                                   + ("; dots are the individual invocations." if raw else "; outliers not drawn.")),
                          note=None if raw else (f"Summarised: boxes computed from all {n_cold + n_warm:,} "
                                                 "invocations; individual points not drawn."),
                          size=(7.8, min(1.3 + 0.55 * len(labels), 10)), height=max(260, 110 + 56 * len(labels))))
    return b
