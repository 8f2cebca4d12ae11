"""`faascope plan SPEC.yaml`: the cells, the excluded cells and why, the invocation count, a
rough duration and cost estimate (storage requests included), without deploying or writing
anything; cells that cannot work on their platform are refused (exit 2)."""
from __future__ import annotations

import json
import sys
from typing import Any, Callable

import click

from faascope.provider_kinds import provider_kind
from faascope.schemas import unit_of, workload_def, workload_kinds
from faascope.units import format_size


#: function fields in Lambda's "MB" (= MiB)
MB_FIELDS = ("memory_mb", "ephemeral_mb")
#: load fields that are durations in seconds (docs/concurrency.md)
SECONDS_LOAD_FIELDS = ("delay", "interval", "shift", "pause")


def level_formatter(factor, kinds: list[str]) -> Callable[[Any], str]:
    """How a factor's levels read in the table: the unit comes from where the field is defined
    (Lambda MB for memory and /tmp; the request schema's ``x-unit`` for workload fields: bytes
    as exact sizes, milliseconds as such); anything else as it is."""
    unit = None
    if factor.section == "function" and factor.field in MB_FIELDS:
        unit = "MB"
    elif factor.section == "load" and factor.field.rpartition(".")[2] in SECONDS_LOAD_FIELDS:
        unit = "s"
    elif factor.section == "workload":
        for kind in (k for k in kinds if k in workload_kinds()):  # invoke: a user's event
            prop = workload_def(kind).get("properties", {}).get(factor.field)
            if prop is not None:
                unit = unit_of(prop)
                break

    def show(v: Any) -> str:
        if unit == "s" and isinstance(v, (int, float)) and not isinstance(v, bool):
            return f"{v:g} s"
        if isinstance(v, bool) or not isinstance(v, int):
            return str(v)
        if unit == "MB":
            return f"{v} MB"
        if unit == "bytes":
            return format_size(v)
        if unit == "ms":
            return f"{v} ms"
        return str(v)
    return show


def _assumed_figures(plan) -> dict[str, list[str]]:
    """cell key -> the assumed calibration entries (``table@version:key``) it rests on, for the
    cells that rest on any (faascope.designs.model_basis)."""
    from faascope.designs.model_basis import campaign_basis
    basis = campaign_basis(plan.to_json())
    return {k: [f.anchor for f in b.assumed] for k, b in basis.items() if b.assumed}


@click.command("plan")
@click.argument("spec", type=click.Path(dir_okay=False), required=False)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Output format.")
@click.option("--replications", type=click.IntRange(min=1), default=None,
              help="Override the spec's design.replications.")
@click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), default=None,
              help="Seed of the randomised run order (default: the spec's, else a random one).")
