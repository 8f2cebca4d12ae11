"""`faascope standins start|stop|status`: the local storage and network stand-ins."""
from __future__ import annotations

import json
from pathlib import Path

import click

from faascope import standins
from faascope.errors import BadInput


@click.group("standins")
def standins_group():
    """Local stand-ins for cloud storage and network: VersityGW (S3 API), redis-server, moto
    (DynamoDB API), the faascope network sink, and a shared directory, all on 127.0.0.1.
    `faascope run` starts the ones a local campaign needs by itself; these commands are for
    using them by hand."""


@standins_group.command("start")
@click.option("--only", default=",".join(standins.KINDS), show_default=True,
              help="Comma-separated stand-ins to start: " + ", ".join(standins.KINDS) + ".")
@click.option("--data-dir", type=click.Path(path_type=Path), help="faascope's data directory (state, VersityGW build).")
@click.option("--work-dir", type=click.Path(path_type=Path), help="Where the servers keep their data (default: a new temp dir).")
@click.option("--shared-dir", type=click.Path(path_type=Path), help="The shared directory (default: under the work dir).")
@click.option("--s3-port", type=int, help="Port for the S3 server (default: a free one).")
@click.option("--redis-port", type=int)
@click.option("--dynamodb-port", type=int)
@click.option("--sink-port", type=int)
@click.option("--bucket", default=standins.DEFAULT_BUCKET, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def start_command(only, data_dir, work_dir, shared_dir, s3_port, redis_port, dynamodb_port, sink_port, bucket,
                  fmt):
    """Start the stand-ins detached and print their endpoints and the ports to expose."""
    kinds = [k.strip() for k in only.split(",") if k.strip()]
    bad = [k for k in kinds if k not in standins.KINDS]
    if bad:
        raise BadInput(f"unknown stand-in {bad[0]!r} (one of {', '.join(standins.KINDS)})", field="--only")
    if standins.load(data_dir):
        standins.stop_saved(data_dir)
    ports = {k: v for k, v in (("s3", s3_port), ("redis", redis_port), ("dynamodb", dynamodb_port),
                               ("sink", sink_port)) if v}
    st = standins.start(kinds, data_dir=data_dir, work_dir=work_dir, ports=ports, shared_dir=shared_dir, bucket=bucket)
    standins.save(st, data_dir)
    if fmt == "json":
        click.echo(json.dumps(st.to_json(), indent=2))
        return
    for kind, s in st.servers.items():
        click.echo(f"{kind:8s} {s.endpoint}" + (f"  (pid {s.pid})" if s.pid else ""))
    if "s3" in st.servers:
        e = st.servers["s3"].extra
        click.echo(f"        bucket {e['bucket']}, region {e['region']}, access key {e['access_key']} "
                   f"(secret in {standins.state_file(data_dir)})")
    shared = f" --shared-dir {st.servers['shared'].endpoint}" if "shared" in st.servers else ""
    click.echo(f"platform: faascope platform start --port 9002 --expose {st.expose}{shared}")
    click.echo("function environment: " + " ".join(f"{k}={v}" for k, v in st.function_env().items()))
    if "dynamodb" in st.servers:
        click.echo(f"        table {st.servers['dynamodb'].extra['table']} (hash key pk, S); any keys")


@standins_group.command("stop")
@click.option("--data-dir", type=click.Path(path_type=Path))
def stop_command(data_dir):
    """Stop the stand-ins that `faascope standins start` started."""
    click.echo("stopped" if standins.stop_saved(data_dir) else "no stand-ins were running")


@standins_group.command("status")
@click.option("--data-dir", type=click.Path(path_type=Path))
def status_command(data_dir):
    """Show the stand-ins and whether each still answers."""
    st = standins.load(data_dir)
    if st is None:
        click.echo("no stand-ins started")
        return
    for kind, s in st.servers.items():
        click.echo(f"{kind:8s} {s.endpoint:32s} {'up' if standins.alive(s) else 'DOWN'}")
