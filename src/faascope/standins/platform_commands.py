"""`faascope platform start|stop|status`: the built-in local FaaS platform from the command line.

The commands sit in the stand-ins' layer, above the platform's own module
(providers/local_platform.py), because `platform start` reads Code.S3Bucket/S3Key packages from
the S3 stand-in that `faascope standins start` runs, when the user gives no --s3-endpoint."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from faascope import standins
from faascope.errors import BadInput
from faascope.providers.local_platform import (DEFAULT_PORT, PROFILES, default_data_dir,
                                               foreground_command, port_is_free, running, start,
                                               stop)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def saved_s3(data_dir: Path) -> dict | None:
    """The S3 stand-in `faascope standins start` left running for data_dir, as s3_source takes it."""
    saved = standins.load(data_dir)
    if saved is None or "s3" not in saved.servers or not standins.alive(saved.servers["s3"]):
        return None
    s = saved.servers["s3"]
    return {"endpoint": s.endpoint, **{k: s.extra.get(k) for k in ("region", "access_key", "secret_key")}}


data_dir_option = click.option("--data-dir", type=click.Path(path_type=Path), default=None,
                               help="State directory (default $FAASCOPE_DATA_DIR or ~/.cache/faascope).")


@click.group("platform")
def platform_group():
    """The built-in local FaaS platform (AWS Lambda API on loopback, real limits)."""


@platform_group.command("start")
@click.option("--profile", type=click.Choice(PROFILES), default="lambda", show_default=True,
              help="Default sandbox profile; functions may pick theirs with the faascope:profile tag.")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help=f"Port of the Lambda API on 127.0.0.1 (default {DEFAULT_PORT}; 0 = any free port).")
@data_dir_option
@click.option("--detach", is_flag=True, help="Run in the background and return.")
@click.option("--keep-alive", default="5m", show_default=True, help="Idle time before an instance is evicted (Go duration: 30s, 5m).")
@click.option("--concurrency", type=click.IntRange(1), default=1000, show_default=True, help="Account concurrency limit (throttles beyond).")
@click.option("--isolation", type=click.Choice(["auto", "namespaces", "none"]), default="auto", show_default=True,
              help="namespaces = real CPU/memory//tmp limits (root); none = plain processes.")
@click.option("--network", type=click.Choice(["isolated", "host"]), default="isolated", show_default=True,
              help="isolated = a network namespace per sandbox reaching only exposed ports.")
@click.option("--expose", default="", help="Host loopback ports every sandbox may reach, e.g. 9000,6379.")
@click.option("--net-shape", default="profile", show_default=True,
              help="Token-bucket shaping: profile (each sandbox its profile's calibrated bucket: lambda's from its table, none for unlimited), none, lambda, or size=B,refill_ms=N[,one_time_burst=B][,peak=B/s].")
@click.option("--shared-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory mounted read-write at /mnt/shared in every sandbox (EFS stand-in).")
@click.option("--s3-endpoint", default=None,
              help="S3 server to read Code.S3Bucket/S3Key packages from (keys in $FAASCOPE_PLATFORM_S3_ACCESS_KEY_ID/"
                   "_SECRET_ACCESS_KEY). Default: the S3 stand-in `faascope standins start` runs, if any; 'none' = no S3.")
@click.option("--calibration", "calibration", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="A file (YAML or JSON) overriding a calibration table: 'extends: platform-lambda' and "
                   "'entries: {tmp_read_iops: {value: 5000, unit: IOPS, source: ...}}'; repeat for several tables.")
@click.option("--front-end/--no-front-end", "front_end", default=True, show_default=True,
              help="Add the calibrated profiles' modelled front end (the cloud's request path, 18 ms: "
                   "STeLLAR's warm median) to every invocation's client latency, outside its Duration.")
def start_command(profile, port, data_dir, detach, keep_alive, concurrency, isolation, network, expose,
                  net_shape, shared_dir, s3_endpoint, calibration, front_end):
    """Start the local platform."""
    data_dir = Path(data_dir or default_data_dir())
    current = running(data_dir)
    if current:
        raise BadInput(f"a platform already runs at {current['endpoint']} (pid {current['pid']}); "
                       "stop it first with `faascope platform stop`", field="--data-dir")
    if s3_endpoint is None:
        s3 = saved_s3(data_dir)
    elif s3_endpoint == "none":
        s3 = None
    else:
        s3 = {"endpoint": s3_endpoint, "access_key": os.environ.get("FAASCOPE_PLATFORM_S3_ACCESS_KEY_ID"),
              "secret_key": os.environ.get("FAASCOPE_PLATFORM_S3_SECRET_ACCESS_KEY")}
    chosen = port
    if port is None and not port_is_free(DEFAULT_PORT):
        chosen = 0 if detach else free_port()
        click.secho(f"WARNING: port {DEFAULT_PORT} is taken on 127.0.0.1; the platform listens on "
                    f"{'another free port (below)' if detach else chosen} instead. Point clients "
                    f"at that endpoint (faascope itself finds it through --data-dir).",
                    fg="yellow", bold=True, err=True)
    elif port and not port_is_free(port):
        raise BadInput(f"port {port} is taken on 127.0.0.1; choose another, or --port 0 for any "
                       "free port", field="--port")
    if detach:
        state = start(profile, data_dir, chosen, keep_alive, concurrency, isolation, expose=expose,
                      net_shape=net_shape, shared_dir=shared_dir, network=network, s3=s3,
                      calibration=list(calibration), front_end=front_end)
        click.echo(f"local platform running at {state['endpoint']} (pid {state['pid']}, "
                   f"profile {state['profile']}, isolation {state['isolation']})")
        click.echo(f"  aws lambda list-functions --endpoint-url {state['endpoint']}")
        return
    # Foreground: become the platform, so Ctrl-C and service managers reach it directly.
    data_dir.mkdir(parents=True, exist_ok=True)
    cmd, env = foreground_command(data_dir, f"127.0.0.1:{DEFAULT_PORT if chosen is None else chosen}", profile,
                                  keep_alive, concurrency, isolation, network, expose, net_shape, shared_dir, s3,
                                  list(calibration), front_end)
    sys.stdout.flush()
    os.execve(cmd[0], cmd, env)


@platform_group.command("stop")
@data_dir_option
def stop_command(data_dir):
    """Stop the local platform and destroy its sandboxes."""
    if stop(data_dir):
        click.echo("local platform stopped")
    else:
        click.echo("no local platform was running")


@platform_group.command("status")
@data_dir_option
def status_command(data_dir):
    """Show whether the local platform runs, and how."""
    state = running(data_dir)
    if state is None:
        click.echo("not running")
        raise SystemExit(1)
    click.echo(json.dumps(state["health"], indent=2))
