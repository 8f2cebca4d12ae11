"""Start, find and stop the local FaaS platform (the Go binary `faascope-platform`).

The platform keeps its state under a data directory; `platform.json` there records the
endpoint and pid of the running one, so `faascope run` can reuse a platform that
`faascope platform start --detach` started, and start one itself when none runs.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import click

from faascope.binaries import platform_binary
from faascope.errors import BadInput, Failure

PROFILES = ("lambda", "gcf", "unlimited")
DEFAULT_PORT = 9001


def default_data_dir() -> Path:
    env = os.environ.get("FAASCOPE_DATA_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "faascope"


def _state_file(data_dir: Path) -> Path:
    return data_dir / "platform.json"


def health(endpoint: str, timeout: float = 2.0) -> dict | None:
    """The platform's /faascope/health document, or None if nothing answers."""
    req = urllib.request.Request(endpoint + "/faascope/health")
    if token := os.environ.get("FAASCOPE_PLATFORM_TOKEN"):
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.load(r)
    except (urllib.error.URLError, OSError, ValueError):
        return None


def running(data_dir: Path | None = None) -> dict | None:
    """The state of the platform started from data_dir, if it still answers."""
    data_dir = Path(data_dir or default_data_dir())
    try:
        state = json.loads(_state_file(data_dir).read_text())
    except (OSError, ValueError):
        return None
    h = health(state["endpoint"])
    if h is None or h.get("pid") != state.get("pid"):
        return None
    return state | {"health": h}


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def s3_source(s3: dict | None) -> tuple[list[str], dict[str, str]]:
    """The platform's arguments and environment for reading Code.S3Bucket/S3Key packages from
    an S3 server: ``s3`` has ``endpoint`` and optionally ``region``, ``access_key`` and
    ``secret_key`` (the S3 stand-in's ``extra``). Keys go through the environment, not argv
    (argv is world-readable in /proc)."""
    if not s3 or not s3.get("endpoint"):
        return [], {}
    env = {}
    if s3.get("access_key"):
        env = {"FAASCOPE_PLATFORM_S3_ACCESS_KEY_ID": s3["access_key"],
               "FAASCOPE_PLATFORM_S3_SECRET_ACCESS_KEY": s3.get("secret_key", "")}
    return ["--s3-endpoint", s3["endpoint"], "--s3-region", s3.get("region") or "us-east-1"], env


def saved_s3(data_dir: Path) -> dict | None:
    """The S3 stand-in `faascope standins start` left running for data_dir, as s3_source takes it."""
    from faascope import standins  # lazy: standins imports this module

    saved = standins.load(data_dir)
    if saved is None or "s3" not in saved.servers or not standins.alive(saved.servers["s3"]):
        return None
    s = saved.servers["s3"]
    return {"endpoint": s.endpoint, **{k: s.extra.get(k) for k in ("region", "access_key", "secret_key")}}


def start(profile: str = "lambda", data_dir: Path | None = None, port: int | None = None,
          keep_alive: str = "5m", concurrency: int = 1000, isolation: str = "auto",
          listen_host: str = "127.0.0.1", wait_s: float = 15.0, expose: str = "",
          net_shape: str = "none", shared_dir: Path | None = None, network: str = "isolated",
          s3: dict | None = None) -> dict:
    """Start a detached platform and wait until it serves; returns its state. ``s3`` is the S3
    server it reads code packages from (:func:`s3_source`); None = none."""
    if profile not in PROFILES:
        raise BadInput(f"{profile!r} is not one of {', '.join(PROFILES)}", field="--profile")
    data_dir = Path(data_dir or default_data_dir())
    data_dir.mkdir(parents=True, exist_ok=True)
    if port is None:
        port = DEFAULT_PORT if _port_free(DEFAULT_PORT) else 0
    ready = data_dir / "platform.ready"
    ready.unlink(missing_ok=True)
    log = open(data_dir / "platform.log", "ab")
    cmd = [str(platform_binary()), "--listen", f"{listen_host}:{port}", "--profile", profile,
           "--data-dir", str(data_dir / "platform"), "--keep-alive", keep_alive,
           "--concurrency", str(concurrency), "--isolation", isolation, "--ready-file", str(ready),
           "--network", network, "--expose", expose, "--net-shape", net_shape]
    if os.environ.get("FAASCOPE_PLATFORM_TOKEN"):
        cmd.append("--require-token")
    if shared_dir:
        cmd += ["--shared-dir", str(shared_dir)]
    s3_args, s3_env = s3_source(s3)
    cmd += s3_args
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                            start_new_session=True, env=dict(os.environ, **s3_env))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if ready.exists():
            try:
                state = json.loads(ready.read_text())
                break
            except ValueError:
                pass  # written but not yet complete
        if proc.poll() is not None:
            tail = (data_dir / "platform.log").read_text(errors="replace")[-2000:]
            code = BadInput if proc.returncode == 2 else Failure
            raise code(f"the local platform exited with status {proc.returncode}:\n{tail}")
        time.sleep(0.05)
    else:
        proc.kill()
        raise Failure(f"the local platform did not start within {wait_s:.0f} s; see {data_dir / 'platform.log'}")
    _state_file(data_dir).write_text(json.dumps(state))
    return state


