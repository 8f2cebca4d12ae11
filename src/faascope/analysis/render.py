"""Human-readable output: the same sections as rich tables (`--format table`) or Markdown
(`--format markdown`), laid out like a study's tables: per-cell statistics, the ANOVA table with
the share of variation, Tukey HSD, checks, predictability and the final decision table."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from faascope.analysis.calendar import calendar_note
from faascope.analysis.intervals import without_ci
from faascope.units import format_duration, time_unit


@dataclass
class Section:
    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    level: int = 2


def g4(v) -> str:
    """4 significant digits."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    a = abs(v)
    if a != 0 and (a >= 1e6 or a < 1e-4):
        return f"{v:.3e}"
    return f"{v:.4g}"


#: time units from large to small: a value is shown in the largest unit it reaches
def seconds_unit(v: float) -> tuple[float, str]:
    """(scale, unit) of the time unit ``v`` seconds is printed in (faascope.units.time_unit)."""
    return time_unit(v if v is not None else 0.0)


def fmt_seconds(v, half=None) -> str:
    """Seconds auto-scaled to s/ms/µs with 3 significant digits, with ``± half`` in the same
    unit when given: ``36.4 µs ± 2.1`` (faascope.units.format_duration)."""
    if v is None or isinstance(v, str):
        return "–"
    return format_duration(float(v), half if isinstance(half, (int, float)) else None)


def fmt_p(p) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "–"
    if p < 1e-16:
        return "< 1e-16"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.4f}"


