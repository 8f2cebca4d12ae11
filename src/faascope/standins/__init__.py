"""Local stand-ins for cloud storage and network: real servers on 127.0.0.1, started and
stopped by faascope (docs/storage.md).

- ``s3``: VersityGW (Apache-2.0), a real S3-compatible gateway that stores objects as plain
  files; built once with ``go install github.com/versity/versitygw/cmd/versitygw@v1.8.0`` and
  cached under the faascope data directory (or taken from PATH / ``FAASCOPE_VERSITYGW``).
- ``redis``: Debian's ``redis-server``, no persistence (the kv workload's ``redis`` backend).
- ``dynamodb``: moto's server mode (run by :mod:`faascope.standins.moto_server`, which refuses
  moto's own ``/moto-api/`` control API; Apache-2.0), a real HTTP server speaking DynamoDB's API
  (the kv workload's ``dynamodb`` backend), tables created on start.
- ``sink``: faascope's network sink (:mod:`faascope.standins.sink`), for the network workload.
- ``shared``: a directory, mode 1777, to hand to the local platform as ``--shared-dir``.

Each server keeps its data in its own temporary directory. ``start`` returns a
:class:`StandIns` record with endpoints, pids and the ``expose`` string for the platform
(``faascope:expose`` tag or ``--expose``), and writes it to ``<data dir>/standins.json`` so
``faascope standins stop`` finds detached servers again. Every server records what it is in
``extra["name"]`` and ``extra["version"]``, for the campaign's ``standins`` event.

``faascope run`` starts the ones a local campaign's payloads need by itself
(:mod:`faascope.standins.needs` decides which, :mod:`faascope.standins.wiring` starts them).

Shaped like the cloud (``start(shape=["lambda"])``, :mod:`faascope.standins.shaping`): a
``faascope-shaper`` process per shaped profile sits in front of the S3 and DynamoDB servers with
the calibrated request latency and S3's per-prefix rate limits, and the S3 server keeps its
objects in memory (a tmpfs of bounded size), so that object storage is not one shared disk: on
Lambda each function's own network is the limit, and the local platform's per-sandbox token
bucket plays that part.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from faascope import __version__
from faascope.binaries import shaper_binary
from faascope.errors import BadInput, Failure
from faascope.processes import stop_process
from faascope.providers.leftovers import unmount
from faascope.providers.local_platform import default_data_dir
from faascope.standins import shaping

VERSITYGW_MODULE = "github.com/versity/versitygw/cmd/versitygw"
VERSITYGW_VERSION = "v1.8.0"
KINDS = ("s3", "redis", "dynamodb", "sink", "shared")
#: the stand-ins' made-up keys; the local platform gives every function these as its execution
#: role's AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (agent/platform/env.go: FunctionAccessKeyID,
#: FunctionSecretAccessKey; tests/standins/test_keys.py holds them equal), which Lambda reserves.
#: The secret is not made from the key id, as an AWS role's is not.
DEFAULT_ACCESS_KEY = "faascope"
DEFAULT_SECRET_KEY = "LocalStandInSecretKey/NotAnAWSKey/000000"
DEFAULT_BUCKET = "faascope"
DEFAULT_REGION = "us-east-1"
#: the DynamoDB table every dynamodb stand-in has (hash key pk, type S, as the kv workload wants)
DEFAULT_TABLE = "faascope"
#: the most a shaped S3 stand-in keeps in memory (a tmpfs's size is a bound, not an allocation)
S3_MEMORY_BYTES = 4 * 1024 ** 3
#: how long a stand-in's server has to exit after SIGTERM before it is killed (seconds)
STOP_WAIT_S = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, what: str, log: Path, wait_s: float = 20.0) -> None:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise Failure(f"{what} exited with status {proc.returncode}: {_tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise Failure(f"{what} did not listen on 127.0.0.1:{port} within {wait_s:.0f} s: {_tail(log)}")


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-1500:]
    except OSError:
        return ""


# ------------------------------------------------------------------------------ VersityGW
def versitygw_binary(data_dir: Path | None = None, build: bool = True) -> Path:
    """The VersityGW binary: $FAASCOPE_VERSITYGW, else `versitygw` on PATH, else the cached
    build under the data directory, else built now with `go install` (a few minutes the first
    time; needs Go and the Go module proxy)."""
    env = os.environ.get("FAASCOPE_VERSITYGW")
    if env:
        if not Path(env).is_file():
            raise BadInput(f"{env} is not a file", field="FAASCOPE_VERSITYGW")
        return Path(env)
    on_path = shutil.which("versitygw")
    if on_path:
        return Path(on_path)
    caches = [Path(d) / "bin" / f"versitygw-{VERSITYGW_VERSION}"
              for d in dict.fromkeys(filter(None, (data_dir, default_data_dir())))]
    for cache in caches:
        if (cache / "versitygw").is_file():  # the default data dir's build serves any data dir
            return cache / "versitygw"
    cache = caches[0]
    target = cache / "versitygw"
    if not build:
        raise Failure(f"VersityGW is not built yet ({target}); run `faascope standins start --s3` once")
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(go).exists():
        raise Failure("building VersityGW needs Go (https://go.dev/dl)")
    cache.mkdir(parents=True, exist_ok=True)
    print(f"building VersityGW {VERSITYGW_VERSION} into {cache} (once)...", file=sys.stderr, flush=True)
    env = dict(os.environ, GOBIN=str(cache), CGO_ENABLED="0")
    r = subprocess.run([go, "install", f"{VERSITYGW_MODULE}@{VERSITYGW_VERSION}"], env=env,
                       capture_output=True, text=True, timeout=1800)
    if r.returncode != 0 or not target.is_file():
        raise Failure(f"go install {VERSITYGW_MODULE}@{VERSITYGW_VERSION} failed:\n{r.stderr[-2000:]}")
    return target


def versitygw_version(binary: Path) -> str:
    """The VersityGW module version a binary was built from. `versitygw --version` says "git" for
    a `go install` build, but every Go binary embeds its build info (the text `go version -m`
    prints), so it is read from there; "" when absent."""
    try:
        data = Path(binary).read_bytes()
    except OSError:
        return ""
    m = re.search(rb"mod\tgithub\.com/versity/versitygw\t(v[0-9][^\t\n]*)", data)
    return m.group(1).decode() if m else ""


# ------------------------------------------------------------------------------ records
@dataclass
class Server:
    kind: str
    pid: int | None
    port: int | None
    endpoint: str
    data: str
    log: str = ""
    extra: dict = field(default_factory=dict)


@dataclass
class StandIns:
    servers: dict[str, Server] = field(default_factory=dict)
    owned_dirs: list[str] = field(default_factory=list)
    #: profile -> kind -> the shaper in front of that server (shaping.PROFILE_SHAPING)
    shaped: dict[str, dict[str, Server]] = field(default_factory=dict)
    #: tmpfs mounts to unmount at stop (the shaped S3 stand-in's store)
    mounts: list[str] = field(default_factory=list)

    def servers_for(self, profile: str | None = None) -> dict[str, Server]:
        """The servers a function of ``profile`` talks to: the shaped ones where its profile has
        a shaper, else the servers themselves."""
        return {**self.servers, **self.shaped.get(profile or "", {})}

    @property
    def ports(self) -> list[int]:
        return [s.port for s in self.servers.values() if s.port]

    @property
    def expose(self) -> str:
        """The ports a sandbox must reach: the local platform's --expose / faascope:expose."""
        return ",".join(str(p) for p in self.ports)

    def expose_for(self, profile: str | None = None) -> str:
        """The ports a function of ``profile`` must reach (shaped ones for a shaped profile)."""
        return ",".join(str(s.port) for s in self.servers_for(profile).values() if s.port)

    def s3_settings(self, profile: str | None = None) -> dict:
        """Workload parameters for object/transfer/app against the local S3 stand-in."""
        s = self.servers_for(profile)["s3"]
        return {"endpoint": s.endpoint, "bucket": s.extra["bucket"], "region": s.extra["region"],
                "access_key_id": s.extra["access_key"], "secret_access_key": s.extra["secret_key"]}

    def function_env(self, profile: str | None = None) -> dict[str, str]:
        """Environment variables for a function (of ``profile``: its shaped endpoints) that uses
        these stand-ins (no secrets)."""
        env = {}
        servers = self.servers_for(profile)
        if "s3" in servers:
            s = servers["s3"]
            env.update(FAASCOPE_S3_ENDPOINT_URL=s.endpoint, FAASCOPE_S3_BUCKET=s.extra["bucket"])
        if "redis" in servers:
            env["FAASCOPE_REDIS_URL"] = servers["redis"].endpoint
        if "dynamodb" in servers:
            d = servers["dynamodb"]
            env.update(AWS_ENDPOINT_URL_DYNAMODB=d.endpoint, FAASCOPE_DYNAMODB_TABLE=d.extra["table"])
        if "sink" in servers:
            env["FAASCOPE_NETWORK_SINK"] = servers["sink"].endpoint
        if "shared" in servers:
            env["FAASCOPE_SHARED_DIR"] = "/mnt/shared"
        return env

    def describe(self) -> list[dict]:
        """What serves each stand-in: kind, server name, version, endpoint (no keys)."""
        return [{"kind": k, "server": s.extra.get("name", ""), "version": s.extra.get("version", ""),
                 "endpoint": s.endpoint} for k, s in self.servers.items()]

    def to_json(self) -> dict:
        return {"servers": {k: asdict(v) for k, v in self.servers.items()}, "owned_dirs": self.owned_dirs,
                "expose": self.expose, "mounts": self.mounts,
                "shaped": {p: {k: asdict(v) for k, v in by.items()} for p, by in self.shaped.items()}}

    @classmethod
    def from_json(cls, doc: dict) -> "StandIns":
        return cls(servers={k: Server(**v) for k, v in doc.get("servers", {}).items()},
                   owned_dirs=list(doc.get("owned_dirs", [])), mounts=list(doc.get("mounts", [])),
                   shaped={p: {k: Server(**v) for k, v in by.items()}
                           for p, by in doc.get("shaped", {}).items()})

    def processes(self) -> dict[int, str]:
        """The servers' and shapers' processes: pid -> what runs there."""
        out = {s.pid: f"{s.extra.get('name') or k} shaping {k} for {p}"
               for p, by in self.shaped.items() for k, s in by.items() if s.pid}
        return out | {s.pid: f"{s.extra.get('name') or k} ({k} stand-in)"
                      for k, s in self.servers.items() if s.pid}

    def stop(self) -> None:
        # shapers first (their clients see a closed port, not a backend error), then servers
        pids = [s.pid for by in self.shaped.values() for s in by.values()]
        pids += [s.pid for s in self.servers.values()]
        for pid in dict.fromkeys(p for p in pids if p):
            stop_process(pid, STOP_WAIT_S)
        for s in self.servers.values():
            if sock := s.extra.get("admin_socket"):
                shutil.rmtree(Path(sock).parent, ignore_errors=True)
        for m in self.mounts:
            unmount(m)
        for d in self.owned_dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.servers.clear()
        self.shaped.clear()
        self.mounts.clear()
        self.owned_dirs.clear()

    def __enter__(self) -> "StandIns":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()




