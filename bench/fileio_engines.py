"""fio vs the agent's native fileio engine vs dd vs the agent through the local platform, side by
side on one directory.

Cases (all O_DIRECT, psync-style one I/O at a time):
  seq-write-128KiB  sequential 128 KiB writes of a fresh --size file, no fsync
  seq-write-128KiB-fsync  the same with one fsync at the end, inside the timed region (fio
                    --end_fsync=1): the issue #20 case
  seq-read-128KiB   sequential 128 KiB reads of a --size file
  seq-read-512B     sequential 512 B reads of a --small-size file: per-operation overhead
  rand-read-4KiB    random 4 KiB reads of a --small-size file, each block once (no dd: it can't)

Rounds interleave the engines (fio, native, dd; then native, dd, fio; ...) so drift on the
machine hits all alike; the table shows medians over --repeat rounds. Throughput is in MiB/s
(1 MiB = 1,048,576 bytes): fio's bw_bytes, the agent's throughput_bytes_per_s (native: its timed
region; dd: dd's own summary line). p50 columns are the median per-operation completion latency
(fio's clat, the agent's latency.p50_s), in microseconds; on a noisy disk they are the steadier
comparison. The range columns are the per-round ratios' minimum–maximum. The native engine is the
agent binary run as `faascope-agent --once PAYLOAD` with TMPDIR set to the test directory.

The platform engine ("platform") is the same agent binary packaged as a function on the local
platform (`unlimited` profile: no CPU quota, no memory limit, /tmp a private directory bind-
mounted into the sandbox) and invoked over raw HTTP; its figure is the agent's own timed region,
as for native. With the platform engine on (the default when it can run), the test directory IS
that instance's /tmp on the host (<dir>/platform/sandboxes/<instance>/tmp), so fio, native, dd
and the function all use one directory on one file system.

Every write starts from no file: the previous round's file is unlinked and the file system
synced (syncfs) before the clock starts, for every engine alike. Otherwise the engine that
truncates a large file (the agent opens with O_TRUNC; fio overwrites in place) or the one that
runs right after it pays for the freed blocks' discards (ext4 `-o discard`) and the journal
commit inside its timed region.

Raw runs go to bench/out/fileio_engines.json (or --out).

    python bench/fileio_engines.py [--dir D] [--size 256MiB] [--small-size 16MiB] [--repeat 3]
                                   [--engines fio,native,dd,platform] [--port 9370] [--quick]
"""
from __future__ import annotations

import argparse
import ctypes
import http.client
import io
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
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
MIB = 1 << 20
UNITS = {"": 1, "B": 1, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30,
         "KB": 10**3, "MB": 10**6, "GB": 10**9}
HOST_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}

# name, op, pattern, io_size, which size (--size or --small-size), engines
# name, op, pattern, io_size, which size, fsync, engines
CASES = [
    ("seq-write-128KiB", "write", "sequential", 128 << 10, "size", "none", ("fio", "native", "dd", "platform")),
    ("seq-write-128KiB-fsync", "write", "sequential", 128 << 10, "size", "end", ("fio", "native", "dd", "platform")),
    ("seq-read-128KiB", "read", "sequential", 128 << 10, "size", "none", ("fio", "native", "dd", "platform")),
    ("seq-read-512B", "read", "sequential", 512, "small", "none", ("fio", "native", "dd", "platform")),
    ("rand-read-4KiB", "read", "random", 4096, "small", "none", ("fio", "native", "platform")),
]
_libc = ctypes.CDLL(None, use_errno=True)


