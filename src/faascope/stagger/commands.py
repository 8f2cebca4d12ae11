"""`faascope stagger suggest SPEC --concurrency N`: search batch size and delay with few bursts.

The spec gives the provider, function and workload (and optionally the candidate grids as
``batch_size`` / ``delay`` factors). Every trial burst is recorded in a results store like any
burst campaign (``--results``), so the search can be analysed and reported afterwards.
"""
from __future__ import annotations

import json
import sys

import click

from faascope.errors import BadInput

#: what suggest can minimise: per-member times, lower is better in the measures table (a test
#: checks each one's direction there, since the search keeps the lowest scores)
OBJECTIVE_METRICS = ("service_s", "wait_s", "run_s", "write_s", "read_s", "io_s", "start_s",
                     "completion_s")
OBJECTIVE_STATS = ("p50", "p95", "p99", "max")


def _floats(ctx, param, value):
    if not value:
        return None
    from faascope.units import parse_duration
    try:
        return [parse_duration(v.strip()) for v in value.split(",") if v.strip()]
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def _ints(ctx, param, value):
    if not value:
        return None
    try:
        out = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter("a comma-separated list of whole numbers", ctx=ctx, param=param) from None
    if any(v < 1 for v in out):
        raise click.BadParameter("batch sizes must be at least 1", ctx=ctx, param=param)
    return out


def _objective(ctx, param, value):
    met, _, st = value.partition(":")
    st = st or "p50"
    if met not in OBJECTIVE_METRICS or st not in OBJECTIVE_STATS:
        raise click.BadParameter(f"METRIC:STAT with METRIC one of {', '.join(OBJECTIVE_METRICS)} and "
                                 f"STAT one of {', '.join(OBJECTIVE_STATS)} (got {value!r})",
                                 ctx=ctx, param=param)
    return met, st


@click.group("stagger")
def stagger_group():
    """Staggered launches: batches of invocations with a delay between them."""


@stagger_group.command("suggest")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--concurrency", "n", type=click.IntRange(1, 100_000), required=True,
              help="Invocations launched together (the burst size to stagger).")
@click.option("--objective", default="service_s:p50", show_default=True, callback=_objective,
              help="METRIC:STAT to minimise per burst: service_s, wait_s, run_s, write_s, read_s, "
                   "io_s, start_s, completion_s; p50, p95, p99, max.")
@click.option("--batch-sizes", callback=_ints, default=None,
              help="Candidate batch sizes (default: the spec's batch_size factor, else N/2, N/4 … N/32).")
@click.option("--delays", callback=_floats, default=None,
              help="Candidate delays, e.g. 250ms,500ms,1s (default: the spec's delay factor, else "
                   "¼, ½, 1 and 2 × the median run time of the all-at-once pilot bursts).")
@click.option("--eta", type=click.IntRange(2, 10), default=3, show_default=True,
              help="Keep the best 1/eta candidates after each round.")
@click.option("--budget", type=click.IntRange(3), default=None,
              help="At most this many trial bursts in all (all-at-once bursts included).")
@click.option("--results", type=click.Path(dir_okay=False), default=None,
              help="Results store for the trial bursts (default results/<name>-suggest.db).")
