"""Platform overhead, measured side by side in one run.

  warm: a noop invocation through the local platform's Lambda API (raw HTTP, and boto3) vs the
        same agent called directly in its HTTP mode: what the platform adds per warm call, split
        into the platform's steps (X-Faascope-Invoke-Steps).
  cold: a forced cold start through the platform vs spawning the agent bare and waiting for its
        first answer; the platform's set-up (X-Faascope-Setup-Ms) split into its steps
        (X-Faascope-Setup-Steps: host side, then the sandbox init's mounts and privileges up to
        the bootstrap's exec) and the runtime's init after it (X-Faascope-Init-Ms).
  floor: what the kernel charges for the steps a sandbox cannot skip, measured here directly
        (unshare of each namespace kind, a loopback HTTP round trip).

--baseline-platform PATH measures a second platform binary (e.g. an older build) in the same
interleaved rounds. Rounds interleave the variants so drift on the machine (shared, 2 cores) hits
all alike. Prints the median and the range (min–max) per variant and step in milliseconds;
writes bench/out/platform_overhead.json.

    python bench/platform_overhead.py [--rounds 200] [--cold-rounds 20] [--profile unlimited]
        [--port P] [--data-dir D] [--baseline-platform PATH] [--no-boto3]
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

from faascope.binaries import agent_binary
from faascope.providers import local_platform
from faascope.providers.packaging import build_zip

NOOP = json.dumps({"workload": {"kind": "noop"}}).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(conn: http.client.HTTPConnection, path: str, body: bytes):
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"{path}: {r.status} {data[:200]!r}")
    return r, data


def timed(fn):
    t0 = time.perf_counter_ns()
    out = fn()
    return (time.perf_counter_ns() - t0) / 1e6, out


def steps(header: str | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in (header or "").split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = out.get(k, 0.0) + float(v)
    return out


def summary(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"n": len(xs), "median_ms": statistics.median(xs), "p90_ms": xs[int(0.9 * (len(xs) - 1))],
            "min_ms": xs[0], "max_ms": xs[-1]}


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


FLOOR_PROBE = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
kinds = {"mnt": 0x00020000, "uts": 0x04000000, "ipc": 0x08000000, "net": 0x40000000, "pid": 0x20000000}
out = {}
for name, flag in kinds.items():
    pid = os.fork()
    if pid == 0:
        t0 = time.perf_counter_ns()
        rc = libc.unshare(flag)
        dt = time.perf_counter_ns() - t0
        os.write(1, f"{name} {dt if rc == 0 else -1}\n".encode())
        os._exit(0)
    os.waitpid(pid, 0)
"""


def namespace_floor() -> dict[str, float]:
    """One unshare(2) per namespace kind, in a fresh child (ms; -1 = not permitted)."""
    r = subprocess.run(["python3", "-c", FLOOR_PROBE], capture_output=True, text=True, timeout=30)
    return {k: float(v) / 1e6 for k, v in (line.split() for line in r.stdout.split("\n") if line)}


