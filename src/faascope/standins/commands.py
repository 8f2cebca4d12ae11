"""`faascope standins start|stop|status`: the local storage and network stand-ins."""
from __future__ import annotations

import json
from pathlib import Path

import click

from faascope import standins
from faascope.errors import BadInput
from faascope.providers.local_platform import PROFILES
from faascope.standins import shaping


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
@click.option("--shape", "shape", default="", metavar="PROFILES",
              help="Comma-separated sandbox profiles (" + ", ".join(PROFILES) + ") to put a shaper in front of "
                   "S3 and DynamoDB for: the cloud's request latency and S3's per-prefix rate limits, from "
                   f"the {shaping.TABLE} calibration table (unlimited: none). Objects are then kept in memory.")
@click.option("--shape-port", type=int, help="Port of the shaped S3 endpoint (one shaped profile only; "
                                              "DynamoDB's shaper takes a free port).")
@click.option("--calibration", "calibration_file", type=click.Path(dir_okay=False, path_type=Path),
              help=f"A file that extends {shaping.TABLE} (overrides some of its figures).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def start_command(only, data_dir, work_dir, shared_dir, s3_port, redis_port, dynamodb_port, sink_port, bucket,
                  shape, shape_port, calibration_file, fmt):
    """Start the stand-ins detached and print their endpoints and the ports to expose."""
    kinds = [k.strip() for k in only.split(",") if k.strip()]
    bad = [k for k in kinds if k not in standins.KINDS]
    if bad:
        raise BadInput(f"unknown stand-in {bad[0]!r} (one of {', '.join(standins.KINDS)})", field="--only")
    profiles = [p.strip() for p in shape.split(",") if p.strip()]
    for p in profiles:
        shaping.shaping_for(p, field="--shape")
    shaped = [p for p in profiles if shaping.shaping_for(p) is not None]
    if shape_port and len(shaped) != 1:
        raise BadInput("needs exactly one shaped profile in --shape", field="--shape-port")
    if calibration_file is not None and not calibration_file.is_file():
        raise BadInput(f"{calibration_file} is not a file", field="--calibration")
    if standins.load(data_dir):
        standins.stop_saved(data_dir)
    ports = {k: v for k, v in (("s3", s3_port), ("redis", redis_port), ("dynamodb", dynamodb_port),
                               ("sink", sink_port)) if v}
    st = standins.start(kinds, data_dir=data_dir, work_dir=work_dir, ports=ports, shared_dir=shared_dir, bucket=bucket,
                        shape=tuple(shaped), shape_ports={"s3": shape_port} if shape_port else None,
                        calibration_file=calibration_file)
    standins.save(st, data_dir)
    if fmt == "json":
        click.echo(json.dumps(st.to_json(), indent=2))
        return
    for kind, s in st.servers.items():
        click.echo(f"{kind:8s} {s.endpoint}" + (f"  (pid {s.pid})" if s.pid else ""))
    for profile, by in st.shaped.items():
        for kind, s in by.items():
            click.echo(f"{kind:8s} {s.endpoint}  shaped for {profile} ({s.extra['shaping']['table']}, "
                       f"{s.extra['shaping']['role']}; "
                       f"pid {s.pid})")
    if "s3" in st.servers:
        e = st.servers["s3"].extra
        click.echo(f"        bucket {e['bucket']}, region {e['region']}, access key {e['access_key']} "
                   f"(secret in {standins.state_file(data_dir)})")
    shared = f" --shared-dir {st.servers['shared'].endpoint}" if "shared" in st.servers else ""
    profile = shaped[0] if len(shaped) == 1 else None
    click.echo(f"platform: faascope platform start --port 9002 --expose {st.expose_for(profile)}{shared}"
               + (f" --profile {profile}" if profile else ""))
    click.echo("function environment: " + " ".join(f"{k}={v}" for k, v in st.function_env(profile).items()))
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
    for profile, by in st.shaped.items():
        for kind, s in by.items():
            click.echo(f"{kind:8s} {s.endpoint:32s} {'up' if standins.alive(s) else 'DOWN'}  shaped for {profile}")
