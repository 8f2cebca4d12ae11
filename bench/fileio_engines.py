"""fio vs the agent's native fileio engine vs dd, side by side on one directory.

Cases (all O_DIRECT, psync-style one I/O at a time, no fsync):
  seq-write-128KiB  sequential 128 KiB writes of a fresh --size file
  seq-read-128KiB   sequential 128 KiB reads of a --size file
  seq-read-512B     sequential 512 B reads of a --small-size file: per-operation overhead
  rand-read-4KiB    random 4 KiB reads of a --small-size file, each block once (no dd: it can't)

Rounds interleave the engines (fio, native, dd; then native, dd, fio; ...) so drift on the
machine hits all alike; the table shows medians over --repeat rounds. Throughput is in MiB/s
(1 MiB = 1,048,576 bytes): fio's bw_bytes, the agent's throughput_bytes_per_s (native: its timed
region; dd: dd's own summary line). p50 columns are the median per-operation completion latency
(fio's clat, the agent's latency.p50_s), in microseconds; on a noisy disk they are the steadier
comparison. The last column is the range of native/fio throughput ratios within a round. The native engine is the agent binary run as
`faascope-agent --once PAYLOAD` with TMPDIR=--dir. Raw runs go to bench/out/fileio_engines.json.

    python bench/fileio_engines.py [--dir D] [--size 256MiB] [--small-size 16MiB] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
MIB = 1 << 20
UNITS = {"": 1, "B": 1, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30,
         "KB": 10**3, "MB": 10**6, "GB": 10**9}
HOST_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}

# name, op, pattern, io_size, which size (--size or --small-size), engines
CASES = [
    ("seq-write-128KiB", "write", "sequential", 128 << 10, "size", ("fio", "native", "dd")),
    ("seq-read-128KiB", "read", "sequential", 128 << 10, "size", ("fio", "native", "dd")),
    ("seq-read-512B", "read", "sequential", 512, "small", ("fio", "native", "dd")),
    ("rand-read-4KiB", "read", "random", 4096, "small", ("fio", "native")),
]


def parse_size(text: str) -> int:
    """Bytes from '256MiB', '1GB', '4096'; binary and decimal units are kept apart."""
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).upper() not in UNITS:
        raise argparse.ArgumentTypeError(f"size {text!r}: use bytes or KiB/MiB/GiB (1024) or KB/MB/GB (1000)")
    return int(m.group(1)) * UNITS[m.group(2).upper()]


def agent_binary(explicit: str | None, scratch: Path) -> Path:
    if explicit:
        return Path(explicit)
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if Path(go).exists() or shutil.which(go):
        out = scratch / "faascope-agent"
        subprocess.run([go, "build", "-trimpath", "-o", str(out), "./cmd/faascope-agent"],
                       cwd=ROOT / "agent", env=dict(os.environ, CGO_ENABLED="0"), check=True)
        return out
    built = ROOT / "src" / "faascope" / "_bin" / f"faascope-agent-{HOST_ARCH.get(platform.machine(), 'amd64')}"
    if not built.exists():
        sys.exit("no Go toolchain and no built agent: pass --agent PATH")
    return built


class Runner:
    def __init__(self, directory: Path, agent: Path):
        self.dir = directory
        self.agent = agent

    def agent_once(self, workload: dict) -> dict:
        payload = json.dumps({"workload": {"kind": "fileio", **workload}})
        proc = subprocess.run([str(self.agent), "--once", payload], capture_output=True, text=True,
                              env=dict(os.environ, TMPDIR=str(self.dir)))
        response = json.loads(proc.stdout)
        if not response["ok"]:
            raise RuntimeError(f"agent failed: {response['error']}")
        return response["workload"]

    def prepare(self, name: str, size: int) -> str:
        """Lay out a file to read (zeros, fsync'd, evicted from the page cache); returns the
        file system type as the agent sees it."""
        return self.agent_once({"op": "write", "file_size": size, "io_size": min(size, 1 << 20),
                         "path": name, "fsync": "end"})["fs_type"]

    def fio(self, op: str, pattern: str, io_size: int, size: int, name: str) -> dict:
        rw = {"sequential": op, "random": "rand" + op}[pattern]
        path = self.dir / name
        if op == "write":
            path.unlink(missing_ok=True)
        cmd = ["fio", "--name=faascope", f"--filename={path}", "--ioengine=psync", f"--rw={rw}",
               f"--bs={io_size}", "--direct=1", f"--size={size}", "--fallocate=none",
               "--output-format=json"]
        # fallocate=none: fio preallocates by default, the agent and dd do not; a write into
        # preallocated extents is a different measurement.
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        job = json.loads(proc.stdout[proc.stdout.index("{"):])["jobs"][0][op]
        return {"bytes_per_s": float(job["bw_bytes"]), "bytes": int(job["io_bytes"]),
                "ops": int(job["total_ios"]), "p50_s": job["clat_ns"]["percentile"].get("50.000000", 0) / 1e9,
                "command": cmd}

    def native(self, op: str, pattern: str, io_size: int, size: int, name: str, engine="native") -> dict:
        w = self.agent_once({"engine": engine, "op": op, "pattern": pattern, "file_size": size,
                             "io_size": io_size, "direct": True, "path": name,
                             "prepare": False, "drop": False})
        if not w["direct_effective"]:
            raise RuntimeError(f"O_DIRECT not effective on {w['fs_type']}: pick a disk-backed --dir")
        out = {"bytes_per_s": w["throughput_bytes_per_s"], "bytes": w["bytes"], "ops": w["ops"],
               "elapsed_s": w["elapsed_s"]}
        if engine == "native":
            out["p50_s"] = w["latency"]["p50_s"]
        else:
            out["wall_s"] = w["wall_s"]
            out["command"] = w["dd_command"]
        return out

    def run(self, engine: str, op: str, pattern: str, io_size: int, size: int) -> dict:
        name = f"bench-{op}-{engine}.dat" if op == "write" else f"bench-read-{size}.dat"
        if engine == "fio":
            return self.fio(op, pattern, io_size, size, name)
        return self.native(op, pattern, io_size, size, name, engine=engine)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, help="directory to test (disk-backed; default: a new one under /var/tmp)")
    ap.add_argument("--size", type=parse_size, default=parse_size("256MiB"))
    ap.add_argument("--small-size", type=parse_size, default=parse_size("16MiB"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--agent", help="agent binary (default: build from agent/)")
    args = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install fio)")

    scratch = Path(tempfile.mkdtemp(prefix="faascope-bench-"))
    directory = args.dir or Path(tempfile.mkdtemp(prefix="faascope-fileio-", dir="/var/tmp"))
    directory.mkdir(parents=True, exist_ok=True)
    runner = Runner(directory.resolve(), agent_binary(args.agent, scratch))
    sizes = {"size": args.size, "small": args.small_size}
    for size in set(sizes.values()):
        fstype = runner.prepare(f"bench-read-{size}.dat", size)
    runs: list[dict] = []
    try:
        for rnd in range(args.repeat):
            for name, op, pattern, io_size, which, engines in CASES:
                # Rotate the order each round so no engine always runs right after another's
                # writeback or the host's cache warm-up.
                for engine in engines[rnd % len(engines):] + engines[:rnd % len(engines)]:
                    r = runner.run(engine, op, pattern, io_size, sizes[which])
                    r.update(case=name, engine=engine, round=rnd)
                    runs.append(r)
                    print(f"round {rnd + 1}/{args.repeat} {name:17} {engine:6} "
                          f"{r['bytes_per_s'] / MIB:9.1f} MiB/s", file=sys.stderr)
    finally:
        for f in directory.glob("bench-*.dat"):
            f.unlink()
        if not args.dir:
            directory.rmdir()
        shutil.rmtree(scratch, ignore_errors=True)

    table = []
    for name, op, pattern, io_size, which, engines in CASES:
        med = {e: statistics.median(r["bytes_per_s"] for r in runs if r["case"] == name and r["engine"] == e)
               for e in engines}
        p50 = {e: statistics.median(r["p50_s"] for r in runs if r["case"] == name and r["engine"] == e)
               for e in ("fio", "native")}
        by_round = {(r["engine"], r["round"]): r["bytes_per_s"] for r in runs if r["case"] == name}
        paired = sorted(by_round[("native", k)] / by_round[("fio", k)] for k in range(args.repeat))
        row = {"case": name, "size_bytes": sizes[which], **{f"{e}_mib_s": med[e] / MIB for e in engines},
               "native_over_fio": med["native"] / med["fio"],
               "native_over_fio_per_round": paired,
               "fio_p50_us": p50["fio"] * 1e6, "native_p50_us": p50["native"] * 1e6}
        if "dd" in med:
            row["native_over_dd"] = med["native"] / med["dd"]
        table.append(row)

    print(f"\n{directory} ({fstype}), medians of {args.repeat} interleaved rounds, "
          f"MiB/s (1 MiB = 1,048,576 bytes), O_DIRECT:")
    print(f"{'case':18} {'size':>10} {'fio':>9} {'native':>9} {'dd':>9} {'native/fio':>11} {'native/dd':>10}"
          f" {'p50 fio':>9} {'p50 native':>11}  {'native/fio per round':>20}")
    for row in table:
        dd = f"{row['dd_mib_s']:9.1f}" if "dd_mib_s" in row else f"{'-':>9}"
        nd = f"{row['native_over_dd']:10.3f}" if "native_over_dd" in row else f"{'-':>10}"
        print(f"{row['case']:18} {row['size_bytes'] // MIB:>6} MiB {row['fio_mib_s']:9.1f} "
              f"{row['native_mib_s']:9.1f} {dd} {row['native_over_fio']:11.3f} {nd}"
              f" {row['fio_p50_us']:7.0f}us {row['native_p50_us']:9.0f}us"
              f"  {min(row['native_over_fio_per_round']):9.2f}–{max(row['native_over_fio_per_round']):.2f}")

    OUT.mkdir(parents=True, exist_ok=True)
    result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "directory": str(directory),
        "fs_type": fstype, "kernel": platform.release(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "repeat": args.repeat, "size_bytes": args.size,
        "small_size_bytes": args.small_size,
        "fio_version": subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip(),
        "table": table, "runs": runs,
    }
    (OUT / "fileio_engines.json").write_text(json.dumps(result, indent=2))
    print(f"\nwrote {OUT / 'fileio_engines.json'}")


if __name__ == "__main__":
    main()
