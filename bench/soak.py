"""Soak the local platform and check that nothing leaks.

Sustained invocations for a while (noop, small fileio writes and reads, spin, plus the unhappy
paths: timeouts, out-of-memory kills, configuration updates that retire instances), from
several client threads, on loopback only. Before and after (once idle instances have been
evicted) it counts what the platform holds: its memory and file descriptors, processes in its
sandboxes, cgroups, mounts, loop devices and disk under its data directory. Prints and writes
JSON; exits 1 if anything grew.

    python bench/soak.py [--seconds 300] [--threads 4] [--out bench/out/soak.json]
"""
from __future__ import annotations

import argparse
import base64
import glob
import json
import os
import random
import shutil
import tempfile
import threading
import time
from pathlib import Path

import boto3
from botocore.config import Config

from faascope.providers import local_platform
from faascope.providers.packaging import build_zip

WORKLOADS = [
    (40, "ok", {"kind": "noop"}),
    (20, "ok", {"kind": "fileio", "op": "write", "file_size": 4 << 20, "io_size": 128 << 10}),
    (20, "ok", {"kind": "fileio", "op": "read", "file_size": 4 << 20, "io_size": 128 << 10, "direct": True}),
    (15, "ok", {"kind": "spin", "iterations": 2_000_000}),
]


def platform_resources(pid: int, data_dir: Path, cgroup_parent: str | None) -> dict:
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kib = int(next(l for l in status.splitlines() if l.startswith("VmRSS:")).split()[1])
    every = glob.glob(f"/sys/fs/cgroup/memory/{cgroup_parent}/*/") if cgroup_parent else []
    # Spare sandboxes ("spare.N", made ahead for cold starts, a fixed number: --spare-sandboxes)
    # are the platform's standing cost, counted apart from instances.
    cgroups = [c for c in every if not Path(c).name.startswith("spare.")]
    spares = [c for c in every if Path(c).name.startswith("spare.")]
    procs = sum(len(Path(c, "cgroup.procs").read_text().split()) for c in cgroups)
    backing = [Path(b).read_text().strip() for b in glob.glob("/sys/block/loop*/loop/backing_file")]
    # the platform's host disk (one device holding every lambda sandbox's /tmp image, made at
    # start: agent/platform/hostdisk.go) is a standing device like the spares, counted apart
    host_disks = [b for b in backing if str(data_dir) in b and b.endswith("host-disk.ext4")]
    loops = [b for b in backing if str(data_dir) in b and b not in host_disks]
    du = sum(f.stat().st_size for f in data_dir.rglob("*") if f.is_file())
    return {"rss_kib": rss_kib, "fds": len(os.listdir(f"/proc/{pid}/fd")),
            "threads": int(next(l for l in status.splitlines() if l.startswith("Threads:")).split()[1]),
            "sandbox_cgroups": len(cgroups), "sandbox_processes": procs,
            "host_mounts": len(Path("/proc/self/mountinfo").read_text().splitlines()),
            "loop_devices": len(loops), "host_disk_devices": len(host_disks),
            # the platform's own entries are not sandboxes: its spares and the /etc files all
            # sandboxes share (".etc-shared", written once per platform)
            "sandbox_dirs": len([d for d in (data_dir / "platform" / "sandboxes").glob("*")
                                 if not d.name.startswith(("spare.", "."))]),
            "spare_sandboxes": len(spares),
            "data_dir_bytes": du}


