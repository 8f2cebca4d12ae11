"""What this host can deliver through each local stand-in and to each storage device, measured
in a few seconds at a local campaign's start (the ``host_capacity`` event; docs/storage.md,
"Host capacity").

The local platform models a cloud's limits (calibrated per-function rates, token buckets) on top
of servers that run on this machine; when a cell's functions together ask more of a stand-in
than the host delivers, the host, not the modelled cloud, sets the result (Roy et al.'s "object
storage stays flat" came out x5.4 from 1 to 16 functions with an S3 stand-in topping out near
100 MiB/s). Each probe drives the server itself (not the shaper in front of it) with
:data:`WORKERS` concurrent clients for :data:`PROBE_SECONDS` and records the aggregate bytes/s:

- ``s3``: PUTs of 4 MiB objects (the issue's cell), one key per client, deleted afterwards;
- ``redis``: SETs of 1 MiB values (RESP over a socket: no client library needed);
- ``dynamodb``: PutItems of 256 KiB (under DynamoDB's 400 KB item limit);
- ``shared``: 4 MiB writes, each file fsync'ed (EFS's close-to-open durability), removed;
- devices: per distinct device under the stand-ins' data, 4 MiB fsync'ed writes in its directory.

A probe that fails records its error instead of a rate: a campaign never fails for its probe.
"""
from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Callable, Optional

from faascope.standins import StandIns

#: seconds each probe runs (after one warm-up request per worker)
PROBE_SECONDS = 0.75
#: concurrent clients per probe (enough to saturate a server on a 2-core host, few enough to
#: start in milliseconds)
WORKERS = 8
MiB = 1 << 20
S3_OBJECT = 4 * MiB
REDIS_VALUE = 1 * MiB
DYNAMODB_ITEM = 256 * 1024
FILE_WRITE = 4 * MiB


def _drive(op: Callable[[int, int], int], workers: int = WORKERS, seconds: float = PROBE_SECONDS) -> dict:
    """Run ``op(worker, i) -> bytes`` in ``workers`` threads for ``seconds``; aggregate rate."""
    done = [0] * workers
    counts = [0] * workers
    errors: list[str] = []
    stop_at = [0.0]
    # the end time is set by the barrier's action, before any thread is released: set after
    # wait() returned in this thread, a worker could see 0.0 and stop at once (0 requests,
    # seen under load)
    start = threading.Barrier(workers + 1,
                              action=lambda: stop_at.__setitem__(0, time.perf_counter() + seconds))

    def run(w: int) -> None:
        try:
            op(w, -1)  # warm-up: connection, first allocation
            start.wait()
            i = 0
            while time.perf_counter() < stop_at[0]:
                done[w] += op(w, i)
                counts[w] += 1
                i += 1
        except Exception as exc:  # noqa: BLE001 - recorded, the campaign goes on
            errors.append(f"{type(exc).__name__}: {exc}")
            try:
                start.abort()
            except threading.BrokenBarrierError:
                pass

    threads = [threading.Thread(target=run, args=(w,), daemon=True) for w in range(workers)]
    for t in threads:
        t.start()
    try:
        start.wait(timeout=30)
        t0 = stop_at[0] - seconds
    except threading.BrokenBarrierError:
        t0 = time.perf_counter()
    for t in threads:
        t.join(timeout=60)
    elapsed = time.perf_counter() - t0
    if errors:
        return {"error": errors[0]}
    total = sum(done)
    return {"bytes_per_s": total / elapsed if elapsed > 0 else None, "bytes": total,
            "requests": sum(counts), "seconds": round(elapsed, 4), "workers": workers}


def _s3(server) -> dict:
    import boto3  # lazy: only a local campaign with an S3 stand-in pays boto3's import
    from botocore.config import Config

    e = server.extra
    prefix = f"faascope-capacity-probe/{uuid.uuid4().hex}/"
    body = os.urandom(S3_OBJECT)
    clients = [boto3.client("s3", endpoint_url=server.endpoint, region_name=e.get("region"),
                            aws_access_key_id=e.get("access_key"), aws_secret_access_key=e.get("secret_key"),
                            config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1}))
               for _ in range(WORKERS)]
    # one key per worker, overwritten: at most WORKERS objects exist at once (a shaped stand-in
    # keeps its objects in a bounded tmpfs)
    keys = [f"{prefix}{w}" for w in range(WORKERS)]

    def put(w: int, i: int) -> int:
        clients[w].put_object(Bucket=e["bucket"], Key=keys[w], Body=body)
        return S3_OBJECT

    out = _drive(put)
    for k in keys:
        try:
            clients[0].delete_object(Bucket=e["bucket"], Key=k)
        except Exception:  # noqa: BLE001 - leftovers of a probe are harmless
            pass
    return dict(out, op="PUT", request_bytes=S3_OBJECT)