class Platform:
    """One platform under test: its endpoint, and a warm and a cold function."""

    def __init__(self, label: str, data: Path, port: int, profile: str, memory: int, zip_bytes: bytes,
                 binary: str | None):
        self.label, self.data = label, data
        if binary:
            orig = local_platform.platform_binary
            local_platform.platform_binary = lambda: Path(binary)
        try:
            self.state = local_platform.start(profile=profile, data_dir=data, port=port, keep_alive="10m")
        finally:
            if binary:
                local_platform.platform_binary = orig
        host, p = self.state["endpoint"].removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(p))
        for name, tags in (("warm", {}), ("cold", {"faascope:keep-alive": "0"})):
            self.call("POST", "/2015-03-31/functions", json.dumps({
                "FunctionName": name, "Runtime": "provided.al2023", "Role": "arn:aws:iam::123456789012:role/r",
                "Handler": "bootstrap", "Code": {"ZipFile": __import__("base64").b64encode(zip_bytes).decode()},
                "MemorySize": memory, "Tags": {"faascope:profile": profile, **tags}}).encode(), ok=(201,))
        for name in ("warm", "cold"):
            deadline = time.monotonic() + 60
            while json.loads(self.call("GET", f"/2015-03-31/functions/{name}/configuration"))["State"] != "Active":
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{label}: {name} never became Active")
                time.sleep(0.05)

    def call(self, method: str, path: str, body: bytes | None = None, ok=(200,)) -> bytes:
        self.conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        r = self.conn.getresponse()
        data = r.read()
        if r.status not in ok:
            raise RuntimeError(f"{self.label} {method} {path}: {r.status} {data[:300]!r}")
        return data

    def invoke(self, name: str):
        return post(self.conn, f"/2015-03-31/functions/{name}/invocations", NOOP)

    def stop(self) -> None:
        local_platform.stop(self.data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--cold-rounds", type=int, default=20)
    ap.add_argument("--profile", default="unlimited")
    ap.add_argument("--memory", type=int, default=2048)
    ap.add_argument("--quick", action="store_true", help="30 warm and 5 cold rounds")
    ap.add_argument("--port", type=int, default=0, help="the platform's port (the baseline's is the next one)")
    ap.add_argument("--data-dir", default=None, help="where the platforms' data directories are made")
    ap.add_argument("--baseline-platform", default=None, help="a second platform binary to measure alongside")
    ap.add_argument("--no-boto3", action="store_true", help="skip the boto3 variant of the warm call")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "platform_overhead.json")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.cold_rounds = min(args.rounds, 30), min(args.cold_rounds, 5)

    tmp = Path(tempfile.mkdtemp(prefix="faascope-bench-", dir=args.data_dir))
    zip_bytes = build_zip(tmp / "fn.zip").read_bytes()
    platforms = [Platform("platform", tmp / "p", args.port, args.profile, args.memory, zip_bytes, None)]
    if args.baseline_platform:
        platforms.append(Platform("baseline", tmp / "b", args.port + 1 if args.port else 0, args.profile,
                                  args.memory, zip_bytes, args.baseline_platform))
    lam = None
    if not args.no_boto3:
        import boto3
        from botocore.config import Config
        lam = boto3.client("lambda", endpoint_url=platforms[0].state["endpoint"], region_name="us-east-1",
                           aws_access_key_id="x", aws_secret_access_key="x",
                           config=Config(retries={"total_max_attempts": 1}))

    agent_port = free_port()
    agent = subprocess.Popen([str(agent_binary())], env={"PORT": str(agent_port), "PATH": "/usr/bin:/bin"},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    res: dict[str, list[float]] = {"direct": []}
    warm_steps: dict[str, dict[str, list[float]]] = {}
    cold: dict[str, list[float]] = {"bare_spawn": []}
    cold_steps: dict[str, dict[str, list[float]]] = {}
    try:
        time.sleep(0.3)
        direct = http.client.HTTPConnection("127.0.0.1", agent_port)
        for p in platforms:
            p.invoke("warm")  # its cold start out of the way
        post(direct, "/", NOOP)
        for i in range(args.rounds):
            order = platforms if i % 2 == 0 else platforms[::-1]
            dt, (_, body) = timed(lambda: post(direct, "/", NOOP))
            res["direct"].append(dt)
            t = json.loads(body)["timings"]
            agent_ms = (t["workload_end_ns"] - t["received_ns"]) / 1e6
            warm_steps.setdefault("direct", {}).setdefault("agent_handler", []).append(agent_ms)
            warm_steps["direct"].setdefault("http_exchange", []).append(dt - agent_ms)
            for p in order:
                dt, (r, body) = timed(lambda: p.invoke("warm"))
                res.setdefault(f"{p.label}_http", []).append(dt)
                s = steps(r.getheader("X-Faascope-Invoke-Steps"))
                if s:
                    s["server_total"] = sum(s.values())
                    s["outside_server"] = dt - s["server_total"]  # client, loopback, header and reply
                delivered, answered = r.getheader("X-Faascope-Delivered-Ns"), r.getheader("X-Faascope-Answered-Ns")
                if delivered and answered:
                    # The runtime's turn split by the agent's own clock (same host, same clock):
                    # the event's way to the handler, the handler, the answer's way back.
                    t = json.loads(body)["timings"]
                    s["runtime.deliver"] = (t["received_ns"] - int(delivered)) / 1e6
                    s["runtime.agent_handler"] = (t["workload_end_ns"] - t["received_ns"]) / 1e6
                    s["runtime.answer"] = (int(answered) - t["workload_end_ns"]) / 1e6
                for k, v in s.items():
                    warm_steps.setdefault(p.label, {}).setdefault(k, []).append(v)
            if lam is not None:
                res.setdefault("platform_boto3", []).append(
                    timed(lambda: lam.invoke(FunctionName="warm", Payload=NOOP)["Payload"].read())[0])

        for i in range(args.cold_rounds):
            cold["bare_spawn"].append(spawn_bare(free_port()))
            time.sleep(0.15)  # the 0 s keep-alive lets the reaper retire the last instance
            for p in (platforms if i % 2 == 0 else platforms[::-1]):
                dt, (r, body) = timed(lambda: p.invoke("cold"))
                assert json.loads(body).get("cold"), f"{p.label}: expected a cold start"
                cold.setdefault(f"{p.label}_cold", []).append(dt)
                cold.setdefault(f"{p.label}_setup_ms", []).append(float(r.getheader("X-Faascope-Setup-Ms")))
                cold.setdefault(f"{p.label}_init_ms", []).append(float(r.getheader("X-Faascope-Init-Ms")))
                for k, v in steps(r.getheader("X-Faascope-Setup-Steps")).items():
                    cold_steps.setdefault(p.label, {}).setdefault(k, []).append(v)
        floor = namespace_floor()
    finally:
        agent.kill()
        for p in platforms:
            p.stop()

    out = {k: summary(v) for k, v in {**res, **cold}.items()}
    out["warm_steps"] = {lab: {k: summary(v) for k, v in d.items()} for lab, d in warm_steps.items()}
    out["cold_steps"] = {lab: {k: summary(v) for k, v in d.items()} for lab, d in cold_steps.items()}
    out["namespace_unshare_ms"] = floor
    d = out["direct"]["median_ms"]
    out["added"] = {f"{p.label}_warm_added_ms": out[f"{p.label}_http"]["median_ms"] - d for p in platforms}
    out["ratios"] = {f"{p.label}_cold_vs_bare_spawn": out[f"{p.label}_cold"]["median_ms"] / out["bare_spawn"]["median_ms"]
                     for p in platforms}
    out["config"] = {"profile": args.profile, "memory_mb": args.memory, "rounds": args.rounds,
                     "cold_rounds": args.cold_rounds, "isolation": platforms[0].state["isolation"],
                     "cpus": os.cpu_count(), "baseline_platform": args.baseline_platform,
                     "loadavg": os.getloadavg()}

    def row(name: str, s: dict) -> None:
        print(f"  {name:<28}{s['median_ms']:>10.3f}{s['min_ms']:>10.3f} – {s['max_ms']:<10.3f}{s['p90_ms']:>9.3f}")

    hdr = f"  {'':<28}{'median':>10}{'range (min – max)':>23}{'p90':>9}   ms"
    print(f"profile {args.profile}, {args.rounds} warm and {args.cold_rounds} cold rounds, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("warm invoke" + hdr[11:])
    for k in res:
        row(k, out[k])
    for lab, d in out["warm_steps"].items():
        print(f" {lab}: steps")
        for k, s in d.items():
            row("  " + k, s)
    for k, v in out["added"].items():
        print(f"  {k:<28}{v:>10.3f}")
    ws = out["warm_steps"].get("platform", {})
    if "runtime.deliver" in ws:
        med = lambda k: ws[k]["median_ms"] if k in ws else 0.0
        exchange = med("runtime.deliver") + med("runtime.answer")
        own = sum(med(k) for k in ("request", "admit", "prepare", "hand_over", "response", "release"))
        out["warm_floor"] = {"thaw_ms": med("thaw"), "runtime_api_exchange_ms": exchange, "bookkeeping_ms": own}
        print(f"  what the platform adds, by medians: freezer thaw {med('thaw'):.3f}, one Runtime API exchange "
              f"(event to the runtime's handler and its answer back) {exchange:.3f}, platform's own steps {own:.3f}")
    print("cold start" + hdr[10:])
    for k in cold:
        row(k, out[k])
    for lab, d in out["cold_steps"].items():
        print(f" {lab}: set-up steps")
        for k, s in d.items():
            row("  " + k, s)
    print("namespace creation, one unshare(2) each: " +
          ", ".join(f"{k} {v:.3f} ms" for k, v in floor.items()))
    for k, v in out["ratios"].items():
        print(f"  {k:<34}{v:>8.2f}x")
    out["command"] = "python bench/platform_overhead.py " + " ".join(sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
