"""`faascope analyze`: statistics for results stores, CSV or Parquet files (several inputs are
one table with a ``source`` column: analysis/sources.py)."""
from __future__ import annotations

import json
import sys

import click

from faascope.analysis.options import direction_option

from faascope.errors import BadInput


@click.command("analyze")
@click.argument("input_paths", metavar="INPUT...", nargs=-1, required=True,
                type=click.Path(dir_okay=False))
@click.option("--response", default=None, metavar="COL",
              help="Response column (default: latency_seconds).")
@click.option("--factors", default=None, metavar="A,B",
              help="Factor columns, comma-separated, e.g. A,B[,C]. Default for a results store: the "
                   "spec's factors (none: the data are described). A CSV/Parquet file without "
                   "--factors is described as one group.")
@direction_option
@click.option("--model", type=click.Choice(["full", "additive"]), default="full", show_default=True,
              help="full: all interactions; additive: main effects only.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance level; CIs are at 1-alpha.")
@click.option("--format", "fmt", type=click.Choice(["table", "wide", "json", "markdown"]), default="table",
              show_default=True)
@click.option("--filter", "filters", multiple=True, metavar="COL=VALUE",
              help="Keep matching rows (repeatable; also COL!=V, COL<V, COL<=V, COL>V, COL>=V; "
                   "COL=V1,V2 = any of).")
@click.option("--latest", type=int, default=None, metavar="N",
              help="Keep only the N most recent rows of every cell (after --filter).")
@click.option("--order-by", default=None, metavar="COL",
              help="Column that orders rows for --latest (default: a timestamp column such as occurred_at).")
@click.option("--scenario", default=None, metavar="COL1,COL2",
              help="Analyse separately per combination of these columns (e.g. operation_type,file_size_bytes) "
                   "and print the decision table across them. Default: none when every combination of "
                   "the factors was run, else the fewest factors that make each part complete; 'none' "
                   "to force one analysis.")
@click.option("--compare", default=None, metavar="FACTOR",
              help="Factor ranked in the decision table (default: the first factor).")
@click.option("--ss-type", type=click.Choice(["1", "2", "3", "I", "II", "III"]), default="2",
              show_default=True, help="Sum-of-squares type for unbalanced data (balanced: all equal).")
@click.option("--transform", type=click.Choice(["none", "log"]), default="none", show_default=True,
              help="Run the ANOVA and Tukey on log(response).")
@click.option("--levels", "level_specs", multiple=True, metavar="FACTOR=L1,L2,…",
              help="Order of a factor's levels (default: numeric if all numbers, else sorted).")
@click.option("--tukey-ordered", is_flag=True, help="Order levels by mean before the Tukey pairs (R's ordered=TRUE).")
@click.option("--cv-criterion", type=click.Choice(["difference", "ratio"]), default="difference", show_default=True,
              help="When CVs differ meaningfully: by an absolute difference (--cv-threshold) or relative to "
                   "each other (--cv-ratio); either way only where the CV test (a studentized permutation "
                   "test of the CV ratio) separates them.")
@click.option("--cv-threshold", type=float, default=10.0, show_default=True,
              help="CV differences below this many percentage points are negligible (--cv-criterion difference).")
@click.option("--cv-ratio", type=float, default=1.5, show_default=True,
              help="CVs within this factor of each other are negligible (--cv-criterion ratio).")
@click.option("--sep", default=None, metavar="CHAR",
              help="CSV field separator (default: detected among , ; tab |).")
@click.option("--decimal", default=None, type=str, metavar="CHAR",
              help="CSV decimal mark, . or , (default: decimal commas are detected in files not separated by ',').")
@click.option("--target-rel-halfwidth", type=float, default=0.05, show_default=True,
              help="Target CI half-width relative to the mean, for the replications-needed column.")
@click.option("--bootstrap", "n_boot", type=int, default=2000, show_default=True,
              help="Resamples of the mean's bootstrap-t, draws of the CV comparisons' intervals and "
                   "re-allocations of the CV test (0: the mean's t interval on the log scale; 2000 draws "
                   "and re-allocations).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the resampling and the re-allocations.")
