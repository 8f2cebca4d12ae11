"""The fidelity report as JSON (``as_json``: every figure in SI units, exact) and as tables
(``render_table``: figures auto-scaled, fit and held-out metrics in separate tables, then the
study's decisions)."""
from __future__ import annotations

from typing import Any, Optional

from rich.console import Console
from rich.table import Table

from faascope.fidelity import distributions, findings
from faascope.fidelity.compare import (WITHIN, Comparison, Decision, Evaluation, disk_note,
                                       disk_repeat_note, drift_note, host_call_text, load_note,
                                       repeat_note, steal_note)
from faascope.units import format_bytes, format_rate, format_seconds

#: JSON layout version of ``faascope platform fidelity --format json``
FORMAT_VERSION = 1
#: short names of the sources, by the key's prefix in its table (the JSON has the full source)
SHORT_SOURCE = (("thesis_", "thesis 2024"), ("skyrise_", "Skyrise"), ("stellar_", "STeLLAR"),
                ("lambda_perf_", "lambda-perf"), ("s3_", "Skyrise"), ("dynamodb_", "Skyrise"),
                ("efs_", "Skyrise"))


def fmt(value: Optional[float], unit: str) -> str:
    if value is None:
        return "–"
    if unit == "s":
        return format_seconds(value)
    if unit == "B/s":
        return format_rate(value)
    if unit == "B":
        return format_bytes(value)
    return f"{value:.3g} {unit}"


def short_source(c: Comparison) -> str:
    key = c.published.anchor.rsplit(":", 1)[-1]
    return next((name for prefix, name in SHORT_SOURCE if key.startswith(prefix)), c.published.source)


def comparison_json(c: Comparison) -> dict[str, Any]:
    m, p = c.metric, c.published
    d: dict[str, Any] = {
        "id": m.id, "profile": m.profile, "group": m.group, "label": m.label, "unit": m.unit,
        "local": c.local.value, "local_n": c.local.n, "published": p.value,
        "source": p.source, "anchor": p.anchor, "ratio": c.ratio, "within": c.within,
        "fit": p.fit, "held_out": not p.fit, "fitted_by": list(p.fitted_by),
        "published_note": p.note, "local_note": c.local.note, "why": c.why,
    }
    if m.cell is not None:
        d["cell"] = {"op": m.cell.op, "memory_mb": m.cell.memory_mb,
                     "file_size": m.cell.file_size, "io_size": m.cell.io_size}
    return d


def decision_json(d: Decision) -> dict[str, Any]:
    return {"cell": {"op": d.cell.op, "memory_mb": d.cell.memory_mb,
                     "file_size": d.cell.file_size, "io_size": d.cell.io_size},
            "label": d.cell.label(), "published_winner": d.published_winner,
            "local_winner": d.local_winner, "published_ratio_lambda_to_gcf": d.published_ratio,
            "local_ratio_lambda_to_gcf": d.local_ratio, "agree": d.agree,
            "published_ci": list(d.published_ci) if d.published_ci else None,
            "local_ci": list(d.local_ci) if d.local_ci else None,
            "local_method": d.local_method, "counted": d.counted}


def _count(cs: list[Comparison]) -> dict[str, int]:
    return {"within": sum(c.within for c in cs), "total": len(cs)}


def as_json(ev: Evaluation, meta: dict[str, Any], found: Optional[list] = None,
            dists: Optional[list] = None, evidence: Optional[dict] = None) -> dict[str, Any]:
    """``found``: the findings decided (:func:`faascope.fidelity.findings.evaluate`), absent
    with --no-findings; ``dists``: the whole-distribution comparisons; ``evidence``: the
    findings' samples (each part then also has both samples' medians)."""
    out = {
        "format": FORMAT_VERSION, **meta, "within_factor": WITHIN,
        "metrics": [comparison_json(c) for c in ev.comparisons],
        "decisions": [decision_json(d) for d in ev.decisions],
        "summary": {"fit": _count(ev.fit), "held_out": _count(ev.held_out),
                    "decisions": {"agree": sum(bool(d.agree) for d in ev.decisions),
                                  "total": sum(d.counted for d in ev.decisions),
                                  "no_winner_in_the_study": sum(not d.study_has_winner
                                                                for d in ev.decisions)}},
    }
    if found is not None:
        out["findings_rule"] = FINDINGS_RULE
        out["findings"] = [findings.as_json(r, evidence) for r in found]
        pred = [r for r in found if r.finding.prediction]
        out["summary"]["findings"] = {"reproduced": sum(r.reproduced for r in found),
                                      "total": len(found),
                                      "predictions_reproduced": sum(r.reproduced for r in pred),
                                      "predictions": len(pred)}
    if dists is not None:
        out["distributions"] = [distributions.as_json(d) for d in dists]
    return out


