"""``faascope plan --pilot RESULTS``: how many replications each cell of a pilot campaign needs
for a target precision, from the pilot's own variance (the rules and formulas are in
:mod:`faascope.analysis.precision`: for the mean n = (t·s / (r·mean))², iterated on t)."""
from __future__ import annotations

import json
import sys
from typing import Optional

from faascope.analysis.precision import cell_precision, parse_target
from faascope.analysis.render import fmt_seconds
from faascope.errors import BadInput
from faascope.store.reader import ResultsFile


def pilot_needs(path, target: float, stat: str = "auto",
                response: str = "latency_seconds") -> list[dict]:
    """One dict per cell of the pilot: cell, attempts, n (successful), stat, estimate, CI,
    relative half-width now, replications needed, more to run."""
    with ResultsFile(path, field="--pilot") as rf:
        rf.require_campaign()
        df = rf.flat(include_warmups=False)
    if response not in df.columns:
        raise BadInput(f"no column {response!r} in {path}", field="--response")
    out = []
    for key, g in df.groupby("cell_key", sort=False):
        ok = g[g["ok"] == 1]
        p = cell_precision(ok[response].to_numpy(dtype=float), target, stat)
        errors = sorted(set(g.loc[g["ok"] != 1, "error_type"].dropna().astype(str)))
        out.append({"cell": key, "attempts": len(g), "n": p.n, "stat": p.stat,
                    "estimate": p.estimate, "ci_low": p.ci_low, "ci_high": p.ci_high,
                    "cv": p.cv, "rel_half_width": p.rel_half_width, "needed": p.needed,
                    "more": p.more if p.n else None, "met": p.met, "errors": errors})
    return out


def pilot_command_output(path, target_text: str, stat: str, response: str, fmt: str,
                         spec: Optional[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    target = parse_target(target_text)
    rows = pilot_needs(path, target, stat, response)
    if fmt == "json":
        json.dump({"target_rel_half_width": target, "response": response, "cells": rows},
                  sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    con = Console()
    show = fmt_seconds if response.endswith("seconds") else (lambda v, h=None: f"{v:.4g}")
    con.print(f"replications for a 95% CI half-width ≤ {target:.1%} of the "
              f"{'mean (median when CV > 0.5)' if stat == 'auto' else stat} of {response}, "
              f"from the pilot {path}:")
    t = Table(show_edge=False)
    for h in ("cell", "n", "stat", "estimate", "CV", "±now", "needs", "more"):
        t.add_column(h, justify="left" if h in ("cell", "stat") else "right", overflow="fold")
    for r in rows:
        if not r["n"]:
            t.add_row(r["cell"], "0", "–", f"0 of {r['attempts']} succeeded "
                      f"({', '.join(r['errors']) or 'failed'})", "", "", "", "")
            continue
        t.add_row(r["cell"], str(r["n"]), r["stat"], show(r["estimate"]),
                  f"{r['cv']:.2f}" if r["cv"] is not None else "–",
                  f"{r['rel_half_width']:.1%}" if r["rel_half_width"] is not None else "no CI",
                  str(r["needed"]), str(r["more"]))
    con.print(t)
    most = max((r["needed"] for r in rows if r["n"]), default=0)
    more = sum(r["more"] or 0 for r in rows)
    spec_arg = spec or "SPEC"
    con.print(f"{more} more measured invocations in all; the largest cell needs {most} "
              f"replications. Planning values from the pilot (a small pilot's s is itself "
              f"uncertain), so let run re-check as it goes:\n"
              f"  faascope run {spec_arg} --results {path} --target-ci {target_text}",
              soft_wrap=True)