def memory_store(work: Path, st: "StandIns", size: int = S3_MEMORY_BYTES) -> tuple[Path, str]:
    """A directory in memory for the S3 stand-in's objects, and what it is: a tmpfs of ``size``
    bytes mounted for it (root), else a directory in /dev/shm (bounded by /dev/shm's own size),
    else the work directory on disk. Recorded for stop (unmount, remove)."""
    d = work / "s3-memory"
    if os.geteuid() == 0 and shutil.which("mount"):
        d.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={int(size)},mode=0700", "faascope-s3", str(d)],
                           capture_output=True, text=True)
        if r.returncode == 0:
            st.mounts.append(str(d))
            return d, f"tmpfs ({int(size)} B)"
    if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK):
        shm = Path(tempfile.mkdtemp(prefix="faascope-s3-", dir="/dev/shm"))
        st.owned_dirs.append(str(shm))
        return shm, "/dev/shm"
    return work, "disk"


def _spawn(cmd: list[str], log: Path) -> subprocess.Popen:
    with open(log, "ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True)


# ------------------------------------------------------------------------------ servers
def start_s3(work: Path, port: int | None = None, bucket: str = DEFAULT_BUCKET,
             access_key: str = DEFAULT_ACCESS_KEY, secret_key: str = DEFAULT_SECRET_KEY,
             region: str = DEFAULT_REGION, data_dir: Path | None = None,
             store: Path | None = None, store_kind: str = "disk") -> Server:
    """VersityGW on 127.0.0.1; objects and their metadata under ``store`` (default ``work``)."""
    binary = versitygw_binary(data_dir)
    store = store or work
    root = store / "s3"
    root.mkdir(parents=True, exist_ok=True)
    (root / bucket).mkdir(exist_ok=True)  # the posix backend: a bucket is a top-level directory
    port = port or free_port()
    log = work / "versitygw.log"
    # --keep-alive: without it VersityGW answers every request with "Connection: close", and
    # each request then costs a new TCP connection (and, from a sandbox, a new relay) on the host
    # --admin-port: without it VersityGW serves its admin API (PATCH /create-user, /list-users,
    # /change-bucket-owner, ...) on the S3 port, where a function holding the keys could use it;
    # S3 has no such API. A Unix socket in a directory only this user may enter keeps it
    # unreachable from every sandbox, in every network mode (host networking included).
    admin = admin_socket(work)
    env_cmd = [str(binary), "--port", f"127.0.0.1:{port}", "--admin-port", str(admin),
               "--region", region, "--quiet", "--keep-alive",
               "posix", "--sidecar", str(store / "sidecar"), str(root)]
    (store / "sidecar").mkdir(exist_ok=True)
    # Credentials through the environment, not argv (argv is world-readable in /proc).
    with open(log, "ab") as out:
        proc = subprocess.Popen(env_cmd, stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True,
                                env=dict(os.environ, ROOT_ACCESS_KEY_ID=access_key, ROOT_SECRET_ACCESS_KEY=secret_key))
    _wait_port(port, proc, "VersityGW", log)
    endpoint = f"http://127.0.0.1:{port}"
    ensure_bucket(endpoint, bucket, access_key, secret_key, region)
    version = versitygw_version(binary)
    return Server("s3", proc.pid, port, endpoint, str(root), str(log),
                  {"bucket": bucket, "region": region, "access_key": access_key, "secret_key": secret_key,
                   "server": f"versitygw {version}", "name": "versitygw", "version": version,
                   "store": store_kind, "admin_socket": str(admin)})


#: longest path a Unix socket's address takes (sun_path: 108 bytes with its NUL), less margin
SOCKET_PATH_MAX = 100


def admin_socket(work: Path) -> Path:
    """Where the S3 stand-in's admin API listens: a Unix socket in a mode-0700 directory of the
    work directory, or, where that path is too long for a socket address, of a new directory
    in the system's temporary directory (removed with the server's work by :meth:`StandIns.stop`
    through ``extra["admin_socket"]``)."""
    d = work / "admin"
    if len(str(d / "vgw.sock")) > SOCKET_PATH_MAX:
        d = Path(tempfile.mkdtemp(prefix="faascope-vgw-"))
    d.mkdir(mode=0o700, exist_ok=True)
    os.chmod(d, 0o700)
    sock = d / "vgw.sock"
    sock.unlink(missing_ok=True)  # a killed server's
    return sock


def ensure_bucket(endpoint: str, bucket: str, access_key: str = DEFAULT_ACCESS_KEY,
                  secret_key: str = DEFAULT_SECRET_KEY, region: str = DEFAULT_REGION) -> None:
    import boto3  # lazy: boto3 takes ~0.3 s to import, `faascope standins --help` need not pay it
    from botocore.config import Config

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=region, aws_access_key_id=access_key,
                      aws_secret_access_key=secret_key,
                      config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 3}))
    try:
        s3.head_bucket(Bucket=bucket)
    except Exception:  # noqa: BLE001 - any failure: try to create it
        s3.create_bucket(Bucket=bucket)


