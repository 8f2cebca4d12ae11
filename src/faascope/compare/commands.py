"""`faascope compare BASE NEW [MORE…]` and `faascope compare RESULTS.db --by FACTOR`: what changed
per cell between BASE and NEW, tested with the unit the design allows (blocks of an interleaved
campaign, or runs), which settings differ, and (with more than two inputs, or --timeline) each
cell's timeline with change points.

Exit status (a CI gate): 1 when a cell regressed beyond --threshold by a test that includes the
drift between runs (an interleaved campaign's blocks, 3+ runs a side, or A/A runs), by an exact
difference (no variation), or, with --assume-no-drift, by the per-invocation test; 2 for bad
input; else 0 — also for one run a side with no A/A runs, where nothing can be tested and a
warning says so on stderr (docs/analysis.md, "Comparing campaigns")."""
from __future__ import annotations

import json
import sys

import click

from faascope.analysis.options import direction_option

from faascope.errors import BadInput


def _threshold(text: str) -> float:
    t = text.strip().rstrip("%").strip()
    try:
        v = float(t)
    except ValueError:
        raise BadInput(f"give a percentage such as 10% (got {text!r})", field="--threshold") from None
    if not 0 <= v < 1000:
        raise BadInput(f"must be between 0% and 1000% (got {text!r})", field="--threshold")
    return v / 100


@click.command("compare")
@click.argument("inputs", metavar="BASE NEW [MORE...]", nargs=-1, required=True)
@click.option("--by", default=None, metavar="FACTOR",
              help="Compare two levels of FACTOR inside one interleaved campaign (BASE and NEW "
                   "run in randomised blocks; the block is the unit).")
@click.option("--base-level", default=None, metavar="LEVEL",
              help="With --by: BASE's level (default: the factor's first).")
@click.option("--new-level", default=None, metavar="LEVEL",
              help="With --by: NEW's level (default: the other one).")
@click.option("--block", default="block", show_default=True, metavar="COL",
              help="With --by: the column naming each row's block.")
@click.option("--aa", default=None, metavar="A1,A2,…",
              help="A/A runs of BASE's spec (3 or more, comma-separated): their spread is the "
                   "drift between runs that one run a side is tested against.")
@click.option("--assume-no-drift", is_flag=True, default=False,
              help="With one run a side and no A/A runs, decide by the per-invocation Welch "
                   "test (marked *); not evidence when runs drift.")
@click.option("--response", default="latency_seconds", show_default=True, help="Response column.")
@click.option("--factors", default=None, metavar="A,B",
              help="Columns that make a cell (default: the results stores' factors).")
@click.option("--threshold", default="10%", show_default=True, metavar="PCT",
              help="A significant change of the mean beyond this share of BASE's mean is a "
                   "regression (exit 1) or an improvement.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance level (Holm-adjusted over the cells); CIs at 1-alpha.")
@direction_option
@click.option("--timeline", is_flag=True, default=False,
              help="Show each cell across the inputs with change points (default with 3+ inputs).")
@click.option("--filter", "filters", multiple=True, metavar="COL=VALUE",
              help="Keep matching rows (as in `faascope analyze`).")
@click.option("--bootstrap", "n_boot", type=int, default=2000, show_default=True,
              help="Bootstrap resamples for the median's interval (0: none).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
              show_default=True)
def compare_command(inputs, by, base_level, new_level, block, aa, assume_no_drift, response,
                    factors, threshold, alpha, higher_is_better, timeline, filters, n_boot, seed,
                    fmt):
    """Compare NEW with BASE per cell. Each of BASE and NEW is one run or several joined by
    commas (a1.db,a2.db,a3.db); with more inputs, the first is BASE, the last NEW, and every
    cell's timeline marks its change points. With --by FACTOR, one interleaved campaign whose
    FACTOR takes BASE and NEW, compared block by block (the recommended design).

    Exit status: 1 when a cell regressed beyond --threshold by a test that accounts for the
    drift between runs (or an exact difference); 2 for bad input; else 0, also when one run a
    side leaves nothing testable (a warning says so)."""
    from faascope.compare.engine import compare_inputs, split_sides
    from faascope.compare.report import render_markdown, render_table

    if n_boot < 0:
        raise BadInput("must not be negative", field="--bootstrap")
    if by is None and (base_level is not None or new_level is not None):
        raise BadInput("--base-level and --new-level name levels of the --by factor",
                       field="--base-level" if base_level is not None else "--new-level")
    if timeline and by is not None:
        raise BadInput("a timeline is across separate inputs, not the blocks of one campaign",
                       field="--timeline")
    factor_list = [f.strip() for f in factors.split(",") if f.strip()] if factors else None
    aa_paths = [p.strip() for p in aa.split(",") if p.strip()] if aa else []
    if aa is not None and not aa_paths:
        raise BadInput("name the A/A runs, comma-separated", field="--aa")
    res = compare_inputs(split_sides(inputs), by=by, base_level=base_level, new_level=new_level,
                         block=block, aa=aa_paths, assume_no_drift=assume_no_drift,
                         response=response, factors=factor_list,
                         threshold=_threshold(threshold), alpha=alpha,
                         higher_is_better=higher_is_better, timeline=timeline,
                         filters=list(filters), n_boot=n_boot, seed=seed)
    if fmt == "json":
        json.dump(res, sys.stdout, indent=1, allow_nan=False, default=str)
        sys.stdout.write("\n")
    elif fmt == "markdown":
        sys.stdout.write(render_markdown(res))
    else:
        render_table(res)
    if res["comparison"]["warning"]:
        click.echo("warning: " + res["comparison"]["warning"], err=True)
    if res["comparison"]["regressions"]:
        sys.exit(1)