def p_eq(p) -> str:
    """'p = 0.0123' or 'p < 1e-16'."""
    text = fmt_p(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def pct(v) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def ci(pair, why: str | None = None) -> str:
    """"[1.2, 3.4]"; without an interval, why there is none ("too few (n = 3; needs ≥ 100)")."""
    return (why or "–") if not pair else f"[{g4(pair[0])}, {g4(pair[1])}]"


def seconds_ci(v, pair) -> str:
    """"36.4 µs [34.0, 39.1]": a duration and its interval in the duration's unit."""
    text = fmt_seconds(v)
    if not pair or text == "–":
        return text
    f, _ = seconds_unit(v)
    return f"{text} [{pair[0] / f:.3g}, {pair[1] / f:.3g}]"


def rel_halfwidth(centre, pair) -> str:
    """The printed interval's larger half relative to its centre: "±2.1%"."""
    if not pair or not centre:
        return "–"
    return f"±{100 * max(pair[1] - centre, centre - pair[0]) / abs(centre):.2g}%"


def _conf(res) -> str:
    return f"{100 * (1 - res['alpha']):g}%"


#: the terminal width the default table output fits (--format wide: as wide as the terminal)
NARROW_COLUMNS = 100


def is_seconds(response: str) -> bool:
    """Whether a response column holds seconds (latency_seconds, read_s, request_p99_s …)."""
    return response.endswith("seconds") or response.endswith("_s")


def compact_cells(res: dict) -> Section:
    """The per-cell table that fits 100 columns: levels, n, median, mean ± CI half-width in
    auto-scaled units, CV, relative half-width and the n a target needs."""
    f = res["factors"]
    conf = _conf(res)
    secs = is_seconds(res["response"])
    rows = []
    for c in res["cells"]:
        pair = c.get("mean_ci")
        if secs:
            mean = seconds_ci(c["mean"], pair)
            median = fmt_seconds(c["median"])
        else:
            mean = g4(c["mean"]) + (f" {ci(pair)}" if pair else "")
            median = g4(c["median"])
        if not pair:
            mean = without_ci(mean, c.get("mean_ci_why"))
        rows.append([c["levels"][x] for x in f] + [
            str(c["n"]), median, mean, pct(c["cv"]), rel_halfwidth(c["mean"], pair),
            "–" if c.get("n_for_target") is None else str(c["n_for_target"])])
    return Section("Per-cell statistics", f + [
        "n", "median", f"mean [{conf} CI]", "CV %", "± rel",
        f"n for ±{100 * res.get('target_rel_halfwidth', 0.05):g}%"], rows, level=2)


def analysis_sections(res: dict, heading: str | None = None, wide: bool = True) -> list[Section]:
    f = res["factors"]
    conf = _conf(res)
    sub = 3 if heading else 2
    out: list[Section] = []
    if heading:
        out.append(Section(heading, [], [], [], level=2))
    meta = (f"Response `{res['response']}`, factors {', '.join(f'`{x}`' for x in f)}, model {res['model']}"
            f"{' on log scale' if res.get('transform') == 'log' else ''}, α = {res['alpha']:g}, n = {res['n']}, "
            f"{'balanced' if res.get('balanced') else 'unbalanced'} design, Type {res.get('ss_type')} sums of squares.")
    if res.get("dropped_factors"):
        meta += " Dropped (single level here): " + ", ".join(res["dropped_factors"]) + "."
    rows = []
    for c in res["cells"]:
        rows.append([c["levels"][x] for x in f] + [
            str(c["n"]), g4(c["mean"]), g4(c["median"]), g4(c["std"]), pct(c["cv"]), ci(
                [100 * v for v in c["cv_ci"]] if c.get("cv_ci") else None, c.get("cv_ci_why")),
            g4(c["min"]), g4(c["max"]), g4(c["p90"]), g4(c["p95"]), g4(c["p99"]),
            ci(c["mean_ci"], c.get("mean_ci_why")), ci(c["median_ci"], c.get("median_ci_why")),
            rel_halfwidth(c["mean"], c.get("mean_ci")),
            "–" if c.get("n_for_target") is None else str(c["n_for_target"])])
    out.append(Section("Per-cell statistics", f + [
        "n", "mean", "median", "std", "CV (%)", f"CV {conf} CI (%)", "min", "max", "p90", "p95", "p99",
        f"{conf} CI mean", f"{conf} CI median", "CI half-width", f"n for ±{100 * res.get('target_rel_halfwidth', 0.05):g}%"],
        rows, [meta], level=sub))
    if not wide:
        short = compact_cells(res)
        short.notes, short.level = [meta + " The full table: --format wide."], sub
        out[-1] = short

    statement = res.get("anova_statement")
    rows = []
    for r in res["anova"]:
        tested = r.get("p_value") is not None
        rows.append([r["source"], str(r["df"]), g4(r["sum_sq"]), f"{r['pct_variation']:.2f}", g4(r.get("mean_sq")),
                     g4(r.get("F")), g4(r.get("F_crit")), fmt_p(r.get("p_value")),
                     "" if "significant" not in r else (("yes" if r["significant"] else "no") if tested else "no test")])
    rows.append(["Total", str(res["n"] - 1), g4(res.get("total_sum_sq")), "100.00" if res.get("balanced") else "", "", "", "", "", ""])
    out.append(Section(f"ANOVA ({res['model']} model, Type {res.get('ss_type')} SS)",
                       ["Source", "df", "Sum Sq", "% of variation", "Mean Sq", "F", "F crit", "p-value", "Significant"],
                       rows, [ss_type_sentence(res)] + ([f"⚠ {statement}"] if statement else []), level=sub))

    rows = [[r["term"], f"{r['group2']} - {r['group1']}", g4(r["meandiff"]), g4(r["lower"]), g4(r["upper"]),
             fmt_p(r["p_adj"]), "yes" if r["reject"] else "no"] for r in res["tukey"]]
    tk_notes = ["diff = mean of the first group named minus the second (R's TukeyHSD layout)."]
    if statement:
        tk_notes = ["No Tukey comparisons: " + statement]
    out.append(Section(f"Tukey HSD ({conf} family-wise confidence)",
                       ["Term", "Comparison", "diff", "lower", "upper", "p adj", "Significant"], rows,
                       tk_notes, level=sub))

    if res.get("robust"):
        rob = res["robust"]
        log = {r["source"]: r for r in (rob.get("log_anova") or [])}
        art = {r["source"]: r for r in rob.get("art_anova") or []}
        kw = {r["source"]: r for r in rob.get("kruskal_wallis") or []}
        rows = []
        for r in res["anova"]:
            s = r["source"]
            if s == "Residual":
                continue
            rows.append([s, fmt_p(r["p_value"]), fmt_p(log[s]["p_value"]) if s in log else "–",
                         fmt_p(art[s]["p_value"]) if s in art else "–", fmt_p(kw[s]["p_value"]) if s in kw else "–"])
        primary = "p (log-scale ANOVA)" if res.get("transform") == "log" else "p (ANOVA)"
        rob_notes = [f"The log-scale and aligned-rank (ART) ANOVAs use Type {res.get('ss_type')} sums of squares "
                     "too; Kruskal-Wallis compares each factor's marginal groups."]
        if rob.get("art_skipped"):
            rob_notes.append(f"ART ANOVA {rob['art_skipped']}.")
        out.append(Section(f"Robustness checks (Type {res.get('ss_type')} SS)",
                           ["Source", primary, "p (log-scale ANOVA)", "p (ART ANOVA)", "p (Kruskal-Wallis)"], rows,
                           rob_notes, level=sub))

    d = res.get("diagnostics") or {}
    if d:
        out.append(Section("Checks", [], [], [checks_sentence(d)] + [f"⚠ {w}" for w in res.get("warnings", [])],
                           level=sub))

    pr = res.get("predictability")
    if pr:
        rows = []
        for fac in pr["factors"]:
            for c in fac["comparisons"]:
                rows.append([fac["factor"], f"{c['group2']} - {c['group1']}",
                             _pct1(fac["cv"][c["group2"]]), _pct1(fac["cv"][c["group1"]]),
                             _signed(c.get("cv_diff_pp")), _pair(c.get("cv_diff_ci_pp"), "{:+.1f}", c.get("ci_why")),
                             _ratio(c.get("cv_ratio")), _pair(c.get("cv_ratio_ci"), "{:.3g}", c.get("ci_why")),
                             "yes" if c["meaningful"] else "no"])
        out.append(Section("Predictability (CV)", ["Factor", "Comparison", "CV first (%)", "CV second (%)",
                                                   "ΔCV (pp)", f"{conf} CI (pp)", "CV ratio", f"{conf} CI (ratio)",
                                                   "Meaningful"], rows,
                           [cv_criterion_sentence(pr) + " ΔCV = CV of the first group named minus the second; CV ratio "
                            "= the first group's CV over the second's. A level's CV is the mean of its cells' CVs."],
                           level=sub))
    if not heading:
        out.append(decision_section([{**r} for r in res["decisions"]], [], res.get("compare"), sub))
    return out


def ss_type_sentence(res: dict) -> str:
    """What the ANOVA table's sums of squares are, for the line at its top."""
    t = res.get("ss_type")
    text = {
        "I": "Type I sums of squares (sequential, as R's aov() and anova() print them): each term adjusted "
             "for the terms above it.",
        "II": "Type II sums of squares (car::Anova(type = 2)): each term adjusted for every term that does not "
              "contain it. R's aov() and anova() print Type I: use --ss-type I to reproduce them.",
        "III": "Type III sums of squares (car::Anova(type = 3) with sum-to-zero contrasts): each term adjusted "
               "for every other term.",
    }.get(t, f"Type {t} sums of squares.")
    if res.get("balanced"):
        text += " The design is balanced, so Types I, II and III agree."
    return text


def checks_sentence(d: dict) -> str:
    """One line on the assumption checks: a result, or why a check was skipped."""
    ev = d.get("equal_variance", {})
    nm = d.get("normality", {})
    if nm.get("cells_tested"):
        norm = (f"Normality: {nm.get('cells_non_normal')} of {nm.get('cells_tested')} cells reject normality "
                f"({', '.join(nm.get('tests', []))})")
        if nm.get("skipped"):
            norm += f"; {nm['skipped']}"
    else:
        norm = f"Normality: {nm.get('skipped') or 'not checked'}"
    if ev.get("p_value") is not None:
        var = f"equal variances: Brown-Forsythe {p_eq(ev.get('p_value'))}"
    else:
        var = f"equal variances: {ev.get('skipped') or 'not checked'}"
    sd = ev.get("sd_ratio_max_min")
    return f"{norm}; {var}" + (f"; largest/smallest SD = {g4(sd)}." if sd is not None else ".")


def cv_criterion_sentence(pr: dict) -> str:
    if pr.get("criterion") == "ratio":
        return (f"Criterion: ratio of CVs: a difference is meaningful when one CV is at least "
                f"{pr.get('ratio_threshold', 1.5):g} times the other and the CI of the ratio excludes 1 "
                "(--cv-criterion ratio, --cv-ratio). A comparison without a CI (a cell with too few or too skewed "
                "values: the CI column says which) is never meaningful.")
    return (f"Criterion: difference of CVs: a difference is meaningful when |ΔCV| ≥ {pr.get('threshold_pp', 10):g} "
            "percentage points and its CI excludes 0 (--cv-threshold; --cv-criterion ratio compares "
            "CVs relative to each other instead). A comparison without a CI (a cell with too few or too skewed "
            "values: the CI column says which) is never meaningful.")


def _pct1(v) -> str:
    return "–" if v is None or not math.isfinite(v) else f"{100 * v:.1f}"


def _signed(v) -> str:
    return "–" if v is None or not math.isfinite(v) else f"{v:+.1f}"


def _ratio(v) -> str:
    return "–" if v is None or not math.isfinite(v) else f"{v:.3g}"


def _pair(pair, spec: str, why: str | None = None) -> str:
    if not pair or any(v is None or not math.isfinite(v) for v in pair):
        return why or "–"
    return f"[{spec.format(pair[0])}, {spec.format(pair[1])}]"


def decision_section(decisions: list[dict], scenario_cols: list[str], compare: str | None, level: int = 2) -> Section:
    within_cols = []
    for r in decisions:
        for k in r["within"]:
            if k not in within_cols:
                within_cols.append(k)
    rows = []
    for r in decisions:
        means = "; ".join(f"{k} {g4(v)}" for k, v in r["mean"].items())
        cvs = "; ".join(f"{k} {_pct1(v)}%" for k, v in r["cv"].items())
        rows.append([r.get("scenario", {}).get(c, "") for c in scenario_cols] +
                    [r["within"].get(c, "") for c in within_cols] +
                    [r.get("performance_order") or r["performance"], r.get("predictability_order") or r["predictability"],
                     means, cvs])
    crit = {r.get("cv_criterion") for r in decisions} - {None}
    crit_text = ("the ratio of CVs (one at least --cv-ratio times the other, CI of the ratio excluding 1)"
                 if crit == {"ratio"} else "the difference of CVs (at least --cv-threshold percentage points, CI "
                 "excluding 0)")
    return Section(f"Decision table (best {compare or 'level'})",
                   scenario_cols + within_cols + ["Performance", "Predictability", "Mean", "CV"], rows,
                   ["Levels from best to worst. Performance: by mean, '<' where Tukey HSD separates the levels and "
                    "'=' where it does not; predictability: by CV, '<' where the CVs differ meaningfully by "
                    f"{crit_text}. Where the ties do not form groups the levels are joined by '≤' and the separated "
                    "pairs follow in brackets. 'all' = over every level of that factor."], level=level)


def calendar_sections(res: dict) -> list[Section]:
    """How the calendar factors were derived (zone, column, definitions), when they were."""
    if not res.get("calendar"):
        return []
    return [Section("Calendar factors", [], [], [calendar_note(res["calendar"])])]


def selection_notes(res: dict) -> list[Section]:
    """What the selection left out (failed cells, warm-ups, rows without the measure)."""
    notes = (res.get("selection") or {}).get("notes") or []
    return [Section("Selection", [], [], list(notes), level=2)] if notes else []


def sections(res: dict, wide: bool = True) -> list[Section]:
    if "scenarios" not in res:
        return ([Section(f"Analysis of {res['response']}", [], [], level=1)] + selection_notes(res)
                + calendar_sections(res) + analysis_sections(res, wide=wide))
    out = [Section(f"Analysis of {res['response']} per {' × '.join(res['scenario_columns'])}", [], [], level=1),
           *selection_notes(res), *calendar_sections(res),
           decision_section(res["decisions"], res["scenario_columns"], res.get("compare"))]
    for s in res["scenarios"]:
        head = ", ".join(f"{k} = {v}" for k, v in s["scenario"].items())
        out += analysis_sections(s, heading=head, wide=wide)
    return out


def _md_cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def to_markdown(res: dict) -> str:
    lines: list[str] = []
    for sec in sections(res):
        lines.append("#" * sec.level + " " + sec.title)
        lines.append("")
        if sec.notes and not sec.rows:
            lines += [n if n.startswith("⚠") else n for n in sec.notes]
            lines.append("")
            continue
        if sec.rows:
            if sec.notes:
                lines += [sec.notes[0], ""]
            lines.append("| " + " | ".join(_md_cell(h) for h in sec.headers) + " |")
            lines.append("|" + "|".join("---" for _ in sec.headers) + "|")
            for r in sec.rows:
                lines.append("| " + " | ".join(_md_cell(c) for c in r) + " |")
            lines.append("")
            for n in sec.notes[1:]:
                lines += [n, ""]
    return "\n".join(lines).rstrip() + "\n"


def print_tables(res: dict, console=None, wide: bool = False) -> None:
    """The analysis as rich tables: by default narrow (at most NARROW_COLUMNS wide, the compact
    per-cell table); ``wide``: every column, as wide as the terminal."""
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console()
        if not wide:
            console = Console(width=min(console.width, NARROW_COLUMNS))
    for sec in sections(res, wide=wide):
        if not sec.rows:
            style = "bold underline" if sec.level <= 2 else "bold"
            console.print(sec.title, style=style)
            for n in sec.notes:
                console.print(n, style="yellow" if n.startswith("⚠") else None)
            continue
        t = Table(title=sec.title, title_justify="left", show_lines=False)
        for h in sec.headers:
            t.add_column(h, overflow="fold")
        for r in sec.rows:
            t.add_row(*[str(c) for c in r])
        console.print(t)
        for n in sec.notes:
            console.print(n, style="dim")
