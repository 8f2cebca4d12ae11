"""A duration estimate for a plan: the wall time of ``faascope run`` (documented in docs/specs.md,
"The duration model").

Every figure of a cloud or of a calibrated local profile (the lambda profile's /tmp limits, each
profile's modelled cold start, Lambda's network token bucket, the shaped stand-ins' and the
cloud's request latencies, the shared file system's budget) is read from the calibration tables
by :mod:`faascope.designs.model_inputs`, the one source the platform and the stand-ins use; the
estimate lists them under ``inputs``. The constants here are this machine's own (the driver,
the sandbox, the page cache, the CPU), measured on the development machine's local platform.

    total = start + [packaging + stand-ins] + per configuration (deployment + first cold start)
            + per invocation (overhead + front end + [forced cold start] + workload) + waits

- start 3 s; locally packaging the agent 1.5 s and 1 s per stand-in server;
- deployment: local 0.5 s, cloud 10 s; overhead: the round trip of a warm invocation and the
  driver's own time around it (local 9 ms, cloud 60 ms);
- cold start: local 0.25 s (sandbox set-up, runtime start) + the profile's modelled part
  (``cold_start_fixed``, the package at ``cold_start_fetch_rate``); cloud 1.5 s;
- workload, by kind (``cpu`` is the share of a CPU the function gets: lambda memory/1769 MB,
  gcf the tier table, capped at 1; "bytes at the network rate" is :func:`network_seconds`):
  - noop: 0; spin: iterations x 4 ns / cpu;
  - fileio with ops = ceil(file_size / io_size):
      buffered write: ops x 3 us / cpu + bytes / 0.3 GB/s (+ fsync end: bytes / 150 MB/s on a
        disk; fsync every: 1 ms per op);
      buffered read (also "direct" on a tmpfs /tmp: the gcf profile and GCF/Cloud Run, which
        have no O_DIRECT): ops x 1 us / cpu + bytes / 3 GB/s;
      O_DIRECT read from disk: ops x 42 us + bytes / 1.5 GB/s;
      a read's preparation (inside the invocation, outside the timed region): bytes / 0.4 GB/s
        + fsync to disk at 150 MB/s (none on tmpfs);
      dd with source urandom also reads /dev/urandom inside its timing: bytes / 0.5 GB/s / cpu;
      on a profile with /tmp limits, each device's part at least what the limits allow
      (:func:`device_seconds`);
  - object, kv: ceil(count / parallelism) request latencies (the mean of the calibrated
    lognormal: shaped stand-ins and clouds) + count x size at the network rate, once more for
    the preparation (PUTs before a get) and a latency per wave for the drop, whose waves are
    of at least UNTIMED_PARALLELISM requests (the agent's untimed phases);
  - sharedfs: locally the fileio model on a host directory behind the profile's shared budget;
    on a cloud (EFS) one request latency per NFS RPC (each op with direct or fsync every, else
    one per 1 MiB, the rsize/wsize EFS mounts use) + bytes at the network rate;
  - network: duration_ms, or bytes through the token bucket when that is shorter (full on a
    new instance, drained on a warm one);
  - transfer: (chain_length - 1) links, each an invocation round trip + moving payload_size
    twice (inline: to the Invoke API and on to the next hop; object/kv: a PUT and a GET);
  - app: prepare (generate + write the input), read the input, compute (shape-dependent, / cpu),
    write the output, drop both; reads and writes as object/kv/sharedfs above, tmp as fileio.
- a local burst: its members share the machine's CPUs (and a sharedfs burst the shared budget);
  a cold burst sets its sandboxes up at 60 ms of CPU each.
The app compute rates are assumptions. The estimate assumes the machine's CPUs are the
campaign's: other work on them lengthens every run (docs/specs.md has the measurements).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from faascope.designs.model_inputs import (CALIBRATED_PROFILES, LAMBDA_PROFILE, Inputs,
                                           NetBucket)
from faascope.designs.plan import Cell, Plan
from faascope.designs.schedule import burst_schedule
from faascope.provider_kinds import PROVIDER_KINDS, provider_kind
from faascope.tiers import GCF_TIERS, LAMBDA_MB_PER_VCPU
from faascope.units import MIB

GIB = 1024 * MIB

OVERHEAD_S = {"local": 0.009, "cloud": 0.06}
#: the driver's own start before the first invocation (imports, the results file, the provider,
#: the platform's health), measured on the development machine's local platform
START_S = {"local": 3.0, "cloud": 3.0}
#: a cold start's own cost on this side: locally the sandbox's set-up and the runtime's start on
#: this machine (a calibrated profile adds its modelled cold start from its table: model_inputs)
COLD_S = {"local": 0.25, "cloud": 1.5}
DEPLOY_S = {"local": 0.5, "cloud": 10.0}
#: the CPU time of one local sandbox's set-up (50 concurrent cold starts of the gcf profile took
#: 2.3 s on 2 CPUs, 0.8 s of it the profile's modelled cold start)
COLD_CPU_S = 0.06
#: the CPUs a local burst's members share (the machine's)
HOST_CPUS = os.cpu_count() or 1
#: packaging the agent for the first local deployment
PACKAGE_S = 1.5
#: starting one local stand-in server (VersityGW, moto, redis, the shaper), on this machine
STANDIN_START_S = 1.0
SPIN_UNIT_S = 4e-9
PER_OP_WRITE_S = 3e-6
PER_OP_READ_S = 1e-6
PER_OP_DIRECT_S = 42e-6
BW_WRITE = 0.3e9
BW_READ = 3.0e9
BW_DIRECT_READ = 1.5e9
BW_PREPARE = 0.4e9
BW_FSYNC = 0.15e9
BW_URANDOM = 0.5e9  # dd reading /dev/urandom, per second of one CPU
FSYNC_EVERY_S = 1e-3
#: blk-throttle, which holds a calibrated profile's /tmp to its limits, lets the first slice's
#: worth of I/O through at once (the kernel's throtl_slice, 100 ms): a short run is faster than
#: its limit alone says
THROTTLE_SLICE_S = 0.1
#: requests in flight at once, at least, in an object or kv workload's untimed prepare and drop
#: (the agent's UntimedParallelism, agent/workloads/batch.go, where the choice is explained;
#: tests/designs check the two agree)
UNTIMED_PARALLELISM = 16
#: the page cache's read-ahead and write-back requests, in which buffered I/O reaches a device
READAHEAD_BYTES = 128 * 1024
WRITEBACK_BYTES = 1 * MIB

# Storage request latencies of a cloud (and of the shaped local stand-ins) and Lambda's network
# come from the calibration tables (model_inputs: standins-aws, platform-lambda). GCS from
# GCF/Cloud Run: no published figure of the same kind at hand, so S3's are used.
# Local stand-ins without shaping (the unlimited profile): p50 on the development machine
# (docs/storage.md, "Figures from this machine": VersityGW 4 KiB PUT/GET, redis-server 1 KiB
# SET/GET, lambda profile at 1024 MB).
LOCAL_OBJECT_PUT_S = 0.00686
LOCAL_OBJECT_GET_S = 0.0017
REDIS_PUT_S = 0.000206  # also used for a Redis reached from a cloud function (same-VPC order)
REDIS_GET_S = 0.000133
# Local: the stand-ins move ~100 MiB/s to a sandbox (docs/storage.md: 4 MiB PUTs 87-115 MiB/s,
# GETs 94-255 MiB/s); the network workload's loopback through the platform's relay, unshaped,
# assumed ~1 GiB/s.
LOCAL_STORAGE_BPS = 100 * MIB
LOCAL_NET_BPS = 1 * GIB
# EFS mounts read and write in 1 MiB NFS RPCs (rsize/wsize=1048576, AWS's recommended mount
# options), so buffered I/O of smaller blocks is coalesced by the client's page cache.
EFS_RPC_BYTES = 1 * MIB
# app compute, per second of one CPU (assumptions of the order of magnitude of Go on a 2020s
# core, not calibrated): generating the input with a PCG, the video shape's per-byte work, a
# comparison of two 100-byte records while sorting, a float32 multiply-add of inference.
APP_GENERATE_BPS = 1.0e9
APP_VIDEO_BPS = 1.0e9
APP_SORT_COMPARE_S = 100e-9
APP_MAC_S = 1e-9
APP_RECORD_BYTES = 100
# the app shapes' default input and output sizes (the request schema's; docs/storage.md)
APP_DEFAULT_SIZES = {"video": (64 * MIB, 64 * 1024), "sort": (16_000_000, None),
                     "inference": (4 * MIB, 4096)}
APP_DEFAULT_LAYERS = 8


def promised_vcpu(profile: str | None, memory_mb: int) -> float:
    """The vCPU the provider's (or profile's) CPU rule gives a function of ``memory_mb``: what
    its quota promises (Lambda's 10,240 MB: 5.79), 0 for ``unlimited`` (no quota)."""
    if profile == "gcf":
        return next((c for m, c in GCF_TIERS.items() if memory_mb <= m), max(GCF_TIERS.values()))
    if profile == "unlimited":
        return 0.0
    return memory_mb / LAMBDA_MB_PER_VCPU  # lambda, and AWS itself


def cpu_share(profile: str | None, memory_mb: int) -> float:
    """The share of one CPU a single-threaded workload gets."""
    return 1.0 if profile == "unlimited" else min(1.0, promised_vcpu(profile, memory_mb))


def cpu_oversubscribed(plan: Plan) -> list[dict[str, Any]]:
    """The local cells whose instances are promised more vCPU at once than this machine has (a
    burst's members together; one instance of a large function alone): their CPU-bound times
    would measure this machine, not the modelled cloud (issue #29: a 10,240 MB function got a
    5.8-vCPU quota on a 2-CPU host, and a 1,024 MB neighbour dropped to 0.46 of its speed). The
    results and the report flag such cells as they ran (faascope.analysis.host_bound)."""
    out = []
    for c in plan.cells:
        d = provider_kind(plan.spec.cell_provider_kind(c.levels)) or PROVIDER_KINDS["aws"]
        if d.where != "local":
            continue
        each = promised_vcpu(d.cpu_rule_of(c.function.profile), c.function.memory_mb)
        n = int((c.load or {}).get("burst_size", 1))
        if n * each > HOST_CPUS:
            out.append({"cell": c.key, "instances": n, "vcpu_each": round(each, 4),
                        "promised_vcpu": round(n * each, 4), "host_cpus": HOST_CPUS})
    return out


@dataclass(frozen=True)
class Site:
    """Where a cell runs, as far as the model cares."""

    where: str    # "local" or "cloud"
    tmpfs: bool   # /tmp in memory: the gcf profile, GCF 2nd gen and Cloud Run
    cpu: float    # the share of one CPU, capped at 1
    #: the calibration table's profile whose figures apply (local: the sandbox profile, None
    #: for unlimited; cloud: lambda for AWS, whose network and storage Skyrise measured)
    profile: Optional[str] = None
    #: the network shaping: "profile" (the profile's token bucket, the platform's default),
    #: "lambda", "none", or a custom bucket (not modelled: unshaped)
    net_shape: Optional[str] = None
    inputs: Inputs = field(default_factory=Inputs, compare=False, hash=False)
    memory_mb: Optional[int] = None


def cell_site(cell: Cell, provider: Optional[str] = None, inputs: Optional[Inputs] = None) -> Site:
    """The cell's :class:`Site`; ``provider`` is the spec's provider kind (without it, a cell
    with a sandbox profile is local and any other one runs on Lambda); ``inputs`` collects the
    calibration entries the model reads."""
    f = cell.function
    inputs = inputs if inputs is not None else Inputs()
    if provider is None:
        provider = "local" if f.profile is not None else "aws"
    d = provider_kind(provider) or PROVIDER_KINDS["aws"]  # another platform: modelled as Lambda
    if d.has_profiles:
        profile = f.profile or d.default_profile
        return Site(d.where, d.tmp_of(profile) == "memory", cpu_share(d.cpu_rule_of(profile), f.memory_mb),
                    profile if profile in CALIBRATED_PROFILES else None,
                    getattr(f, "net_shape", None) or "profile", inputs, f.memory_mb)
    return Site(d.where, d.tmp == "memory", cpu_share(d.cpu_rule, f.memory_mb), LAMBDA_PROFILE,
                "lambda", inputs)


def where_of(provider: Optional[str]) -> str:
    """"local" or "cloud": where a provider kind's functions run (another name: a cloud)."""
    d = provider_kind(provider)
    return d.where if d is not None else "cloud"


def net_bucket(site: Site) -> Optional[NetBucket]:
    """The token bucket a function's network traffic passes (None: unshaped)."""
    shape = site.net_shape
    if shape == "lambda":
        return site.inputs.net_bucket(LAMBDA_PROFILE)
    if shape == "profile":
        return site.inputs.net_bucket(site.profile)
    return None


def bucket_seconds(n_bytes: float, b: NetBucket, fresh: bool = True) -> float:
    """Time to move ``n_bytes`` through a token bucket: a fresh instance's (one-time burst and a
    full bucket at the peak rate, then the refill rate), or a warm one's, which the invocation
    before drained (the refill rate from the start: the gap between invocations refills little)."""
    budget = (b.one_time + b.bucket) if fresh else 0.0
    burst = min(n_bytes, budget)
    return burst / b.peak + (n_bytes - burst) / b.refill


def network_seconds(n_bytes: float, site: Site, storage: bool = True, fresh: bool = True) -> float:
    """Time to move ``n_bytes`` in or out of a function (see the module doc)."""
    if n_bytes <= 0:
        return 0.0
    b = net_bucket(site)
    if site.where == "local":
        plain = n_bytes / (LOCAL_STORAGE_BPS if storage else LOCAL_NET_BPS)
        return max(plain, bucket_seconds(n_bytes, b, fresh)) if b is not None else plain
    return bucket_seconds(n_bytes, b, fresh)


def device_seconds(ops: int, size: float, limits: tuple[Optional[float], Optional[float]]) -> float:
    """Time a throttled device takes for ``ops`` requests of ``size`` bytes in all: the slower of
    its two limits (bytes/s, IOPS), less the first slice blk-throttle lets through at once."""
    bps, iops = limits
    t = max(size / bps if bps else 0.0, ops / iops if iops else 0.0)
    return max(0.0, t - THROTTLE_SLICE_S)


def prepare_drop(w: dict) -> tuple[bool, bool]:
    """(prepare, drop) of a storage or file workload, with the agent's defaults where the request
    leaves them out (docs/agent.md): prepare for reads and gets (app: always), drop what was
    prepared for a read (app: always)."""
    kind = w.get("kind")
    if kind == "app":
        return bool(w.get("prepare", True)), bool(w.get("drop", True))
    reading = w.get("op") in ("read", "get")
    prepare = w.get("prepare")
    prepare = reading if prepare is None else bool(prepare)
    drop = w.get("drop")
    if kind == "sharedfs" and w.get("mode") == "shared":
        drop = False
    return prepare, (prepare and reading) if drop is None else bool(drop)


def app_sizes(w: dict) -> tuple[int, int]:
    """(input_size, output_size) of an app workload, with the shape's defaults."""
    inp, out = APP_DEFAULT_SIZES.get(w.get("shape"), (64 * MIB, 64 * 1024))
    inp = w.get("input_size") or inp
    out = w.get("output_size") or (inp if out is None else out)
    return int(inp), int(out)


def shaped(site: Site) -> bool:
    """Whether the cell's storage requests take a cloud's latency: on a cloud, and locally behind
    the shaped stand-ins a calibrated profile gets (docs/storage.md, "Shaped like the cloud")."""
    return site.where == "cloud" or site.profile in CALIBRATED_PROFILES


def kv_latencies(w: dict, site: Site) -> tuple[float, float]:
    if w.get("backend", "redis") == "dynamodb":
        return site.inputs.request_s("dynamodb", True), site.inputs.request_s("dynamodb", False)
    return REDIS_PUT_S, REDIS_GET_S


def object_latencies(site: Site) -> tuple[float, float]:
    if not shaped(site):
        return LOCAL_OBJECT_PUT_S, LOCAL_OBJECT_GET_S
    return site.inputs.request_s("s3_standard", True), site.inputs.request_s("s3_standard", False)


def efs_latencies(site: Site) -> tuple[float, float]:
    return site.inputs.request_s("efs", True), site.inputs.request_s("efs", False)


def _fileio(w: dict, site: Site, shared: bool = False) -> float:
    """One fileio invocation (also a local sharedfs one, ``shared``: a host directory behind the
    profile's shared-file-system budget). A device's time is the host's own or the profile's
    calibrated limit's, whichever is longer (:func:`device_seconds`)."""
    size, io = w["file_size"], w["io_size"]
    cpu = site.cpu
    ops = math.ceil(size / io)
    tmpfs = site.tmpfs and not shared
    limits = site.inputs.shared_limits if shared else site.inputs.tmp_limits
    if shared:
        rlim, wlim = limits(site.profile, False), limits(site.profile, True)
    else:
        rlim = (None, None) if tmpfs else limits(site.profile, False, site.memory_mb)
        wlim = (None, None) if tmpfs else limits(site.profile, True, site.memory_mb)
    direct = w.get("direct") and not tmpfs
    dd_urandom = w.get("engine") == "dd" and w.get("source") == "urandom"
    wb_ops = math.ceil(size / WRITEBACK_BYTES)
    t = 0.0
    if w.get("op") == "read":
        if direct:
            t += max(ops * PER_OP_DIRECT_S + size / BW_DIRECT_READ, device_seconds(ops, size, rlim))
        elif tmpfs or not w.get("prepare", True):
            t += ops * PER_OP_READ_S / cpu + size / BW_READ
        else:  # the prepared file was dropped from the cache: read-ahead from the device
            t += max(ops * PER_OP_READ_S / cpu + size / BW_READ,
                     device_seconds(math.ceil(size / READAHEAD_BYTES), size, rlim))
        if w.get("prepare", True):
            t += size / BW_PREPARE
            if not tmpfs:
                t += max(size / BW_FSYNC, device_seconds(wb_ops, size, wlim))
    else:
        fsync = w.get("fsync", "none")
        if direct:
            t += max(ops * PER_OP_DIRECT_S, device_seconds(ops, size, wlim))
        else:
            t += ops * PER_OP_WRITE_S / cpu + size / BW_WRITE
        if dd_urandom:
            t += size / BW_URANDOM / cpu
        if fsync == "end" and not tmpfs and not direct:
            t += max(size / BW_FSYNC, device_seconds(wb_ops, size, wlim))
        elif fsync == "every" and not tmpfs:
            t += max(ops * FSYNC_EVERY_S, device_seconds(ops, size, wlim))
    return t


def _requests(w: dict, site: Site, put_s: float, get_s: float, size_key: str) -> float:
    """object and kv: waves of parallel requests, bytes at the network rate."""
    count = int(w.get("count", 1))
    parallelism = int(w.get("parallelism", 1))
    waves = math.ceil(count / parallelism)
    # the agent's prepare and drop run at least UNTIMED_PARALLELISM requests at once
    untimed = math.ceil(count / max(parallelism, UNTIMED_PARALLELISM))
    data = network_seconds(count * int(w.get(size_key, 0)), site)
    prepare, drop = prepare_drop(w)
    t = waves * (put_s if w.get("op") == "put" else get_s) + data
    if prepare:
        t += untimed * put_s + data
    if drop:  # a delete is a small write
        t += untimed * put_s
    return t


def _sharedfs(w: dict, site: Site) -> float:
    if site.where == "local":  # a host directory behind the profile's shared budget
        return _fileio(w, site, shared=True)
    size, io = int(w["file_size"]), int(w["io_size"])
    ops = math.ceil(size / io)
    coalesced = math.ceil(size / max(io, EFS_RPC_BYTES))
    data = network_seconds(size, site)
    efs_write, efs_read = efs_latencies(site)
    if w.get("op") == "read":
        rpcs = ops if w.get("direct") else coalesced
        t = rpcs * efs_read + data
        prepare, _ = prepare_drop(w)
        if prepare:
            t += coalesced * efs_write + data
        return t
    fsync = w.get("fsync", "none")
    rpcs = ops if (w.get("direct") or fsync == "every") else coalesced
    return rpcs * efs_write + data + (efs_write if fsync == "end" else 0.0)


def _network(w: dict, site: Site, fresh: bool = True) -> float:
    limit = int(w.get("duration_ms", 10000)) / 1000
    n = int(w.get("bytes", 0))
    if n <= 0:
        return limit
    return min(limit, network_seconds(n, site, storage=False, fresh=fresh))


def transfer_link_seconds(w: dict, site: Site) -> float:
    """One link of a transfer chain: the next hop's invocation round trip and the payload's
    way there (the consumer's untimed delete of a stored payload included)."""
    size = int(w.get("payload_size", 0))
    via = w.get("via", "inline")
    t = OVERHEAD_S[site.where] + 2 * network_seconds(size, site)
    if via == "object":
        put_s, get_s = object_latencies(site)
        t += 2 * put_s + get_s
    elif via == "kv":
        put_s, get_s = kv_latencies(w, site)
        t += 2 * put_s + get_s
    return t


def transfer_hops(w: dict) -> int:
    return int(w.get("chain_length", 2))


def _app_io(w: dict, site: Site, n_bytes: int, write: bool) -> float:
    storage = w.get("storage", "object")
    if storage == "object":
        put_s, get_s = object_latencies(site)
        return (put_s if write else get_s) + network_seconds(n_bytes, site)
    if storage == "kv":
        put_s, get_s = kv_latencies(w, site)
        return (put_s if write else get_s) + network_seconds(n_bytes, site)
    if storage == "sharedfs" and site.where == "cloud":
        rpcs = math.ceil(n_bytes / EFS_RPC_BYTES)
        efs_write, efs_read = efs_latencies(site)
        return rpcs * (efs_write if write else efs_read) + network_seconds(n_bytes, site)
    # tmp, and a local shared directory: a file written and fsynced, read from the page cache
    disk = storage == "sharedfs" or not site.tmpfs
    if write:
        return n_bytes / BW_WRITE + (n_bytes / BW_FSYNC if disk else 0.0)
    return n_bytes / BW_READ


def _app(w: dict, site: Site) -> float:
    inp, out = app_sizes(w)
    shape = w.get("shape")
    if shape == "sort":
        n = max(inp // APP_RECORD_BYTES, 1)
        compute = n * max(math.log2(n), 1.0) * APP_SORT_COMPARE_S
    elif shape == "inference":
        compute = int(w.get("layers", APP_DEFAULT_LAYERS)) * inp / 4 * APP_MAC_S
    else:
        compute = inp / APP_VIDEO_BPS
    t = _app_io(w, site, inp, False) + compute / site.cpu + _app_io(w, site, out, True)
    prepare, drop = prepare_drop(w)
    if prepare:
        t += inp / APP_GENERATE_BPS / site.cpu + _app_io(w, site, inp, True)
    if drop:
        t += 2 * _app_io(w, site, 0, True)
    return t


def workload_seconds(cell: Cell, provider: Optional[str] = None, *, fresh: bool = True,
                     inputs: Optional[Inputs] = None) -> float:
    """The workload's part of one invocation (for transfer: the whole chain, which the first
    hop waits for). ``fresh``: on a new instance (a full network bucket; a warm one's was drained
    by the invocation before); ``inputs`` collects the calibration entries read."""
    w = cell.workload_request
    site = cell_site(cell, provider, inputs)
    kind = w.get("kind")
    if kind == "spin":
        return w["iterations"] * SPIN_UNIT_S / site.cpu
    if kind == "fileio":
        return _fileio(w, site)
    if kind == "object":
        put_s, get_s = object_latencies(site)
        return _requests(w, site, put_s, get_s, "object_size")
    if kind == "kv":
        put_s, get_s = kv_latencies(w, site)
        return _requests(w, site, put_s, get_s, "item_size")
    if kind == "sharedfs":
        return _sharedfs(w, site)
    if kind == "network":
        return _network(w, site, fresh)
    if kind == "transfer":
        return (transfer_hops(w) - 1) * transfer_link_seconds(w, site)
    if kind == "app":
        return _app(w, site)
    return 0.0  # noop


def hop_seconds(cell: Cell, provider: Optional[str] = None) -> list[float]:
    """The workload time of each function invocation one planned invocation makes: one entry,
    except a transfer chain, whose hop k waits for the rest of the chain (synchronous Invoke),
    so hop k lasts (chain_length - 1 - k) links."""
    w = cell.workload_request
    if w.get("kind") != "transfer":
        return [workload_seconds(cell, provider)]
    link = transfer_link_seconds(w, cell_site(cell, provider))
    n = transfer_hops(w)
    return [(n - 1 - k) * link for k in range(n)]


def standins_needed(plan: Plan) -> int:
    """How many local stand-in servers a campaign starts (each costs STANDIN_START_S): the S3
    stand-in, the DynamoDB stand-in, redis, and the shaper in front of the first two when a
    calibrated profile's functions use them."""
    need: set[str] = set()
    for c in plan.cells:
        w = c.workload_request
        kind = w.get("kind")
        store = {"object": "s3", "kv": "dynamodb" if w.get("backend", "redis") == "dynamodb" else "redis",
                 "transfer": {"object": "s3", "kv": "dynamodb" if w.get("backend", "redis") == "dynamodb"
                              else "redis"}.get(w.get("via", "inline")),
                 "app": {"object": "s3", "kv": "redis"}.get(w.get("storage", "object"))}.get(kind)
        if store:
            need.add(store)
            if store != "redis" and (c.function.profile or LAMBDA_PROFILE) in CALIBRATED_PROFILES:
                need.add("shaper")
    return len(need)


def shared_budget_seconds(cell: Cell, n: int, provider: Optional[str] = None) -> float:
    """``n`` concurrent local sharedfs invocations share one file system's budget (the
    profile's ``shared_*`` entries, as EFS's throughput is the file system's): their bytes over
    it. 0 for other kinds and profiles without a budget."""
    w = cell.workload_request
    site = cell_site(cell, provider)
    write = w.get("op") == "write"
    if w.get("kind") == "sharedfs":
        bps, _ = site.inputs.shared_limits(site.profile, write)
    elif w.get("kind") == "fileio" and not site.tmpfs:
        # co-resident sandboxes' /tmp images share the host disk's budget (hostdisk.go)
        bps, _ = site.inputs.host_tmp_limits(site.profile, write)
    else:
        return 0.0
    return n * int(w["file_size"]) / bps if bps else 0.0


def cold_seconds(cell: Cell, where: str, inputs: Inputs, provider: Optional[str] = None) -> float:
    """A cold start's cost: this side's own (COLD_S) plus, locally, the profile's modelled part
    (its table's fixed cold start and package fetch)."""
    t = COLD_S[where]
    if where == "local":
        site = cell_site(cell, provider, inputs)
        t += inputs.cold_start(site.profile, int(cell.function.image_size or 0))
    return t


def estimate(plan: Plan) -> dict[str, Any]:
    inputs = Inputs()
    kinds = {c.key: plan.spec.cell_provider_kind(c.levels) for c in plan.cells}
    sites = {k: where_of(v) for k, v in kinds.items()}
    # a local invocation's reply also waits out its profile's modelled front end
    front = {c.key: inputs.front_end(cell_site(c, kinds[c.key], inputs).profile)
             if sites[c.key] == "local" else 0.0 for c in plan.cells}
    per_cell = {c.key: OVERHEAD_S[sites[c.key]] + front[c.key]
                + workload_seconds(c, kinds[c.key], fresh=False, inputs=inputs)
                for c in plan.cells}
    fresh_cell = {c.key: OVERHEAD_S[sites[c.key]] + front[c.key]
                  + workload_seconds(c, kinds[c.key], inputs=inputs)
                  for c in plan.cells}
    cold_cell = {c.key: cold_seconds(c, sites[c.key], inputs, kinds[c.key]) for c in plan.cells}
    total = 0.0
    cells = plan.cells_by_key

    def config_key(c: Cell) -> tuple:
        return tuple(sorted(c.config.items(), key=lambda kv: kv[0]))

    started: set[tuple] = set()  # configurations with a warm instance
    for r in plan.runs:
        where = sites[r.cell_key]
        cell = cells[r.cell_key]
        ld = cell.load
        if ld is not None:  # a burst: its members overlap; the schedule and pause add up
            cold = ld.get("start", "warm") != "warm"
            span = burst_schedule(ld)[-1].offset_s if ld.get("arrival", {}).get("process") != "trace" else 0.0
            # locally its members share the host's CPUs: a burst's workloads take at least
            # the CPU time they ask for (each at most its profile's share) over the host's CPUs
            members = per_cell[r.cell_key]
            if where == "local":
                work = members - OVERHEAD_S[where] - front[r.cell_key]
                share = cell_site(cell, kinds[r.cell_key]).cpu
                n = int(ld.get("burst_size", 1))
                members = OVERHEAD_S[where] + front[r.cell_key] + max(work, work * share * n / HOST_CPUS,
                                                  shared_budget_seconds(cell, n, kinds[r.cell_key]))
            n = int(ld.get("burst_size", 1))
            # a cold burst's sandboxes are set up at once, sharing the host's CPUs
            cold_burst = cold_cell[r.cell_key] + (n * COLD_CPU_S / HOST_CPUS if where == "local" else 0.0)
            total += (members * (2 if ld.get("warm_pool") else 1) + span
                      + float(ld.get("pause") or 0) + (cold_burst if cold else 0.0))
            continue
        key = config_key(cell)
        fresh = r.force_cold or key not in started
        started.add(key)
        total += ((fresh_cell if fresh else per_cell)[r.cell_key]
                  + (cold_cell[r.cell_key] if r.force_cold else 0.0))
    configs = {config_key(c): c for c in plan.cells}
    # each configuration is deployed once and cold-started by its first invocation
    total += sum(DEPLOY_S[sites[c.key]] + cold_cell[c.key] for c in configs.values())
    local = any(w == "local" for w in sites.values())
    fixed = START_S["local" if local else "cloud"]
    if local:
        fixed += PACKAGE_S + STANDIN_START_S * standins_needed(plan)
    total += fixed
    waits = (plan.blocks - 1) * (plan.block_interval_s or 0.0)
    if plan.schedule is not None:  # the slots span from the first due time to the last
        waits = plan.schedule.due[-1] - plan.schedule.due[0]
    return {
        "seconds": round(max(total, waits + total / max(plan.blocks, 1)), 3),
        "busy_seconds": round(total, 3),
        #: of which the campaign's fixed costs: the driver's start, packaging, stand-ins
        "fixed_seconds": round(fixed, 3),
        "functions": len(configs),
        "per_invocation_seconds": {k: round(v, 6) for k, v in per_cell.items()},
        # the calibration entries the model read (table@version:key -> value in s, B, B/s,
        # IOPS): the figures it assumed of the cloud or of the local profiles
        "inputs": {k: inputs.used[k] for k in sorted(inputs.used)},
        "model": "rough: start + deployments + overhead + cold starts + workload (ops x per-op "
                 "cost / cpu + bytes / bandwidth, or the profile's calibrated limits; storage: "
                 "request latency x waves + bytes / network rate); see docs/specs.md",
    }


def human_duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{seconds:.0f} s" if seconds >= 1 else f"{seconds:.2f} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    if s < 86400:
        return f"{s // 3600} h {(s % 3600) // 60:02d} min"
    return f"{s // 86400} d {(s % 86400) // 3600} h"