#: What a function may run on the Redis stand-in: what ElastiCache lets a client run. ElastiCache
#: restricts the commands that need advanced privileges (AWS, "Restricted Redis OSS commands":
#: bgrewriteaof, bgsave, config, debug, migrate, module, psync, replicaof, save, shutdown, slaveof,
#: sync) and manages users itself; without this a function's ``CONFIG SET requirepass`` locked
#: every other function and the host out (issue #29). The stand-in's one user is every client,
#: the host's too: faascope itself needs none of these commands.
REDIS_CLIENT_ACL = ("default on nopass ~* &* +@all -bgrewriteaof -bgsave -config -debug -migrate -module "
                    "-psync -replicaof -save -shutdown -slaveof -sync -failover "
                    "-acl|setuser -acl|deluser -acl|load -acl|save -acl|dryrun")


def start_redis(work: Path, port: int | None = None) -> Server:
    binary = shutil.which("redis-server")
    if not binary:
        raise Failure("redis-server is not installed (Debian: apt-get install redis-server; scripts/setup.sh does it)")
    d = work / "redis"
    d.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log = work / "redis.log"
    proc = _spawn([binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(d), "--save", "",
                   "--appendonly", "no", "--protected-mode", "yes", "--daemonize", "no",
                   "--logfile", str(log), "--user", *REDIS_CLIENT_ACL.split()], log)
    _wait_port(port, proc, "redis-server", log)
    version = _redis_version(binary)
    return Server("redis", proc.pid, port, f"redis://127.0.0.1:{port}/0", str(d), str(log),
                  {"server": "redis-server " + version, "name": "redis-server", "version": version})