@click.option("--robust/--no-robust", default=True, show_default=True,
              help="Also run log-scale, aligned-rank and Kruskal-Wallis tests.")
@click.option("--tz", default=None, metavar="ZONE",
              help="Derive the calendar factors hour, day_of_week, day_period, week_period and "
                   "business_hours in this time zone (IANA name, e.g. Europe/Berlin); without "
                   "it, calendar factors the input lacks are derived in UTC (docs/schedules.md).")
@click.option("--time-column", default=None, metavar="COL",
              help="Timestamp column of the calendar factors (default: started_at, occurred_at, "
                   "collected_at … whichever the input has).")
def analyze_command(input_paths, response, factors, higher_is_better, model, alpha, fmt, filters, latest,
                    order_by, scenario, compare, ss_type, transform, level_specs, tukey_ordered, cv_criterion,
                    cv_threshold, cv_ratio, sep, decimal, target_rel_halfwidth, n_boot, seed, robust, tz,
                    time_column):
    """ANOVA, Tukey HSD, CIs, CV and a decision table for INPUT (results stores, CSV or Parquet
    files; with several, the column `source` names each row's input and can be a factor)."""
    from faascope.analysis.dataset import load_dataset, parse_levels, split_columns
    from faascope.analysis.engine import check_options, clean_json
    from faascope.analysis.render import print_tables, to_markdown
    from faascope.analysis.scenarios import Options, analyse, to_json

    factor_list = split_columns(factors, "--factors")
    scen = split_columns(scenario, "--scenario")
    if scen == ["none"]:
        scen = []
    options = Options(model=model, alpha=alpha, ss_type=ss_type, transform=transform,
                      tukey_ordered=tukey_ordered, robust=robust, cv_threshold_pp=cv_threshold,
                      cv_criterion=cv_criterion, cv_ratio=cv_ratio,
                      target_rel_halfwidth=target_rel_halfwidth, n_boot=n_boot, seed=seed)
    check_options(model, alpha, ss_type, transform, cv_threshold, target_rel_halfwidth, n_boot,
                   cv_criterion, cv_ratio)
    # failed invocations explain empty cells for one results store (several: the selection says)
    single = input_paths[0] if len(input_paths) == 1 else None
    try:
        ds = load_dataset(list(input_paths), response=response, factors=factor_list, scenario=scen,
                          compare=compare, filters=list(filters), latest=latest, order_by=order_by,
                          time_col=time_column, calendar_col=time_column, tz=tz,
                          levels=parse_levels(level_specs), sep=sep,
                          decimal=decimal, higher_is_better=higher_is_better,
                          min_rows=1 if model == "additive" else 2)
        res = to_json(ds, analyse(ds, options), options)
    except BadInput as exc:
        raise _why_empty(single, filters, (scen or []) + (factor_list or []), exc) from None
    res["selection"]["input"] = (str(input_paths[0]) if len(input_paths) == 1
                                 else [str(p) for p in input_paths])
    if ds.calendar is not None:
        res["calendar"] = ds.calendar
    res["adaptive"] = ds.adaptive
    if fmt == "json":
        json.dump(clean_json(res), sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    elif fmt == "markdown":
        sys.stdout.write(to_markdown(res, ds.info))
    else:
        print_tables(res, wide=fmt == "wide", info=ds.info)


def _why_empty(input_path, filters, columns: list[str], exc: BadInput) -> BadInput:
    """A refusal of a results store's data, explained by the invocations that failed when that
    is why rows are missing ("0 of 6 invocations succeeded (NoSpace)"); else ``exc``."""
    from faascope.analysis.io import failed_cells
    from faascope.store.reader import is_results_path

    if input_path is None or not is_results_path(input_path):
        return exc
    failed = failed_cells(input_path, filters, columns)
    if not failed:
        return exc
    if failed[0].startswith("0 of"):  # nothing selected succeeded: that is the whole story
        return BadInput(failed[0], field="INPUT")
    return BadInput("\n".join(failed) + f"\n{exc.message}", field=exc.field)
