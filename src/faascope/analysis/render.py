"""Human-readable output: the same sections as rich tables (`--format table`) or Markdown
(`--format markdown`), laid out like a study's tables: per-cell statistics, the ANOVA table with
the share of variation, Tukey HSD, checks, predictability and the final decision table."""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field

from faascope.analysis.calendar import calendar_note
from faascope.analysis.cv_test import MIN_N as CV_TEST_MIN_N, NAME as CV_TEST_NAME
from faascope.analysis.decisions import relabel
from faascope.analysis.intervals import without_ci
from faascope.units import TIME_FACTORS, format_duration, format_measure, si_prefix, significant, time_unit


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
    return "–" if v is None or not math.isfinite(v) else f"{100 * v:.1f}"



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
    if not pair or not centre or any(x is None or not math.isfinite(x) for x in pair):
        return "–"
    return f"±{significant(100 * max(pair[1] - centre, centre - pair[0]) / abs(centre), 2)}%"


def _conf(res) -> str:
    return f"{100 * (1 - res['alpha']):g}%"


#: the terminal width the default table output fits (--format wide: as wide as the terminal)
NARROW_COLUMNS = 100


def is_seconds(response: str) -> bool:
    """Whether a response column holds seconds (latency_seconds, read_s, request_p99_s …)."""
    return response.endswith("seconds") or response.endswith("_s")


def response_unit(res: dict) -> str:
    """The unit the response's values are printed in: the measures table's (``res["measure"]``),
    else seconds for a column named like one, else none."""
    unit = (res.get("measure") or {}).get("unit")
    if unit is not None:
        return unit
    return "s" if is_seconds(res["response"]) else ""


def value(v, unit: str, half=None) -> str:
    """A response value (or difference) in the response's unit, auto-scaled: 227 µs, 109 MB/s."""
    if v is None or isinstance(v, str):
        return "–"
    return format_measure(float(v), unit, None if half is None else float(half))


def interval(pair, unit: str, why: str | None = None) -> str:
    """"[2.52, 9.83] ms": an interval in one scale (its larger end's), with the unit once;
    without one, why there is none ("too few (n = 3; needs ≥ 100)")."""
    if not pair or any(x is None or not math.isfinite(x) for x in pair):
        return why or "–"
    big = max(abs(pair[0]), abs(pair[1]))
    if unit in TIME_FACTORS:
        f, shown = time_unit(big * TIME_FACTORS[unit])
        f /= TIME_FACTORS[unit]
    elif unit in ("B", "B/s", "1/s"):
        f, prefix = si_prefix(big, largest=1e9, smallest=1.0)
        shown = {"B": f"{prefix}B", "B/s": f"{prefix}B/s", "1/s": f"{prefix}/s"}[unit]
    else:
        return f"[{g4(pair[0])}, {g4(pair[1])}]" + (f" {unit}" if unit else "")
    return f"[{pair[0] / f:.3g}, {pair[1] / f:.3g}] {shown}"


def value_ci(v, pair, unit: str, why: str | None = None) -> str:
    """"36.4 µs [34.0, 39.1]": a value and its interval in the value's scale; without an
    interval, the value and why there is none ("36.4 µs, no CI: too few (n = 3; needs ≥ 100)")."""
    text = value(v, unit)
    if text == "–":
        return text
    if not pair or any(x is None or not math.isfinite(x) for x in pair):
        return without_ci(text, why)
    if unit in TIME_FACTORS:
        f, _ = time_unit(float(v) * TIME_FACTORS[unit])
        f /= TIME_FACTORS[unit]
    elif unit in ("B", "B/s", "1/s"):
        f, _ = si_prefix(float(v), largest=1e9, smallest=1.0)
    else:
        return f"{text} [{g4(pair[0])}, {g4(pair[1])}]"
    return f"{text} [{significant(pair[0] / f, 3)}, {significant(pair[1] / f, 3)}]"


def labelled(info, factor: str, level) -> str:
    """A level as the report writes it (10 KB rather than 10000) when `info` knows the factor."""
    if info and factor in info and level not in ("", "all"):
        return info[factor].label(level)
    return level


