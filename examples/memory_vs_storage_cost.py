"""Memory size vs storage throughput and cost: the same object GET/PUT and Redis GET at several
memory sizes (CPU follows memory on the lambda profile: MB/1769 vCPU), with throughput, latency
and what a million such invocations would cost on Lambda plus S3 requests (faascope.cost).

    python examples/memory_vs_storage_cost.py --memories 128,256,512,1024,2048 --size 16777216

Kim & Lee (I/O resource isolation of FaaS runtimes) saw S3 transfers speed up with memory because the client stack is
CPU-bound, while cost grows faster than speed above ~1 GB; this reproduces the method locally.
"""
from __future__ import annotations

import argparse
import statistics

from faascope.cost import lambda_cost, storage_cost

from storage_lab import Lab

MiB = 1 << 20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", default="128,256,512,1024,2048")
    ap.add_argument("--size", type=int, default=16 * MiB, help="object size, bytes")
    ap.add_argument("--count", type=int, default=4, help="objects per invocation")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    memories = [int(m) for m in a.memories.split(",")]
    print(f"{'MB':>6} {'op':4} {'MiB/s p50':>10} {'req p50 ms':>11} {'req p99 ms':>11} {'$ per 1M inv':>13}")
    with Lab() as lab:
        for mem in memories:
            name = lab.function(f"mem-{mem}", memory=mem)
            for op in ("put", "get"):
                thr, p50, p99, dur = [], [], [], []
                for rep in range(a.reps):
                    w = lab.invoke(name, {"kind": "object", "op": op, "object_size": a.size, "count": a.count,
                                          "prefix": f"mem/{mem}/", "index": rep, "prepare": op == "get",
                                          "drop": True, **lab.s3})["workload"]
                    thr.append(w["throughput_bytes_per_s"] / MiB)
                    p50.append(w["latency"]["p50_s"] * 1e3)
                    p99.append(w["latency"]["p99_s"] * 1e3)
                    dur.append(w["elapsed_s"])
                d = statistics.median(dur)
                c = lambda_cost(mem, d).total + storage_cost(
                    "s3", puts=a.count if op == "put" else 0, gets=a.count if op == "get" else 0)["total"]
                print(f"{mem:6d} {op:4} {statistics.median(thr):10.1f} {statistics.median(p50):11.2f} "
                      f"{statistics.median(p99):11.2f} {c * 1e6:13.2f}", flush=True)


if __name__ == "__main__":
    main()
