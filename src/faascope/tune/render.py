"""The terminal answer of ``faascope tune``: three sentences (cheapest, fastest, balanced with
their ties), the cost/speed curve as a table with the Pareto front marked, and where the
evidence is."""
from __future__ import annotations

import math

from faascope.analysis.precision import PROCEDURE
from faascope.analysis.render import fmt_seconds
from faascope.tune.answer import choices, public


def dollars_per_million(v, half=None) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    return f"${v:.3g}" + (f" ± {half:.2g}" if half is not None and math.isfinite(half) else "")


def sentences(table) -> list[str]:
    ch = choices(table)
    out = []
    for what, key in (("cheapest", "cost"), ("fastest", "latency"), ("balanced", None)):
        c = ch[what]
        if c is None:
            out.append(f"{what}: no size has two successful warm invocations")
            continue
        r = table.loc[c["row"]]
        cost = dollars_per_million(r["cost_per_million"],
                                   r["cost_half"] * 1e6 if r["cost_half"] is not None else None)
        lat = fmt_seconds(r["latency_mean"], r["latency_half"])
        text = f"{what}: {r['size']} — {lat} warm mean, {cost} per 1M invocations"
        if c["ties"]:
            text += "; tied with " + ", ".join(f"{m} (p = {p:.2f})" for m, p in c["ties"])
            text += f" (Welch t-test of the {'cost' if key == 'cost' else 'latency'}, α = 0.05)"
        out.append(text)
    return out


def render(con, table, res, settings, what: str, path) -> None:
    from rich.table import Table

    con.print(f"[bold]tune[/bold] {what}: {len(table)} size(s), {len(res.samples)} invocations "
              f"in {res.rounds} round(s); stopped: {res.stopped_by}; target ±"
              f"{settings.target:.0%} of the warm latency's "
              f"{'mean (median when the pilot CV > 0.5)' if settings.stat == 'auto' else settings.stat}"
              f" (two-stage: a pilot of {settings.first_warm} warm invocations per size plans "
              "its n)")
    short = res.short
    if short:
        con.print(f"  [bold]target NOT reached[/bold] for {', '.join(f'{m} MB' for m in short)}:"
                  " short of the n the pilot planned; their intervals are as printed, wider "
                  "than asked")
    for s in sentences(table):
        con.print("  " + s)
    t = Table(title="cost and speed per memory size (* = Pareto front: nothing is both cheaper "
                    "and faster)", title_justify="left", show_edge=False)
    for h in ("size", "warm n", "warm mean ± 95% CI", "median", "p95", "cold", "per 1M ± CI",
              "front", "failed"):
        t.add_column(h, justify="right")
    for _, r in table.iterrows():
        prec = res.precision.get(r["memory_mb"])
        t.add_row(r["size"], str(r["n_warm"]) + ("" if prec is None or prec.met
                                                            else " (not reached)"),
                  fmt_seconds(r["latency_mean"], r["latency_half"]),
                  fmt_seconds(r["latency_median"]), fmt_seconds(r["latency_p95"]),
                  fmt_seconds(r["cold_mean"]) if r["cold_mean"] is not None else "–",
                  dollars_per_million(r["cost_per_million"], r["cost_half"] * 1e6
                                      if r["cost_half"] is not None else None),
                  "*" if r.get("pareto") else "", str(r["failed"]))
    con.print(t)
    if str(path).endswith(".db"):
        hint = f"faascope report {path} --out reports/{path.stem}"
    else:
        hint = (f"faascope analyze {path} --response latency_seconds --factors memory_mb "
                f"--filter start=warm --filter ok=1 (or faascope report {path} --out "
                f"reports/{path.stem} with the same options)")
    con.print(f"evidence: every invocation in {path}; e.g. {hint}", soft_wrap=True)


def as_json(table, res, settings, path) -> dict:
    ch = choices(table)
    pick = {k: (None if v is None else {"memory_mb": int(table.loc[v["row"], "memory_mb"]),
                                        "arch": table.loc[v["row"], "arch"],
                                        "size": table.loc[v["row"], "size"],
                                        "ties": [{"size": m, "p": p} for m, p in v["ties"]]})
            for k, v in ch.items()}
    return {"choices": pick, "sizes": public(table), "rounds": res.rounds,
            "stopped_by": res.stopped_by, "invocations": len(res.samples),
            "dollars": res.dollars, "target_rel_half_width": settings.target,
            "adaptive": {"procedure": PROCEDURE, "pilot_n": settings.first_warm,
                         "target_reached": bool(res.precision) and not res.short,
                         "sizes": {str(m): {"n": p.n, "stat": p.stat,
                                            "planned_n": p.plan.planned_n if p.plan else None,
                                            "reached": p.met}
                                   for m, p in res.precision.items()}},
            "results": str(path)}
