"""The `transfers` section (transfer chains): per cell, the timeline of its typical (median)
chain, hop by hop, and chain_s / transfer_s with intervals. Statistics:
`faascope.analysis.transfers`."""
from __future__ import annotations

import math

from faascope.analysis.per_cell import cell_columns
from faascope.analysis.transfers import (
    SEGMENTS, chain_means, has_transfers, hop_segments, typical_chains,
)
from faascope.report.figures import Fig
from faascope.report.items import Block, Text, table
from faascope.report.plot.model import Axis, Bars, Legend, Panel, Plot, Points
from faascope.report.sections.context import Ctx
from faascope.report.sections.workload_cells import (
    all_factors, cell_styles, error_bars, key_of, log_scale, measured_rows, row_ci, seconds,
)
from faascope.store.reader import ResultsFile

SEGMENT_STYLE = {"invoked": ("#CC79A7", "invoked (call → received)"),
                 "work": ("#0072B2", "work (read, write)"),
                 "waiting": ("#BBBBBB", "waiting for the next hop"),
                 "after": ("#56B4E9", "after the return")}
COLUMNS = 3


def _timeline_panel(segs, title: str) -> Panel:
    hops = sorted(segs["hop"].unique())
    marks = []
    for seg in SEGMENTS:
        s = segs[segs["segment"] == seg]
        if s.empty:
            continue
        color, name = SEGMENT_STYLE[seg]
        marks.append(Bars((s["end_s"] - s["start_s"]).tolist(), s["hop"].tolist(), color=color, name=name,
                          legend=True, base=s["start_s"].tolist(), height=0.6,
                          hover=f"hop %{{y}}: {seg} from %{{base:.4g}} s, %{{x:.4g}} s<extra></extra>"))
    labels = []
    for h in hops:
        cold = segs[segs["hop"] == h]["cold"].dropna()
        labels.append(f"hop {h}" + (" (cold)" if len(cold) and bool(cold.iloc[0]) else ""))
    return Panel(marks, Axis("s from the chain's start", max_ticks=5), Axis("", ticks=(hops, labels), reversed=True),
                 title=title)


def transfers_section(ctx: Ctx) -> Block | None:
    df = measured_rows(ctx)
    src = ctx.data.source
    if not has_transfers(df) or src.kind != "store":
        return None
    factors = [f for f in all_factors(ctx) if f in df.columns]
    keys = cell_columns(df, factors)
    cells = cell_styles(ctx, df)
    with ResultsFile(src.path, field="INPUT") as rf:
        hops = rf.hops()
    typical = typical_chains(df, factors)
    chain_of = dict(zip(df["invocation_id"], df["chain_s"]))
    panels = []
    for c in cells:
        inv = typical.get(c.key)
        if inv is None:
            continue
        segs = hop_segments(hops, inv)
        if segs.empty:
            continue
        panels.append(_timeline_panel(segs, f"{c.label} (chain {seconds(chain_of.get(inv))})"))
    b = Block("transfers", "Transfers between functions: chains hop by hop")
    if panels:
        # only the first panel's bars name the legend (every panel has the same segments)
        for p in panels[1:]:
            for m in p.marks:
                m.legend = False
        cols = min(COLUMNS, len(panels))
        rows = -(-len(panels) // cols)
        b.items.append(Fig("transfer_timelines", "Timeline of the typical chain of each cell",
                           Plot(panels, title="Typical (median) chain per cell, hop by hop",
                                legend=Legend("segment", where="top"), cols=cols),
                           caption="For each cell, the invocation whose chain_s is the median: each hop's "
                                   "segments from the chain's start (hop clocks are the instances' own).",
                           size=(3.3 * cols, 1.9 * rows + 0.8), height=200 * rows + 120))
    means = chain_means(df, factors, ctx.alpha)
    by = {(key_of(r, keys), r["measure"]): r for _, r in means.iterrows()}
    pos = list(range(len(cells)))
    ticks = Axis("", ticks=(pos, [c.label for c in cells]), reversed=True)
    mean_panels = []
    for measure, title in (("chain_s", "chain: first hop's start → last hop's end"),
                           ("transfer_s", "transfer: payload between hops, summed")):
        got = [(p, c, by[(c.key, measure)]) for p, c in zip(pos, cells) if (c.key, measure) in by]
        if not got:
            continue
        x = [r["mean"] for _, _, r in got]
        lo, hi = error_bars(x, [r["ci_low"] for _, _, r in got], [r["ci_high"] for _, _, r in got])
        mean_panels.append(Panel([Points(x, [p for p, _, _ in got], name=measure, color=[c.color for _, c, _ in got],
                                         size=8, xerr=(lo, hi), legend=False,
                                         hover=f"%{{y}}: {measure} %{{x:.4g}} s<extra></extra>")],
                                 Axis(f"{measure} (s)", log=log_scale(x), log_switch=True), ticks, title=title))
    if mean_panels:
        b.items.append(Fig("transfer_chain_times", "Chain and transfer time per cell (means)",
                           Plot(mean_panels, title="Chain and transfer time per cell", cols=len(mean_panels)),
                           caption=f"Means over the cell's invocations with their {ctx.conf} intervals.",
                           size=(7.2, max(2.6, 0.35 * len(cells) + 1.4)), height=max(280, 34 * len(cells) + 140)))
    rows = []
    for c in cells:
        ch, tr = by.get((c.key, "chain_s")), by.get((c.key, "transfer_s"))
        share = (f"{100 * tr['mean'] / ch['mean']:.0f}%"
                 if ch is not None and tr is not None and ch["mean"] and math.isfinite(tr["mean"]) else "–")
        rows.append([c.label, int(ch["n"]) if ch is not None else 0,
                     row_ci(seconds, ch) if ch is not None else "–",
                     seconds(ch["median"]) if ch is not None else "–",
                     row_ci(seconds, tr) if tr is not None else "–", share])
    b.items.append(table(f"Chains per cell (mean [{ctx.conf} CI])",
                         ["cell", "invocations", "chain_s", "median chain_s", "transfer_s", "transfer share"], rows))
    b.items.append(Text("transfer_s of a hop = its start − the previous hop's send start + its read: the previous "
                        "hop's write, the invocation and this hop's read (docs/workloads.md).", "note"))
    return b