def _redis_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
        return next((w[2:] for w in out.split() if w.startswith("v=")), "")
    except (OSError, subprocess.SubprocessError):
        return ""


def start_dynamodb(work: Path, port: int | None = None, tables: tuple[str, ...] = (DEFAULT_TABLE,),
                   region: str = DEFAULT_REGION) -> Server:
    """moto in server mode, in its own process (so a detached one outlives this command and is
    stopped by pid like the others), with ``tables`` created."""
    port = port or free_port()
    log = work / "moto.log"
    work.mkdir(parents=True, exist_ok=True)
    # moto.server behind a check that refuses moto's own control API (/moto-api/: reset,
    # dashboard, state manager), which DynamoDB does not have (standins/moto_server.py)
    proc = _spawn([sys.executable, "-m", "faascope.standins.moto_server", "-H", "127.0.0.1",
                   "-p", str(port)], log)
    _wait_port(port, proc, "moto server", log, wait_s=60.0)
    endpoint = f"http://127.0.0.1:{port}"
    names = list(dict.fromkeys((DEFAULT_TABLE, *tables)))
    for t in names:
        ensure_table(endpoint, t, region)
    return Server("dynamodb", proc.pid, port, endpoint, "", str(log),
                  {"name": "moto", "version": importlib.metadata.version("moto"), "table": DEFAULT_TABLE,
                   "tables": names, "region": region, "server": "moto " + importlib.metadata.version("moto")})


