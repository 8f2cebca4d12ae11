"""The report-level decision table: the best level of the compared factor, across scenarios."""
from __future__ import annotations

from faascope.analysis import render
from faascope.report.items import Block, Text
from faascope.analysis.scenarios import all_decisions
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import labelled


def decisions_section(ctx: Ctx) -> Block | None:
    rows = all_decisions(ctx.scenarios)
    if ctx.data.described:  # no factor: nothing to decide between
        return None
    b = Block("decisions", f"Decision table: best {ctx.data.compare}")
    if not rows:
        b.items.append(Text("No scenario could be analysed, so there is no decision table (see each scenario for why).",
                            "warn"))
        return b
    sec = render.decision_section(rows, ctx.data.scenario_cols, ctx.data.compare, info=ctx.data.info,
                                  unit=ctx.unit)
    way = "higher" if ctx.measure.higher_is_better else "lower"
    sec.title = f"Best {ctx.data.compare} for performance ({way} mean) and predictability (lower CV)"
    b.items.append(Text(
        f"Per scenario, and within each combination of the other factors: which level of `{ctx.data.compare}` is "
        f"best, and the order of all its levels from best to worst: '{'>' if ctx.measure.higher_is_better else '<'}' "
        "where the data separate two levels, '=' where they do not (a level wins only when it is separated from "
        "every other).", "p"))
    b.items.append(labelled(ctx, sec.title, sec.headers, sec.rows, sec.notes,
                            caption="Means in their unit; CV = s/mean in %."))
    failed = [sc for sc in ctx.scenarios if sc.error]
    for sc in failed:
        b.items.append(Text(f"Not analysed: {sc.title(ctx.data)}: {sc.error}", "warn"))
    return b