def cgroup_parent_of(data_dir: Path) -> str | None:
    # The platform names its cgroup after a hash of its data directory; find the one it made.
    import hashlib
    h = hashlib.sha256(str((data_dir / "platform").resolve()).encode()).hexdigest()[:12]
    return f"faascope/{h}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--out", default=str(Path(__file__).parent / "out" / "soak.json"))
    ap.add_argument("--quick", action="store_true", help="20 s")
    args = ap.parse_args()
    if args.quick:
        args.seconds = min(args.seconds, 20)

    data = Path(tempfile.mkdtemp(prefix="faascope-soak-"))
    state = local_platform.start(profile="lambda", data_dir=data, port=0, keep_alive="1s", concurrency=16)
    pid, endpoint = state["pid"], state["endpoint"]
    cg = cgroup_parent_of(data)
    client = boto3.client("lambda", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x",
                          config=Config(retries={"total_max_attempts": 1}, read_timeout=60, max_pool_connections=args.threads * 2))
    zip_bytes = build_zip(data / "fn.zip").read_bytes()
    fns = {"lam": ("lambda", 256, 30), "gcf": ("gcf", 256, 30), "slow": ("lambda", 128, 1)}
    for name, (profile, mem, timeout) in fns.items():
        client.create_function(FunctionName=name, Runtime="provided.al2023", Role="arn:aws:iam::000000000000:role/faascope-soak", Handler="bootstrap",
                               Code={"ZipFile": zip_bytes}, MemorySize=mem, Timeout=timeout,
                               Tags={"faascope:profile": profile})
    for name in fns:  # as an AWS client must: a Pending function refuses invocations
        client.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    client.invoke(FunctionName="lam", Payload=b'{"workload":{"kind":"noop"}}')
    time.sleep(2)
    before = platform_resources(pid, data, cg)

    counts: dict[str, int] = {}
    examples: list[dict] = []  # what the unexpected outcomes were, to read rather than guess
    lock = threading.Lock()
    # one deployment at a time, each waited for: an update in progress refuses another (409
    # ResourceConflictException, on AWS as on the platform), so a deployer waits as AWS clients do
    deploying = threading.Lock()
    stop = time.monotonic() + args.seconds

    def count(key: str, detail: object = None) -> None:
        with lock:
            counts[key] = counts.get(key, 0) + 1
            if detail is not None and len(examples) < 10:
                examples.append({"outcome": key, "detail": detail})

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        weights = [w for w, _, _ in WORKLOADS] + [2, 2, 1]
        while time.monotonic() < stop:
            choice = rng.choices(range(len(weights)), weights=weights)[0]
            try:
                if choice < len(WORKLOADS):
                    fn = rng.choice(["lam", "gcf"])
                    r = client.invoke(FunctionName=fn, Payload=json.dumps({"workload": WORKLOADS[choice][2]}), LogType="Tail")
                    body = json.loads(r["Payload"].read())
                    if body.get("ok"):
                        count("ok")
                    else:
                        count("unexpected_failure", {"fn": fn, "workload": WORKLOADS[choice][2], "reply": body,
                                                     "log": base64.b64decode(r.get("LogResult", "")).decode(errors="replace")})
                elif choice == len(WORKLOADS):  # a timeout: the sandbox is killed
                    r = client.invoke(FunctionName="slow", Payload=b'{"workload":{"kind":"spin","iterations":100000000000}}')
                    body = json.loads(r["Payload"].read())
                    count("timeout") if body.get("errorType") == "Sandbox.Timedout" else count("unexpected_failure", {"fn": "slow", "reply": body})
                elif choice == len(WORKLOADS) + 1:  # an OOM kill on the gcf profile
                    w = {"kind": "fileio", "op": "write", "file_size": 400 << 20, "io_size": 1 << 20}
                    r = client.invoke(FunctionName="gcf", Payload=json.dumps({"workload": w}))
                    body = json.loads(r["Payload"].read())
                    count("oom") if body.get("errorType") == "Runtime.OutOfMemory" else count("unexpected_failure", {"fn": "gcf", "workload": w, "reply": body})
                else:  # retire all instances, as a deployment does
                    with deploying:
                        client.update_function_configuration(FunctionName="lam",
                                                             Environment={"Variables": {"N": str(rng.random())}})
                        client.get_waiter("function_updated_v2").wait(FunctionName="lam",
                                                                      WaiterConfig={"Delay": 1, "MaxAttempts": 60})
                    count("config_update")
            except client.exceptions.TooManyRequestsException:
                count("throttled")
            except Exception as exc:  # noqa: BLE001 - anything else is a finding
                count(f"client_error:{type(exc).__name__}", str(exc)[:300])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(3)  # keep-alive is 1 s: every instance should be evicted by now
    after = platform_resources(pid, data, cg)
    local_platform.stop(data)
    platform_log = [l for l in (data / "platform.log").read_text(errors="replace").splitlines()
                    if "failed" in l or "panic" in l][:20]
    leftover_cgroups = glob.glob(f"/sys/fs/cgroup/memory/{cg}/*/")
    shutil.rmtree(data, ignore_errors=True)

    grew = {k: (before[k], after[k]) for k in before
            if k not in ("rss_kib", "fds", "threads", "data_dir_bytes", "spare_sandboxes") and after[k] > before[k]}
    if after["fds"] > before["fds"] + 8:
        grew["fds"] = (before["fds"], after["fds"])
    if after["rss_kib"] > before["rss_kib"] + 64 * 1024:
        grew["rss_kib"] = (before["rss_kib"], after["rss_kib"])
    if after["data_dir_bytes"] > before["data_dir_bytes"] + (1 << 20):
        grew["data_dir_bytes"] = (before["data_dir_bytes"], after["data_dir_bytes"])
    result = {"seconds": args.seconds, "threads": args.threads, "invocations": sum(counts.values()),
              "counts": counts, "unexpected": examples, "platform_log": platform_log, "before": before, "after": after, "grew": grew,
              "cgroups_left_after_stop": len(leftover_cgroups)}
    print(json.dumps(result, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2))
    bad = grew or leftover_cgroups or any(k.startswith(("unexpected", "client_error")) for k in counts)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
