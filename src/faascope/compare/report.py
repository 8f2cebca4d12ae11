"""`faascope compare`'s output: the answer of compare/engine.py as a table, Markdown or JSON.

What the table shows depends on the design, so that no interval or verdict appears that the
design cannot back: the between-unit change with its interval for an interleaved campaign
(blocks) or several runs a side; for one run a side only the descriptive differences, with the
per-invocation intervals and verdicts only under ``--assume-no-drift`` (marked *)."""
from __future__ import annotations

from rich.console import Console

from faascope.analysis.render import Section, fmt_p, g4, print_sections, value


def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:+.1f}%"


def _rel(diff, ci, base) -> str:
    """A change and its interval relative to the base value: +18.0% [+15.8%, +20.2%]."""
    if not base:
        return g4(diff) + (f" [{g4(ci[0])}, {g4(ci[1])}]" if ci else "")
    out = _pct(diff / base)
    return out + (f" [{_pct(ci[0] / base)}, {_pct(ci[1] / base)}]" if ci else "")


def _cv(c: dict) -> str:
    b, n = c["base"]["cv"], c["new"]["cv"]
    if b is None or n is None:
        return "–"
    return f"{100 * b:.1f} → {100 * n:.1f}"


def _between(c: dict) -> str:
    """The unit-level change: +18.0% [+15.8%, +20.2%], or exact, or why there is none."""
    b = c["between"]
    if c["decided_by"] == "exact":
        return f"{_pct(c['mean_rel_change'])} exact (no variation)" \
            if c["mean_rel_change"] is not None else f"{g4(c['mean_diff'])} exact"
    if b.get("rel_change") is None:
        return f"{_pct(c['mean_rel_change'])} (no test)"
    lo, hi = b["rel_ci"]
    return f"{_pct(b['rel_change'])} [{_pct(lo)}, {_pct(hi)}]"


def _within(c: dict, key: str, diff: float, base: float) -> str:
    w = c["within_run"]
    ci = w[f"{key}_ci"]
    if ci is None and w.get(f"{key}_ci_why") and c["decided_by"] != "exact":
        return f"{_rel(diff, None, base)} ({w[f'{key}_ci_why']})"
    return _rel(diff, ci, base)


def _units(c: dict) -> str:
    b = c["between"]
    if b.get("units_base") is None:
        return "–"
    if b.get("method") == "blocks":
        return str(b["units_base"])
    out = f"{b['units_base']}/{b['units_new']}"
    return out + (f" (A/A {b['units_drift']})" if b.get("drift_from") == "aa" else "")


def design_line(res: dict) -> str:
    cmp = res["comparison"]
    if res["design"] == "interleaved":
        return (f"Interleaved campaign: BASE = {res['base']}, NEW = {res['new']}, run in blocks; "
                "each block is one unit (paired t on the log of the blocks' means), so drift "
                "between blocks hits both sides alike and cancels.")
    nb, nn, na = len(res["base_runs"]), len(res["new_runs"]), len(res["aa_runs"])
    line = (f"BASE: {nb} run(s) ({', '.join(res['base_runs'])}); NEW: {nn} run(s) "
            f"({', '.join(res['new_runs'])})" + (f"; A/A: {na} run(s) ({', '.join(res['aa_runs'])})"
                                                 if na else "") + ".")
    by = {c["decided_by"] for c in cmp["cells"]} - {"exact"}
    if by == {"runs"}:
        return line + " Each run is one unit (Welch's t on log run means), so the drift between " \
                      "runs is in the error term."
    if by == {"drift"}:
        return line + (" Too few runs a side for their own spread: the sides are compared "
                       "against the drift between the A/A runs (or BASE's runs), assuming NEW's "
                       "runs vary as those do.")
    return line