def compact_cells(res: dict, info=None) -> Section:
    """The per-cell table that fits 100 columns: levels, n, median, mean ± CI half-width in
    auto-scaled units, CV, relative half-width and the n a target needs."""
    f = res["factors"]
    conf = _conf(res)
    unit = response_unit(res)
    rows = []
    for c in res["cells"]:
        pair = c.get("mean_ci")
        mean = value_ci(c["mean"], pair, unit, c.get("mean_ci_why"))
        rows.append([labelled(info, x, c["levels"][x]) for x in f] + [
            str(c["n"]), value(c["median"], unit), mean, pct(c["cv"]), rel_halfwidth(c["mean"], pair),
            "–" if c.get("n_for_target") is None else str(c["n_for_target"])])
    return Section("Per-cell statistics", f + [
        "n", "median", f"mean [{conf} CI]", "CV %", "± rel",
        f"n for ±{100 * res.get('target_rel_halfwidth', 0.05):g}%"], rows, level=2)


def _cell_rows(res: dict, cells: list[dict], unit: str, info, label_cols: list[str]) -> list[list[str]]:
    rows = []
    for c in cells:
        rows.append([labelled(info, x, c["levels"].get(x, "")) for x in label_cols] + [
            str(c["n"]), value(c["mean"], unit), value(c["median"], unit), value(c["std"], unit),
            pct(c["cv"]), ci([100 * v for v in c["cv_ci"]] if c.get("cv_ci") else None, c.get("cv_ci_why")),
            value(c["min"], unit), value(c["max"], unit), value(c["p90"], unit), value(c["p95"], unit),
            value(c["p99"], unit), interval(c["mean_ci"], unit, c.get("mean_ci_why")),
            interval(c["median_ci"], unit, c.get("median_ci_why")), rel_halfwidth(c["mean"], c.get("mean_ci")),
            "–" if c.get("n_for_target") is None else str(c["n_for_target"])])
    return rows


def _cell_headers(res: dict, label_cols: list[str]) -> list[str]:
    conf = _conf(res)
    return label_cols + [
        "n", "mean", "median", "std", "CV (%)", f"CV {conf} CI (%)", "min", "max", "p90", "p95", "p99",
        f"{conf} CI mean", f"{conf} CI median", "CI half-width", f"n for ±{100 * res.get('target_rel_halfwidth', 0.05):g}%"]


def description_sections(res: dict, heading: str | None = None, wide: bool = True, info=None) -> list[Section]:
    """A scenario (or campaign) with no factor to compare: its statistics, and cold and warm
    invocations apart when known."""
    sub = 3 if heading else 2
    unit = response_unit(res)
    out: list[Section] = [Section(heading, [], [], [], level=2)] if heading else []
    meta = (f"Response `{res['response']}`, n = {res['n']}; no factor varies here, so the data are "
            "described, not compared.")
    rows = _cell_rows(res, res["cells"], unit, info, [])
    rows[0] = ["all"] + rows[0]
    for c in res.get("cold_warm") or []:
        rows += [[c["levels"]["start"]] + _cell_rows(res, [c], unit, info, [])[0]]
    headers = ["invocations"] + _cell_headers(res, [])
    if not wide:  # the narrow table: the columns compact_cells shows
        keep = [0, 1, 3, 2, 5, 14, 15]
        rows = [[r[i] for i in keep] for r in rows]
        headers = [headers[i] for i in keep]
    out.append(Section("Statistics", headers, rows, [meta] + list(res.get("notes") or []), level=sub))
    if res.get("warnings"):
        out.append(Section("Checks", [], [], [f"⚠ {w}" for w in res["warnings"]], level=sub))
    return out


