"""`faascope compare`'s inputs and output: read the inputs (analysis/sources.py checks that their
factors mean the same thing), compare the first with the last per cell (compare/stats.py), build
the timeline (compare/timeline.py), and render it as a table, Markdown or JSON."""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
from rich.console import Console
from rich.table import Table

from faascope.analysis.io import apply_filters
from faascope.analysis.render import Section, fmt_p, g4
from faascope.analysis.sources import check_factors, common_factors, read_sources
from faascope.compare.stats import cell_values, compare_cells
from faascope.compare.timeline import timeline as build_timeline
from faascope.errors import BadInput
from faascope.store.reader import with_measure


def compare_inputs(paths: Sequence[str], *, response: str = "latency_seconds",
                   factors: Optional[list[str]] = None, threshold: float = 0.10,
                   alpha: float = 0.05, higher_is_better: bool = False, timeline: bool = False,
                   filters: Sequence[str] = (), n_boot: int = 2000, seed: int = 0) -> dict:
    sources = read_sources(paths)
    if factors is None:
        factors = common_factors(paths)
        if not factors:
            raise BadInput("name the columns that make a cell with --factors A,B (a CSV or "
                           "Parquet file does not say which columns are factors)", field="--factors")
    check_factors(sources, factors)
    values = []
    notes: list[str] = []
    for s in sources:
        df = apply_filters(s.df, list(filters)) if filters else s.df
        if response not in df.columns:
            raise BadInput(f"no column {response!r} in {s.name}", field="--response")
        if s.is_store:
            df, without = with_measure(df, response)
            if without:
                notes.append(f"{s.name}: {without:,} invocation(s) without {response} left out")
        values.append(cell_values(df, response, factors) if len(df) else {})
    names = [s.name for s in sources]
    comparison = compare_cells(values[0], values[-1], alpha=alpha, threshold=threshold,
                               higher_is_better=higher_is_better, n_boot=n_boot, seed=seed)
    out = {"response": response, "factors": list(factors), "inputs": names,
           "base": names[0], "new": names[-1], "comparison": _jsonable(comparison),
           "notes": notes}
    if timeline:
        keys = set().union(*values)
        groups = {k: [v.get(k, np.empty(0)) for v in values] for k in keys}
        out["timeline"] = _jsonable(build_timeline(groups, names))
        out["timeline_method"] = ("PELT (Killick et al. 2012, via ruptures) for a change of the "
                                  "mean, on values scaled by the within-campaign MAD × 1.4826, "
                                  "penalty 2·ln(n) per change point; change points moved to "
                                  "the nearest boundary between inputs")
    return out


def _jsonable(x):
    """Levels tuples as lists and non-finite floats as None (JSON has neither)."""
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


# ------------------------------------------------------------------------------- rendering
def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:+.1f}%"


def _ci(pair) -> str:
    return "–" if not pair else f"[{g4(pair[0])}, {g4(pair[1])}]"


def _rel(diff, ci, base) -> str:
    """A change and its interval relative to the base value: +18.0% [+15.8%, +20.2%]."""
    if not base:
        return f"{g4(diff)} {_ci(ci)}"
    out = _pct(diff / base)
    return out + (f" [{_pct(ci[0] / base)}, {_pct(ci[1] / base)}]" if ci else "")


def _cv(c: dict) -> str:
    b, n = c["base"]["cv"], c["new"]["cv"]
    if b is None or n is None:
        return "–"
    return f"{100 * b:.1f} → {100 * n:.1f}"


def sections(res: dict) -> list[Section]:
    cmp = res["comparison"]
    conf = f"{100 * (1 - cmp['alpha']):g}%"
    f = res["factors"]
    rows = []
    for c in cmp["cells"]:
        verdict = "REGRESSION" if c["regression"] else "improvement" if c["improvement"] else \
            ("significant" if c["significant"] else "–")
        bm, bmed = c["base"]["mean"], c["base"]["median"]
        rows.append(list(c["levels"]) + [
            f"{c['base']['n']}/{c['new']['n']}", g4(bm),
            _rel(c["mean_diff"], c["mean_diff_ci"], bm),
            _rel(c["median_diff"], c["median_diff_ci"], bmed), _cv(c),
            _pct(c["p99_rel_change"]), fmt_p(c["p_holm"]), verdict])
    head = (f"`{res['new']}` compared with `{res['base']}`: response `{res['response']}` "
            f"({'higher' if cmp['higher_is_better'] else 'lower'} is better), cells by "
            f"{', '.join(f'`{x}`' for x in f)}; {cmp['regressions']} regression(s), "
            f"{cmp['improvements']} improvement(s) beyond {100 * cmp['threshold']:g}% at "
            f"α = {cmp['alpha']:g}.")
    notes = [head, "Δ mean, Δ median and Δ p99 are relative to the base's mean, median and p99; "
                   f"the base's mean is in the response's unit ({res['response']})"]
    notes += [f"{k}: {v}" for k, v in cmp["methods"].items()] + res.get("notes", [])
    notes += [f"not compared: {', '.join(s['levels'])} ({s['why']})" for s in cmp["skipped"]]
    out = [Section(f"Comparison of {res['response']}", [], [], level=1),
           Section("Per cell", f + ["n base/new", "mean base", f"Δ mean [{conf} CI, Welch]",
                                    f"Δ median [{conf} CI, bootstrap]", "CV % base → new",
                                    "Δ p99", "p (Holm)", "verdict"], rows, notes)]
    if "timeline" in res:
        rows = []
        for t in res["timeline"]:
            at = {c["at"] for c in t["change_points"]}
            series = " ".join(("‖ " if p["source"] in at else "") + (g4(p["mean"]) if p["mean"] is not None else "·")
                              for p in t["points"])
            cps = "; ".join(f"at {c['at']}: {g4(c['mean_before'])} → {g4(c['mean_after'])} "
                            f"({_pct(c['rel_change'])})" for c in t["change_points"]) or "none"
            rows.append(list(t["levels"]) + [series, cps])
        out.append(Section("Timeline (means per input, ‖ marks a change point)",
                           f + ["means, " + " → ".join(res["inputs"]), "change points"], rows,
                           [res["timeline_method"]]))
    return out


def _md(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def render_markdown(res: dict) -> str:
    lines: list[str] = []
    for sec in sections(res):
        lines += ["#" * sec.level + " " + sec.title, ""]
        if not sec.rows:
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
    console = console or Console()
    for sec in sections(res):
        if not sec.rows:
            console.print(sec.title, style="bold underline")
            continue
        t = Table(title=sec.title, title_justify="left")
        for h in sec.headers:
            t.add_column(h, overflow="fold")
        for r in sec.rows:
            style = "bold red" if r[-1] == "REGRESSION" else None
            t.add_row(*[str(c) for c in r], style=style)
        console.print(t)
        for n in sec.notes:
            console.print(n, style="dim")