def ensure_table(endpoint: str, table: str, region: str = DEFAULT_REGION) -> None:
    """A table with hash key ``pk`` (S), the kv workload's item layout, on demand billing."""
    import boto3  # lazy: as in ensure_bucket
    from botocore.config import Config

    ddb = boto3.client("dynamodb", endpoint_url=endpoint, region_name=region,
                       aws_access_key_id=DEFAULT_ACCESS_KEY, aws_secret_access_key=DEFAULT_SECRET_KEY,
                       config=Config(retries={"total_max_attempts": 3}))
    try:
        ddb.describe_table(TableName=table)
    except ddb.exceptions.ResourceNotFoundException:
        ddb.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])


def start_sink(work: Path, port: int | None = None) -> Server:
    port = port or free_port()
    log = work / "sink.log"
    proc = _spawn([sys.executable, "-m", "faascope.standins.sink", "--port", str(port)], log)
    _wait_port(port, proc, "faascope sink", log)
    return Server("sink", proc.pid, port, f"127.0.0.1:{port}", "", str(log),
                  {"protocol": "faascope-sink/1", "name": "faascope-sink", "version": "1"})


def make_shared(path: Path | None, work: Path) -> Server:
    p = Path(path) if path else work / "shared"
    p.mkdir(parents=True, exist_ok=True)
    os.chmod(p, 0o1777)  # functions run as uid 1051, like Lambda's sbx_user1051
    return Server("shared", None, None, str(p), str(p), extra={"name": "directory", "version": ""})


def start_shaper(st: StandIns, profile: str, work: Path, ports: dict[str, int] | None = None,
                 seed: int = 0, calibration_file: Path | None = None) -> dict[str, Server]:
    """A ``faascope-shaper`` for ``profile`` in front of st's S3 and DynamoDB servers (one
    process, one port per server), recorded in ``st.shaped[profile]``; {} for an unshaped
    profile or when st has neither server."""
    sh = shaping.shaping_for(profile)
    kinds = [k for k in shaping.SHAPED_KINDS if k in st.servers]
    if sh is None or not kinds:
        return {}
    table = shaping.load(sh, calibration_file)
    ports = ports or {}
    listen = {k: ports.get(k) or free_port() for k in kinds}
    routes = [shaping.route(k, listen[k], st.servers[k].endpoint, table) for k in kinds]
    work.mkdir(parents=True, exist_ok=True)
    conf = work / f"shaper-{profile}.json"
    conf.write_text(json.dumps(shaping.config(routes, seed), indent=2))
    log = work / f"shaper-{profile}.log"
    proc = _spawn([str(shaper_binary()), "--config", str(conf)], log)
    for k in kinds:
        _wait_port(listen[k], proc, "faascope-shaper", log)
    detail = shaping.describe(sh, table, {k: f"http://127.0.0.1:{listen[k]}" for k in kinds})
    out = {}
    for k in kinds:
        backend = st.servers[k]
        out[k] = Server(k, proc.pid, listen[k], f"http://127.0.0.1:{listen[k]}", backend.data, str(log),
                        {**backend.extra, "name": "faascope-shaper", "version": __version__,
                         "server": f"faascope-shaper {__version__} -> {backend.extra.get('server', '')}",
                         "backend": backend.endpoint, "shaping": detail})
    st.shaped[profile] = out
    return out


