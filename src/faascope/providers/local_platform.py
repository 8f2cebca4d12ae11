"""Start, find and stop the local FaaS platform (the Go binary `faascope-platform`).

The platform keeps its state under a data directory; `platform.json` there records the
endpoint, pid and process identity (pid and start time) of the running one, so `faascope run`
and `faascope platform status` find a platform that `faascope platform start` started, detached
or in the foreground (which writes the file itself once serving and removes it when it ends),
and `faascope run` starts one itself when none runs. A file a killed platform left behind is
not believed: its pid must still be the process that wrote it, answering at its endpoint.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from faascope.binaries import RUNTIMES_DIR, platform_binary
from faascope.calibration import write_platform_calibration
from faascope.errors import BadInput, Failure
from faascope.processes import is_process, process_identity, stop_process

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


def unreachable(endpoint: str, timeout: float = 2.0) -> str | None:
    """Why nothing answers HTTP at ``endpoint`` (connection refused, no such host, timed out),
    or None when something does (an HTTP error status is an answer: a platform that wants a
    token answers 401)."""
    try:
        with urllib.request.urlopen(endpoint.rstrip("/") + "/faascope/health", timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None
    except urllib.error.URLError as exc:
        return str(exc.reason)
    except (OSError, ValueError) as exc:
        return str(exc)


def require_platform(endpoint: str, field: str = "provider.settings.endpoint_url") -> None:
    """BadInput (exit 2) when nothing listens at ``endpoint``, with the command that starts a
    platform there: a campaign sent to it would end in boto3's EndpointConnectionError."""
    why = unreachable(endpoint)
    if why is None:
        return
    url = urllib.parse.urlsplit(endpoint)
    try:
        port = url.port
    except ValueError:
        port = None
    port = port or (443 if url.scheme == "https" else 80)
    local = (url.hostname or "") in ("127.0.0.1", "localhost", "::1")
    raise BadInput(f"no local platform answers at {endpoint} ({why}); start one there with "
                   f"`faascope platform start --detach --port {port}`"
                   f"{'' if local else f' on {url.hostname}'}, or leave endpoint_url out and "
                   "`faascope run` starts one", field=field)


def running(data_dir: Path | None = None) -> dict | None:
    """The state of the platform started from data_dir, if it still answers."""
    data_dir = Path(data_dir or default_data_dir())
    try:
        state = json.loads(_state_file(data_dir).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or not isinstance(state.get("endpoint"), str):
        return None
    # A killed platform's file outlives it, and the kernel hands its pid on: the recorded pid
    # must still be the process recorded (same start time), when the file says which.
    if "identity" in state and not is_process(state.get("pid", 0), state["identity"]):
        return None
    h = health(state["endpoint"])
    if h is None or h.get("pid") != state.get("pid"):
        return None
    return state | {"health": h}


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether the platform could listen on host:port: a bind test as the platform binds, with
    SO_REUSEADDR as Go's net.Listen sets it on Linux. Without it a port whose last server
    stopped with clients connected reads as taken for TIME_WAIT's ~60 s (its old connections'
    endpoints), though the platform would bind it at once; a port a server listens on is
    refused either way."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


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


def platform_command(data_dir: Path, listen: str, profile: str, keep_alive: str, concurrency: int,
                     isolation: str, network: str, expose: str, net_shape: str,
                     shared_dir: Path | None, s3: dict | None,
                     calibration: Path | list | None = None,
                     front_end: bool = True,
                     ready_file: Path | None = None) -> tuple[list[str], dict[str, str]]:
    """The `faascope-platform` command line for a data directory, and its environment (S3 keys
    travel there, never in argv), for `start` (detached) and `faascope platform start`
    (foreground, exec'd). The calibrated profiles' figures (the packaged tables, with the
    user's ``calibration`` override files applied) are written to ``<data_dir>/calibration.json``
    and handed over with ``--calibration`` (docs/platform.md, "Calibrated profiles");
    ``front_end=False`` leaves the modelled front end out (``--no-front-end``). ``ready_file``:
    where the platform writes its state once serving (default ``platform.ready``, which
    :func:`start` copies to ``platform.json``)."""
    cmd = [str(platform_binary()), "--listen", listen, "--profile", profile,
           "--data-dir", str(data_dir / "platform"), "--keep-alive", keep_alive,
           "--concurrency", str(concurrency), "--isolation", isolation,
           "--ready-file", str(ready_file or data_dir / "platform.ready"),
           "--network", network, "--expose", expose, "--net-shape", net_shape,
           "--calibration", str(write_platform_calibration(data_dir, calibration, front_end=front_end)),
           "--runtimes-dir", str(RUNTIMES_DIR)]
    if os.environ.get("FAASCOPE_PLATFORM_TOKEN"):
        cmd.append("--require-token")
    if shared_dir:
        cmd += ["--shared-dir", str(shared_dir)]
    s3_args, s3_env = s3_source(s3)
    return cmd + s3_args, dict(os.environ, **s3_env)


