"""How long does `faascope report` take on a million rows?

Synthetic invocations shaped like a results-store export: platform × memory tier × I/O size as
factors, the operation as the scenario column (2 scenarios × 8 cells, ~62,500 rows per cell),
log-normal latencies whose location and spread depend on the cell, ~1 % cold starts, timestamps
over a week. Written to Parquet (and optionally CSV), then reported end to end: load, analysis,
plotly figures, matplotlib figures (PNG + PDF), report.html and summary.md.

    python bench/report_scale.py [--rows 1000000] [--csv] [--formats png,pdf] [--jobs N] [--keep DIR]

Prints seconds per stage and in total, and the size of report.html.

With --main-job RESULTS it times instead the report of the README's main job, as a user gets it
(`faascope report RESULTS --out DIR`: the default figure set, i.e. PNGs of the key figures only),
in a fresh process so that imports count, wall and CPU time, best and median of --repeat runs:

    faascope run examples/thesis-local-fileio.yaml --results results/thesis.db
    python bench/report_scale.py --main-job results/thesis.db --repeat 3

The target (issue #17): under 5 s on the 2-core development machine.
"""
from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def synthetic(n_rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    levels = {"platform": ["lambda", "gcf"], "memory_mb": [128, 2048], "io_size_bytes": [512, 131072],
              "op": ["read", "write"]}
    cells = list(itertools.product(*[range(len(v)) for v in levels.values()]))
    codes = rng.integers(0, len(cells), n_rows)
    c = np.array(cells)[codes]
    mu = -4 + 0.7 * c[:, 0] - 1.2 * c[:, 1] - 0.9 * c[:, 2] + 0.5 * c[:, 3] + 0.3 * c[:, 0] * c[:, 1]
    sigma = 0.25 + 0.35 * (c[:, 1] == 0) + 0.1 * c[:, 0]
    cold = rng.random(n_rows) < 0.01
    y = rng.lognormal(mu, sigma) * np.where(cold, 3.0, 1.0)
    t0 = pd.Timestamp("2024-04-10T00:00:00Z").value
    t = np.sort(rng.integers(t0, t0 + 7 * 86400 * 10**9, n_rows))
    df = pd.DataFrame({name: np.array(v, dtype=object)[c[:, j]] for j, (name, v) in enumerate(levels.items())})
    df["memory_mb"] = df["memory_mb"].astype(int)
    df["io_size_bytes"] = df["io_size_bytes"].astype(int)
    df["latency_seconds"] = y
    df["cold"] = cold
    df["started_at"] = pd.to_datetime(t, utc=True).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return df


def main_job(results: str, repeat: int, keep: str | None) -> None:
    """Time `faascope report RESULTS --out DIR` end to end, `repeat` times, each in a new process."""
    import json
    import os
    import resource
    import statistics
    import subprocess

    walls, cpus = [], []
    with tempfile.TemporaryDirectory(prefix="faascope-report-main-") as tmp:
        out = Path(keep) if keep else Path(tmp) / "report"
        for i in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "faascope", "report", results, "--out", str(out)],
                               capture_output=True, text=True, env=dict(os.environ))
            wall = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if r.returncode != 0:
                sys.exit(f"faascope report failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            walls.append(wall)
            cpus.append(cpu)
            stages = r.stderr.strip().splitlines()[-1]
            print(f"run {i + 1}: {wall:6.2f} s wall, {cpu:6.2f} s CPU  ({stages})", flush=True)
        load = os.getloadavg()[0]
        print(f"main-job report: best {min(walls):.2f} s, median {statistics.median(walls):.2f} s wall; "
              f"CPU median {statistics.median(cpus):.2f} s; load average {load:.1f} on {os.cpu_count()} CPUs; "
              f"target < 5 s: {'met' if min(walls) < 5 else 'NOT met'}")
        print(json.dumps({"results": results, "wall_s": walls, "cpu_s": cpus, "loadavg_1m": load}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="100,000 rows")
    ap.add_argument("--out", default=None, help="also write the timings as JSON here")
    ap.add_argument("--csv", action="store_true", help="report from CSV instead of Parquet")
    ap.add_argument("--formats", default="png,pdf")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--keep", default=None, help="write the report here (default: a temporary directory)")
    ap.add_argument("--main-job", default=None, metavar="RESULTS",
                    help="time the report of this results store (the README's main job) instead")
    ap.add_argument("--repeat", type=int, default=3, help="runs of --main-job")
    args = ap.parse_args()
    if args.main_job:
        main_job(args.main_job, args.repeat, args.keep)
        return
    if args.quick:
        args.rows, args.formats = min(args.rows, 100_000), "png"

    from faascope.report.build import build_report, default_jobs

    with tempfile.TemporaryDirectory(prefix="faascope-report-bench-") as tmp:
        tmp = Path(tmp)
        t = time.perf_counter()
        df = synthetic(args.rows)
        path = tmp / ("bench.csv" if args.csv else "bench.parquet")
        if args.csv:
            df.to_csv(path, index=False)
        else:
            df.to_parquet(path, index=False)
        print(f"{'generate + write input':<28s} {time.perf_counter() - t:8.2f} s  ({args.rows:,} rows, "
              f"{path.stat().st_size / 1e6:.1f} MB {path.suffix[1:]})", flush=True)
        out = Path(args.keep) if args.keep else tmp / "report"
        fmts = tuple(f for f in args.formats.split(",") if f and f != "none")
        t = time.perf_counter()
        res = build_report(path, out, factors=["platform", "memory_mb", "io_size_bytes"], scenario=["op"],
                           formats=fmts, jobs=args.jobs or default_jobs())
        total = time.perf_counter() - t
        for k, v in res.seconds.items():
            print(f"{k:<28s} {v:8.2f} s", flush=True)
        print(f"{'total (faascope report)':<28s} {total:8.2f} s")
        print(f"report.html {res.html.stat().st_size / 1e6:.1f} MB, {len(res.figures)} figures, "
              f"{len(res.files)} figure files, {res.scenarios} scenarios")
        notes = sorted({f.note.split(":")[0] for f in res.figures if f.note})
        print(f"figures summarised or sampled: {sum(1 for f in res.figures if f.note)} ({', '.join(notes)})")
        if args.out:
            import json
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps({"rows": args.rows, "total_s": total, "seconds": res.seconds,
                                                  "command": "python bench/report_scale.py " + " ".join(sys.argv[1:])}, indent=2))


if __name__ == "__main__":
    main()