#: the findings' rule in one sentence (the report and the JSON say it)
FINDINGS_RULE = (f"reproduced = every part's {100 * (1 - findings.ALPHA):g} % bootstrap interval "
                 "(ratio of medians, each sample resampled on its own) excludes the "
                 "opposite direction (the thesis's /tmp comparisons: the median of the per-block ratios, "
                 "every block running both cells, with its order-statistic interval), or lies inside the published band (published figure ×/÷"
                 f" {WITHIN:g}; 'flat': [1/{WITHIN:g}, {WITHIN:g}]); predictability by the CV "
                 f"permutation test (p < {findings.ALPHA:g}); a wider spread by the Brown-Forsythe "
                 f"test (p < {findings.ALPHA:g}, in that direction); fewer than the interval's minimum "
                 "values a side decide nothing")


def _part_text(p) -> str:
    if p.estimate is None:
        return f"{p.part.what}: –"
    if p.part.rule == "cv_lower":
        return f"{p.part.what}: CV ratio {p.estimate:.3g}, p = {p.p_value:.3g}"
    if p.part.rule == "spread_higher":
        return (f"{p.part.what}: ×{p.estimate:.3g}, Brown-Forsythe p = {p.p_value:.3g} "
                f"(n = {p.n_a}/{p.n_b}; needs > 1 and p < {findings.ALPHA:g})")
    unit = p.part.unit if p.part.b is None else "1"
    ci = "" if p.ci is None else f" [{fmt(p.ci[0], unit) if unit != '1' else f'{p.ci[0]:.3g}'}, " \
        f"{fmt(p.ci[1], unit) if unit != '1' else f'{p.ci[1]:.3g}'}]"
    est = fmt(p.estimate, unit) if unit != "1" else f"×{p.estimate:.3g}"
    rule = {"lower": "< 1", "higher": "> 1"}.get(p.part.rule)
    if rule is None and p.band:
        lo, hi = p.band
        rule = (f"in [{fmt(lo, unit)}, {fmt(hi, unit)}]" if unit != "1"
                else f"in [{lo:.3g}, {hi:.3g}]")
    n = (f"{p.n_a} blocks, paired" if p.part.paired else
         f"n = {p.n_a}{'' if p.n_b is None else f'/{p.n_b}'}")
    return f"{p.part.what}: {est}{ci} ({n}; needs {rule})"


def findings_table(found: list) -> Table:
    k = sum(r.reproduced for r in found)
    pred = [r for r in found if r.finding.prediction]
    t = Table(title=f"The studies' findings ({k}/{len(found)} reproduced; of the "
                    f"{len(pred)} the calibration was not set to, {sum(r.reproduced for r in pred)})",
              title_justify="left")
    for col in ("study", "finding", "local evidence (ratio [95 % CI])", "reproduced", "fit or prediction",
                "why not; note"):
        t.add_column(col, overflow="fold")
    for r in found:
        t.add_row(r.finding.study, r.finding.finding,
                  "\n".join(_part_text(p) for p in r.parts),
                  "yes" if r.reproduced else "no",
                  "prediction" if r.finding.prediction else "fit: " + ", ".join(r.finding.fitted_by),
                  "; ".join(x for x in (r.why, r.note) if x))
    return t


def distributions_table(dists: list) -> Table:
    t = Table(title="Whole distributions: local against published raw data (quantiles, KS)",
              title_justify="left")
    for col in ("distribution", "p50 local / published", "p90", "p99", "KS D (p)", "note"):
        t.add_column(col, overflow="fold")

    def q(d, k):
        lo, pub = d.local.get(k), d.published.get(k)
        r = d.ratios.get(k)
        return f"{fmt(lo, 's')} / {fmt(pub, 's')}" + ("" if r is None else f" (×{r:.2f})")

    for d in dists:
        ks = "–" if d.ks_d is None else f"{d.ks_d:.2f} ({d.ks_p:.2g})"
        t.add_row(f"{d.label} (n = {d.local_n}) vs {d.reference} (n = {d.published_n})",
                  q(d, "p50"), q(d, "p90"), q(d, "p99"), ks, d.note)
    return t


def _table(title: str, cs: list[Comparison]) -> Table:
    t = Table(title=title, title_justify="left", show_lines=False)
    for col, just in (("metric", "left"), ("local", "right"), ("published", "right"),
                      ("source", "left"), ("ratio", "right"), (f"×{WITHIN:g}", "center"),
                      ("why not / note", "left")):
        t.add_column(col, justify=just, overflow="fold")
    for c in cs:
        r = "–" if c.ratio is None else f"{c.ratio:.2f}"
        note = c.why or c.local.note
        if c.why and c.local.note:
            note = f"{c.why}; {c.local.note}"
        t.add_row(f"{c.metric.profile}: {c.metric.label}", fmt(c.local.value, c.metric.unit),
                  fmt(c.published.value, c.metric.unit), short_source(c), r,
                  "yes" if c.within else "no", note)
    return t