def analysis_sections(res: dict, heading: str | None = None, wide: bool = True, info=None) -> list[Section]:
    if res.get("described"):
        return description_sections(res, heading, wide, info)
    f = res["factors"]
    conf = _conf(res)
    unit = response_unit(res)
    sub = 3 if heading else 2
    out: list[Section] = []
    if heading:
        out.append(Section(heading, [], [], [], level=2))
    meta = (f"Response `{res['response']}`, factors {', '.join(f'`{x}`' for x in f)}, model {res['model']}"
            f"{' on log scale' if res.get('transform') == 'log' else ''}, α = {res['alpha']:g}, n = {res['n']}, "
            f"{'balanced' if res.get('balanced') else 'unbalanced'} design, Type {res.get('ss_type')} sums of squares.")
    if res.get("dropped_factors"):
        meta += " Dropped (single level here): " + ", ".join(res["dropped_factors"]) + "."
    out.append(Section("Per-cell statistics", _cell_headers(res, f), _cell_rows(res, res["cells"], unit, info, f),
                       [meta], level=sub))
    if not wide:
        short = compact_cells(res, info)
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

    # with --transform log the differences are log ratios, not the response's unit
    tunit = unit if res.get("transform") != "log" else ""
    def group(term: str, g: str) -> str:  # "256:1048576" as "256 MB:1 MiB"
        fs, parts = term.split(":"), g.split(":")
        return ":".join(labelled(info, f, v) for f, v in zip(fs, parts)) if len(fs) == len(parts) else g

    rows = [[r["term"], f"{group(r['term'], r['group2'])} - {group(r['term'], r['group1'])}",
             value(r["meandiff"], tunit), value(r["lower"], tunit), value(r["upper"], tunit), fmt_p(r["p_adj"]),
             "yes" if r["reject"] else "no"] for r in res["tukey"]]
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
                             _signed2(c.get("statistic")),
                             fmt_p(c["p_adj"]) if c.get("p_adj") is not None else (c.get("test_why") or "–"),
                             "yes" if c["meaningful"] else "no"])
        out.append(Section("Predictability (CV)", ["Factor", "Comparison", "CV first (%)", "CV second (%)",
                                                   "ΔCV (pp)", f"{conf} CI (pp)", "CV ratio", f"{conf} CI (ratio)",
                                                   "T", "p (Holm)", "Meaningful"], rows,
                           [cv_criterion_sentence(pr) + " ΔCV = CV of the first group named minus the second; CV ratio "
                            "= the first group's CV over the second's. A level's CV is the mean of its cells' CVs."],
                           level=sub))
    if not heading:
        out.append(decision_section([{**r} for r in res["decisions"]], [], res.get("compare"), sub,
                                    info=info, unit=unit))
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
    """How the predictability table decides: the criterion, the test, and what the CIs are for."""
    if pr.get("criterion") == "ratio":
        crit = (f"Criterion: ratio of CVs: a difference is meaningful when one CV is at least "
                f"{pr.get('ratio_threshold', 1.5):g} times the other (--cv-criterion ratio, --cv-ratio)")
    else:
        crit = (f"Criterion: difference of CVs: a difference is meaningful when |ΔCV| ≥ "
                f"{pr.get('threshold_pp', 10):g} percentage points (--cv-threshold; --cv-criterion ratio "
                "compares CVs relative to each other instead)")
    return (f"{crit} and the CV test separates the two levels: p (Holm over the factor's pairs of levels) ≤ α. "
            f"The CV test is a {CV_TEST_NAME} (T > 0 where the first group's CV is the higher); it holds its "
            f"level on skewed and cold-start data and needs ≥ {CV_TEST_MIN_N} values a cell (enough to see a "
            "mode of 5 % of invocations with probability 0.99): with fewer the p column says why. The CIs are "
            "shown where they cover (tight cells; else the CI column says why) and decide nothing.")


def _signed2(v) -> str:
    return "–" if v is None or not math.isfinite(v) else f"{v:+.2f}"


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


