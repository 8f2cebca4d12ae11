"""Object storage vs a shared file system under 1 ... N concurrent invocations (Roy et al., IISWC 2021):
each invocation writes then reads its own data, through S3 (VersityGW locally) or the shared
directory (EFS's stand-in), and we compare median and tail read/write times as concurrency grows.
The "sharedfs" side runs both ways the study did: private files, and one shared file written at
offsets by invocation index.

    python examples/object_vs_sharedfs_concurrency.py --max 8 --size 8388608 --reps 3

Locally the shared directory is a host directory, so this shows the method, not EFS: on AWS
point the same requests at your bucket and EFS mount (docs/storage.md).
"""
from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from storage_lab import Lab


def run(lab, name, requests):
    with ThreadPoolExecutor(len(requests)) as ex:
        return [b["workload"] for b in ex.map(lambda w: lab.invoke(name, w), requests)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=8, help="largest concurrency (powers of two up to it)")
    ap.add_argument("--size", type=int, default=8 << 20, help="bytes per invocation")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--memory", type=int, default=1024)
    a = ap.parse_args()
    levels = [c for c in (1, 2, 4, 8, 16, 32, 64, 128) if c <= a.max]
    io = 1 << 20
    with Lab() as lab:
        name = lab.function("obj-vs-fs", memory=a.memory)
        rows = []
        for c in levels:
            for storage in ("object", "sharedfs-private", "sharedfs-shared"):
                wr, rd = [], []
                for rep in range(a.reps):
                    if storage == "object":
                        base = {"kind": "object", "object_size": a.size, "prefix": f"cmp/{rep}/", **lab.s3}
                        w = run(lab, name, [{**base, "op": "put", "index": i} for i in range(c)])
                        r = run(lab, name, [{**base, "op": "get", "index": i, "prepare": False, "drop": True}
                                            for i in range(c)])
                    else:
                        mode = storage.split("-")[1]
                        base = {"kind": "sharedfs", "mode": mode, "file_size": a.size, "io_size": io,
                                "path": f"cmp-{rep}.dat", "fsync": "end"}
                        w = run(lab, name, [{**base, "op": "write", "index": i} for i in range(c)])
                        r = run(lab, name, [{**base, "op": "read", "fsync": "none", "index": i, "prepare": False}
                                            for i in range(c)])
                    wr += [x["elapsed_s"] for x in w]
                    rd += [x["elapsed_s"] for x in r]
                rows.append((c, storage, statistics.median(wr), float(np.percentile(wr, 95)),
                             statistics.median(rd), float(np.percentile(rd, 95))))
                print(f"{c:4d} {storage:17s} write p50 {rows[-1][2] * 1e3:8.1f} ms p95 {rows[-1][3] * 1e3:8.1f} ms"
                      f"   read p50 {rows[-1][4] * 1e3:8.1f} ms p95 {rows[-1][5] * 1e3:8.1f} ms", flush=True)


if __name__ == "__main__":
    main()
