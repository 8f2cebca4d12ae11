"""The answer, first: per scenario, which level of the compared factor is fastest, most
predictable and cheapest, with ties stated as ties and each claim's evidence one click away.

Every ordering is the statistics engine's (decisions.py): Tukey HSD on the mean for speed and on
the per-invocation cost for cost (the same analysis, response = cost), the bootstrap CV
comparison for predictability. Nothing here tests anything itself; it reads the results and says
them in words.
"""
from __future__ import annotations

import math

from faascope.analysis.decisions import first_group, relabel, separations
from faascope.report.items import Block, Text
from faascope.report.numbers import money_ci, si_ci
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import evidence_order


def headline_section(ctx: Ctx) -> Block | None:
    d = ctx.data
    f = d.compare
    info = d.info[f]
    b = Block("answer", f"Answer: which `{f}` is best")
    analysed = [sc for sc in ctx.scenarios if sc.res and sc.res.get("decisions")]
    if not analysed:
        b.items.append(Text("No scenario could be analysed, so there is no answer yet: see each scenario for why.",
                            "warn"))
        return b
    b.items.append(Text(
        f"Per scenario: the fastest (lowest mean {ctx.response}), the most predictable (lowest CV) and the cheapest "
        f"(lowest cost per invocation) level of `{f}`. `<` = the data separate the levels (Tukey HSD, "
        f"{ctx.conf} family-wise; the p-value is the largest of the pairs it separates), `=` = they do not (a tie; "
        "its p-value). Means with their {conf} CIs; each line links to its evidence.".replace("{conf}", ctx.conf),
        "note"))
    for sc in analysed:
        anchor = f"scenario-{sc.index + 1}"
        row = sc.res["decisions"][0]
        single = sc.factors == [f]
        lines = []
        if d.scenario_cols:
            lines.append(f"**{sc.title(d)}**")
        if not single:
            lines.append(f"(means over {', '.join(x for x in sc.factors if x != f)}; per combination in "
                         f"[the decision table](#{anchor}-decision))")
        # speed
        top = first_group(row.get("tested_mean") or row["mean"], separations(sc.res["tukey"], f))
        means = _level_means(ctx, sc, single)
        lines.append(f"**Fastest:** {_best(top, info.label)}, {_centres(top, means, info.label)}. "
                     f"Order: {evidence_order(ctx, sc.res, row)} "
                     f"([Tukey HSD](#{anchor}-tukey), [means](#{anchor}-centre)).")
        # predictability
        cv = row.get("cv") or {}
        pred_top = _pred_top(row)
        if pred_top:
            p99 = {c.levels[f]: c.stats.get("p99") for c in sc.cells if c.stats} if single else {}

            def tail(lv: str) -> str:  # the tail next to the spread
                return f" (p99 {si_ci(p99[lv], None, 's' if ctx.unit == 's' else ctx.unit)})" \
                    if _finite(p99.get(lv)) else ""
            lines.append(f"**Most predictable:** {_best(pred_top, info.label)}, CV "
                         + "; ".join(f"{info.label(lv)}: {100 * cv[lv]:.1f}%{tail(lv)}" for lv in pred_top
                                     if _finite(cv.get(lv)))
                         + f". Order by CV: {_label_all(row.get('predictability_order') or '', info)} "
                         f"([CV comparisons](#{anchor}-predictability)).")
        # cost
        cost = sc.cost
        if cost is not None and cost.decision and cost.res:
            crow = cost.decision
            ctop = first_group(crow.get("tested_mean") or crow["mean"], separations(cost.res["tukey"], f))
            per_level = _level_costs(cost, f) if single else {}
            where = "; ".join(f"{info.label(lv)}: {per_level[lv]} per million invocations" for lv in ctop if lv in per_level)
            if not where:
                where = "; ".join(f"{info.label(lv)}: {money_ci(1e6 * crow['mean'][lv], None)} per million "
                                  "invocations" for lv in ctop)
            lines.append(f"**Cheapest:** {_best(ctop, info.label)}, {where}. "
                         f"Order: {evidence_order(ctx, cost.res, crow)} ([cost and the Pareto front](#cost)).")
        elif ctx.extra.get("cost_why"):
            lines.append(f"**Cost:** not priced ({ctx.extra['cost_why']}).")
        if len(top) == len(row["mean"]) and len(top) > 1:
            lines.append(f"The data do not separate the levels of `{f}` by speed here: more replications would "
                         f"narrow the intervals ([how many](#{anchor}-centre): the per-cell table's \"n for ±5%\").")
        b.items.append(Text("  \n".join(lines), "answer"))
    return b


def _finite(v) -> bool:
    return v is not None and math.isfinite(v)


def _best(levels: list[str], label) -> str:
    if not levels:
        return "none can be named"
    if len(levels) == 1:
        return f"**{label(levels[0])}**"
    return " = ".join(f"**{label(lv)}**" for lv in levels) + " (not separated)"


def _centres(levels: list[str], means: dict[str, str], label) -> str:
    # "level: value" (a bare "2 452 µs" would read as one number when the level is a number)
    return "; ".join(f"{label(lv)}: {means[lv]}" for lv in levels if lv in means) or "–"


def _level_means(ctx: Ctx, sc, single: bool) -> dict[str, str]:
    """Each level's mean as text: the cell's mean with its CI when the level is one cell, else the
    level's mean over the other factors (the decision table's)."""
    f = ctx.data.compare
    if single:
        return {c.levels[f]: si_ci(c.stats["mean"], c.stats.get("mean_ci"), "s" if ctx.unit == "s" else ctx.unit,
                                   why=c.stats.get("mean_ci_why"))
                for c in sc.cells if c.stats}
    row = sc.res["decisions"][0]
    return {lv: si_ci(m, None, "s" if ctx.unit == "s" else ctx.unit) for lv, m in row["mean"].items()}


def _level_costs(cost, f: str) -> dict[str, str]:
    return {c.levels.get(f): money_ci(c.per_million, c.per_million_ci, why=c.cost_ci_why) for c in cost.cells}


def _pred_top(row: dict) -> list[str]:
    order = row.get("predictability_order") or ""
    if not order or "≤" in order.split(" (")[0]:
        winner = row.get("predictability")
        return [winner] if winner and winner != "-" else []
    head = order.split(" < ")[0].split(";")[0]
    return [x.strip() for x in head.split(" = ") if x.strip()]


def _label_all(text: str, info) -> str:
    return relabel(text, info.levels, info.label)