def ensure_running(profile: str = "lambda", data_dir: Path | None = None) -> str:
    """The endpoint URL of a running local platform, starting one when none answers."""
    state = running(data_dir) or start(profile=profile, data_dir=data_dir)
    return state["endpoint"]


def stop(data_dir: Path | None = None, wait_s: float = 15.0) -> bool:
    """Stop the platform started from data_dir; False if none was running."""
    data_dir = Path(data_dir or default_data_dir())
    state = running(data_dir)
    if state is None:
        _state_file(data_dir).unlink(missing_ok=True)
        return False
    pid = state["pid"]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    _state_file(data_dir).unlink(missing_ok=True)
    return True


def _alive(pid: int) -> bool:
    """Whether pid still runs; a zombie (exited, not yet reaped by its parent) does not."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False  # it was our child and has just been reaped
    except ChildProcessError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


# ---- command line ---------------------------------------------------------------------------

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
@click.option("--net-shape", default="none", show_default=True,
              help="Token-bucket shaping: none, lambda, or size=B,refill_ms=N[,one_time_burst=B][,peak=B/s].")
@click.option("--shared-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory mounted read-write at /mnt/shared in every sandbox (EFS stand-in).")
@click.option("--s3-endpoint", default=None,
              help="S3 server to read Code.S3Bucket/S3Key packages from (keys in $FAASCOPE_PLATFORM_S3_ACCESS_KEY_ID/"
                   "_SECRET_ACCESS_KEY). Default: the S3 stand-in `faascope standins start` runs, if any; 'none' = no S3.")
def start_command(profile, port, data_dir, detach, keep_alive, concurrency, isolation, network, expose,
                  net_shape, shared_dir, s3_endpoint):
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
    if detach:
        state = start(profile, data_dir, port, keep_alive, concurrency, isolation, expose=expose,
                      net_shape=net_shape, shared_dir=shared_dir, network=network, s3=s3)
        click.echo(f"local platform running at {state['endpoint']} (pid {state['pid']}, "
                   f"profile {state['profile']}, isolation {state['isolation']})")
        click.echo(f"  aws lambda list-functions --endpoint-url {state['endpoint']}")
        return
    # Foreground: become the platform, so Ctrl-C and service managers reach it directly.
    data_dir.mkdir(parents=True, exist_ok=True)
    cmd = [str(platform_binary()), "--listen", f"127.0.0.1:{DEFAULT_PORT if port is None else port}",
           "--profile", profile, "--data-dir", str(data_dir / "platform"), "--keep-alive", keep_alive,
           "--concurrency", str(concurrency), "--isolation", isolation,
           "--ready-file", str(data_dir / "platform.ready"), "--network", network, "--expose", expose,
           "--net-shape", net_shape] + (["--shared-dir", str(shared_dir)] if shared_dir else [])
    if os.environ.get("FAASCOPE_PLATFORM_TOKEN"):
        cmd.append("--require-token")
    s3_args, s3_env = s3_source(s3)
    cmd += s3_args
    sys.stdout.flush()
    os.execve(cmd[0], cmd, dict(os.environ, **s3_env))


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
