"""object, kv, sharedfs, transfer and app inside real sandboxes, against real stand-ins:
VersityGW (read back with boto3), redis-server (read back with redis-cli), the shared dir."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

KiB, MiB = 1 << 10, 1 << 20


def test_object_put_is_readable_by_boto3(make_function, invoke, stand_ins, s3):
    name = make_function("obj")
    creds = stand_ins.s3_settings()
    w = invoke(name, {"kind": "object", "op": "put", "object_size": 256 * KiB, "count": 20, "parallelism": 4,
                      "prefix": "e2e/", "index": 7, "source": "urandom",
                      "access_key_id": creds["access_key_id"], "secret_access_key": creds["secret_access_key"]})["workload"]
    assert w["requests"] == {"ok": 20, "failed": 0, "attempts": 20, "retries": 0, "throttles": 0}
    assert w["bytes"] == 20 * 256 * KiB and w["first_key"] == "e2e/7/0" and w["last_key"] == "e2e/7/19"
    assert w["credentials_source"] == "request" and w["retry"]["mode"] == "none"
    assert w["latency"]["count"] == 20 and w["iops"] > 0
    assert creds["secret_access_key"] not in str(w)
    listed = s3.list_objects_v2(Bucket=creds["bucket"], Prefix="e2e/7/")
    assert listed["KeyCount"] == 20
    bodies = [s3.get_object(Bucket=creds["bucket"], Key=f"e2e/7/{i}")["Body"].read() for i in (0, 19)]
    # One random buffer, generated before the timed region, is the body of every object.
    assert all(len(b) == 256 * KiB for b in bodies) and bodies[0] == bodies[1] != bytes(256 * KiB)
    head = s3.head_object(Bucket=creds["bucket"], Key="e2e/7/0")
    assert head["ETag"].strip('"') == hashlib.md5(bodies[0]).hexdigest()
    # ...and the workload reads what boto3 wrote.
    s3.put_object(Bucket=creds["bucket"], Key="e2e/8/0", Body=b"x" * 1000)
    g = invoke(name, {"kind": "object", "op": "get", "object_size": 1000, "prefix": "e2e/", "index": 8,
                      "prepare": False, "access_key_id": creds["access_key_id"],
                      "secret_access_key": creds["secret_access_key"]})["workload"]
    assert g["bytes"] == 1000 and g["ttfb"]["count"] == 1 and g["client_reused"]


def test_object_get_counts_failures_and_retries(make_function, invoke, stand_ins):
    name = make_function("obj-miss")
    creds = stand_ins.s3_settings()
    common = {"kind": "object", "op": "get", "object_size": 10, "count": 3, "prefix": "absent/", "prepare": False,
              "access_key_id": creds["access_key_id"], "secret_access_key": creds["secret_access_key"]}
    body = invoke(name, common, ok=False)
    assert body["error"]["type"] == "IOError" and "NoSuchKey" in body["error"]["message"]
    w = invoke(name, {**common, "on_error": "count", "max_attempts": 3, "max_backoff_ms": 10})["workload"]
    # NoSuchKey is not retryable: one attempt per request, all three failed.
    assert w["requests"]["failed"] == 3 and w["requests"]["ok"] == 0 and w["requests"]["attempts"] == 3
    assert w["retry"] == {"mode": "standard", "max_attempts": 3, "max_backoff_s": 0.01, "retry_quota": False,
                          "timeout_s": 0, "implementation": "aws-sdk-go-v2"}
    assert "NoSuchKey" in w["error_sample"]


def test_kv_redis_put_then_get(make_function, invoke, stand_ins):
    name = make_function("kv")
    put = invoke(name, {"kind": "kv", "op": "put", "item_size": 512, "count": 500, "parallelism": 4,
                        "index": 3})["workload"]
    assert put["backend"] == "redis" and put["requests"]["ok"] == 500 and put["iops"] > 100
    got = invoke(name, {"kind": "kv", "op": "get", "item_size": 512, "count": 500, "index": 3,
                        "prepare": False})["workload"]
    assert got["bytes"] == 500 * 512 and got["latency"]["p50_s"] < 0.05
    port = stand_ins.servers["redis"].port
    if shutil.which("redis-cli"):
        out = subprocess.run(["redis-cli", "-p", str(port), "STRLEN", "faascope:3:499"], capture_output=True,
                             text=True, check=True).stdout
        assert out.strip() == "512"
    print(f"redis put p50 {put['latency']['p50_s'] * 1e3:.3f} ms p99 {put['latency']['p99_s'] * 1e3:.3f} ms "
          f"{put['iops']:.0f} IOPS (parallelism 4); get p50 {got['latency']['p50_s'] * 1e3:.3f} ms "
          f"p99 {got['latency']['p99_s'] * 1e3:.3f} ms {got['iops']:.0f} IOPS")


def test_sharedfs_shared_file_and_private_files(make_function, invoke, stand_ins):
    name = make_function("sfs")
    root = Path(stand_ins.servers["shared"].endpoint)
    req = {"kind": "sharedfs", "op": "write", "file_size": 256 * KiB, "io_size": 64 * KiB, "fsync": "end",
           "path": "e2e-shared.dat"}
    with ThreadPoolExecutor(3) as ex:  # three sandboxes write one file at once
        results = list(ex.map(lambda i: invoke(name, {**req, "mode": "shared", "index": i})["workload"], range(3)))
    assert sorted(r["region_offset"] for r in results) == [0, 256 * KiB, 512 * KiB]
    assert all(r["root"] == "/mnt/shared" and r["path"] == "/mnt/shared/e2e-shared.dat" for r in results)
    assert (root / "e2e-shared.dat").stat().st_size == 3 * 256 * KiB
    r = invoke(name, {**req, "op": "read", "fsync": "none", "mode": "shared", "index": 1, "prepare": False})["workload"]
    assert r["bytes"] == 256 * KiB
    p = invoke(name, {**req, "index": 5})["workload"]
    assert p["mode"] == "private" and (root / "e2e-shared.dat.5").stat().st_size == 256 * KiB
    bad = invoke(name, {**req, "root": "/etc"}, ok=False)
    assert bad["error"]["type"] == "InvalidRequest" and bad["error"]["message"].startswith("workload.root")


def test_transfer_chain_inline_and_through_storage(make_function, invoke, platform, stand_ins):
    port = platform["endpoint"].rsplit(":", 1)[1]
    name = make_function("chain", tags={"faascope:expose": port})
    endpoint = f"http://127.0.0.1:{port}"
    w = invoke(name, {"kind": "transfer", "chain_length": 3, "payload_size": 100 * KiB,
                      "lambda_endpoint": endpoint})["workload"]
    hops = w["hops"]
    assert [h["hop"] for h in hops] == [0, 1, 2] and w["via"] == "inline"
    assert hops[0]["transfer_s"] is None and all(h["transfer_s"] > 0 for h in hops[1:])
    assert all(h["payload_bytes"] == 100 * KiB for h in hops[1:])
    assert len({h["instance_id"] for h in hops[1:]}) == 2  # each hop its own instance (the caller is busy)
    assert hops[0]["invoke_ns"] <= hops[1]["start_ns"] <= hops[1]["end_ns"] <= hops[0]["return_ns"]
    for via, extra in (("object", stand_ins.s3_settings()), ("kv", {})):
        extra = {k: v for k, v in extra.items() if k in ("access_key_id", "secret_access_key")}
        w = invoke(name, {"kind": "transfer", "via": via, "chain_length": 2, "payload_size": 64 * KiB,
                          "lambda_endpoint": endpoint, **extra})["workload"]
        assert w["hops"][0]["write_s"] > 0 and w["hops"][1]["read_s"] > 0
        assert w["hops"][1]["payload_bytes"] == 64 * KiB


@pytest.mark.parametrize("shape,storage,size", [("sort", "object", 2_000_000), ("video", "sharedfs", 8 * MiB),
                                                ("inference", "kv", 256 * KiB)])
def test_app_shapes(make_function, invoke, stand_ins, shape, storage, size):
    name = make_function(f"app-{shape}")
    extra = {}
    if storage == "object":
        s = stand_ins.s3_settings()
        extra = {"access_key_id": s["access_key_id"], "secret_access_key": s["secret_access_key"]}
    a = invoke(name, {"kind": "app", "shape": shape, "storage": storage, "input_size": size, **extra})["workload"]
    b = invoke(name, {"kind": "app", "shape": shape, "storage": storage, "input_size": size, **extra})["workload"]
    assert a["read_s"] > 0 and a["compute_s"] > 0 and a["write_s"] > 0
    assert a["elapsed_s"] == pytest.approx(a["read_s"] + a["compute_s"] + a["write_s"], rel=1e-3, abs=1e-4)
    assert a["read_bytes"] == size and a["checksum"] == b["checksum"]  # same seed, same result
    assert a["dropped"]
