"""Cost: what one million invocations of each cell cost, with a CI, next to their latency; the
cost-vs-latency (mean and p99) chart with the Pareto front; how the campaign was priced and which
duration the cost uses; break-even figures where the workload compares storages."""
from __future__ import annotations

import numpy as np

from faascope.cost.model import PLATFORM_TITLES
from faascope.provider_kinds import provider_kind
from faascope.report.costs import BILLED_RATIO_NOTE, DURATION_NAMES, ScenarioCost, table_of
from faascope.analysis.levels import size_labels
from faascope.report.figures import Fig, auto_log
from faascope.report.items import Block, Text, table
from faascope.report.numbers import CLIPPED, CLIPPED_NOTE, money, money_ci, ratio, si, si_ci
from faascope.report.plot.model import Axis, Labels, Legend, Line, Panel, Plot, Points
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import evidence_order

FRONT_COLOR = "#D55E00"
#: up to this many cells the cost chart names each point beside it
LABELLED_CELLS = 6


def cost_section(ctx: Ctx) -> Block | None:
    basis = ctx.extra.get("cost_basis")
    why = ctx.extra.get("cost_why")
    b = Block("cost", "Cost")
    if basis is None:
        if why is None:
            return None
        b.items.append(Text(f"Not priced: {why}.", "warn"))
        return b
    b.items.append(Text(_how(ctx, basis), "note"))
    if basis.mapped:
        b.items.append(Text("Priced by the mapping given (--price-platform, --price-memory, --price-arch, "
                            "--price-duration): " + "; ".join(basis.mapped) + ".",
                            "warn" if basis.lower_bound else "note"))
    for sc in ctx.scenarios:
        cost: ScenarioCost | None = sc.cost
        if cost is None or not cost.cells:
            continue
        where = sc.title(ctx.data) if ctx.data.scenario_cols else None
        b.items.append(_table(ctx, cost, where))
        note = billed_note(cost, basis.lower_bound)
        if note:
            b.items.append(Text(note, "warn"))
        if cost.decision:
            b.items.append(Text(f"Cheapest `{ctx.data.compare}` ({cost.decision['test']} on the cost per invocation): "
                                f"{cost_order(ctx, sc)}.", "p"))
        fig = _figure(ctx, sc, cost)
        if fig is not None:
            b.items.append(fig)
        brk = _break_even_table(cost, where)
        if brk is not None:
            b.items.append(brk)
    return b


def _break_even_table(cost: ScenarioCost, where: str | None):
    """The five-minute rule for the cells that read from /tmp or object storage."""
    cells = [c for c in cost.cells if c.break_even_s is not None]
    if not cells:
        return None
    whole = [int(round(c.item_bytes)) for c in cells]
    sizes = size_labels(whole)   # exact, one unit family, as the report labels sizes
    rows = [[c.label, c.tier, sizes[b], si(c.timed_mean_s, "s"), si(c.break_even_s, "s")] for c, b in zip(cells, whole)]
    return table("Break-even: keep the data in memory or read it again" + (f": {where}" if where else ""),
                 ["cell", "read from", "bytes per read", "timed read", "keep in RAM if re-read within"], rows,
                 caption=("Gray and Putzolu's five-minute rule (SIGMOD 1987; Gray and Graefe 1997) with serverless "
                          "list prices, as Bodner et al. apply it to serverless storage tiers (Skyrise, "
                          "arXiv:2501.07771): T = cost of one read (the request fee, plus the function's billed "
                          "time while it reads: the timed mean × memory × the GB-s price) / cost of holding the bytes "
                          "in the function's memory for a second (their GB × the GB-s price). Data re-read more "
                          "often than every T is cheaper kept in memory (a larger memory size), if it fits."))


