"""Command-line options that every command reading measurements shares (analyze, report,
compare): one definition each, so their meaning and help cannot drift apart."""
from __future__ import annotations

import click

#: which way the response is better; None = the measures table's (faascope.store.measures)
direction_option = click.option(
    "--higher-is-better/--lower-is-better", "higher_is_better", default=None,
    help="Which way the response is better. Default: the results schema's measures table (a "
         "throughput is higher-is-better); a foreign column named like a rate must say.")
