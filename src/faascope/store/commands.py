"""`faascope export RESULTS --format csv|parquet --out FILE|-`: the flat view, one row per
invocation (warm-ups included and flagged in the ``warmup`` column). CSV text cells that a
spreadsheet would run as formulas get a leading quote (:mod:`faascope.store.spreadsheet`)."""
from __future__ import annotations

from pathlib import Path

import click

from faascope.errors import Failure
from faascope.store.reader import read_flat
from faascope.store.spreadsheet import to_csv


@click.command("export")
@click.argument("results", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), required=True,
              help="Output format.")
@click.option("--out", "out", type=click.Path(dir_okay=False, writable=True, allow_dash=True),
              required=True, help="File to write; - writes to standard output.")
@click.option("--no-warmups", is_flag=True, default=False,
              help="Leave out the warm-up invocations (kept by default, flagged warmup=1).")
def export_command(results, fmt, out, no_warmups):
    """Export a results file's invocations, one flat row each, to CSV or Parquet."""
    df = read_flat(results, include_warmups=not no_warmups)
    if out == "-":
        stream = click.get_binary_stream("stdout")
        try:
            if fmt == "csv":
                stream.write(to_csv(df).encode())
            else:
                df.to_parquet(stream, index=False, engine="pyarrow")
            stream.flush()
        except BrokenPipeError:  # `| head`: the reader has what it wanted
            return
        click.echo(f"wrote {len(df)} rows x {len(df.columns)} columns to standard output",
                   err=True)
        return
    out_path = Path(out)
    try:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_path.with_name(out_path.name + ".tmp")
        if fmt == "csv":
            to_csv(df, tmp)
        else:
            df.to_parquet(tmp, index=False, engine="pyarrow")
        tmp.replace(out_path)
    except OSError as exc:
        raise Failure(f"cannot write {out}: {exc}") from None
    click.echo(f"wrote {len(df)} rows x {len(df.columns)} columns to {out_path}", err=True)
