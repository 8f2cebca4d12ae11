"""`faascope run SPEC.yaml [--results FILE] [--resume] [--replications N] [--seed N] [--detach]`,
and `faascope status RESULTS` / `faascope stop RESULTS` for a detached run (docs/schedules.md)."""
from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import click

from faascope.errors import BadInput, Failure

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
@click.option("--detach", is_flag=True, default=False,
              help="Run in the background (its own session), logging to RESULTS.log; see "
                   "`faascope status RESULTS` and `faascope stop RESULTS`.")
@click.option("--runner-state", is_flag=True, default=False, hidden=True)
@click.option("--add-replications", type=click.IntRange(min=1), default=None,
              help="Top up the campaign in the results file: N more replications per cell, "
                   "randomised among themselves; earlier records are kept.")
@click.option("--target-ci", default=None, metavar="R",
              help="Adaptive replication for a 95% CI half-width of R of each cell's estimate "
                   "(e.g. 5%): a pilot per cell, then the n its spread asks for, unless a "
                   "budget is spent first (docs/specs.md).")
@click.option("--pilot-n", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --target-ci: the pilot's size per cell (default: the minimum, enough "
                   "to see a mode of 5% of the invocations; raise it for rarer modes).")
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
@click.option("--keep-platform", is_flag=True, default=False,
              help="Local provider: leave the platform this run starts running when the campaign "
                   "ends (by default it is stopped; one that was running already is always left).")
@click.option("--rerun-may-have-run", is_flag=True, default=False,
              help="With --resume: run again the invocations recorded as MayHaveRun (the reply "
                   "was lost after the request was sent); each new record replaces the old, "
                   "which is kept in a may_have_run_rerun event.")
def run_command(spec, results, resume, replications, seed, force, no_progress, detach,
                runner_state, add_replications, target_ci, pilot_n, target_stat, target_response,
                budget_time, budget_invocations, budget_dollars, keep_platform,
                rerun_may_have_run):
    """Run the campaign SPEC describes, recording every invocation in a results file.

    Ctrl-C stops after the invocation in flight (twice: abandons it); --resume continues.
    """
    from rich.console import Console

    from faascope.driver import detach as detached
    from faascope.driver.runner import run_campaign

    from faascope.driver.adaptive import AdaptiveRounds, Budget
    from faascope.driver.report_lines import adaptive_table, failed_cells_message, parse_duration

    out = Console()
    adaptive = None
    budgets = (budget_time, budget_invocations, budget_dollars)
    if target_ci is None and any(b is not None for b in budgets):
        raise BadInput("budgets bound adaptive replication; give --target-ci too",
                       field="--target-ci")
    if target_ci is None and pilot_n is not None:
        raise BadInput("--pilot-n is the pilot of adaptive replication; give --target-ci too",
                       field="--pilot-n")
    if rerun_may_have_run and not resume:
        raise BadInput("--rerun-may-have-run reruns recorded invocations of a campaign; give "
                       "--resume too", field="--rerun-may-have-run")
    if target_ci is not None:
        from faascope.analysis.precision import parse_target
        adaptive = AdaptiveRounds(parse_target(target_ci), stat=target_stat,
                                  response=target_response, pilot_n=pilot_n,
                                  budget=Budget(seconds=parse_duration(budget_time)
                                                if budget_time else None,
                                                invocations=budget_invocations,
                                                dollars=budget_dollars))
    if detach or runner_state:
        results = _results_path(spec, results, resume)
    if detach:
        # the detached runner is this command again: every option that shapes the run goes along
        extra = (["--resume"] if resume else []) + (["--force"] if force else []) \
            + (["--replications", str(replications)] if replications is not None else []) \
            + (["--seed", str(seed)] if seed is not None else []) \
            + (["--add-replications", str(add_replications)] if add_replications else []) \
            + (["--keep-platform"] if keep_platform else []) \
            + (["--rerun-may-have-run"] if rerun_may_have_run else [])
        if target_ci is not None:
            extra += ["--target-ci", target_ci, "--target-stat", target_stat,
                      "--target-response", target_response]
            extra += ["--pilot-n", str(pilot_n)] if pilot_n is not None else []
            extra += (["--budget-time", budget_time] if budget_time else []) \
                + (["--budget-invocations", str(budget_invocations)] if budget_invocations else []) \
                + (["--budget-dollars", str(budget_dollars)] if budget_dollars else [])
        st = detached.start_detached(Path(spec), Path(results), extra)
        if st.get("finished"):
            out.print(f"the run finished at once ({st.get('outcome', 'complete')}); log: "
                      f"{st['log']}", soft_wrap=True)
            return
        out.print(f"running detached (pid {st['pid']}); log: {st['log']}\n"
                  f"  faascope status {results}\n  faascope stop {results}", soft_wrap=True)
        return
    if runner_state:
        detached.hold_state(Path(results), spec, sys.argv)
    elif results is not None:
        detached.refuse_if_running(Path(results))
    try:
        s = run_campaign(spec, results, resume=resume, replications=replications, seed=seed,
                         force=force, progress=not no_progress,
                         add_replications=add_replications or 0, adaptive=adaptive,
                         keep_platform=keep_platform, rerun_may_have_run=rerun_may_have_run)
    except BadInput as exc:
        detached.end_state(f"bad input: {exc.message}", 2)
        raise
    except Failure as exc:
        detached.end_state(f"stopped: {exc.message}", 1)
        raise
    except BaseException as exc:
        detached.end_state(f"ended by {type(exc).__name__}", 1)
        raise
    detached.end_state("complete", 0)
    statuses = ", ".join(f"{v} {k}" for k, v in sorted(s.statuses.items())) or "none"
    missed = (f"; {s.missed} in missed slots, not run (faascope status {s.results})"
              if s.missed else "")
    out.print(f"campaign complete: {s.recorded} of {s.planned} invocations recorded in "
              f"{s.results} ({statuses}; {s.ran_now} run now; seed {s.seed}{missed})")
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
        from faascope.analysis.dataset import choose_scenarios

        df = load_table(results)
        return choose_scenarios(df.astype({f: str for f in factors}), factors) or []
    except Exception:  # a hint must never fail a finished campaign
        return []


