"""`faascope tiers`: cross-platform resource tiers (memory matched, CPU as close as allowed)."""
from __future__ import annotations

import json
import sys

import click

from faascope.errors import BadInput


def _memory_list(text: str) -> list[int]:
    from faascope.units import parse_memory_mb

    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(parse_memory_mb(part))
        except ValueError as exc:
            raise BadInput(f"{part!r}: {exc}", field="--memory") from None
    if not out:
        raise BadInput("give at least one memory size", field="--memory")
    return out


@click.command("tiers")
@click.option("--platforms", default="aws,gcf", show_default=True,
              help="Comma-separated: aws, gcf, cloudrun, local-lambda, local-gcf. The first is the "
                   "reference whose CPU the others match as closely as they can.")
@click.option("--memory", default="128,256,512,1024,2048", show_default=True,
              help="Comma-separated memory sizes in the platforms' MB (= MiB), e.g. 128,256,2GiB.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def tiers_command(platforms, memory, fmt):
    """Resource tiers across platforms: identical memory, CPU as close as each platform allows,
    and the CPU difference per tier."""
    from faascope.tiers import derive_tiers, platform, round3, tiers_json

    names = [p.strip() for p in platforms.split(",") if p.strip()]
    mems = _memory_list(memory)
    tiers = derive_tiers(names, mems)
    if fmt == "json":
        json.dump(tiers_json(tiers, names), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    from rich.console import Console
    from rich.table import Table

    plats = [platform(n) for n in names]
    ref = plats[0]
    t = Table(title="Resource tiers (memory identical; vCPU as close to "
                    f"{ref.title}'s as each platform allows)", title_justify="left")
    t.add_column("memory (MB)", justify="right")
    for p in plats:
        t.add_column(f"{p.title} vCPU", justify="right")
    for p in plats[1:]:
        t.add_column(f"Δ {p.name} − {ref.name}", justify="right")
    for tier in tiers:
        row = [str(tier.memory_mb)]
        for c in tier.cells:
            row.append(f"{round3(c.vcpu):.3f}" if c.vcpu is not None else "–")
        for p in plats[1:]:
            d, pct = tier.cpu_diff[p.name], tier.cpu_diff_pct[p.name]
            row.append("–" if d is None else f"{round3(d):+.3f} ({pct:+.1f} %)")
        t.add_row(*row)
    con = Console(width=max(100, Console().width))
    con.print(t)
    for p in plats:
        con.print(f"{p.title}: {p.rule}")
    for tier in tiers:
        for c in tier.cells:
            if c.error:
                con.print(f"[yellow]note[/yellow]: {tier.memory_mb} MB: {c.error}")