def sections(res: dict) -> list[Section]:
    cmp = res["comparison"]
    unit = (res.get("measure") or {}).get("unit", "")
    conf = f"{100 * (1 - cmp['alpha']):g}%"
    f = res["factors"]
    interleaved = res["design"] == "interleaved"
    assumed = cmp["warning"] is not None and cmp["assume_no_drift"]
    tested = any(c["decided_by"] in ("blocks", "runs", "drift") for c in cmp["cells"])
    any_p = any(c["p_holm"] is not None for c in cmp["cells"])
    rows = []
    for c in cmp["cells"]:
        bm, bmed = c["base"]["mean"], c["base"]["median"]
        row = list(c["levels"])
        if interleaved or tested:
            row += [_units(c)]
        row += [f"{c['base']['n']}/{c['new']['n']}", value(bm, unit)]
        if interleaved or tested:
            row += [_between(c)]
        elif not assumed:
            row += [_between(c) if c["decided_by"] == "exact" else _pct(c["mean_rel_change"])]
        if assumed:
            row += [_within(c, "mean_diff", c["mean_diff"], bm),
                    _within(c, "median_diff", c["median_diff"], bmed)]
        else:
            row += [_pct(c["median_rel_change"])]
        row += [_cv(c), _pct(c["p99_rel_change"])]
        row += ([fmt_p(c["p_holm"])] if any_p else []) + [c["verdict"]]
        rows.append(row)
    headers = list(f)
    if interleaved:
        headers += ["blocks"]
    elif tested:
        headers += ["runs base/new"]
    headers += ["n base/new", "mean base"]
    if interleaved:
        headers += [f"Δ mean [{conf} CI, paired t on blocks]"]
    elif tested:
        headers += [f"Δ mean [{conf} CI, between runs]"]
    elif not assumed:
        headers += ["Δ mean"]
    if assumed:
        headers += [f"Δ mean [{conf} CI, Welch within runs]*",
                    f"Δ median [{conf} CI, bootstrap within runs]*"]
    else:
        headers += ["Δ median"]
    headers += ["CV % base → new", "Δ p99"] + (["p (Holm)"] if any_p else []) + ["verdict"]
    head = (f"`{res['new']}` compared with `{res['base']}`: response `{res['response']}` "
            f"({(res.get('measure') or {}).get('direction') or ('higher is better' if cmp['higher_is_better'] else 'lower is better')}), cells by "
            f"{', '.join(f'`{x}`' for x in f) or '(one cell)'}; " + (
                f"{cmp['regressions']} regression(s), {cmp['improvements']} improvement(s) "
                f"beyond {100 * cmp['threshold']:g}% at α = {cmp['alpha']:g}; {cmp['tested']} "
                f"of {len(cmp['cells'])} cell(s) tested." if cmp["tested"] else
                f"none of the {len(cmp['cells'])} cell(s) tested."))
    notes = [head, design_line(res)]
    if cmp["warning"]:
        notes.append(cmp["warning"])
    notes.append("Δ are relative to BASE's mean, median and p99; between-unit changes are ratios "
                 "of the units' means (geometric mean over units) − 1")
    why: dict[str, list[str]] = {}
    for c in cmp["cells"]:
        if c["decided_by"] is None:
            why.setdefault(c["between"].get("why") or "", []).append(
                ", ".join(f"{k}={v}" for k, v in zip(f, c["levels"])) or "the one cell")
    notes += [f"no test ({len(cells)} cell(s): {'; '.join(cells[:6])}"
              f"{' …' if len(cells) > 6 else ''}): {w}" for w, cells in why.items()]
    used = {c["decided_by"] for c in cmp["cells"]}
    shown = {"blocks", "runs", "drift", "exact", "minimums", "cv", "p99"} & (
        used | {"minimums", "cv", "p99"})
    if assumed:
        shown.add("within_run")
    if any_p:
        shown |= {"multiple_comparisons", "regression"}
    notes += [f"{k}: {v}" for k, v in cmp["methods"].items() if k in shown]
    notes += res.get("notes", [])
    notes += [f"not compared: {', '.join(s['levels']) or '(one cell)'} ({s['why']})"
              for s in cmp["skipped"]]
    out = [Section(f"Comparison of {res['response']}", [], [], level=1),
           Section("Per cell", headers, rows, notes)]
    diff = res.get("spec_diff") or {}
    drows = [[d["field"], _show(d["base"]), _show(d["new"])] for d in diff.get("fields", [])]
    dnotes = ["What the two levels set (one campaign: everything else is shared)."
              if res["design"] == "interleaved" else
              "What BASE and NEW recorded differently (the spec, the campaign's seed and "
              "replications, the faascope version, the machine)."]
    if diff.get("note"):
        dnotes.append(diff["note"])
    for w in diff.get("within_sides", []):
        dnotes.append(f"{w['input']} ({w['side']}) differs from its side's first run in "
                      f"{', '.join(w['fields'])}" + (": not an A/A run of BASE's spec"
                                                      if w["side"] == "aa" else ""))
    if diff.get("note"):
        out.append(Section("Settings that differ", [], [], [diff["note"]]))
    else:
        if not drows:
            dnotes.append("no recorded setting differs")
            drows = [["–", "–", "–"]]
        out.append(Section("Settings that differ", ["field", "base", "new"], drows, dnotes))
    if "timeline" in res:
        rows = []
        for t in res["timeline"]:
            at = {c["at"] for c in t["change_points"]}
            series = " ".join(("‖ " if p["source"] in at else "")
                              + (value(p["median"], unit) if p["median"] is not None else "·")
                              for p in t["points"])
            cps = "; ".join(f"at {c['at']}: {value(c['level_before'], unit)} → {value(c['level_after'], unit)} "
                            f"({_pct(c['rel_change'])}, p = {fmt_p(c['p'])})"
                            for c in t["change_points"]) or "none"
            rows.append(list(t["levels"]) + [series, cps])
        out.append(Section("Timeline (medians per input, ‖ marks a change point)",
                           f + ["medians, " + " → ".join(res["inputs"]), "change points"], rows,
                           [res["timeline_method"]]))
    return out


def _show(v) -> str:
    if v is None:
        return "(absent)"
    return str(v).lower() if isinstance(v, bool) else str(v)


def _md(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def render_markdown(res: dict) -> str:
    lines: list[str] = []
    for sec in sections(res):
        lines += ["#" * sec.level + " " + sec.title, ""]
        if not sec.rows:
            lines += [n for n in sec.notes] + ([""] if sec.notes else [])
            continue
        if sec.notes:
            lines += [sec.notes[0], ""]
        lines.append("| " + " | ".join(_md(h) for h in sec.headers) + " |")
        lines.append("|" + "|".join("---" for _ in sec.headers) + "|")
        lines += ["| " + " | ".join(_md(c) for c in r) + " |" for r in sec.rows]
        lines.append("")
        lines += [f"- {n}" for n in sec.notes[1:]]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def render_table(res: dict, console=None) -> None:
    print_sections(sections(res), console or Console(),
                   row_style=lambda r: "bold red" if str(r[-1]).startswith("REGRESSION") else None,
                   note_style=lambda n: "bold yellow" if n.startswith(("ONE RUN", "NO DRIFT")) else None)
