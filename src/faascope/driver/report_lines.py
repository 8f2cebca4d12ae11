"""What ``faascope run`` says at the end besides the counts: how precise each cell got
(adaptive replication) and which cells never succeeded."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from faascope.analysis.render import fmt_seconds
from faascope.errors import BadInput, Failure
from faascope.store.reader import ResultsFile
from faascope.units import parse_duration as duration_seconds


def parse_duration(text: str, field: str = "--budget-time") -> float:
    try:
        return duration_seconds(text)
    except ValueError as exc:
        raise BadInput(str(exc), field=field) from None


def adaptive_table(adaptive) -> str:
    """One line per cell: n of its planned n, statistic, estimate ± half-width (auto-scaled),
    relative half-width, and whether the planned n was reached; then why the rounds stopped
    and, where a budget cut the second stage short, that the target was not reached."""
    out = adaptive.outcome
    lines = [f"target: 95% CI half-width ≤ {adaptive.target:.1%} of the "
             f"{'mean (median when the pilot CV > 0.5)' if adaptive.stat == 'auto' else adaptive.stat}"
             f" of {adaptive.response}; two-stage: a pilot of {adaptive.pilot_n} per cell, then "
             f"each cell's n from its pilot; {out.rounds} round(s) added"
             + (f"; stopped: {out.stopped_by}" if out.stopped_by else "")]
    width = max((len(k) for k in out.precision), default=4)
    width = min(width, 60)
    wide = 0
    for key, p in out.precision.items():
        half = (p.ci_high - p.estimate) if p.stat == "mean" and p.ci_high is not None else (
            max(p.estimate - p.ci_low, p.ci_high - p.estimate) if p.ci_low is not None else None)
        rel = f"±{p.rel_half_width:.1%}" if p.rel_half_width is not None else "no CI"
        planned = "?" if p.needed is None else str(p.plan.planned_n if p.plan else p.needed)
        if key in out.failing:
            mark = "FAILED"
        elif p.met:
            mark = "reached"
            if not p.within_target:
                mark += " (wider than the target)"
                wide += 1
        elif p.plan is None:
            mark = "NOT reached (pilot incomplete)" if p.needed else "NOT reached"
        elif p.plan.capped:
            mark = "NOT reached (n capped)"
        else:
            mark = "NOT reached"
        lines.append(f"  {key[:60]:<{width}}  n={p.n}/{planned:<5} {p.stat:<6} "
                     f"{fmt_seconds(p.estimate, half) if adaptive.response.endswith('seconds') else p.estimate:<18} "
                     f"{rel:<8} {mark}")
    if out.short:
        piloting = sum(1 for k in out.short if out.precision[k].plan is None)
        why = ", ".join(w for w in (f"{piloting} short of the pilot of {adaptive.pilot_n}"
                                    if piloting else "",
                                    f"{len(out.short) - piloting} short of the planned n"
                                    if len(out.short) > piloting else "") if w)
        lines.append(f"target NOT reached in {len(out.short)} of {len(out.precision)} cell(s) "
                     f"({out.stopped_by or 'stopped'}; {why}): their intervals are as printed, "
                     "not as narrow as the target asks")
    if wide:
        lines.append(f"{wide} cell(s) reached the planned n with an interval wider than the "
                     "target: the pilot under-estimated their spread (the n was fixed by the "
                     "pilot on purpose: re-planning from later values would bias the result)")
    return "\n".join(lines)


def cells_without_success(results: str | Path) -> list[tuple[str, int, str]]:
    """(cell, measured invocations, error types) of every cell with records none of which
    succeeded; [] when the file cannot be read (this is a closing remark, never an error)."""
    try:
        with ResultsFile(results) as rf:
            return rf.cells_without_success()
    except (BadInput, Failure):
        return []


def failed_cells_message(results: str | Path) -> Optional[str]:
    bad = cells_without_success(results)
    if not bad:
        return None
    lines = [f"[red]error[/red]: {len(bad)} cell(s) had no successful invocation:"]
    for key, n, errs in bad[:10]:
        lines.append(f"  {key}: 0 of {n} invocations succeeded ({errs})")
    if len(bad) > 10:
        lines.append(f"  ... and {len(bad) - 10} more")
    lines.append("their records are kept; see the error messages with faascope export")
    return "\n".join(lines)
