"""``faascope plan --pilot RESULTS``: how many replications each cell of a pilot campaign needs
for a target precision: the two-stage plan of :mod:`faascope.analysis.precision` (Stein 1945:
for the mean n = max(n0, ⌈(t(1-α/2, n0-1)·s0 / (r·x̄0))²⌉)) from each cell's first ``pilot_n``
successful values in run order, exactly as ``run --target-ci`` will plan it; a cell with fewer
values than that has no plan yet and needs its pilot completed first."""
from __future__ import annotations

import json
import sys
from typing import Optional

from faascope.analysis.precision import (MIN_PILOT_N, PROCEDURE, cell_precision,
                                        check_pilot_n, parse_target)
from faascope.analysis.render import fmt_seconds
from faascope.errors import BadInput
from faascope.store.reader import ResultsFile


def pilot_needs(path, target: float, stat: str = "auto", response: str = "latency_seconds",
                pilot_n: int = MIN_PILOT_N) -> list[dict]:
    """One dict per cell of the pilot: cell, attempts, n (successful), stat, estimate, CI,
    relative half-width now, ``pilot_complete``, ``planned_n`` (None until the pilot is
    complete), replications needed (the pilot's size until then), more to run."""
    with ResultsFile(path, field="--pilot") as rf:
        rf.require_campaign()
        df = rf.flat(include_warmups=False)
    if response not in df.columns:
        raise BadInput(f"no column {response!r} in {path}", field="--response")
    out = []
    df = df.sort_values("order_index", kind="stable")   # the pilot is the first values run
    for key, g in df.groupby("cell_key", sort=False):
        ok = g[g["ok"] == 1]
        p = cell_precision(ok[response].to_numpy(dtype=float), target, stat, pilot_n=pilot_n)
        errors = sorted(set(g.loc[g["ok"] != 1, "error_type"].dropna().astype(str)))
        out.append({"cell": key, "attempts": len(g), "n": p.n, "stat": p.stat,
                    "estimate": p.estimate, "ci_low": p.ci_low, "ci_high": p.ci_high,
                    "cv": p.cv, "rel_half_width": p.rel_half_width,
                    "pilot_complete": p.plan is not None,
                    "planned_n": p.plan.planned_n if p.plan else None,
                    "capped": bool(p.plan and p.plan.capped), "needed": p.needed,
                    "more": p.more if p.n else None, "met": p.met, "errors": errors})
    return out


def pilot_command_output(path, target_text: str, stat: str, response: str, fmt: str,
                         spec: Optional[str], pilot_n: Optional[int] = None) -> None:
    from rich.console import Console
    from rich.table import Table

    target = parse_target(target_text)
    n0 = check_pilot_n(pilot_n)
    rows = pilot_needs(path, target, stat, response, n0)
    if fmt == "json":
        json.dump({"target_rel_half_width": target, "response": response,
                   "procedure": PROCEDURE, "pilot_n": n0, "cells": rows},
                  sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    con = Console()
    show = fmt_seconds if response.endswith("seconds") else (lambda v, h=None: f"{v:.4g}")
    con.print(f"replications for a 95% CI half-width ≤ {target:.1%} of the "
              f"{'mean (median when the pilot CV > 0.5)' if stat == 'auto' else stat} of "
              f"{response}, from the pilot {path} (two-stage: each cell's first {n0} successful "
              "values plan its n):")
    t = Table(show_edge=False)
    for h in ("cell", "n", "stat", "estimate", "CV", "±now", "needs", "more"):
        t.add_column(h, justify="left" if h in ("cell", "stat") else "right", overflow="fold")
    for r in rows:
        if not r["n"]:
            t.add_row(r["cell"], "0", "–", f"0 of {r['attempts']} succeeded "
                      f"({', '.join(r['errors']) or 'failed'})", "", "", "", "")
            continue
        needs = ("?" if r["needed"] is None else str(r["needed"])
                 + ("" if r["pilot_complete"] else " (pilot)")
                 + (" (capped)" if r["capped"] else ""))
        t.add_row(r["cell"], str(r["n"]), r["stat"], show(r["estimate"]),
                  f"{r['cv']:.2f}" if r["cv"] is not None else "–",
                  f"{r['rel_half_width']:.1%}" if r["rel_half_width"] is not None else "no CI",
                  needs, str(r["more"]))
    con.print(t)
    most = max((r["needed"] or 0 for r in rows if r["n"]), default=0)
    more = sum(r["more"] or 0 for r in rows)
    short = sum(1 for r in rows if r["n"] and not r["pilot_complete"])
    spec_arg = spec or "SPEC"
    pilot_arg = f" --pilot-n {n0}" if n0 != MIN_PILOT_N else ""
    con.print(f"{more} more measured invocations in all; the largest cell needs {most} "
              "replications"
              + (f" ({short} cell(s) first need their pilot of {n0}: their n is planned from "
                 "it then)" if short else "")
              + ". The n is decided once, from the pilot, and not revised as values come in "
              "(that keeps the intervals and tests valid); to run it:\n"
              f"  faascope run {spec_arg} --results {path} --target-ci {target_text}{pilot_arg}",
              soft_wrap=True)