def _how(ctx: Ctx, basis) -> str:
    tables = sorted({(t.name, t.version, t.date, t.source) for t in (table_of(basis.pricing, p) for p in basis.platforms)})
    used = "; ".join(f"`{n}@{v}` ({d}, {s})" for n, v, _d, s in tables for d in [_d])
    kind = provider_kind((ctx.data.source.spec or {}).get("provider", {}).get("kind"))
    local = kind is not None and kind.local
    src = ", ".join(DURATION_NAMES.get(s, s) for s in basis.sources) or "none"
    text = (("This campaign ran on faascope's local platform; it is priced as the cloud each sandbox profile "
             f"stands in for: {basis.as_what}. ") if local else f"Priced as {basis.as_what}. ")
    if basis.lower_bound:
        text += ("Every cost below is a lower bound: the priced duration is the timed response, not the billed "
                 "duration. ")
    text += (f"Price tables: {used}. Per invocation: compute (memory × billed duration at the provider's "
             "granularity; GCF: vCPU-s and GiB-s), the request fee, ephemeral storage above the free size"
             + (", and the storage requests the workload makes (the plan's workload per cell)" if basis.storage_priced
                else "") +
             f". The cost uses the billed duration: {src}. Cost per million invocations with a "
             f"{ctx.conf} Student t interval (within a cell the cost is the billed duration times a fixed price "
             "plus the request fee, so this is the t interval of the mean billed duration, priced). "
             "Successful, measured invocations only (warm-ups and failures are not in the statistics); free "
             "tiers are not subtracted; transfer inside a region is free and none is priced.")
    return text


def billed_note(cost: ScenarioCost, lower_bound: bool = False) -> str | None:
    """Say so when the billed duration is much longer than the timed response."""
    far = [c for c in cost.cells if c.billed_ratio is not None and c.billed_ratio > BILLED_RATIO_NOTE]
    if not far:
        return None
    worst = max(far, key=lambda c: c.billed_ratio)
    if lower_bound:  # the billed duration is the timed one rounded up: the ratio is the rounding
        return (f"Billed duration is more than {BILLED_RATIO_NOTE:g}× the timed response in {len(far)} of "
                f"{len(cost.cells)} cells (largest: {worst.label}, billed {si(worst.billed_mean_s, 's')} vs timed "
                f"{si(worst.timed_mean_s, 's')}, {ratio(worst.billed_ratio)}): the timed response rounded up to the "
                "platform's billing granularity (GCF and Cloud Run bill in 100 ms steps, Lambda in 1 ms).")
    return (f"Billed duration is more than {BILLED_RATIO_NOTE:g}× the timed response in {len(far)} of "
            f"{len(cost.cells)} cells (largest: {worst.label}, billed {si(worst.billed_mean_s, 's')} vs timed "
            f"{si(worst.timed_mean_s, 's')}, {ratio(worst.billed_ratio)}): the billed time also holds what the "
            "timed section leaves out, such as preparing the file a read reads, dropping caches, starting the "
            "agent and the runtime's own work. The cost uses the billed duration, as the provider would bill it.")


def _table(ctx: Ctx, cost: ScenarioCost, where: str | None):
    rows = []
    for i, c in enumerate(cost.cells):
        rows.append([c.label, PLATFORM_TITLES.get(c.platform, c.platform), str(c.n), si_ci(c.timed_mean_s, c.timed_mean_ci, "s", why=c.timed_mean_ci_why),
                     si(c.timed_p99_s, "s"), si(c.billed_mean_s, "s"),
                     ratio(c.billed_ratio),
                     money_ci(c.per_million, c.per_million_ci, why=c.cost_ci_why),
                     money(c.compute * 1e6), money(c.request * 1e6), money(c.ephemeral * 1e6),
                     money(c.storage * 1e6),
                     ("mean" if i in cost.front else "") + (" p99" if i in cost.front_p99 else "")])
    headers = ["cell", "priced as", "n", f"timed mean ({ctx.conf} CI)", "timed p99", "billed mean", "billed / timed",
               f"$ per million ({ctx.conf} CI)", "compute", "requests", "ephemeral", "storage",
               "Pareto front"]
    title = "Cost per cell" + (f": {where}" if where else "")
    clipped = any(CLIPPED in cell for r in rows for cell in r)
    return table(title, headers, rows, caption=(
        "$ per million invocations; compute, requests, ephemeral storage and storage requests are the parts of "
        "it. Pareto front: no other cell is both cheaper and faster (by the mean, or by the p99)."
        + (" " + CLIPPED_NOTE if clipped else "")))


