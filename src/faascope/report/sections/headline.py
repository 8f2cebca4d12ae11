"""The answer, first: per scenario, which level of the compared factor is fastest, most
predictable and cheapest, with ties stated as ties and each claim's evidence one click away.

Every ordering is the statistics engine's decision row (decisions.py), read from the row's own
`test` and `pairs`: estimated marginal means compared by Welch tests (Games-Howell-adjusted) for
speed, the same on the per-invocation cost for cost (the same analysis, response = cost), the
CV test (a studentized permutation test of the CV ratio, Holm-adjusted) for predictability.
Nothing here tests anything itself; it reads the results and says them in words.
"""
from __future__ import annotations

import math

from faascope.analysis.cv_test import SHORT as CV_TEST_SHORT
from faascope.analysis.decisions import first_group, ordering_with_p, pair_separations, relabel
from faascope.report.items import Block, Text
from faascope.report.numbers import money_ci, si_ci
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import evidence_order, short_p
from faascope.report.sections.model_basis import assumed_warning, local_basis


def headline_section(ctx: Ctx) -> Block | None:
    d = ctx.data
    if d.described:
        return summary_section(ctx)
    f = d.compare
    info = d.info[f]
    b = Block("answer", f"Answer: which `{f}` is best")
    analysed = [sc for sc in ctx.scenarios if sc.res and sc.res.get("decisions")]
    if not analysed:
        b.items.append(Text("No scenario could be analysed, so there is no answer yet: see each scenario for why.",
                            "warn"))
        _model_warning(ctx, b)
        return b
    b.items.append(Text(
        f"Per scenario: the {ctx.measure.best_word.lower()} ({_direction(ctx)}), the most predictable (lowest CV) "
        f"and the cheapest (lowest cost per invocation) level of `{f}`. `{'>' if ctx.measure.higher_is_better else '<'}` "
        f"= the data separate the levels (the decision's test, "
        f"named on each line, which does not assume equal variances; {ctx.conf} family-wise; the p-value is the "
        "largest of the pairs it separates), `=` = they do not (a tie; its p-value). Means with their {conf} CIs; "
        "each line links to its evidence.".replace("{conf}", ctx.conf),
        "note"))
    for sc in analysed:
        anchor = f"scenario-{sc.index + 1}"
        row = sc.res["decisions"][0]
        single = sc.factors == [f]
        lines = []
        if d.scenario_cols:
            lines.append(f"**{sc.title(d)}**")
        if not single:
            lines.append(f"(estimated marginal means over {', '.join(x for x in sc.factors if x != f)}, each "
                         f"combination weighted equally; per combination in "
                         f"[the decision table](#{anchor}-decision))")
        # speed
        top = first_group(row["tested_mean"], pair_separations(row["pairs"]), bool(row.get("higher_is_better")))
        means = _level_means(ctx, sc, single)
        lines.append(f"**{ctx.measure.best_word}:** {_best(top, info.label)}, {_centres(top, means, info.label)}. "
                     f"Order: {evidence_order(ctx, sc.res, row)} "
                     f"([{row['test']}](#{anchor}-decision), [means](#{anchor}-centre)).")
        # predictability
        cv = row.get("cv") or {}
        pred_top = _pred_top(row)
        porder = row.get("predictability_order") or ""
        if porder.startswith("no CV comparison"):
            why = porder[len("no CV comparison ("):]
            why = why[:-1] if why.endswith(")") else why   # the one bracket the prefix opened
            lines.append("**Most predictable:** none can be named: " + why
                         + "; CV " + "; ".join(f"{info.label(lv)}: {100 * v:.1f}%" for lv, v in cv.items() if _finite(v))
                         + f" ([CV per cell](#{anchor}-predictability)).")
        elif pred_top:
            p99 = {c.levels[f]: c.stats.get("p99") for c in sc.cells if c.stats} if single else {}

            def tail(lv: str) -> str:  # the tail next to the spread
                return f" (p99 {si_ci(p99[lv], None, 's' if ctx.unit == 's' else ctx.unit)})" \
                    if _finite(p99.get(lv)) else ""
            lines.append(f"**Most predictable:** {_best(pred_top, info.label)}, CV "
                         + "; ".join(f"{info.label(lv)}: {100 * cv[lv]:.1f}%{tail(lv)}" for lv in pred_top
                                     if _finite(cv.get(lv)))
                         + f". Order by CV: {_cv_order(row, info)} "
                         f"([{CV_TEST_SHORT}](#{anchor}-predictability)).")
        # cost
        cost = sc.cost
        if cost is not None and cost.decision and cost.res:
            crow = cost.decision
            ctop = first_group(crow["tested_mean"], pair_separations(crow["pairs"]),
                               bool(crow.get("higher_is_better")))
            per_level = _level_costs(cost, f) if single else {}
            where = "; ".join(f"{info.label(lv)}: {per_level[lv]} per million invocations" for lv in ctop if lv in per_level)
            if not where:
                where = "; ".join(f"{info.label(lv)}: {money_ci(1e6 * crow['mean'][lv], None)} per million "
                                  "invocations" for lv in ctop)
            basis = ctx.extra.get("cost_basis")
            bound = (" (lower bounds: the timed response priced, not a billed duration)"
                     if basis is not None and basis.lower_bound else "")
            lines.append(f"**Cheapest:** {_best(ctop, info.label)}, {where}{bound}. "
                         f"Order: {evidence_order(ctx, cost.res, crow)} ([cost and the Pareto front](#cost)).")
        elif ctx.extra.get("cost_why"):
            lines.append(f"**Cost:** not priced ({ctx.extra['cost_why']}).")
        if len(top) == len(row["mean"]) and len(top) > 1:
            lines.append(f"The data do not separate the levels of `{f}` by speed here: more replications would "
                         f"narrow the intervals ([how many](#{anchor}-centre): the per-cell table's \"n for ±5%\").")
        b.items.append(Text("  \n".join(lines), "answer"))
    _model_warning(ctx, b)
    return b