def decision_section(decisions: list[dict], scenario_cols: list[str], compare: str | None, level: int = 2,
                     info=None, unit: str = "") -> Section:
    """The decision table: per scenario (and per combination of the other factors) the levels of
    the compared factor from best to worst, by mean and by CV, with the means in the response's
    unit (auto-scaled) and levels as labelled (10 KB, 2048 MB)."""
    within_cols = []
    for r in decisions:
        for k in r["within"]:
            if k not in within_cols:
                within_cols.append(k)

    def lab(text: str) -> str:  # an ordering with every level labelled
        if not info or compare not in info or not text:
            return text
        return relabel(text, info[compare].levels, info[compare].label)

    rows = []
    for r in decisions:
        means = "; ".join(f"{labelled(info, compare, k)}: {value(v, unit)}" for k, v in r["mean"].items())
        cvs = "; ".join(f"{labelled(info, compare, k)}: {_pct1(v)}%" for k, v in r["cv"].items())
        rows.append([labelled(info, c, r.get("scenario", {}).get(c, "")) for c in scenario_cols] +
                    [labelled(info, c, r["within"].get(c, "")) for c in within_cols] +
                    [lab(r.get("performance_order") or r["performance"]),
                     lab(r.get("predictability_order") or r["predictability"]), means, cvs])
    crit = {r.get("cv_criterion") for r in decisions} - {None}
    crit_text = (("one CV at least --cv-ratio times the other" if crit == {"ratio"} else
                  "a difference of at least --cv-threshold percentage points")
                 + f" and separated by the CV test (a {CV_TEST_NAME}; Holm over the row's pairs of levels)")
    return Section(f"Decision table (best {compare or 'level'})",
                   scenario_cols + within_cols + ["Performance", "Predictability", "Mean", "CV"], rows,
                   ["Levels from best to worst. Performance: by mean"
                    + (" (higher is better), '>'" if any(r.get("higher_is_better") for r in decisions) else ", '<'")
                    + " where the row's test separates the levels "
                    f"and '=' where it does not ({_tests_text(decisions)}; neither assumes equal variances); "
                    "predictability: by CV, '<' where the CVs differ meaningfully: "
                    f"{crit_text}. Where the ties do not form groups the levels are joined by '≤' and the separated "
                    "pairs follow in brackets. 'all' = over every level of that factor. Mean: "
                    f"{_mean_kinds_text(decisions)}."], level=level)


def _tests_text(decisions: list[dict]) -> str:
    """Which test decided which rows: "rows 'all': Welch EMM (Games-Howell adjustment); the other
    rows: Games-Howell" (from the rows' own `test`)."""
    return _by_row_kind(decisions, "test")


def _mean_kinds_text(decisions: list[dict]) -> str:
    return _by_row_kind(decisions, "mean_kind")


def _by_row_kind(decisions: list[dict], key: str) -> str:
    """A row key's values, said once for the rows 'all' and once for the rows within a combination."""
    by: dict[str, set] = {}
    for r in decisions:
        kind = "all" if all(v == "all" for v in r["within"].values()) else "within"
        by.setdefault(kind, set()).add(str(r.get(key) or "mean"))
    if len(by) == 1:
        return ", ".join(sorted(next(iter(by.values()))))
    return "; ".join(f"{what}: {', '.join(sorted(by[k]))}"
                     for k, what in (("all", "rows 'all'"), ("within", "the other rows")) if k in by)


def calendar_sections(res: dict) -> list[Section]:
    """How the calendar factors were derived (zone, column, definitions), when they were."""
    if not res.get("calendar"):
        return []
    return [Section("Calendar factors", [], [], [calendar_note(res["calendar"])])]


def selection_notes(res: dict) -> list[Section]:
    """What the selection left out (failed cells, warm-ups, rows without the measure)."""
    notes = (res.get("selection") or {}).get("notes") or []
    return [Section("Selection", [], [], list(notes), level=2)] if notes else []


def sections(res: dict, wide: bool = True, info=None) -> list[Section]:
    """Every section of an ``analyze`` result, in print order; ``info`` labels the levels."""
    if "scenarios" not in res:
        return ([Section(f"Analysis of {res['response']}", [], [], level=1)] + selection_notes(res)
                + calendar_sections(res) + analysis_sections(res, wide=wide, info=info))
    cols = res["scenario_columns"]
    out = [Section(f"Analysis of {res['response']} per {' × '.join(cols)}", [], [], level=1),
           *selection_notes(res), *calendar_sections(res)]
    if res["decisions"]:
        out.append(decision_section(res["decisions"], cols, res.get("compare"), info=info,
                                    unit=response_unit(res)))
    for s in res.get("not_analysed") or []:
        where = ", ".join(f"{k} = {labelled(info, k, v)}" for k, v in s["scenario"].items())
        out.append(Section(f"Not analysed: {where}", [], [], [f"⚠ {s['why']}"], level=2))
    for s in res["scenarios"]:
        head = ", ".join(f"{k} = {labelled(info, k, v)}" for k, v in s["scenario"].items())
        out += analysis_sections(s, heading=head, wide=wide, info=info)
    return out