@click.option("--seed", type=click.IntRange(0), default=None, help="Seed (order, bootstrap).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--no-progress", is_flag=True, default=False, help="No progress bars.")
def suggest_command(spec, n, objective, batch_sizes, delays, eta, budget, results, seed, fmt,
                    no_progress):
    """Search batch size and delay for N invocations of SPEC's workload, with successive halving
    (few trial bursts), and say how sure the answer is."""
    from faascope.stagger.suggest import suggest

    out = suggest(spec, n, objective=objective, batch_sizes=batch_sizes, delays=delays, eta=eta,
                  budget=budget, results=results, seed=seed, progress=not no_progress)
    if fmt == "json":
        json.dump(out, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    _print(out)


def _print(out: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    met, st = out["objective"]
    best = out["best"]
    con.print(f"[bold]stagger suggest[/bold]: {out['concurrency']} invocations, objective "
              f"{st} {met} per burst (lower is better); {out['trial_bursts']} trial bursts "
              f"({out['trial_invocations']:,} invocations) in {out['rounds']} round(s); "
              f"results in {out['results']}")
    if best is None:
        con.print("[yellow]no candidate could be evaluated[/yellow]")
    else:
        con.print(f"suggestion: [bold]batch_size {best['batch_size']}, delay {best['delay']:g} s[/bold] "
                  f"(last batch starts {best['span_s']:g} s after the first)")
        if out["improvement_pct"] is not None:
            ci = out["improvement_ci"]
            head = f"  {out['improvement_pct']:+.1f} % {st} {met} vs all at once"
            if not out["confirm_bursts"]:
                con.print(f"{head}, from the {best['bursts']} burst(s) that chose it (they favour it); "
                          f"95 % CI: {out['too_few']}")
            elif out["too_few"]:
                con.print(f"{head}; 95 % CI: {out['too_few']}")
            else:
                lo = "−∞" if ci[0] is None or ci[0] == float("-inf") else f"{ci[0]:+.1f} %"
                con.print(f"{head}, 95 % CI [{lo}, {ci[1]:+.1f} %], from {out['confirm_bursts']} "
                          f"confirmation burst(s) vs {out['baseline_bursts']} all-at-once burst(s)")
        if out["p_value_vs_all_at_once"] is not None:
            con.print(f"  not better than all at once: one-sided Welch p = {_p(out['p_value_vs_all_at_once'])}")
        if out["p_value_vs_runner_up"] is not None:
            ru = out["runner_up"]
            con.print(f"  not better than the runner-up (batch_size {ru['batch_size']}, delay "
                      f"{ru['delay']:g} s): one-sided Welch p = {_p(out['p_value_vs_runner_up'])}")
    t = Table(title="candidates")
    for h in ("batch size", "delay", "span", "bursts", f"mean {st} {met}", "outcome"):
        t.add_column(h)
    for c in out["candidates"]:
        mean = "–" if c["mean"] is None else f"{c['mean']:.4g} s"
        t.add_row(str(c["batch_size"]), f"{c['delay']:g} s", f"{c['span_s']:g} s", str(c["bursts"]),
                  mean, c["outcome"])
    t.add_row("all at once", "0", "0", str(out["baseline_bursts"]),
              f"{out['baseline_mean']:.4g} s" if out["baseline_mean"] is not None else "–", "baseline")
    con.print(t)
    for note in out["notes"]:
        con.print(f"[yellow]note[/yellow]: {note}")


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


@stagger_group.command("grid")
@click.argument("results", type=click.Path(dir_okay=False, exists=True))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--figure", type=click.Path(dir_okay=False), default=None,
              help="Also write the heatmaps: .png/.pdf/.svg (matplotlib) or .html (plotly).")
@click.option("--alpha", type=click.FloatRange(0.001, 0.5), default=0.05, show_default=True)
def grid_command(results, fmt, figure, alpha):
    """% improvement of each staggered cell over all at once, from a burst campaign's RESULTS
    (the report's heatmaps as a table, JSON or a figure)."""
    from faascope.analysis.concurrency import (
        group_columns, heatmap_panels, load_bursts, metric_label, stagger_improvements, too_few_note,
    )
    from faascope.analysis.improvement import excludes_zero_text, format_ci

    imp = stagger_improvements(load_bursts(results), alpha=alpha)
    if imp.empty:
        raise BadInput(f"{results} has no staggered cell to compare with an all-at-once cell",
                       field="RESULTS")
    if figure:
        from faascope.report.stagger_heatmaps import write_heatmaps

        write_heatmaps(heatmap_panels(imp), figure)
    if fmt == "json":
        # to_json writes NaN and ±inf as null: ci_low null with too_few null is an interval
        # unbounded below (the all-at-once bursts too noisy to bound the slow-down)
        json.dump(json.loads(imp.to_json(orient="records")), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"Staggering vs all at once ({100 * (1 - alpha):g} % Fieller CI over bursts)")
    others = group_columns(imp)
    for h in others + ["batch size", "delay", "metric", "improvement", "CI", "CI excludes 0", "bursts"]:
        t.add_column(h)
    for _, r in imp.iterrows():
        pct = r["improvement_pct"]
        t.add_row(*[str(r[c]) for c in others], str(r["batch_size"]), f"{float(r['delay']):g} s",
                  metric_label(r["metric"], r["stat"]), "–" if pct is None or pct != pct else f"{pct:+.1f} %",
                  format_ci(r), excludes_zero_text(r), f"{r['n_bursts']} vs {r['n_baseline']}")
    con = Console()
    con.print(t)
    few = too_few_note(imp)
    if few:
        con.print(f"[yellow]note[/yellow]: {few}")