def _model_warning(ctx: Ctx, b: Block) -> None:
    """Under the answer: the cells of a local campaign that rest on assumed calibration figures."""
    basis = local_basis(ctx)
    warn = assumed_warning(basis) if basis else None
    if warn:
        b.items.append(Text(warn, "warn"))


def _direction(ctx: Ctx) -> str:
    m = ctx.measure
    way = "highest" if m.better == "higher" else "lowest"
    note = "" if m.known else f"; {m.direction_text}: --higher-is-better if not"
    return f"{way} mean {ctx.response}{note}"


def summary_section(ctx: Ctx) -> Block:
    """No factor to compare (one configuration measured again and again): what the response is,
    with its intervals, cold and warm apart, and what it costs."""
    d = ctx.data
    b = Block("answer", f"Answer: what `{d.response}` is")
    unit = "s" if ctx.unit == "s" else ctx.unit
    for sc in ctx.scenarios:
        if not sc.res or not sc.res.get("cells"):
            continue
        c = sc.res["cells"][0]
        lines = [f"**{sc.title(d)}**"] if d.scenario_cols else []
        lines.append(f"**{d.response}** over {c['n']:,} invocations: median {si_ci(c['median'], c.get('median_ci'), unit)}, "
                     f"mean {si_ci(c['mean'], c.get('mean_ci'), unit)}, p95 {si_ci(c['p95'], None, unit)}, "
                     f"p99 {si_ci(c['p99'], None, unit)}"
                     + (f"; CV {100 * c['cv']:.1f}%" if _finite(c.get("cv")) else "")
                     + (f" [{100 * c['cv_ci'][0]:.1f}%, {100 * c['cv_ci'][1]:.1f}%]" if c.get("cv_ci") else "")
                     + f" ({ctx.conf} CIs; [statistics](#scenario-{sc.index + 1}-centre)).")
        for g in sc.res.get("cold_warm") or []:
            lines.append(f"{g['levels']['start'].capitalize()} starts ({g['n']:,}): median "
                         f"{si_ci(g['median'], g.get('median_ci'), unit)}, mean {si_ci(g['mean'], g.get('mean_ci'), unit)}, "
                         f"p99 {si_ci(g['p99'], None, unit)}.")
        cost = sc.cost
        if cost is not None and getattr(cost, "cells", None):
            cc = cost.cells[0]
            lines.append(f"**Cost:** {money_ci(cc.per_million, cc.per_million_ci)} per million invocations "
                         "([cost](#cost)).")
        elif ctx.extra.get("cost_why"):
            lines.append(f"**Cost:** not priced ({ctx.extra['cost_why']}).")
        b.items.append(Text("  \n".join(lines), "answer"))
    b.items.append(Text("No factor varies, so nothing is compared: add factors to the spec (or --factors) to "
                        "find which configuration is best.", "note"))
    _model_warning(ctx, b)
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
    level's estimated marginal mean over the other factors with its CI (the decision table's)."""
    f = ctx.data.compare
    if single:
        return {c.levels[f]: si_ci(c.stats["mean"], c.stats.get("mean_ci"), "s" if ctx.unit == "s" else ctx.unit,
                                   why=c.stats.get("mean_ci_why"))
                for c in sc.cells if c.stats}
    row = sc.res["decisions"][0]
    ci, why = row.get("mean_ci") or {}, row.get("mean_ci_why") or {}
    return {lv: si_ci(m, ci.get(lv), "s" if ctx.unit == "s" else ctx.unit, why=why.get(lv))
            for lv, m in row["mean"].items()}


def _level_costs(cost, f: str) -> dict[str, str]:
    return {c.levels.get(f): money_ci(c.per_million, c.per_million_ci, why=c.cost_ci_why) for c in cost.cells}


def _pred_top(row: dict) -> list[str]:
    order = row.get("predictability_order") or ""
    if not order or "≤" in order.split(" (")[0]:
        winner = row.get("predictability")
        return [winner] if winner and winner != "-" else []
    head = order.split(" < ")[0].split(";")[0]
    return [x.strip() for x in head.split(" = ") if x.strip()]


def _cv_order(row: dict, info) -> str:
    """The decision row's CV ordering with the p-value (Holm) of each separation the CV test made:
    "GCF_DD < LAMBDA_DD (p ≤ 0.0005)"; a tie ('=': a difference under the threshold, or not
    separated by the test) carries none, since a small p there would read as a separation."""
    order = row.get("predictability_order") or ""
    pairs = row.get("cv_pairs")
    if pairs is None or "untested" in order:
        return _label_all(order, info)
    cv = row["cv"]
    sep = {((c["group1"], c["group2"]) if cv[c["group1"]] < cv[c["group2"]] else (c["group2"], c["group1"])): True
           for c in pairs if c["meaningful"]}
    p = {frozenset((c["group1"], c["group2"])): c["p_adj"] for c in pairs if c["meaningful"]}
    return ordering_with_p(cv, sep, p, label=info.label, fmt_p=short_p)


def _label_all(text: str, info) -> str:
    return relabel(text, info.levels, info.label)