def start(kinds=KINDS, data_dir: Path | None = None, work_dir: Path | None = None,
          ports: dict[str, int] | None = None, shared_dir: Path | None = None,
          bucket: str = DEFAULT_BUCKET, tables: tuple[str, ...] = (DEFAULT_TABLE,),
          shape: tuple[str, ...] = (), s3_memory_bytes: int = S3_MEMORY_BYTES,
          shape_ports: dict[str, int] | None = None, calibration_file: Path | None = None,
          memory: bool | None = None,
          on_change: Callable[[StandIns], None] | None = None) -> StandIns:
    """Start the chosen stand-ins, with a shaper in front of S3 and DynamoDB for each profile in
    ``shape`` that is shaped; the S3 server's objects in memory when ``memory`` (default: when
    a profile is shaped). On any failure the ones already started are stopped. ``on_change``
    is called after each server, mount or directory is added (a run writes down what it owns
    as it goes: faascope.providers.leftovers)."""
    noted = on_change or (lambda st: None)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise BadInput(f"unknown stand-in {unknown[0]!r} (one of {', '.join(KINDS)})", field="kinds")
    shaped_profiles = [p for p in dict.fromkeys(shape) if shaping.shaping_for(p) is not None]
    ports = ports or {}
    st = StandIns()
    if work_dir is None:
        work = Path(tempfile.mkdtemp(prefix="faascope-standins-"))
        st.owned_dirs.append(str(work))
        noted(st)
    else:
        work = Path(work_dir)
        work.mkdir(parents=True, exist_ok=True)
    try:
        if "s3" in kinds:
            in_memory = bool(shaped_profiles) if memory is None else memory
            store, store_kind = memory_store(work, st, s3_memory_bytes) if in_memory else (work, "disk")
            noted(st)
            st.servers["s3"] = start_s3(work, ports.get("s3"), bucket=bucket, data_dir=data_dir,
                                        store=store, store_kind=store_kind)
            noted(st)
        if "redis" in kinds:
            st.servers["redis"] = start_redis(work, ports.get("redis"))
            noted(st)
        if "dynamodb" in kinds:
            st.servers["dynamodb"] = start_dynamodb(work, ports.get("dynamodb"), tables)
            noted(st)
        if "sink" in kinds:
            st.servers["sink"] = start_sink(work, ports.get("sink"))
            noted(st)
        if "shared" in kinds:
            st.servers["shared"] = make_shared(shared_dir, work)
        for p in shaped_profiles:
            start_shaper(st, p, work, ports=shape_ports, calibration_file=calibration_file)
            noted(st)
    except BaseException:
        st.stop()
        raise
    return st


def state_file(data_dir: Path | None) -> Path:
    return Path(data_dir or default_data_dir()) / "standins.json"


def save(st: StandIns, data_dir: Path | None = None) -> Path:
    f = state_file(data_dir)
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(st.to_json(), indent=2))
    os.chmod(f, 0o600)  # holds the local S3 stand-in's (made-up) keys
    return f


def load(data_dir: Path | None = None) -> StandIns | None:
    try:
        return StandIns.from_json(json.loads(state_file(data_dir).read_text()))
    except (OSError, ValueError):
        return None


def stop_saved(data_dir: Path | None = None) -> bool:
    st = load(data_dir)
    if st is None:
        return False
    st.stop()
    state_file(data_dir).unlink(missing_ok=True)
    return True


def alive(server: Server) -> bool:
    if server.port is None:
        return Path(server.endpoint).is_dir()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=0.5):
            return True
    except OSError:
        return False
