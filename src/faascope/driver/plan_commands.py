"""`faascope plan`: the design's plan (:mod:`faascope.designs.commands`), plus ``--pilot RESULTS``:
how many replications each cell of a recorded campaign needs for a target precision
(:mod:`faascope.analysis.pilot`). It lives here, above both, because the design layer sits below
the statistics it would need."""
from __future__ import annotations

import click

from faascope.analysis.pilot import pilot_command_output
from faascope.designs.commands import plan_command as design_plan_command


def plan_with_pilot(pilot, target_ci, pilot_n, target_stat, response, **kw):
    if pilot is not None:
        pilot_command_output(pilot, target_ci, target_stat, response, kw["fmt"], kw["spec"],
                             pilot_n)
        return
    return design_plan_command.callback(**kw)


PILOT_OPTIONS = [
    click.Option(["--pilot"], type=click.Path(dir_okay=False, exists=True), default=None,
                 help="A results file: say how many replications each of its cells needs for "
                      "--target-ci, from the pilot's variance (SPEC is then optional)."),
    click.Option(["--target-ci"], default="5%", show_default=True, metavar="R",
                 help="With --pilot: the 95% CI half-width to reach, relative to the estimate."),
    click.Option(["--pilot-n"], type=click.IntRange(min=1), default=None, metavar="N",
                 help="With --pilot: the pilot's size per cell (as run --pilot-n; default: the "
                      "minimum)."),
    click.Option(["--target-stat"], type=click.Choice(["auto", "mean", "median", "p95"]),
                 default="auto", show_default=True, help="With --pilot: the statistic."),
    click.Option(["--response"], default="latency_seconds", show_default=True,
                 help="With --pilot: the measure."),
]

plan_command = click.Command(
    "plan", callback=plan_with_pilot, params=design_plan_command.params + PILOT_OPTIONS,
    help=design_plan_command.help)