def render_table(ev: Evaluation, meta: dict[str, Any], console: Console,
                 found: Optional[list] = None, dists: Optional[list] = None) -> None:
    fit, held = ev.fit, ev.held_out
    console.print(f"Local platform vs published figures (ratio = local / published; within "
                  f"×{WITHIN:g} either way). Results files: {meta.get('workdir', '')}")
    cal = (meta.get("platform") or {}).get("calibration") or {}
    console.print("Platform calibration in force: " + (", ".join(
        f"{profile}: {c.get('table')}@{c.get('version')}" for profile, c in sorted(cal.items()))
        if cal else "none (uncalibrated profiles)"))
    isolation = (meta.get("platform") or {}).get("isolation")
    if isolation and isolation != "namespaces":
        console.print(f"[yellow]warning[/yellow]: the platform ran with isolation {isolation} "
                      "(no sandboxes: not root, or no cgroups), so no profile's limits applied.")
    machine = meta.get("machine") or {}
    loaded = load_note(machine)
    if loaded:
        console.print(f"[yellow]warning[/yellow]: {loaded}.")
    call = machine.get("host_urandom_write_per_call_s")
    drift = drift_note(machine)
    if drift:
        console.print(f"[yellow]warning[/yellow]: {drift}.")
    elif call:
        text = host_call_text((call["before"], call["after"]))
        console.print(text[0].upper() + text[1:] + ".")
    disk = disk_note(machine)
    if disk:
        console.print(f"[yellow]warning[/yellow]: {disk}.")
    stolen = steal_note(machine)
    if stolen:
        console.print(f"[yellow]warning[/yellow]: {stolen}.")
    elif machine.get("cpu_steal"):
        most = max((v for v in machine["cpu_steal"].values() if v is not None), default=0.0)
        console.print(f"The hypervisor took at most {most:.1%} of this machine's CPU time in any "
                      "campaign.")
    for repeated in (repeat_note(machine), disk_repeat_note(machine)):
        if repeated:
            console.print(repeated[0].upper() + repeated[1:] + ".")
    if meta.get("scaled_file_bytes"):
        files = meta["scaled_file"]
        console.print(f"The thesis's 1,024,000,000 B cells ran on a file of {files['read']} (reads) "
                      f"and {files['write']} (writes): the time per dd I/O call is compared.")
    if fit:
        console.print(_table(f"Fit: the platform was calibrated on these figures "
                             f"({_count(fit)['within']}/{len(fit)} within)", fit))
    if held:
        console.print(_table(f"Held out of the fit ({_count(held)['within']}/{len(held)} "
                             "within)", held))
    if ev.decisions:
        no_winner = sum(not d.study_has_winner for d in ev.decisions)
        t = Table(title=f"The 2024 study's decisions: which /tmp is faster "
                        f"({sum(bool(d.agree) for d in ev.decisions)}/"
                        f"{sum(d.counted for d in ev.decisions)} agree"
                        + (f"; {no_winner} cell{'s' if no_winner > 1 else ''} with no winner in "
                           "the study's own data" if no_winner else "") + ")",
                  title_justify="left")
        for col in ("cell", "thesis: Lambda/GCF [95 % CI]", "winner", "local: lambda/gcf [95 % CI]",
                    "winner", "same"):
            t.add_column(col)

        def ratio_text(r, ci):
            if r is None:
                return "–"
            return f"{r:.3g}" + (f" [{ci[0]:.3g}, {ci[1]:.3g}]" if ci else "")
        for d in ev.decisions:
            local = ratio_text(d.local_ratio, d.local_ci)
            t.add_row(d.cell.label(), ratio_text(d.published_ratio, d.published_ci),
                      d.published_winner,
                      local + (" paired" if d.local_method == "paired" else ""),
                      d.local_winner or "–",
                      {True: "yes", False: "no", None: "–"}[d.agree])
        console.print(t)
        console.print("A side wins where the interval of the ratio excludes 1 (thesis: the ratio "
                      "of medians of its own rows; local: of the per-call samples, or, marked "
                      "'paired', the median of the ratios within each block of the campaign); "
                      "'none': it does not. Where the study has no winner, the local answer is "
                      "the same when the two intervals overlap (the local ratio is one the "
                      "study's data allow).")
    if found:
        console.print(findings_table(found))
        console.print(f"Rule: {FINDINGS_RULE}.")
        for study, citation in dict.fromkeys((r.finding.study, r.finding.citation)
                                             for r in found):
            console.print(f"  {study}: {citation}")
    if dists:
        console.print(distributions_table(dists))