def cost_order(ctx: Ctx, sc) -> str:
    """Cheapest first, with the decision's evidence: "512 MB < 1769 MB (p ≤ 0.001) < 3008 MB …"."""
    return evidence_order(ctx, sc.cost.res, sc.cost.decision)


def _figure(ctx: Ctx, sc, cost: ScenarioCost) -> Fig | None:
    cells = cost.cells
    if not any(c.timed_mean_s is not None for c in cells):
        return None
    panels = []
    ys_all = [v for c in cells for v in (c.timed_mean_s, c.timed_p99_s) if v is not None]
    log = auto_log(np.asarray(ys_all, dtype=float), ratio=30.0)
    for key, front, what in (("mean", cost.front, "mean"), ("p99", cost.front_p99, "p99")):
        ys = [c.timed_mean_s if key == "mean" else c.timed_p99_s for c in cells]
        xs = [c.per_million for c in cells]
        # a price cannot be negative: an interval reaching below 0 ends there, with a mark
        lo = [c.per_million - max(0.0, c.per_million_ci[0]) if c.per_million_ci else 0.0 for c in cells]
        hi = [c.per_million_ci[1] - c.per_million if c.per_million_ci else 0.0 for c in cells]
        clipped = [i for i, c in enumerate(cells) if c.per_million_ci and c.per_million_ci[0] < 0]
        marks = [Points(xs, ys, f"cell ($ per million with its {ctx.conf} CI)", [c.color for c in cells], "circle",
                        size=11, edge="#222222", xerr=(lo, hi), err_color="#555555", legend=key == "mean",
                        hover=("%{customdata[0]}<br>$%{x:.4g} per million<br>" + what +
                               " %{customdata[1]}<extra></extra>"),
                        hover_data=[[c.label, si(y, "s")] for c, y in zip(cells, ys)])]
        if front:
            fx = [xs[i] for i in front]
            fy = [ys[i] for i in front]
            marks.append(Line(fx, fy, "Pareto front", FRONT_COLOR, dash="dash", width=2, legend=key == "mean",
                              hover="Pareto front<br>%{customdata}<extra></extra>",
                              hover_data=[cells[i].label for i in front]))
            marks.append(Points(fx, fy, "on the front", FRONT_COLOR, "circle", size=20, open=True, legend=False,
                                hover="on the Pareto front: %{customdata}<extra></extra>",
                                hover_data=[cells[i].label for i in front]))
        if clipped:
            marks.append(Points([0.0] * len(clipped), [ys[i] for i in clipped], "CI reaches below $0 (clipped)",
                                "#B00020", "triangle-left", size=9, legend=key == "mean",
                                hover="the interval reaches below $0 (clipped)<extra></extra>"))
        if len(cells) <= LABELLED_CELLS:  # more labels would cover each other: hover names the cell
            marks.append(Labels(xs, ys, ["     " + c.label for c in cells]))
        panels.append(Panel(marks, Axis("$ per million invocations"),
                            Axis(f"{what} {timed_name(ctx)} (s)", log=log, log_switch=True),
                            title=f"cost vs {what} latency"))
    plot = Plot(panels, title=f"Cost vs latency: {sc.title(ctx.data)}", legend=Legend(where="top"), cols=2)
    return Fig(sc.name("cost_vs_latency", ctx.response), "Cost vs latency (mean and p99), with the Pareto front",
               plot, caption=("Each point is a cell (coloured by its level of the compared factor; hover for its name): "
                              "$ per million invocations (with its CI) against its mean (left) and p99 (right) timed "
                              "latency" + (", on a log scale (the latencies span more than 30×)" if log else "") +
                              ". The dashed line joins the Pareto front: the cells no other cell beats on both cost "
                              "and latency; everything off it is dominated."),
               size=(9.0, 4.2), height=460, key=True)


def timed_name(ctx: Ctx) -> str:
    basis = ctx.extra.get("cost_basis")
    return basis.timed if basis and basis.timed else ctx.response
