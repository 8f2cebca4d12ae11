"""`faascope report INPUT --out DIR`: report.html (interactive, offline), figures/ (publication
figures) and summary.md from a results store or a foreign CSV/Parquet file."""
from __future__ import annotations

import click

from faascope.analysis.options import direction_option

from faascope.errors import BadInput


@click.command("report")
@click.argument("input_paths", metavar="INPUT...", nargs=-1, required=True,
                type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Directory for report.html, figures/ and summary.md (created if needed).")
@click.option("--response", default=None, metavar="COL",
              help="Response column (default: latency_seconds).")
@click.option("--factors", default=None, metavar="A,B",
              help="Factor columns; the first is the one the decision table compares. Default for a results "
                   "store: the spec's factors. Required for a CSV/Parquet file.")
@click.option("--scenario", default=None, metavar="C,D",
              help="Analyse separately per combination of these columns (e.g. operation_type,file_size_bytes). "
                   "Default: none when every combination of the factors was run, else the fewest factors that "
                   "make each part complete; 'none' to force one analysis.")
@click.option("--map", "maps", multiple=True, metavar="OLD=NEW",
              help="Rename an input column before anything else (repeatable, or comma-separated), so foreign data "
                   "can name its response and factors: --map latency=latency_seconds.")
@click.option("--filter", "filters", multiple=True, metavar="COL=VALUE",
              help="Keep matching rows (as in `faascope analyze`: =, !=, <, <=, >, >=; COL=V1,V2 = any of).")
@click.option("--latest", type=int, default=None, metavar="N",
              help="Keep only the N most recent rows of every cell (by the timestamp column).")
@click.option("--time", "time_col", default=None, metavar="COL",
              help="Timestamp column for the time series (default: started_at for a results store, else the "
                   "first of occurred_at, collected_at, timestamp, time, …).")
@click.option("--log-x/--linear-x", "log_x", default=None,
              help="Latency axes on a log or linear scale (default: log when a scenario's values span more than "
                   "50×). The interactive figures can switch either way.")
@direction_option
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level; CIs at 1-alpha.")
@click.option("--formats", default=None, metavar="png,pdf,svg|none",
              help="Draw every figure as a publication figure under figures/ in these formats (PNG at 200 "
                   "dpi). Default: PNGs of the few figures summary.md shows (the cost charts); every figure "
                   "is in report.html either way.")
@click.option("--pdf", "pdf", is_flag=True,
              help="Publication figures of every figure as PDF (and PNG, or the --formats given).")
@click.option("--jobs", type=int, default=None, metavar="N",
              help="Processes drawing the publication figures (default: CPUs, at most 4).")
@click.option("--bootstrap", "n_boot", type=int, default=2000, show_default=True,
              help="Resamples of the mean's bootstrap-t, draws of the CV comparisons' intervals and "
                   "re-allocations of the CV test (0: the mean's t interval on the log scale).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the report's path.")
@click.option("--price-platform", default=None, metavar="SPEC",
              help="Which platform's prices each row gets (a foreign table): PLATFORM for all rows, a COLUMN of "
                   "platform names, or COLUMN=LEVEL:PLATFORM,… e.g. system_name=LAMBDA_DD:aws_lambda,GCF_DD:gcf "
                   "(platforms: aws_lambda, gcf, cloudrun).")
@click.option("--price-memory", default=None, metavar="SPEC",
              help="Each row's memory size in MB: MB for all rows, a COLUMN of MB, or COLUMN=LEVEL:MB,… e.g. "
                   "resource_tier=TIER_1:128,TIER_5:2048 (a GCF size must be one of its tiers).")
@click.option("--price-arch", default=None, metavar="SPEC",
              help="Each row's architecture (x86_64, arm64), as --price-memory (default x86_64).")
@click.option("--price-duration", default=None, metavar="COL[:ms|s][:billed]",
              help="The column holding each invocation's duration, rounded up to the billing granularity "
                   "(:billed: already billed by the provider). Default: the timed response, priced as a lower "
                   "bound, and the report says so.")
@click.option("--price-map", "price_map_file", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="The same mapping in a YAML/JSON file (keys platform, memory, arch, duration); the options "
                   "override its keys (docs/cost.md).")
@click.option("--tz", default=None, metavar="ZONE",
              help="Derive the calendar factors (hour, day_of_week, day_period, week_period, "
                   "business_hours) in this time zone; definitions in the overview "
                   "(docs/schedules.md).")
def report_command(input_paths, out, response, factors, scenario, maps, filters, latest, time_col, log_x,
                   higher_is_better, alpha, formats, pdf, jobs, n_boot, seed, quiet, price_platform, price_memory,
                   price_arch, price_duration, price_map_file, tz):
    """Interactive HTML report, publication figures and a Markdown summary for INPUT (results stores, CSV or
    Parquet files; several are one table whose column `source` names each row's input and is the first factor
    by default)."""
    from faascope.cost.mapping import price_mapping
    from faascope.report.build import build_report, default_jobs
    from faascope.analysis.dataset import parse_mapping, split_columns

    import time

    figures = "all" if formats is not None or pdf else "key"
    fmts = tuple(f.strip().lower() for f in (formats or "png").split(",") if f.strip())
    if fmts == ("none",):
        fmts = ()
    if pdf and "pdf" not in fmts:
        fmts = (fmts or ("png",)) + ("pdf",)
    start = time.perf_counter()

    def progress(step: str) -> None:
        if not quiet:
            click.echo(f"[{time.perf_counter() - start:4.1f} s] {step} …", err=True)
    if latest is not None and latest < 1:
        raise BadInput("must be at least 1", field="--latest")
    if jobs is not None and jobs < 1:
        raise BadInput("must be at least 1", field="--jobs")
    if n_boot < 0:
        raise BadInput("must not be negative", field="--bootstrap")
    price_map = price_mapping(price_platform, price_memory, price_arch, price_duration, price_map_file)
    scen = [] if scenario is not None and scenario.strip().lower() == "none" else split_columns(scenario, "--scenario")
    factor_list = split_columns(factors, "--factors")
    res = build_report(list(input_paths), out, response=response, factors=factor_list,
                       scenario=scen, mapping=parse_mapping(maps), filters=list(filters), latest=latest,
                       log_x=log_x, alpha=alpha, formats=fmts, time_col=time_col,
                       jobs=jobs or default_jobs(), n_boot=n_boot, seed=seed, tz=tz, figures=figures,
                       higher_is_better=higher_is_better, progress=progress, price_map=price_map)
    if quiet:
        click.echo(str(res.html))
        return
    click.echo(f"wrote {res.html} ({len(res.figures)} figures, {res.scenarios} scenario(s), {res.rows:,} rows)")
    click.echo(f"      {res.summary}")
    if res.files:
        click.echo(f"      {len(res.files)} publication figure files in {res.out / 'figures'}")
    click.echo("time: " + ", ".join(f"{k} {v:.1f} s" for k, v in res.seconds.items()), err=True)
