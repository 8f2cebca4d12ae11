"""One scenario's rows of the decision table, at the end of its statistics."""
from __future__ import annotations

from faascope.analysis import render
from faascope.report.items import Block
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import labelled


def scenario_decision_section(ctx: Ctx, sc: Scenario) -> Block | None:
    if not sc.res or sc.described:
        return None
    b = Block("decision", f"Decision: best {ctx.data.compare}", level=3)
    sec = render.decision_section(sc.res["decisions"], [], ctx.data.compare, level=3, info=ctx.data.info,
                                  unit=ctx.unit)
    b.items.append(labelled(ctx, sec.title, sec.headers, sec.rows, sec.notes,
                            caption="Means in their unit; CV = s/mean in %."))
    return b
