"""`faascope analyze`: statistics for results stores, CSV or Parquet files (several inputs are
one table with a ``source`` column: analysis/sources.py)."""
from __future__ import annotations

import json
import sys

import click

from faascope.errors import BadInput


def _split(value: str | None, option: str) -> list[str]:
    items = [v.strip() for v in (value or "").split(",") if v.strip()]
    if value is not None and not items:
        raise BadInput("give one or more column names separated by commas", field=option)
    return items


def _levels(specs: tuple[str, ...]) -> dict[str, list[str]]:
    out = {}
    for spec in specs:
        if "=" not in spec:
            raise BadInput(f"cannot parse {spec!r}; use FACTOR=LEVEL1,LEVEL2,…", field="--levels")
        f, v = spec.split("=", 1)
        out[f.strip()] = [x.strip() for x in v.split(",")]
    return out


@click.command("analyze")
@click.argument("input_paths", metavar="INPUT...", nargs=-1, required=True,
                type=click.Path(dir_okay=False))
@click.option("--response", required=True, help="Response column (e.g. latency_seconds).")
@click.option("--factors", required=True, help="Factor columns, comma-separated, e.g. A,B[,C].")
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
                   "and print the decision table across them.")
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
                   "each other (--cv-ratio); either with its bootstrap CI.")
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
              help="Bootstrap resamples for CV intervals (0: delta method only).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--robust/--no-robust", default=True, show_default=True,
              help="Also run log-scale, aligned-rank and Kruskal-Wallis tests.")
@click.option("--tz", default=None, metavar="ZONE",
              help="Derive the calendar factors hour, day_of_week, day_period, week_period and "
                   "business_hours in this time zone (IANA name, e.g. Europe/Berlin); without "
                   "it, calendar factors the input lacks are derived in UTC (docs/schedules.md).")
@click.option("--time-column", default=None, metavar="COL",
              help="Timestamp column of the calendar factors (default: started_at, occurred_at, "
                   "collected_at … whichever the input has).")
def analyze_command(input_paths, response, factors, model, alpha, fmt, filters, latest, order_by, scenario,
                    compare, ss_type, transform, level_specs, tukey_ordered, cv_criterion, cv_threshold, cv_ratio,
                    sep, decimal, target_rel_halfwidth, n_boot, seed, robust, tz, time_column):
    """ANOVA, Tukey HSD, CIs, CV and a decision table for INPUT (results stores, CSV or Parquet
    files; with several, the column `source` names each row's input and can be a factor)."""
    from faascope.analysis.calendar import calendar_note, with_calendar
    from faascope.analysis.engine import analyze, analyze_scenarios, clean_json
    from faascope.analysis.io import apply_filters, default_order_column, latest_per_cell
    from faascope.analysis.sources import load_sources
    from faascope.analysis.render import print_tables, to_markdown
    from faascope.store.reader import is_results_path, with_measure, without_measure_note

    factor_list = _split(factors, "--factors")
    scenario_cols = _split(scenario, "--scenario") if scenario is not None else []
    df = load_sources(input_paths, factor_list + scenario_cols, sep=sep, decimal=decimal)
    notes = list(df.attrs.get("notes", []))
    df, calendar = with_calendar(df, tz, time_column, factor_list + scenario_cols, filters)
    if calendar is not None:
        notes.append(calendar_note(calendar))
    # failed invocations explain empty cells for one results store (several: the selection says)
    single = input_paths[0] if len(input_paths) == 1 else None
    try:
        df = apply_filters(df, filters, notes)
    except BadInput as exc:
        raise _why_empty(single, filters, [], exc) from None
    if any(is_results_path(p) for p in input_paths):
        df, without = with_measure(df, response)
        if without:
            notes.append(without_measure_note(response, without))
    if latest is not None:
        missing = [c for c in scenario_cols + factor_list if c not in df.columns]
        if missing:
            raise BadInput(f"no column {missing[0]!r}; available columns: {', '.join(map(str, df.columns))}",
                           field="--factors")
        order_by = order_by or default_order_column(df)
        df, latest_notes = latest_per_cell(df, scenario_cols + factor_list, latest, order_by)
        notes += latest_notes
    elif order_by is not None:
        raise BadInput("--order-by only applies with --latest N", field="--order-by")
    kwargs = dict(model=model, alpha=alpha, ss_type=ss_type, transform=transform, levels=_levels(level_specs),
                  tukey_ordered=tukey_ordered, robust=robust, compare=compare, cv_threshold_pp=cv_threshold,
                  cv_criterion=cv_criterion, cv_ratio=cv_ratio,
                  target_rel_halfwidth=target_rel_halfwidth, n_boot=n_boot, seed=seed)
    adaptive = None
    if single is not None and is_results_path(single):
        from faascope.analysis.adaptive_record import adaptive_facts_of, adaptive_note
        from faascope.analysis.io import failed_cells
        notes += [f"{line}: left out" for line in
                  failed_cells(single, filters, scenario_cols + factor_list)]
        adaptive = adaptive_facts_of(single)       # replications chosen adaptively: say how
        if adaptive:
            notes.append(adaptive_note(adaptive))
    try:
        if scenario_cols:
            res = analyze_scenarios(df, response, factor_list, scenario_cols, **kwargs)
        else:
            res = analyze(df, response, factor_list, **kwargs)
    except BadInput as exc:
        raise _why_empty(single, filters, scenario_cols + factor_list, exc) from None
    res["selection"] = {"input": str(input_paths[0]) if len(input_paths) == 1
                        else [str(p) for p in input_paths], "filters": list(filters), "latest": latest,
                        "order_by": order_by, "notes": notes}
    res["adaptive"] = adaptive
    if calendar is not None:
        res["calendar"] = calendar
    if fmt == "json":
        json.dump(clean_json(res), sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    elif fmt == "markdown":
        sys.stdout.write(to_markdown(res))
    else:
        print_tables(res, wide=fmt == "wide")


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
