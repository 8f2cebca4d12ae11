"""Platform overhead, measured side by side in one run.

  warm: a noop invocation through the local platform's Lambda API (raw HTTP and boto3) vs the
        same agent called directly in its HTTP mode: what the platform adds per warm call.
  cold: a forced cold start through the platform (new sandbox: unpack, /tmp, cgroup, namespaces,
        runtime init) vs spawning the agent bare and waiting for its first answer.

Rounds interleave the variants so drift on the machine hits all alike. Prints medians and p90 in
milliseconds and the ratios; writes bench/out/platform_overhead.json.

    python bench/platform_overhead.py [--rounds 200] [--cold-rounds 30] [--profile lambda]
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3
from botocore.config import Config

from faascope.binaries import agent_binary
from faascope.providers import local_platform
from faascope.providers.packaging import build_zip

NOOP = json.dumps({"workload": {"kind": "noop"}}).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(conn: http.client.HTTPConnection, path: str, body: bytes) -> bytes:
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"{path}: {r.status} {data[:200]!r}")
    return data


def timed(fn) -> float:
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / 1e6


def summary(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"n": len(xs), "median_ms": statistics.median(xs), "p90_ms": xs[int(0.9 * (len(xs) - 1))],
            "min_ms": xs[0]}


def spawn_bare(port: int) -> float:
    """Start the agent as a plain process; time until its first noop answer."""
    env = {"PORT": str(port), "PATH": "/usr/bin:/bin"}
    t0 = time.perf_counter_ns()
    proc = subprocess.Popen([str(agent_binary())], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                post(conn, "/", NOOP)
                break
            except (ConnectionRefusedError, http.client.RemoteDisconnected):
                time.sleep(0.0005)
        return (time.perf_counter_ns() - t0) / 1e6
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--cold-rounds", type=int, default=30)
    ap.add_argument("--profile", default="lambda")
    ap.add_argument("--memory", type=int, default=2048)
    ap.add_argument("--quick", action="store_true", help="30 warm and 5 cold rounds")
    ap.add_argument("--port", type=int, default=0, help="the platform's port (0 = any free one)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "platform_overhead.json")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.cold_rounds = min(args.rounds, 30), min(args.cold_rounds, 5)

    data = Path(tempfile.mkdtemp(prefix="faascope-bench-"))
    state = local_platform.start(profile=args.profile, data_dir=data, port=args.port, keep_alive="10m")
    endpoint = state["endpoint"]
    host, port = endpoint.removeprefix("http://").split(":")
    zip_bytes = build_zip(data / "fn.zip").read_bytes()
    lam = boto3.client("lambda", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x",
                       aws_secret_access_key="x", config=Config(retries={"total_max_attempts": 1}))
    for name, tags in (("warm", {}), ("cold", {"faascope:keep-alive": "0"})):
        lam.create_function(FunctionName=name, Runtime="provided.al2023", Role="r", Handler="bootstrap",
                            Code={"ZipFile": zip_bytes}, MemorySize=args.memory,
                            Tags={"faascope:profile": args.profile, **tags})

    agent_port = free_port()
    agent = subprocess.Popen([str(agent_binary())], env={"PORT": str(agent_port), "PATH": "/usr/bin:/bin"},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        direct = http.client.HTTPConnection("127.0.0.1", agent_port)
        via = http.client.HTTPConnection(host, int(port))
        path = "/2015-03-31/functions/warm/invocations"
        post(via, path, NOOP)  # cold start out of the way
        post(direct, "/", NOOP)
        res = {"direct": [], "platform_http": [], "platform_boto3": []}
        for _ in range(args.rounds):
            res["direct"].append(timed(lambda: post(direct, "/", NOOP)))
            res["platform_http"].append(timed(lambda: post(via, path, NOOP)))
            res["platform_boto3"].append(timed(lambda: lam.invoke(FunctionName="warm", Payload=NOOP)["Payload"].read()))

        cold = {"bare_spawn": [], "platform_cold": [], "platform_setup_ms": [], "platform_init_ms": []}
        cold_path = "/2015-03-31/functions/cold/invocations"
        for _ in range(args.cold_rounds):
            cold["bare_spawn"].append(spawn_bare(free_port()))
            time.sleep(0.15)  # the 0 s keep-alive lets the reaper retire the last instance
            t0 = time.perf_counter_ns()
            via.request("POST", cold_path, body=NOOP)
            r = via.getresponse()
            body = json.loads(r.read())
            cold["platform_cold"].append((time.perf_counter_ns() - t0) / 1e6)
            assert body.get("cold"), "expected a cold start"
            cold["platform_setup_ms"].append(float(r.getheader("X-Faascope-Setup-Ms")))
            cold["platform_init_ms"].append(float(r.getheader("X-Faascope-Init-Ms")))
    finally:
        agent.kill()
        local_platform.stop(data)

    out = {k: summary(v) for k, v in {**res, **cold}.items()}
    out["ratios"] = {
        "warm_platform_http_vs_direct": out["platform_http"]["median_ms"] / out["direct"]["median_ms"],
        "warm_platform_boto3_vs_direct": out["platform_boto3"]["median_ms"] / out["direct"]["median_ms"],
        "cold_platform_vs_bare_spawn": out["platform_cold"]["median_ms"] / out["bare_spawn"]["median_ms"],
    }
    out["config"] = {"profile": args.profile, "memory_mb": args.memory, "rounds": args.rounds,
                     "cold_rounds": args.cold_rounds, "isolation": state["isolation"], "cpus": os.cpu_count()}
    print(f"{'variant':<22}{'median ms':>11}{'p90 ms':>10}{'min ms':>10}")
    for k in (*res, *cold):
        s = out[k]
        print(f"{k:<22}{s['median_ms']:>11.3f}{s['p90_ms']:>10.3f}{s['min_ms']:>10.3f}")
    for k, v in out["ratios"].items():
        print(f"{k:<34}{v:>8.2f}x")
    out["command"] = "python bench/platform_overhead.py " + " ".join(sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