def plan_command(spec, fmt, replications, seed):
    """Show what `faascope run SPEC` would do: cells, exclusions, invocations and duration.

    Levels are shown normalised: sizes in bytes (JSON) or exact units (table), memory in
    Lambda MB (= MiB).
    """
    from faascope.designs.estimate import cpu_oversubscribed, estimate, human_duration
    from faascope.designs.plan import build_plan
    from faascope.errors import BadInput
    from faascope.specs.loader import load_spec

    if spec is None:  # optional for `plan --pilot RESULTS` (faascope.driver.plan_commands)
        raise BadInput("give a SPEC (or --pilot RESULTS)", field="SPEC")
    loaded = load_spec(spec)
    plan = build_plan(loaded, replications=replications, seed=seed)
    est = estimate(plan)
    oversubscribed = cpu_oversubscribed(plan)
    from faascope.designs.cost import estimate_plan_cost, storage_line, summary_line
    cost = estimate_plan_cost(plan, loaded.spec.provider.parsed_settings())
    kind = provider_kind(loaded.spec.provider.kind)
    assumed = _assumed_figures(plan) if kind is not None and kind.has_profiles else {}
    if fmt == "json":
        out = plan.to_json(estimate=est)
        out["cost_estimate"] = cost
        out["cpu_oversubscribed"] = oversubscribed
        out["assumed_figures"] = assumed
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return

    from rich.console import Console
    from rich.table import Table

    con = Console()
    names = [f.name for f in loaded.factors]
    d = loaded.spec.design
    order = "randomised" if d.randomize else "in replication-major order"
    con.print(f"[bold]{loaded.spec.name}[/bold]: {plan.design_type}, {len(names)} factor(s), "
              f"{plan.replications} replication(s) per cell, {order}, seed {plan.seed}")
    t = Table(title=f"Cells to run ({len(plan.cells)})", title_justify="left")
    t.add_column("#", justify="right")
    for n in names:
        t.add_column(n)
    t.add_column("reps", justify="right")
    t.add_column("≈ s/inv", justify="right")
    kind = loaded.spec.workload.get("kind")
    shows = {f.name: level_formatter(f, [kind] if kind else workload_kinds())
             for f in loaded.factors}
    for c in plan.cells:
        t.add_row(str(c.index), *[shows[n](c.levels[n]) for n in names], str(plan.replications),
                  f"{est['per_invocation_seconds'][c.key]:.3g}")
    con.print(t)
    if plan.excluded:
        x = Table(title=f"Excluded cells ({len(plan.excluded)})", title_justify="left")
        for n in names:
            x.add_column(n)
        x.add_column("excluded by rule")
        for e in plan.excluded:
            x.add_row(*[shows[n](e.levels[n]) for n in names], e.rule)
        con.print(x)
    measured = plan.measured_invocations
    warm = plan.invocations - measured
    con.print(f"Invocations: [bold]{plan.invocations}[/bold] ({measured} measured"
              f"{f' + {warm} warm-up' if warm else ''}), {est['functions']} function "
              f"configuration(s), cold starts forced: {plan.cold_mode}"
              + (f", {plan.blocks} blocks every {human_duration(plan.block_interval_s)}"
                 if plan.blocks > 1 and plan.schedule is None else ""))
    if plan.schedule is not None:
        sd = plan.schedule.describe()
        con.print(f"Schedule: {sd['slots']} slot(s) "
                  + (f"every {human_duration(sd['every_s'])}" if sd["every_s"]
                     else f"at cron {sd['cron']!r} ({sd['tz']})")
                  + f", {plan.design_replications} replication(s) of every cell per slot, "
                  f"first {sd['first_due']}, last {sd['last_due']} (if started now); a late "
                  f"slot is {'run late' if sd['late'] == 'run' else 'recorded as missed'} after "
                  f"{human_duration(sd['grace_s'])}")
    con.print(f"Estimated duration: ≈ {human_duration(est['seconds'])} "
              "(rough model; see docs/specs.md)")
    con.print(summary_line(cost))
    if storage_line(cost):
        con.print(storage_line(cost))
    for note in plan.notes:
        con.print(f"note: {note}")
    if assumed:
        keys = sorted({k for ks in assumed.values() for k in ks})
        con.print(f"[yellow]warning[/yellow]: {len(assumed)} of {len(plan.cells)} cell(s) rest on calibration "
                  f"figures marked assumed (no published measurement sets them): {', '.join(keys)}; where "
                  "those bind, absolute values are the local model's, and nothing published checks them "
                  "(the report's 'What the local figures rest on', docs/platform.md)")
    if oversubscribed:
        worst = max(oversubscribed, key=lambda o: o["promised_vcpu"])
        con.print(f"[yellow]warning[/yellow]: {len(oversubscribed)} cell(s) promise their instances more "
                  f"CPU than this machine has ({worst['host_cpus']} CPUs; at most {worst['instances']} × "
                  f"{worst['vcpu_each']:.3g} vCPU = {worst['promised_vcpu']:.3g} vCPU): their CPU-bound "
                  "times measure this machine, not the modelled cloud; the results and the report "
                  "flag them (host_bound)")
