"""`faascope compare BASE NEW [MORE…]`: what changed per cell between campaigns, whether it is
significant, and (with more than two inputs, or --timeline) each cell's timeline with change
points. Exit status 1 when a cell regressed significantly beyond --threshold (a CI gate), 2 for
bad input, else 0 (docs/analysis.md, "Comparing campaigns")."""
from __future__ import annotations

import json
import sys

import click

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
@click.argument("inputs", metavar="BASE NEW [MORE...]", nargs=-1, required=True,
                type=click.Path(dir_okay=False))
@click.option("--response", default="latency_seconds", show_default=True, help="Response column.")
@click.option("--factors", default=None, metavar="A,B",
              help="Columns that make a cell (default: the results stores' factors).")
@click.option("--threshold", default="10%", show_default=True, metavar="PCT",
              help="A significant change of the mean beyond this share of the base mean is a "
                   "regression (exit 1) or an improvement.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance level (Holm-adjusted over the cells); CIs at 1-alpha.")
@click.option("--higher-is-better", is_flag=True, default=False,
              help="The response is better when higher (throughputs); default: lower is better.")
@click.option("--timeline", is_flag=True, default=False,
              help="Show each cell across the inputs with change points (default with 3+ inputs).")
@click.option("--filter", "filters", multiple=True, metavar="COL=VALUE",
              help="Keep matching rows (as in `faascope analyze`).")
@click.option("--bootstrap", "n_boot", type=int, default=2000, show_default=True,
              help="Bootstrap resamples for the median's interval (0: none).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
              show_default=True)
def compare_command(inputs, response, factors, threshold, alpha, higher_is_better, timeline,
                    filters, n_boot, seed, fmt):
    """Compare NEW with BASE per cell (difference of means with Welch's CI, of medians with a
    bootstrap CI, CV and p99 changes, Holm-adjusted significance); with more inputs, the first
    is BASE, the last NEW, and every cell's timeline marks its change points (PELT).

    Exit status: 1 when a cell regressed significantly beyond --threshold, 2 for bad input,
    else 0."""
    from faascope.compare.report import compare_inputs, render_markdown, render_table

    if len(inputs) < 2:
        raise BadInput("give at least two inputs: BASE NEW [MORE…]", field="INPUT")
    if n_boot < 0:
        raise BadInput("must not be negative", field="--bootstrap")
    factor_list = [f.strip() for f in factors.split(",") if f.strip()] if factors else None
    res = compare_inputs(list(inputs), response=response, factors=factor_list,
                         threshold=_threshold(threshold), alpha=alpha,
                         higher_is_better=higher_is_better, timeline=timeline or len(inputs) > 2,
                         filters=list(filters), n_boot=n_boot, seed=seed)
    if fmt == "json":
        json.dump(res, sys.stdout, indent=1, allow_nan=False, default=str)
        sys.stdout.write("\n")
    elif fmt == "markdown":
        sys.stdout.write(render_markdown(res))
    else:
        render_table(res)
    if res["comparison"]["regressions"]:
        sys.exit(1)
