"""`faascope export RESULTS --format csv|parquet --out FILE`: the flat view, one row per
invocation (warm-ups included and flagged in the ``warmup`` column)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import click

from faascope.errors import BadInput, Failure


def read_flat(results: str | Path, include_warmups: bool = True):
    """The ``invocations_flat`` view of a results file as a pandas DataFrame."""
    import pandas as pd

    from faascope.store.sqlite import StoreError, open_existing

    try:
        store = open_existing(results)
    except FileNotFoundError:
        raise BadInput(f"no such results file: {results}", field="RESULTS") from None
    except (StoreError, sqlite3.DatabaseError) as exc:
        raise BadInput(f"{results} is not a faascope results file ({exc})", field="RESULTS") from None
    try:
        if store.campaign() is None:
            raise BadInput(f"{results} holds no campaign", field="RESULTS")
        sql = "SELECT * FROM invocations_flat"
        if not include_warmups:
            sql += " WHERE warmup = 0"
        return pd.read_sql_query(sql, store.conn)
    finally:
        store.close()


@click.command("export")
@click.argument("results", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), required=True,
              help="Output format.")
@click.option("--out", "out", type=click.Path(dir_okay=False, writable=True), required=True,
              help="File to write.")
@click.option("--no-warmups", is_flag=True, default=False,
              help="Leave out the warm-up invocations (kept by default, flagged warmup=1).")
def export_command(results, fmt, out, no_warmups):
    """Export a results file's invocations, one flat row each, to CSV or Parquet."""
    df = read_flat(results, include_warmups=not no_warmups)
    out_path = Path(out)
    try:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_path.with_name(out_path.name + ".tmp")
        if fmt == "csv":
            df.to_csv(tmp, index=False)
        else:
            df.to_parquet(tmp, index=False, engine="pyarrow")
        tmp.replace(out_path)
    except OSError as exc:
        raise Failure(f"cannot write {out}: {exc}") from None
    click.echo(f"wrote {len(df)} rows x {len(df.columns)} columns to {out_path}", err=True)