def syncfs(directory: Path) -> None:
    """Write back and commit the file system holding directory (not the others on the host)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _libc.syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


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


def block_device(directory: Path) -> str | None:
    """The /proc/diskstats name of the whole disk holding directory (vda for vda1), if any."""
    st = os.stat(directory)
    try:
        dev = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}").resolve()
    except OSError:
        return None
    if (dev / "partition").exists():
        dev = dev.parent
    return dev.name if dev.exists() else None


def disk_counters(device: str | None) -> dict:
    """Sectors written and discarded so far on device (/proc/diskstats; 512-byte sectors)."""
    if device:
        for line in open("/proc/diskstats"):
            f = line.split()
            if f[2] == device:
                return {"write_sectors": int(f[9]), "discard_sectors": int(f[16]) if len(f) > 16 else 0}
    return {}


class Platform:
    """The agent as a function on the local platform (unlimited profile), one warm instance."""

    FUNCTION = "fileio-bench"

    def __init__(self, data_dir: Path, port: int, agent: Path):
        from faascope.providers import local_platform

        self.local_platform = local_platform
        self.data_dir = data_dir
        self.state = local_platform.start(profile="unlimited", data_dir=data_dir, port=port,
                                          keep_alive="2h", concurrency=4)
        host, p = self.state["endpoint"].removeprefix("http://").rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(p), timeout=900)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
            info = zipfile.ZipInfo("bootstrap", date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = 0o100755 << 16
            z.writestr(info, agent.read_bytes())
        import base64
        self.request("POST", "/2015-03-31/functions", {
            "FunctionName": self.FUNCTION, "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/bench",
            "Handler": "bootstrap", "MemorySize": 2048, "Timeout": 900,
            "Code": {"ZipFile": base64.b64encode(buf.getvalue()).decode()},
            "Tags": {"faascope:profile": "unlimited"}}, ok=(201,))
        for _ in range(100):
            state = self.request("GET", f"/2015-03-31/functions/{self.FUNCTION}")[1]["Configuration"].get("State")
            if state == "Active":
                break
            time.sleep(0.05)
        _, body, headers = self.request("POST", f"/2015-03-31/functions/{self.FUNCTION}/invocations",
                                        {"workload": {"kind": "noop"}}, with_headers=True)
        self.instance = headers["X-Faascope-Instance-Id"]
        self.tmp = data_dir / "platform" / "sandboxes" / self.instance / "tmp"
        self.isolation = self.state["isolation"]
        if not self.tmp.is_dir():
            raise RuntimeError(f"the instance's /tmp is not at {self.tmp}")

    def request(self, method: str, path: str, body: dict | None = None, ok=(200,), with_headers=False):
        data = json.dumps(body).encode() if body is not None else None
        self.conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        r = self.conn.getresponse()
        raw = r.read()
        if r.status not in ok:
            raise RuntimeError(f"platform {method} {path}: {r.status} {raw[:300]!r}")
        return r.status, json.loads(raw) if raw else None, dict(r.getheaders())

    def once(self, workload: dict) -> dict:
        _, body, headers = self.request("POST", f"/2015-03-31/functions/{self.FUNCTION}/invocations",
                                        {"workload": workload}, with_headers=True)
        if headers.get("X-Faascope-Instance-Id") != self.instance:
            raise RuntimeError(f"instance changed ({self.instance} -> {headers.get('X-Faascope-Instance-Id')}): "
                               "the test directory is no longer the function's /tmp")
        if not body.get("ok"):
            raise RuntimeError(f"function failed: {body.get('error')}")
        return body["workload"]

    def stop(self) -> None:
        self.local_platform.stop(self.data_dir)


class Runner:
    def __init__(self, directory: Path, agent: Path, platform_: Platform | None = None,
                 write_start: str = "fresh"):
        self.dir = directory
        self.agent = agent
        self.platform = platform_
        self.write_start = write_start
        self.device = block_device(directory)

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

    def fio(self, op: str, pattern: str, io_size: int, size: int, name: str, fsync: str = "none") -> dict:
        rw = {"sequential": op, "random": "rand" + op}[pattern]
        path = self.dir / name
        cmd = ["fio", "--name=faascope", f"--filename={path}", "--ioengine=psync", f"--rw={rw}",
               f"--bs={io_size}", "--direct=1", f"--size={size}", "--fallocate=none",
               "--output-format=json"]
        if fsync == "end":
            cmd.append("--end_fsync=1")  # inside fio's runtime, as the agent's fsync is in its elapsed_s
        # fallocate=none: fio preallocates by default, the agent and dd do not; a write into
        # preallocated extents is a different measurement.
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        job = json.loads(proc.stdout[proc.stdout.index("{"):])["jobs"][0][op]
        return {"bytes_per_s": float(job["bw_bytes"]), "bytes": int(job["io_bytes"]),
                "ops": int(job["total_ios"]), "p50_s": job["clat_ns"]["percentile"].get("50.000000", 0) / 1e9,
                "command": cmd}

    def native(self, op: str, pattern: str, io_size: int, size: int, name: str, engine="native",
               fsync: str = "none") -> dict:
        workload = {"engine": "dd" if engine == "dd" else "native", "op": op, "pattern": pattern,
                    "file_size": size, "io_size": io_size, "direct": True, "path": name,
                    "prepare": False, "drop": False}
        if op == "write":
            workload["fsync"] = fsync
        if engine == "platform":
            w = self.platform.once({"kind": "fileio", **workload})
        else:
            w = self.agent_once(workload)
        if not w["direct_effective"]:
            raise RuntimeError(f"O_DIRECT not effective on {w['fs_type']}: pick a disk-backed --dir")
        out = {"bytes_per_s": w["throughput_bytes_per_s"], "bytes": w["bytes"], "ops": w["ops"],
               "elapsed_s": w["elapsed_s"]}
        if engine != "dd":
            out["p50_s"] = w["latency"]["p50_s"]
            out["fsync_s"] = w.get("fsync_s")
        else:
            out["wall_s"] = w["wall_s"]
            out["command"] = w["dd_command"]
        return out

    def run(self, engine: str, op: str, pattern: str, io_size: int, size: int, fsync: str = "none") -> dict:
        name = f"bench-{op}-{engine}.dat" if op == "write" else f"bench-read-{size}.dat"
        if op == "write" and self.write_start == "fresh":
            # Every engine writes a new file onto a file system with nothing pending: freeing the
            # last round's blocks (and their discards) and the journal commit happen here, not in
            # whichever timed region comes next.
            for old in self.dir.glob("bench-write-*.dat"):
                old.unlink()
            syncfs(self.dir)
        # write_start "same-file": each engine rewrites its own file of the last round as it
        # would by default (the agent truncates it, fio overwrites it in place): the naive
        # comparison, kept to show what it measures (bench/README.md).
        before = disk_counters(self.device)
        if engine == "fio":
            out = self.fio(op, pattern, io_size, size, name, fsync)
        else:
            out = self.native(op, pattern, io_size, size, name, engine=engine, fsync=fsync)
        after = disk_counters(self.device)
        # The whole device's counters over the run (other tenants' I/O included): discards
        # here are freed blocks (ext4 -o discard) being trimmed while this engine ran.
        out.update({f"device_{k.removesuffix('_sectors')}_mib": (after[k] - before[k]) * 512 / MIB
                    for k in after})
        return out


def can_run_platform() -> str | None:
    """Why the platform engine cannot run here, or None."""
    try:
        import faascope.providers.local_platform  # noqa: F401
    except ImportError:
        return "faascope is not importable (pip install -e .)"
    return None


def ratio_rows(runs: list[dict], cases, engines: list[str], sizes: dict, repeat: int) -> list[dict]:
    table = []
    for name, op, pattern, io_size, which, fsync, case_engines in cases:
        present = [e for e in case_engines if e in engines]
        rs = [r for r in runs if r["case"] == name]
        if not rs:
            continue
        med = {e: statistics.median(r["bytes_per_s"] for r in rs if r["engine"] == e) for e in present}
        p50 = {e: statistics.median(r["p50_s"] for r in rs if r["engine"] == e)
               for e in present if e != "dd"}
        by_round = {(r["engine"], r["round"]): r["bytes_per_s"] for r in rs}
        row = {"case": name, "size_bytes": sizes[which], "fsync": fsync,
               **{f"{e}_mib_s": med[e] / MIB for e in present},
               **{f"{e}_p50_us": p50[e] * 1e6 for e in p50}}
        for e in present:
            if e == "fio":
                continue
            rounds = sorted(by_round[(e, k)] / by_round[("fio", k)] for k in range(repeat)
                            if (e, k) in by_round and ("fio", k) in by_round)
            row[f"{e}_over_fio"] = med[e] / med["fio"]
            row[f"{e}_over_fio_per_round"] = rounds
            if e != "dd":
                # per-operation speed: fio's median operation time over the engine's; steadier
                # than throughput on a shared disk, whose stalls land in one engine's run or another's
                p50r = {(r["engine"], r["round"]): r["p50_s"] for r in rs if "p50_s" in r}
                row[f"{e}_p50_speed_over_fio"] = p50["fio"] / p50[e]
                row[f"{e}_p50_speed_over_fio_per_round"] = sorted(
                    p50r[("fio", k)] / p50r[(e, k)] for k in range(repeat) if (e, k) in p50r and ("fio", k) in p50r)
        if "platform" in med and "native" in med:
            row["platform_over_native"] = med["platform"] / med["native"]
        if "dd" in med and "native" in med:
            row["native_over_dd"] = med["native"] / med["dd"]
        table.append(row)
    return table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, help="directory to work in (disk-backed; default: a new one under /var/tmp)")
    ap.add_argument("--size", type=parse_size)
    ap.add_argument("--small-size", type=parse_size)
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--engines", default="fio,native,dd,platform",
                    help="comma-separated subset of fio,native,dd,platform (fio is always run)")
    ap.add_argument("--cases", help="comma-separated subset of the case names")
    ap.add_argument("--port", type=int, default=0, help="the platform's port (0 = any free one)")
    ap.add_argument("--agent", help="agent binary (default: build from agent/)")
    ap.add_argument("--write-start", choices=("fresh", "same-file"), default="fresh",
                    help="fresh: unlink + syncfs before every write (default); same-file: each engine "
                         "rewrites its last file (agent: O_TRUNC, fio: in place)")
    ap.add_argument("--quick", action="store_true", help="64 MiB / 4 MiB files, 2 rounds (unless given)")
    ap.add_argument("--out", type=Path, default=OUT / "fileio_engines.json")
    args = ap.parse_args()
    quick = {"size": "64MiB", "small_size": "4MiB", "repeat": 2}
    full = {"size": "256MiB", "small_size": "16MiB", "repeat": 3}
    for k, v in (quick if args.quick else full).items():
        if getattr(args, k) is None:
            setattr(args, k, parse_size(v) if isinstance(v, str) else v)
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install fio)")
    engines = ["fio"] + [e for e in args.engines.split(",") if e and e != "fio"]
    unknown = set(engines) - {"fio", "native", "dd", "platform"}
    if unknown:
        sys.exit(f"unknown engines {sorted(unknown)}")
    if "platform" in engines and (why := can_run_platform()):
        print(f"platform engine skipped: {why}", file=sys.stderr)
        engines.remove("platform")
    cases = [c for c in CASES if not args.cases or c[0] in args.cases.split(",")]

    scratch = Path(tempfile.mkdtemp(prefix="faascope-bench-"))
    base = args.dir or Path(tempfile.mkdtemp(prefix="faascope-fileio-", dir="/var/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    agent = agent_binary(args.agent, scratch)
    plat = None
    runs: list[dict] = []
    try:
        if "platform" in engines:
            plat = Platform(base.resolve() / "platform-data", args.port, agent)
            directory = plat.tmp
        else:
            directory = base.resolve()
        runner = Runner(directory, agent, plat, args.write_start)
        sizes = {"size": args.size, "small": args.small_size}
        for size in set(sizes.values()):
            fstype = runner.prepare(f"bench-read-{size}.dat", size)
        for rnd in range(args.repeat):
            for name, op, pattern, io_size, which, fsync, case_engines in cases:
                order = [e for e in case_engines if e in engines]
                # Rotate the order each round so no engine always runs right after another's
                # writeback or the host's cache warm-up.
                for engine in order[rnd % len(order):] + order[:rnd % len(order)]:
                    r = runner.run(engine, op, pattern, io_size, sizes[which], fsync)
                    if engine != "fio" and not r.get("direct_effective", True):
                        raise RuntimeError(f"O_DIRECT not effective for {engine}")
                    r.update(case=name, engine=engine, round=rnd)
                    runs.append(r)
                    print(f"round {rnd + 1}/{args.repeat} {name:23} {engine:8} "
                          f"{r['bytes_per_s'] / MIB:9.1f} MiB/s", file=sys.stderr)
    finally:
        if plat:
            plat.stop()
        for f in (plat.tmp if plat else base).glob("bench-*.dat"):
            f.unlink()
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)
        elif plat:
            shutil.rmtree(plat.data_dir, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)

    table = ratio_rows(runs, cases, engines, sizes, args.repeat)
    others = [e for e in ("native", "dd", "platform") if e in engines]
    print(f"\n{directory} ({fstype}), medians of {args.repeat} interleaved rounds, "
          f"MiB/s (1 MiB = 1,048,576 bytes), O_DIRECT; ratios to fio with the per-round range:")
    print("(x/fio: throughput; p50 x/fio: fio's median operation time / x's, i.e. per-operation speed)")
    head = f"{'case':24} {'size':>8} {'fio':>8}" + "".join(f" {e:>8}" for e in others)
    head += "".join(f" {e + '/fio':>21}" for e in others) + f" {'p50 fio':>8}"
    head += "".join(f" {'p50 ' + e:>12}" for e in others if e != "dd")
    print(head)
    for row in table:
        line = f"{row['case']:24} {row['size_bytes'] // MIB:>4} MiB {row['fio_mib_s']:8.1f}"
        for e in others:
            line += f" {row[e + '_mib_s']:8.1f}" if e + "_mib_s" in row else f" {'-':>8}"
        for e in others:
            if e + "_over_fio" in row:
                rr = row[e + "_over_fio_per_round"]
                line += f" {row[e + '_over_fio']:6.3f} ({min(rr):.2f}–{max(rr):.2f})"
            else:
                line += f" {'-':>21}"
        line += f" {row['fio_p50_us']:6.0f}us"
        for e in others:
            if e != "dd":
                line += f" {row[e + '_p50_us']:10.0f}us" if e + "_p50_us" in row else f" {'-':>12}"
        for e in others:
            if e + "_p50_speed_over_fio" in row:
                rr = row[e + "_p50_speed_over_fio_per_round"]
                line += f"  p50 {e}/fio {row[e + '_p50_speed_over_fio']:.3f} ({min(rr):.2f}–{max(rr):.2f})"
        print(line)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "directory": str(directory),
        "fs_type": fstype, "kernel": platform.release(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "repeat": args.repeat, "size_bytes": args.size,
        "small_size_bytes": args.small_size, "engines": engines, "quick": args.quick,
        "write_start": args.write_start,
        "platform": {"profile": "unlimited", "isolation": plat.isolation, "instance": plat.instance} if plat else None,
        "command": " ".join(["python", "bench/fileio_engines.py", *sys.argv[1:]]),
        "fio_version": subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip(),
        "table": table, "runs": runs,
    }
    args.out.write_text(json.dumps(result, indent=2))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