def _redis(server) -> dict:
    host, _, port = server.endpoint.removeprefix("redis://").split("/")[0].rpartition(":")
    value = os.urandom(REDIS_VALUE)
    socks = [socket.create_connection((host or "127.0.0.1", int(port)), timeout=10) for _ in range(WORKERS)]
    key = f"faascope-capacity-probe-{uuid.uuid4().hex}"

    def cmd(s: socket.socket, *parts: bytes) -> bytes:
        s.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        return s.recv(64)

    def set_(w: int, i: int) -> int:
        r = cmd(socks[w], b"SET", f"{key}-{w}".encode(), value)
        if not r.startswith(b"+OK"):
            raise OSError(f"redis answered {r[:40]!r}")
        return REDIS_VALUE

    try:
        out = _drive(set_)
        for w in range(WORKERS):
            cmd(socks[0], b"DEL", f"{key}-{w}".encode())
    finally:
        for s in socks:
            s.close()
    return dict(out, op="SET", request_bytes=REDIS_VALUE)


def _dynamodb(server) -> dict:
    import boto3  # lazy, as in _s3
    from botocore.config import Config

    e = server.extra
    table = e.get("table") or "faascope"
    value = os.urandom(DYNAMODB_ITEM)
    clients = [boto3.client("dynamodb", endpoint_url=server.endpoint, region_name=e.get("region", "us-east-1"),
                            aws_access_key_id="probe", aws_secret_access_key="probe",
                            config=Config(retries={"total_max_attempts": 1})) for _ in range(WORKERS)]
    key = f"faascope-capacity-probe-{uuid.uuid4().hex}"

    def put(w: int, i: int) -> int:
        clients[w].put_item(TableName=table, Item={"pk": {"S": f"{key}-{w}"}, "v": {"B": value}})
        return DYNAMODB_ITEM

    out = _drive(put)
    for w in range(WORKERS):
        try:
            clients[0].delete_item(TableName=table, Key={"pk": {"S": f"{key}-{w}"}})
        except Exception:  # noqa: BLE001 - as in _s3
            pass
    return dict(out, op="PutItem", request_bytes=DYNAMODB_ITEM)


def _fsync_writes(directory: Path) -> dict:
    """Aggregate rate of WORKERS writers of FILE_WRITE-byte files, each fsync'ed, in directory."""
    d = Path(directory) / f".faascope-capacity-probe-{uuid.uuid4().hex}"
    d.mkdir()
    buf = os.urandom(FILE_WRITE)

    def write(w: int, i: int) -> int:
        p = d / f"{w}-{i}"
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, buf)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.unlink(p)
        return FILE_WRITE

    try:
        return dict(_drive(write), op="write+fsync", request_bytes=FILE_WRITE)
    finally:
        for p in d.glob("*"):
            p.unlink(missing_ok=True)
        d.rmdir()


def _device_of(path: Path) -> tuple[str, str]:
    """The device (major:minor) holding path and its file system type (/proc/self/mountinfo)."""
    st = os.stat(path)
    dev = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    fs = ""
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            if left.split()[2] == dev:
                fs = right.split()[0]
    except (OSError, IndexError):
        pass
    return dev, fs


PROBES = {"s3": _s3, "redis": _redis, "dynamodb": _dynamodb}


def _guard(fn: Callable[[], dict]) -> dict:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - a probe never fails the campaign
        return {"error": f"{type(exc).__name__}: {exc}"}


def probe(st: StandIns, kinds: Optional[set[str]] = None) -> dict:
    """The ``host_capacity`` event's detail: per stand-in the aggregate bytes/s its server
    delivered to WORKERS clients, per device under their data the same for fsync'ed writes."""
    t0 = time.perf_counter()
    kinds = set(st.servers) if kinds is None else kinds & set(st.servers)
    out: dict = {"probe_seconds": PROBE_SECONDS, "workers": WORKERS, "standins": {}, "devices": {}}
    for k in sorted(kinds):
        server = st.servers[k]
        if k in PROBES:
            out["standins"][k] = _guard(lambda: PROBES[k](server))
        elif k == "shared":
            out["standins"][k] = _guard(lambda: _fsync_writes(Path(server.endpoint)))
        else:
            continue
        path = Path(server.data or server.endpoint) if (server.data or k == "shared") else None
        if path is not None and path.is_dir():
            dev, fs = _device_of(path)
            out["standins"][k].update(device=dev)
            entry = out["devices"].setdefault(dev, {"fs": fs, "path": str(path), "standins": []})
            entry["standins"].append(k)
    for dev, entry in out["devices"].items():
        if "shared" in entry["standins"]:
            entry.update(out["standins"]["shared"])  # the same measurement: the shared directory's device
        else:
            entry.update(_guard(lambda: _fsync_writes(Path(entry["path"]))))
    out["duration_s"] = round(time.perf_counter() - t0, 3)
    return out
