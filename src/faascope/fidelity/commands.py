"""`faascope platform fidelity`: run the fidelity battery on the local platform and compare what
it measures with the published figures (docs/platform.md, "Fidelity").

The command only translates: options in, :func:`faascope.fidelity.battery.run_battery` and
:func:`faascope.fidelity.compare.evaluate` do the work, :mod:`faascope.fidelity.render` prints.
It is a subcommand of ``faascope platform``; the ``platform`` group lives in the stand-ins'
layer, below the driver the battery runs on, so the command line (``faascope.cli``) attaches it.
"""
from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import click


@click.command("fidelity")
@click.option("--profile", type=click.Choice(["lambda", "gcf"]), default=None,
              help="Report one profile's metrics (default: both). The /tmp cells always run on "
                   "both: the 2024 study's decisions compare them.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@click.option("--quick", is_flag=True,
              help="Fewer invocations and smaller files (minutes instead of many; 5 units a "
                   "cell for the findings).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="State directory (default $FAASCOPE_DATA_DIR or ~/.cache/faascope); the "
                   "battery's specs and results files go to fidelity-<UTC time> in it.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port of the battery's own platform on 127.0.0.1 (0 = any free port).")
@click.option("--findings/--no-findings", default=True, show_default=True,
              help="Also run the seed studies' headline findings as small campaigns and decide "
                   "each by its statistical rule (docs/platform.md, \"Fidelity\").")
def fidelity_command(profile, fmt, quick, data_dir, port, findings):
    """Measure the local platform's cloud-like profiles against published figures."""
    from rich.console import Console

    from faascope.fidelity.battery import BatteryConfig, run_battery
    from faascope.fidelity.compare import evaluate, load_note
    from faascope.fidelity.findings import evaluate as decide_findings
    from faascope.fidelity.findings_battery import (note_disk, note_steal, read_distributions,
                                                        run_findings)
    from faascope.fidelity.metrics import PROFILES, battery_metrics, load_tables, published
    from faascope.fidelity.render import as_json, render_table
    from faascope.providers.local_platform import default_data_dir
    from faascope.units import format_size

    profiles = (profile,) if profile else PROFILES
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    workdir = Path(data_dir or default_data_dir()) / f"fidelity-{stamp}"
    err = Console(stderr=True)
    tables = load_tables()  # before anything runs: a broken table is an error at once
    metrics = battery_metrics(PROFILES)
    published_of = {m.id: published(m, tables) for m in metrics}
    cfg = BatteryConfig(profiles=profiles, quick=quick, workdir=workdir, port=port)
    say = lambda s: err.print(s, highlight=False, soft_wrap=True)  # noqa: E731
    after = None
    if findings:
        def after(endpoint, results, steal):
            return run_findings(quick, workdir, endpoint, results, say, console=err, steal=steal)
    run = run_battery(cfg, say=say, console=err, after=after)
    ev = evaluate(metrics, run.local, published_of, profiles, loaded=load_note(run.machine))
    meta = {"profiles": list(profiles), "quick": quick, "workdir": str(workdir),
            "results": run.results, "platform": run.platform, "machine": run.machine,
            "scaled_file_bytes": run.scaled_files,
            "scaled_file": {op: format_size(b) for op, b in run.scaled_files.items()},
            "tables": {name: f"{t.name}@{t.version}" for name, t in tables.items()}}
    found = evidence = None
    if findings:
        evidence, notes, fresults = run.after
        meta["results"] = {**run.results, **fresults}
        found = decide_findings(evidence, notes)
        note_steal(found, run.machine.get("cpu_steal"))
        note_disk(found, run.machine)
    dists = read_distributions(run.results)
    if fmt == "json":
        json.dump(as_json(ev, meta, found, dists, evidence), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        render_table(ev, meta, Console(), found, dists)