def _results_path(spec: str, results: str | None, resume: bool) -> str:
    """The results file of a detached run, checked in the foreground (exit 2 before anything
    starts): the spec and its plan load, and the file is new, or holds a campaign to --resume."""
    from faascope.designs.plan import build_plan
    from faascope.driver.campaign import default_results_path
    from faascope.specs.loader import load_spec

    loaded = load_spec(Path(spec))
    build_plan(loaded, replications=None)
    path = Path(results) if results else default_results_path(loaded)
    if path.exists() and not resume:
        raise BadInput(f"{path} already holds a campaign; continue it with --resume, or choose "
                       "another --results file", field="--results")
    if resume and not path.exists():
        raise BadInput(f"there is no campaign to resume in {path}; run without --resume to "
                       "start one", field="--resume")
    return str(path)


def _when(unix: float | None) -> str:
    if unix is None:
        return "-"
    return datetime.fromtimestamp(unix, timezone.utc).isoformat(timespec="seconds").replace(
        "+00:00", "Z")


@click.command("status")
@click.argument("results", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def status_command(results, fmt):
    """Whether a (detached) run of the campaign in RESULTS is running, and how far it is."""
    from faascope.driver.detach import status

    st = status(Path(results))
    if fmt == "json":
        click.echo(json.dumps(st, indent=1, default=str))
        return
    runner = st.get("runner") or {}
    if st["running"]:
        click.echo(f"running: pid {runner.get('pid')} since {runner.get('started_at')}; "
                   f"log {st['log']}")
    elif runner:
        click.echo(f"not running: the last runner (pid {runner.get('pid')}) "
                   + (f"ended {runner.get('ended_at')}: {runner.get('outcome')}"
                      if runner.get("state") == "ended" else "was killed (no end recorded)"))
    else:
        click.echo("not running (no detached runner recorded)")
    if st.get("campaign") is None:
        click.echo(f"no campaign in {results} yet" + (" (the runner is creating it)"
                                                     if st["running"] else ""))
        return
    sl = st["slots"]
    click.echo(f"campaign {st['campaign']}: {st['status']}; {st['recorded']} of {st['planned']} "
               f"invocations recorded ({', '.join(f'{v} {k}' for k, v in sorted(st['statuses'].items())) or 'none'})")
    if sl["done"] or sl["missed"] or sl["running"] or "next_slot" in sl:
        click.echo(f"slots: {sl['done']} done, {sl['missed']} missed "
                   f"({sl['missed_invocations']} invocations not run), {sl['running']} running"
                   + (f"; next: slot {sl['next_slot'] + 1} due {_when(sl.get('next_due_unix'))}"
                      if "next_slot" in sl else ""))
    if not st["running"] and st["status"] != "complete":
        spec = runner.get("spec") or "SPEC"
        click.echo(f"continue with: faascope run {spec} --results {results} --resume --detach")


@click.command("stop")
@click.argument("results", type=click.Path(dir_okay=False))
@click.option("--timeout", type=click.FloatRange(min=0), default=120.0, show_default=True,
              help="Seconds to wait for the runner to finish the invocation in flight.")
@click.option("--abandon", is_flag=True, default=False,
              help="Abandon the invocation in flight (a second SIGTERM); it runs again on resume.")
def stop_command(results, timeout, abandon):
    """Stop the detached run of the campaign in RESULTS (SIGTERM: after the invocation in flight)."""
    from faascope.driver.detach import stop_runner

    r = stop_runner(Path(results), timeout, abandon)
    if not r["stopped"]:
        click.echo(f"nothing to stop: {r['reason']}")
        return
    click.echo(f"stopped the runner (pid {r['pid']}): {r.get('outcome', 'ended')}")
