"""`faascope run SPEC.yaml [--results FILE] [--resume] [--replications N] [--seed N]`."""
from __future__ import annotations

from pathlib import Path

import click

from faascope.store.reader import is_burst_results


@click.command("run")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--results", type=click.Path(dir_okay=False), default=None,
              help="SQLite results file (default: results/<spec name>.db).")
@click.option("--resume", is_flag=True, default=False,
              help="Continue the campaign recorded in the results file.")
@click.option("--replications", type=click.IntRange(min=1), default=None,
              help="Override the spec's design.replications (new campaigns only).")
@click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), default=None,
              help="Seed of the randomised run order (default: the spec's, else a random one; "
                   "always recorded).")
@click.option("--force", is_flag=True, default=False,
              help="With --resume: continue although the spec changed (records are kept).")
@click.option("--no-progress", is_flag=True, default=False, help="No progress bar.")
@click.option("--add-replications", type=click.IntRange(min=1), default=None,
              help="Top up the campaign in the results file: N more replications per cell, "
                   "randomised among themselves; earlier records are kept.")
@click.option("--target-ci", default=None, metavar="R",
              help="Adaptive replication: run rounds until every cell's 95%% CI half-width is "
                   "at most R of its estimate (e.g. 5%%) or a budget is spent (docs/specs.md).")
@click.option("--target-stat", type=click.Choice(["auto", "mean", "median", "p95"]),
              default="auto", show_default=True,
              help="With --target-ci: the statistic (auto: the mean, the median when CV > 0.5).")
@click.option("--target-response", default="latency_seconds", show_default=True,
              help="With --target-ci: the measure whose CI is checked.")
@click.option("--budget-time", default=None, metavar="DURATION",
              help="With --target-ci: stop starting rounds after this long (e.g. 90s, 20m, 2h).")
@click.option("--budget-invocations", type=click.IntRange(min=1), default=None,
              help="With --target-ci: at most this many invocations in this run.")
@click.option("--budget-dollars", type=click.FloatRange(min=0, min_open=True), default=None,
              help="With --target-ci: at most this many USD (faascope's cost model) in this run.")
def run_command(spec, results, resume, replications, seed, force, no_progress, add_replications,
                target_ci, target_stat, target_response, budget_time, budget_invocations,
                budget_dollars):
    """Run the campaign SPEC describes, recording every invocation in a results file.

    Ctrl-C stops after the invocation in flight (twice: abandons it); --resume continues.
    """
    from rich.console import Console

    from faascope.driver.runner import run_campaign

    from faascope.driver.adaptive import AdaptiveRounds, Budget
    from faascope.driver.report_lines import adaptive_table, failed_cells_message, parse_duration

    out = Console()
    adaptive = None
    budgets = (budget_time, budget_invocations, budget_dollars)
    if target_ci is None and any(b is not None for b in budgets):
        from faascope.errors import BadInput
        raise BadInput("budgets bound adaptive replication; give --target-ci too",
                       field="--target-ci")
    if target_ci is not None:
        from faascope.analysis.precision import parse_target
        adaptive = AdaptiveRounds(parse_target(target_ci), stat=target_stat,
                                  response=target_response,
                                  budget=Budget(seconds=parse_duration(budget_time)
                                                if budget_time else None,
                                                invocations=budget_invocations,
                                                dollars=budget_dollars))
    s = run_campaign(spec, results, resume=resume, replications=replications, seed=seed,
                     force=force, progress=not no_progress,
                     add_replications=add_replications or 0, adaptive=adaptive)
    statuses = ", ".join(f"{v} {k}" for k, v in sorted(s.statuses.items())) or "none"
    out.print(f"campaign complete: {s.recorded} of {s.planned} invocations recorded in "
              f"{s.results} ({statuses}; {s.ran_now} run now; seed {s.seed})")
    if adaptive is not None:
        out.print(adaptive_table(adaptive))
    failed = failed_cells_message(s.results)
    if failed:
        out.print(failed, soft_wrap=True)
        raise SystemExit(1)
    if is_burst_results(s.results):
        out.print(f"next: faascope report {s.results} --out reports/{Path(s.results).stem} "
                  "(bursts, co-residency and staggering; docs/concurrency.md)", soft_wrap=True)
    elif s.factors:
        scenario = _scenarios_needed(s.results, s.factors)
        factors = [f for f in s.factors if f not in scenario]
        out.print(f"next: faascope analyze {s.results} --response latency_seconds --factors {','.join(factors)}"
                  + (f" --scenario {','.join(scenario)}" if scenario else ""), soft_wrap=True)


def _scenarios_needed(results, factors: list[str]) -> list[str]:
    """The factors to split the analysis by when compatibility rules left the design incomplete,
    so that the suggested command runs instead of failing on empty cells; [] when the full model
    fits (or when that cannot be worked out)."""
    try:
        from faascope.analysis.io import load_table
        from faascope.report.data import choose_scenarios

        df = load_table(results)
        return choose_scenarios(df.astype({f: str for f in factors}), factors) or []
    except Exception:  # a hint must never fail a finished campaign
        return []
