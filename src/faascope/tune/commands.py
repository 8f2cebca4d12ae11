"""``faascope tune``: which memory size of a deployed function is cheapest, fastest, balanced.

    faascope tune --function NAME [--memory 128,256,512,1024] [--payload JSON|@FILE]
    faascope tune --function ARN --provider aws [--region R]
    faascope tune --url 512=https://… --url 1024=https://… --platform gcf

See docs/specs.md ("Tuning a deployed function")."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from faascope.errors import BadInput
from faascope.provider_kinds import LAMBDA_API_KINDS, PROVIDER_KINDS


#: without a budget, at most this many pilots' worth of invocations per size (the pilot, its cold
#: start, and as much again for the second stage): a noisy size could otherwise ask for thousands
DEFAULT_PILOTS_PER_SIZE = 2


def _memories(text: str) -> list[int]:
    try:
        out = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise BadInput(f"{text!r}: give sizes in MB separated by commas, e.g. 128,512,1024",
                       field="--memory") from None
    if not out or any(m < 128 or m > 10240 for m in out):
        raise BadInput("sizes must be 128 to 10240 MB (Lambda's range)", field="--memory")
    return out


def _urls(pairs: tuple[str, ...]) -> dict[int, str]:
    out = {}
    for p in pairs:
        mem, sep, url = p.partition("=")
        if not sep or not mem.strip().isdigit() or not url.startswith(("http://", "https://")):
            raise BadInput(f"{p!r}: write MEMORY_MB=URL, e.g. 512=https://…", field="--url")
        out[int(mem)] = url
    return out


@click.command("tune")
@click.option("--function", "function", default=None,
              help="A deployed function's name (local platform) or name/ARN (--provider aws).")
@click.option("--spec", "spec", default=None, type=click.Path(dir_okay=False, exists=True),
              help="Instead of --function: a workload spec; its memory factor becomes --memory "
                   "and it runs as a campaign (the spec's provider).")
@click.option("--arch", "arches", default=None,
              help="With --spec: architectures to compare too, e.g. x86_64,arm64.")
@click.option("--url", "urls", multiple=True, metavar="MB=URL",
              help="Instead of --function: the same function deployed over HTTP at each size "
                   "(repeatable).")
@click.option("--provider", type=click.Choice(LAMBDA_API_KINDS), default="local",
              show_default=True, help="Where --function runs.")
@click.option("--endpoint-url", default=None,
              help="Lambda API endpoint (default: the running local platform, or AWS's).")
@click.option("--region", default="us-east-1", show_default=True, help="AWS region.")
@click.option("--data-dir", default=None, help="The local platform's state directory.")
@click.option("--platform", "cost_platform", type=click.Choice(["aws_lambda", "gcf", "cloudrun"]),
              default="aws_lambda", show_default=True, help="With --url: whose prices to use.")
@click.option("--memory", "memory", default="128,256,512,1024,1769,3008", show_default=True,
              help="Memory sizes to compare (MB).")
@click.option("--payload", default=None, help="The event: JSON text or @FILE (default {}).")
@click.option("--target-ci", default="10%", show_default=True, metavar="R",
              help="95% CI half-width of each size's warm latency, relative to it.")
@click.option("--target-stat", type=click.Choice(["auto", "mean", "median", "p95"]),
              default="auto", show_default=True)
@click.option("--warm", "first_warm", type=click.IntRange(1, 100_000), default=None,
              help="The pilot: warm invocations per size in the first round (default: the "
                   "minimum, enough to see a mode of 5% of the invocations; raise it for rarer "
                   "modes). Each size's n is planned from it.")
@click.option("--no-cold", is_flag=True, help="Do not record the cold start after each resize.")
@click.option("--max-rounds", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option("--budget-invocations", type=click.IntRange(min=1), default=None)
@click.option("--budget-time", default=None, metavar="DURATION", help="e.g. 10m")
@click.option("--budget-dollars", type=click.FloatRange(min=0, min_open=True), default=None)
@click.option("--results", default=None, type=click.Path(dir_okay=False),
              help="CSV of every sample (default results/tune-<function>.csv); appended to.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the size order.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def tune_command(function, spec, arches, urls, provider, endpoint_url, region, data_dir, cost_platform, memory,
                 payload, target_ci, target_stat, first_warm, no_cold, max_rounds,
                 budget_invocations, budget_time, budget_dollars, results, seed, fmt):
    """Find the cheapest, fastest and balanced memory size of a deployed function, replicating
    until each size's warm latency is known to --target-ci."""
    from rich.console import Console

    from faascope.analysis.precision import check_pilot_n, parse_target
    from faascope.driver.report_lines import parse_duration
    from faascope.tune.answer import per_size
    from faascope.tune.render import render
    from faascope.tune.sweep import SampleLog, SweepSettings, sweep
    from faascope.tune.targets import HTTPTarget, LambdaTarget, lambda_client, local_client, \
        read_payload

    if sum(map(bool, (function, urls, spec))) != 1:
        raise BadInput("give one of --function NAME (or ARN), --spec SPEC, or --url MB=URL for "
                       "each size", field="--function")
    settings = SweepSettings(
        memories=_memories(memory), target=parse_target(target_ci), stat=target_stat,
        first_warm=check_pilot_n(first_warm, field="--warm"), cold=not no_cold,
        max_rounds=max_rounds,
        budget_invocations=budget_invocations,
        budget_seconds=parse_duration(budget_time) if budget_time else None,
        budget_dollars=budget_dollars, seed=seed)
    if not any(v is not None for v in (budget_invocations, budget_time, budget_dollars)):
        # (Power Tuning's default is 10 invocations a size: too few to see a cold-start mode
        # or plan an n; faascope.analysis.precision.MIN_PILOT_N says why)
        settings.budget_invocations = (DEFAULT_PILOTS_PER_SIZE * (settings.first_warm + 1)
                                       * len(settings.memories))
    err = Console(stderr=True)
    if spec:
        res, table, path, what = _tune_spec(spec, arches, settings, results, err)
        if fmt == "json":
            from faascope.tune.render import as_json
            json.dump(as_json(table, res, settings, path), sys.stdout, indent=2, default=str)
            sys.stdout.write("\n")
            return
        render(Console(), table, res, settings, what, path)
        return
    body = read_payload(payload)
    if urls:
        target = HTTPTarget(_urls(urls), cost_platform)
        settings.memories = sorted(target.urls)
        label = "http"
    else:
        if PROVIDER_KINDS[provider].local:
            client, endpoint = local_client(endpoint_url, data_dir)
        else:
            client, endpoint = lambda_client(endpoint_url, region), endpoint_url or f"AWS {region}"
        target = LambdaTarget(client, function)
        label = function.rsplit(":", 1)[-1]
        err.print(f"endpoint: {endpoint}")
    path = Path(results or f"results/tune-{label}.csv")
    log = SampleLog(path)
    import signal

    def stop(signum, frame):  # SIGTERM like Ctrl-C: keep the samples, restore the size
        raise KeyboardInterrupt
    old = signal.signal(signal.SIGTERM, stop)
    try:
        res = sweep(target, body, settings, log, say=lambda m: err.print(m))
    finally:
        signal.signal(signal.SIGTERM, old)
        log.close()
    table = per_size(res.samples)
    if fmt == "json":
        from faascope.tune.render import as_json
        json.dump(as_json(table, res, settings, path), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    render(Console(), table, res, settings, target.describe(), path)


def _tune_spec(spec, arches, settings, results, err):
    """Run the spec as a tuning campaign and read the answer's samples from its store."""
    from faascope.driver.adaptive import AdaptiveRounds, Budget
    from faascope.driver.runner import run_campaign
    from faascope.specs.loader import load_spec
    from faascope.tune.answer import per_size
    from faascope.tune.spec_path import samples_from_store, tuning_spec
    from faascope.tune.sweep import SweepResult

    text = tuning_spec(Path(spec), settings.memories,
                       [a.strip() for a in arches.split(",")] if arches else None)
    name = Path(spec).stem
    db = Path(results or f"results/tune-{name}.db")
    if db.suffix not in (".db", ".sqlite", ".sqlite3"):
        raise BadInput("with --spec the results are a results store: name it .db",
                       field="--results")
    derived = db.with_suffix(".yaml")
    derived.parent.mkdir(parents=True, exist_ok=True)
    derived.write_text(text)
    loaded = load_spec(derived)
    others = [f.name for f in loaded.factors if f.name not in ("memory", "arch")
              and len(f.levels) > 1]
    if others:
        raise BadInput(f"tune compares memory sizes (and arch) of one workload; the spec also "
                       f"varies {', '.join(others)}: fix those, or use faascope run --target-ci "
                       "and faascope report", field="--spec")
    adaptive = AdaptiveRounds(settings.target, stat=settings.stat, warm_only=True,
                              pilot_n=settings.first_warm,
                              budget=Budget(seconds=settings.budget_seconds,
                                            invocations=settings.budget_invocations,
                                            dollars=settings.budget_dollars))
    # the planned runs: one cold and one warm per size; the pilot and the second stage are
    # rounds, so the budgets bound them (the planned runs themselves are never cut)
    s = run_campaign(derived, db, adaptive=adaptive, console=err,
                     replications=2 if not db.exists() else None)
    samples, platform = samples_from_store(db)
    res = SweepResult(samples=samples, precision={}, rounds=adaptive.outcome.rounds,
                      stopped_by=adaptive.outcome.stopped_by, dollars=0.0)
    for key, p in adaptive.outcome.precision.items():
        cell = loaded_cell_memory(key)
        # one entry per size: with several architectures, a size not reached in one of them
        # is not reached
        if cell is not None and (cell not in res.precision or res.precision[cell].met):
            res.precision[cell] = p
    err.print(f"campaign: {s.recorded} invocations in {db} (derived spec {derived})")
    return res, per_size(samples), db, f"spec {spec} ({platform})"


def loaded_cell_memory(cell_key: str):
    """The memory level of a cell key such as ``memory=512|arch="x86_64"``."""
    for part in cell_key.split("|"):
        k, _, v = part.partition("=")
        if k == "memory":
            try:
                return int(v)
            except ValueError:
                return None
    return None