def _md_cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def to_markdown(res: dict, info=None) -> str:
    lines: list[str] = []
    for sec in sections(res, info=info):
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


#: columns left out first, in this order, when a terminal is too narrow for a table (each is
#: derived from columns that stay, or shown by --format wide)
OPTIONAL_COLUMNS = ("n for ±", "± rel", "Mean Sq", "F crit", "median", "Significant", "CV %")


def _min_widths(headers: list[str], rows: list[list[str]]) -> list[int]:
    """Each column's width with no value broken across lines (a header may wrap between words)."""
    return [max([len(w) for w in str(h).split()] + [len(str(r[i])) for r in rows] + [1])
            for i, h in enumerate(headers)]


def _width(headers: list[str], rows: list[list[str]]) -> int:
    """The width a table needs with no value broken across lines (rich's heavy box: one space of
    padding each side and a border between columns)."""
    cols = _min_widths(headers, rows)
    return sum(cols) + 3 * len(cols) + 1


def fit_section(sec: Section, width: int) -> tuple[Section, list[str]]:
    """``sec`` as it fits ``width`` columns without breaking a value: optional columns of the
    per-cell table left out first (and said so); the notes to add."""
    headers, rows = list(sec.headers), [list(r) for r in sec.rows]
    dropped = []
    for name in OPTIONAL_COLUMNS:
        if _width(headers, rows) <= width:
            break
        hit = [i for i, h in enumerate(headers) if h.startswith(name)]
        if not hit:
            continue
        i = hit[0]
        dropped.append(headers.pop(i))
        rows = [r[:i] + r[i + 1:] for r in rows]
    notes = ([f"Left out to fit {width} columns: {', '.join(dropped)} (--format wide shows every column)."]
             if dropped else [])
    return Section(sec.title, headers, rows, sec.notes, sec.level), notes


def print_sections(secs: list[Section], console, row_style=None, note_style=None) -> None:
    """Sections as rich tables on ``console``, never breaking a value across lines: a table too
    wide for the terminal loses its optional columns (and says so), and a table that still does
    not fit is printed as one block per row ("column: value" lines). ``row_style(row)`` and
    ``note_style(note)`` may colour a row or a note."""
    from rich.table import Table

    for sec in secs:
        if not sec.rows:
            style = "bold underline" if sec.level <= 2 else "bold"
            console.print(sec.title, style=style)
            for n in sec.notes:
                console.print(n, style=(note_style(n) if note_style else None)
                              or ("yellow" if n.startswith("⚠") else None))
            continue
        sec, extra = fit_section(sec, console.width)
        if _width(sec.headers, sec.rows) > console.width:
            console.print(sec.title, style="bold")
            for r in sec.rows:
                pairs = [(h, c) for h, c in zip(sec.headers, r) if str(c) != ""]
                for j, (h, c) in enumerate(pairs):
                    console.print(f"{'•' if j == 0 else ' '} {h}: {c}", overflow="fold", soft_wrap=False,
                                  style=row_style(r) if row_style else None)
        else:
            t = Table(title=sec.title, title_justify="left", show_lines=False)
            natural = sum(max([len(h)] + [len(str(r[i])) for r in sec.rows]) + 3
                          for i, h in enumerate(sec.headers)) + 1
            for h, w in zip(sec.headers, _min_widths(sec.headers, sec.rows)):
                # a header wraps between its words where the values are narrower than it
                t.add_column(textwrap.fill(h, width=w) if natural > console.width else h, no_wrap=True)
            for r in sec.rows:
                t.add_row(*[str(c) for c in r], style=row_style(r) if row_style else None)
            console.print(t)
        for n in list(sec.notes) + extra:
            console.print(n, style=(note_style(n) if note_style else None) or "dim")


def print_tables(res: dict, console=None, wide: bool = False, info=None) -> None:
    """The analysis as rich tables: by default narrow (at most NARROW_COLUMNS wide, the compact
    per-cell table); ``wide``: every column, as wide as the terminal (print_sections)."""
    from rich.console import Console

    if console is None:
        console = Console()
        if not wide:
            console = Console(width=min(console.width, NARROW_COLUMNS))
    print_sections(sections(res, wide=wide, info=info), console)