def start(profile: str = "lambda", data_dir: Path | None = None, port: int | None = None,
          keep_alive: str = "5m", concurrency: int = 1000, isolation: str = "auto",
          listen_host: str = "127.0.0.1", wait_s: float = 15.0, expose: str = "",
          net_shape: str = "profile", shared_dir: Path | None = None, network: str = "isolated",
          s3: dict | None = None, calibration: Path | list | None = None,
          front_end: bool = True, by_run: bool = False) -> dict:
    """Start a detached platform and wait until it serves; returns its state. ``s3`` is the S3
    server it reads code packages from (:func:`s3_source`); None = none. ``calibration``: user
    files overriding the calibration tables (faascope.calibration.load_override); ``front_end``:
    whether the calibrated profiles' modelled front end is applied (docs/platform.md);
    ``by_run``: started by `faascope run` for a campaign, recorded as ``started_by_run`` in the
    state, so that runs stop it when the last one using it ends (faascope.providers.leftovers);
    a platform started otherwise is the user's and no run stops it."""
    if profile not in PROFILES:
        raise BadInput(f"{profile!r} is not one of {', '.join(PROFILES)}", field="--profile")
    data_dir = Path(data_dir or default_data_dir())
    data_dir.mkdir(parents=True, exist_ok=True)
    if port is None:
        port = DEFAULT_PORT if port_is_free(DEFAULT_PORT) else 0
    ready = data_dir / "platform.ready"
    ready.unlink(missing_ok=True)
    log = open(data_dir / "platform.log", "ab")
    cmd, env = platform_command(data_dir, f"{listen_host}:{port}", profile, keep_alive, concurrency,
                                isolation, network, expose, net_shape, shared_dir, s3, calibration,
                                front_end)
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                            start_new_session=True, env=env)
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
    state["identity"] = process_identity(proc.pid)
    if by_run:
        state["started_by_run"] = True
    _state_file(data_dir).write_text(json.dumps(state))
    return state


def foreground_command(data_dir: Path, *args, **kwargs) -> tuple[list[str], dict[str, str]]:
    """:func:`platform_command` for a platform this process becomes (``os.execve``: same pid,
    same start time): it writes ``platform.json`` itself once serving, with this process's
    identity, and removes it when it ends, so `faascope platform status` and `faascope run`
    find a foreground platform as they find a detached one."""
    data_dir = Path(data_dir)
    state = _state_file(data_dir)
    state.unlink(missing_ok=True)  # a killed platform's; this one writes its own when serving
    cmd, env = platform_command(data_dir, *args, ready_file=state, **kwargs)
    return cmd + ["--ready-extra", json.dumps({"identity": process_identity(os.getpid())})], env


def disown(data_dir: Path) -> None:
    """Make the platform of data_dir the user's: no run stops it (`faascope run
    --keep-platform` on a platform a run started)."""
    f = _state_file(Path(data_dir))
    try:
        state = json.loads(f.read_text())
    except (OSError, ValueError):
        return
    if state.pop("started_by_run", None) is not None:
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(f)


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
    stop_process(state["pid"], wait_s)
    _state_file(data_dir).unlink(missing_ok=True)
    return True


