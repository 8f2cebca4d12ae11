"""Whether a results store's replications were chosen adaptively, and how: the facts ``analyze``
(JSON key ``adaptive``, a line in its notes) and ``report`` (overview) state for a campaign.

- Collected by ``run --target-ci`` or ``tune --spec`` since schema version 6: an
  ``adaptive_plan`` event records the procedure (two-stage, :mod:`faascope.analysis.precision`),
  the pilot size, the target, the statistic and per cell the planned n; valid as evidence.
- Collected by the earlier rule (``round_added`` events with the reason ``target CI ±…`` and no
  plan): each cell stopped once its own interval looked narrow enough, which under-estimates
  variances and inflates tests (docs/analysis.md, "Adaptive replication"); said so.
- Otherwise (fixed replications, ``--add-replications`` top-ups): None.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import pandas as pd

from faascope.store.reader import ResultsFile, is_results_path
from faascope.store.schema import ADAPTIVE_PLAN_EVENT, ROUND_ADDED_EVENT, event_detail

#: the reason ``run --target-ci`` gives its rounds (also before schema version 6)
TARGET_REASON = "target CI"
EARLIER_RULE = "stop when the cell's CI is narrow enough (faascope before schema version 6)"


def adaptive_facts_of(path: str | Path) -> Optional[dict[str, Any]]:
    """:func:`adaptive_facts` of a results store; None for other inputs (CSV, Parquet, a
    SQLite file without a campaign)."""
    if not is_results_path(path):
        return None
    with ResultsFile(path) as rf:
        if rf.campaign() is None:
            return None
        meta = rf.campaign_meta()
        return adaptive_facts(meta["events"], lambda: rf.flat(include_warmups=False))


def adaptive_facts(events: list[dict], rows) -> Optional[dict[str, Any]]:
    """The facts of a campaign's adaptive replication from its events (as
    ``ResultsFile.campaign_meta()["events"]`` gives them: ``kind``, ``detail_json``) and its
    measured rows (``invocations_flat``; a DataFrame or a function returning one, read only for
    the two-stage procedure), or None when its replications were fixed. Keys: ``procedure``,
    ``valid`` (False for the earlier rule), ``rounds``, ``target_rel_half_width``; for the
    two-stage procedure also ``pilot_n``, ``stat``, ``alpha``, ``response``, ``warm_only``,
    ``cells`` ({cell: {stat, pilot_n, pilot_estimate, pilot_sd, pilot_cv,
    pilot_rel_half_width, planned_n, capped, n, reached}}), ``reached`` / ``not_reached``
    (cells; a cell with values but no plan is not reached), ``plans`` (how many were recorded:
    a later target is planned from the same pilot) and ``pilot_complete`` (False while no plan
    exists: a pilot a budget cut short)."""
    rounds = [event_detail(e) for e in events if e["kind"] == ROUND_ADDED_EVENT]
    adaptive_rounds = [r for r in rounds if str(r.get("reason", "")).startswith(TARGET_REASON)]
    plans = [event_detail(e) for e in events if e["kind"] == ADAPTIVE_PLAN_EVENT]
    if not plans and not adaptive_rounds:
        return None
    if not plans and any("stage" not in r for r in adaptive_rounds):
        target = None
        text = str(adaptive_rounds[-1].get("reason", ""))
        try:
            target = float(text.split("±", 1)[1].rstrip("%")) / 100
        except (IndexError, ValueError):
            pass
        return {"procedure": EARLIER_RULE, "valid": False, "rounds": len(adaptive_rounds),
                "target_rel_half_width": target}
    # the two-stage procedure; before any plan (a pilot a budget cut short) the latest round
    # says its settings
    plan = plans[-1] if plans else {**adaptive_rounds[-1], "cells": {}}
    df = rows() if callable(rows) else rows
    if df is None:
        df = pd.DataFrame(columns=["cell_key", "ok"])
    if "warmup" in df.columns:
        df = df[pd.to_numeric(df["warmup"], errors="coerce").fillna(0) == 0]
    response = plan.get("response") or "latency_seconds"
    ok = df[pd.to_numeric(df["ok"], errors="coerce") == 1]
    if response in ok.columns:
        ok = ok[ok[response].notna()]
    if plan.get("warm_only") and "cold_forced" in ok.columns:
        ok = ok[ok["cold_forced"].fillna(0).astype(int) == 0]
    have = ok.groupby("cell_key").size().to_dict() if len(ok) else {}
    cells = {}
    for key, c in (plan.get("cells") or {}).items():
        n = int(have.get(key, 0))
        planned = c.get("planned_n")
        cells[key] = {**c, "n": n,
                      "reached": planned is not None and n >= planned and not c.get("capped")}
    reached = sum(1 for c in cells.values() if c["reached"])
    unplanned = [k for k, n in have.items() if n and k not in cells]
    return {"procedure": plan.get("procedure"), "valid": True, "rounds": len(adaptive_rounds),
            "target_rel_half_width": plan.get("target_rel_half_width"),
            "pilot_n": plan.get("pilot_n"), "stat": plan.get("stat"), "alpha": plan.get("alpha"),
            "response": response, "warm_only": bool(plan.get("warm_only")), "cells": cells,
            "reached": reached, "not_reached": len(cells) - reached + len(unplanned),
            "plans": len(plans),
            "pilot_complete": bool(plans)}


def adaptive_note(facts: Optional[dict[str, Any]]) -> Optional[str]:
    """One line for a report's overview or ``analyze``'s notes; None for fixed replications."""
    if not facts:
        return None
    target = facts.get("target_rel_half_width")
    tgt = f"±{target:.1%}" if isinstance(target, (int, float)) else "a CI target"
    if not facts.get("valid"):
        return (f"replications chosen adaptively ({tgt}) by the earlier rule that stopped each "
                "cell once its CI looked narrow enough: such stopping under-estimates variances "
                "and inflates tests (docs/analysis.md, \"Adaptive replication\"); rerun with "
                "the two-stage --target-ci for evidence")
    if not facts.get("pilot_complete", True):
        return (f"replications chosen adaptively: {facts['procedure']}, for a 95 % CI within "
                f"{tgt}; the pilot of {facts['pilot_n']} per cell is not complete (a budget or "
                "an interruption): no n planned, the target NOT reached")
    planned = [c["planned_n"] for c in facts["cells"].values() if c.get("planned_n") is not None]
    span = (f"planned n {min(planned)}" + (f"-{max(planned)}" if max(planned) != min(planned)
                                            else "") if planned else "no n planned")
    stat = facts.get("stat")
    stat = "mean (median when the pilot's CV > 0.5)" if stat == "auto" else stat
    cells = len(facts["cells"])
    reach = (f"reached in all {cells} cells" if not facts["not_reached"] else
             f"NOT reached in {facts['not_reached']} of {cells} cells (budget or failures): "
             "the target was not met there")
    return (f"replications chosen adaptively: {facts['procedure']}, a pilot of "
            f"{facts['pilot_n']} per cell, then each cell's n from its pilot for a 95 % CI "
            f"within {tgt} of the {stat}; {span}, {reach}")
