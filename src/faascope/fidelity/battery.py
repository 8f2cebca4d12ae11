"""The fidelity battery: a fixed set of campaigns on the local platform, run by the same driver as
``faascope run`` (each spec is written as a file beside its results file, so any of them can be
resumed, reported or analysed as any campaign), and the local figure of every metric read back
from the results files.

Campaigns (``quick`` runs fewer invocations and smaller files; minutes either way):

- ``tmp``: the thesis's design with ``engine: dd`` as the thesis ran it (direct reads, writes
  from /dev/urandom), on both profiles (the study's decisions compare them). The 1 GB cells run on
  a smaller file and compare the time per dd I/O call, which a 1 GB file would only repeat
  (2,000,000 calls of 512 B take ~4.4 min at Lambda's rate): reads on 8 MiB quick, 32 MiB
  otherwise; writes on 128 MiB or 256 MiB, since their time is mostly CPU and a CPU quota acts
  per period (gcf's 100 ms), so a write must last many periods for the profile's CPU speed to show in
  it as it did in the thesis's 4 s writes (on 32 MiB, ~115 ms, gcf/lambda came out x0.92 where
  its quota gives x1.125);
- ``network`` (lambda): the network workload against the sink, 400 or 600 MiB in, on a fresh
  sandbox each time with the ``lambda`` token bucket; the bucket is fitted to each invocation's
  20 ms samples (:func:`faascope.analysis.bandwidth.fit_token_bucket`);
- ``object``, ``kv`` (lambda): 1 KiB PUT/GET against the S3 stand-in and put/get against the
  DynamoDB stand-in, request latency median and p99 per invocation;
- ``cold``, ``warm``: a 128 MB noop, every invocation cold (forced as on AWS: a configuration
  change retires warm instances), then warm ones after a warm-up.

The battery starts a platform of its own (its own data directory under the work directory,
the port given or any free one) and stops it at the end; stand-ins are started by the campaigns
for what they need and stopped with them.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd
import yaml

from faascope.analysis.bandwidth import fit_token_bucket
from faascope.binaries import agent_binary
from faascope.driver.runner import run_campaign
from faascope.fidelity.compare import HOST_DISK_CV, STEAL_NOTE, STEAL_REPEATS, Local, disk_calm
from faascope.fidelity.metrics import THESIS_CELLS, ThesisCell
from faascope.hoststat import StealLog
from faascope.providers import local_platform
from faascope.store.reader import ResultsFile, measured_only
from faascope.tiers import LAMBDA_MB_PER_VCPU
from faascope.units import MIB, format_size

#: the file the 1 GB thesis cells run on locally, per workload op (quick, full): reads are paced
#: by the /tmp device (32 MiB of 512 B direct reads: 65,536 calls, ~9 s at Lambda's rate);
#: writes are CPU under a quota per period (gcf's 100 ms, agent/platform/cpuperiod.go), so
#: they need ~0.5 s or more (256 MiB of 128 KiB urandom writes: ~0.9 s here)
SCALED_FILE = {"read": (8 * MIB, 32 * MIB), "write": (128 * MIB, 256 * MIB)}
#: How the scaled write cells run, the override both the battery and findings-tmp set. ``drop``:
#: each write of the scaled file removes it after dd has timed it, so the next write starts on a
#: /tmp with no writeback in flight, as the thesis's did (every write came 137 s or more after
#: the function's last). Overwriting the last file instead (O_TRUNC) waits on its writeback,
#: which the throttled device is still doing seconds later: on an ext4 loop device here, 64 MiB
#: of 128 KiB urandom writes took 217 ms after a removal (tmpfs 226 ms) against 230-243 ms over
#: the last file, x1.09; through the platform the lambda cell went from 559 to 492 us a call.
#: A 10 KB file's pages are still dirty, not being written back, when the next write truncates
#: it, so those cells overwrite as before, as the thesis's dd did on a warm instance.
#: ``ephemeral_mb``: the /tmp size of the scaled write cells on the lambda profile (MB). The
#: thesis's is not published, but its Lambda wrote a 1,024,000,000 B file, so it had room for one; the scaled
#: write file in a 512 MB /tmp fills half of it, and ext4 then forces writeback and gives up
#: delayed allocation as free space nears twice the dirty data. Measured through the platform
#: (3008 MB, 256 MiB of 128 KiB writes from /dev/zero): 89.5 us a call in a 512 MB /tmp, 52.5 us
#: in a 4096 MB one (the gcf profile's tmpfs 54.5; bare ext4 on nested loop devices 48); with
#: urandom at 2048 MB, lambda / gcf went from x0.98 to x0.84 (the thesis's x0.889). The other
#: cells' files (10 KB, the scaled read file) keep the 512 MB /tmp they were validated on. GCF's
#: /tmp is memory.
SCALED_WRITE = {"drop": True, "ephemeral_mb": 2048}
#: invocations per cell (quick, full)
#: (network, object, kv and cold have 5 quick: the findings' bootstrap interval needs 5 a side,
#: compare.minimums "median"; tmp runs in blocks, one invocation of each cell a block, and its
#: decisions pair lambda and gcf by block (compare.decide): 20 in full, as the findings' paired
#: cells: at c670b1f, unpaired from 10 a side while the machine's calls slowed x1.29, the
#: lambda 1 GB 128 KiB write cell came out [0.743, 1.022] around x0.85 and went undecided where
#: the findings' 20 blocks paired showed x0.880 [0.860, 0.946]; the thesis's is x0.889. cold has 30 in
#: full: STeLLAR's wider cold spread, x2.7 here at caea0a3, is shown by the Brown-Forsythe test in
#: 79 % of campaigns of 30 cold against 20 warm and 61 % of 10 (tests/fidelity/test_findings_spread.py))
REPLICATIONS = {"tmp": (1, 20), "network": (5, 5), "object": (5, 5), "kv": (5, 5),
                "cold": (5, 30), "warm": (5, 20)}
#: requests per storage invocation (quick, full)
REQUESTS = (100, 300)
#: bytes per network invocation (quick, full): the burst (~318 MB) and then baseline
NETWORK_BYTES = (400 * MIB, 600 * MIB)
#: Skyrise measured the network of a 7076 MB function
NETWORK_MEMORY_MB = 7076
#: memory of the storage functions: one full vCPU on Lambda
STORAGE_MEMORY_MB = LAMBDA_MB_PER_VCPU
#: STeLLAR and lambda-perf measured small functions; lambda-perf at 128 MB
NOOP_MEMORY_MB = 128
SEED = 16
#: the fewest samples a burst must span for its rate to count (fewer: one lump, no rate)
MIN_BURST_SAMPLES = 3

#: what the report keeps of the platform's /faascope/health: how it isolates, and which
#: calibration tables, block I/O limits and direct-I/O loop devices were in force
PLATFORM_FACTS = ("version", "isolation", "profile", "cgroup_version", "calibration",
                  "block_io_limits", "tmp_direct_io", "device_cpu")

Say = Callable[[str], None]


@dataclass
class BatteryConfig:
    profiles: tuple[str, ...]
    quick: bool
    workdir: Path
    port: int = 0

    def reps(self, name: str) -> int:
        return REPLICATIONS[name][0 if self.quick else 1]

    def scaled_file(self, op: str) -> int:
        """The file a 1 GB thesis cell of workload op ``read`` or ``write`` runs on."""
        return SCALED_FILE[op][0 if self.quick else 1]

    @property
    def scaled_files(self) -> dict[str, int]:
        return {op: self.scaled_file(op) for op in SCALED_FILE}


@dataclass
class BatteryRun:
    """What the battery measured: the local figure per metric id, the results files, and what
    the local platform said about itself."""
    local: dict[str, Local]
    results: dict[str, str]
    platform: dict[str, Any] = field(default_factory=dict)
    #: workload op -> the file its 1 GB cells ran on
    scaled_files: dict[str, int] = field(default_factory=dict)
    #: CPUs and the 1-minute load average before and after: timings on a loaded machine
    #: include waiting for a CPU, which the report says
    machine: dict[str, Any] = field(default_factory=dict)
    #: what ``run_battery``'s ``after`` returned (the findings' campaigns, run on this platform)
    after: Any = None


def local_file_size(cell: ThesisCell, cfg: BatteryConfig) -> int:
    return cfg.scaled_file(cell.workload_op) if cell.large else cell.file_size


def specs(cfg: BatteryConfig, endpoint: str) -> dict[str, dict]:
    """The battery's specs, as ``faascope run`` takes them."""
    provider = {"kind": "local", "settings": {"endpoint_url": endpoint,
                                              "data_dir": str(cfg.workdir)}}
    big_read, big_write = (format_size(cfg.scaled_file(op)) for op in ("read", "write"))
    out: dict[str, dict] = {
        "tmp": {
            "name": "fidelity-tmp",
            "description": "The 2024 thesis's /tmp cells with dd, as it ran them (the 1 GB file "
                           f"scaled to {big_read} for reads and {big_write} for writes: the time "
                           "per I/O call is compared)",
            "provider": provider,
            "function": {"memory_mb": 128, "ephemeral_mb": 512, "timeout_s": 900},
            "workload": {"kind": "fileio", "engine": "dd", "pattern": "sequential"},
            # both profiles always: the study's decisions compare them
            "factors": {"profile": ["lambda", "gcf"], "memory": [128, 2048],
                        "file_size": ["10KB", big_read, big_write],
                        "io_size": ["512B", "128KiB"],
                        "op": ["read", "write"]},
            "overrides": [{"when": "op == 'read'", "set": {"direct": True, "prepare": True}},
                          {"when": "op == 'write'", "set": {"source": "urandom"}},
                          {"when": f"op == 'write' and file_size == {big_write}",
                           "set": dict(SCALED_WRITE)}],
            # one block per replication: every block runs each cell once, so a slow stretch of
            # the machine lands on both profiles of a decision (the interval never waits: a
            # block takes ~25 s)
            "design": {"type": "full_factorial", "replications": cfg.reps("tmp"), "seed": SEED,
                       "blocking": {"blocks": cfg.reps("tmp"), "interval": "1s"},
                       "rules": ["io_size <= file_size", "memory_mb == 2048 or file_size == 10KB",
                                 f"file_size != {big_read} or op == 'read'",
                                 f"file_size != {big_write} or op == 'write'"]},
        },
    }
    if "lambda" in cfg.profiles:
        nb = NETWORK_BYTES[0 if cfg.quick else 1]
        out["network"] = {
            "name": "fidelity-network", "provider": provider,
            "function": {"memory_mb": NETWORK_MEMORY_MB, "profile": "lambda",
                         "net_shape": "lambda"},
            "workload": {"kind": "network", "direction": "in", "bytes": format_size(nb),
                         "duration_ms": 15000, "interval_ms": 20},
            "factors": {},
            # a fresh instance every time: the one-time burst is spent once per instance and
            # the bucket refills in 2 s, so a warm instance's next transfer starts at baseline
            "design": {"replications": cfg.reps("network"), "seed": SEED, "cold": "every"},
        }
        n = REQUESTS[0 if cfg.quick else 1]
        out["object"] = {
            "name": "fidelity-object", "provider": provider,
            "function": {"memory_mb": STORAGE_MEMORY_MB, "profile": "lambda"},
            "workload": {"kind": "object", "object_size": "1KiB", "count": n},
            "factors": {"op": ["put", "get"]},
            "design": {"replications": cfg.reps("object"), "seed": SEED},
        }
        out["kv"] = {
            "name": "fidelity-kv", "provider": provider,
            "function": {"memory_mb": STORAGE_MEMORY_MB, "profile": "lambda"},
            "workload": {"kind": "kv", "backend": "dynamodb", "item_size": "1KiB", "count": n},
            "factors": {"op": ["put", "get"]},
            "design": {"replications": cfg.reps("kv"), "seed": SEED},
        }
        out["warm"] = {
            "name": "fidelity-warm", "provider": provider,
            "function": {"memory_mb": NOOP_MEMORY_MB, "profile": "lambda"},
            "workload": {"kind": "noop"}, "factors": {},
            "design": {"replications": cfg.reps("warm"), "seed": SEED, "warmup": 1},
        }
    out["cold"] = {
        "name": "fidelity-cold", "provider": provider,
        "function": {"memory_mb": NOOP_MEMORY_MB},
        "workload": {"kind": "noop"},
        "factors": {"profile": list(cfg.profiles)},
        "design": {"replications": cfg.reps("cold"), "seed": SEED, "cold": "every"},
    }
    for s in out.values():
        if not s["factors"]:
            del s["factors"]
    return out


#: the thesis's large-file read that no sandbox setting can move: a memory copy per call
HOST_READ_IO = 131072
#: this machine's own call speed, no sandbox: 512 B writes from /dev/urandom (the thesis's
#: call-bound write cells, which no setting of the lambda profile touches), timed before the
#: battery and after it. On one VM they moved x1.5-2 between runs three hours apart
#: (2026-11-28), with every call-bound cell; a reader tells the machine's drift from the model's
#: by them.
HOST_CALL_IO, HOST_CALL_FILE = 512, 1 << 20


def agent_once(workload: dict, where: Path, runs: int) -> list[dict]:
    """The agent's dd engine run ``runs`` times on this machine itself, no sandbox
    (``faascope-agent --once`` as bench/fileio_engines.py runs it, with its argv, O_DIRECT probe
    and summary parsing), its files in a temporary directory under ``where``: the ``workload``
    summary of each run that succeeded."""
    payload = json.dumps({"workload": {"kind": "fileio", "engine": "dd", **workload}})
    agent = str(agent_binary())
    out: list[dict] = []
    with tempfile.TemporaryDirectory(dir=where, prefix="faascope-host-dd-") as tmp:
        for _ in range(runs):
            p = subprocess.run([agent, "--once", payload], capture_output=True, text=True,
                               env={**os.environ, "TMPDIR": tmp})
            if p.returncode == 0:
                out.append(json.loads(p.stdout)["workload"])
    return out


def bare_dd(workload: dict, runs: int = 5) -> Optional[float]:
    """Seconds a call of the agent's own dd engine takes on this machine itself, no sandbox
    (:func:`agent_once`), its files in /dev/shm (tmpfs, as GCF's /tmp is memory). The median of a
    few runs, not the least: a run can find part of the file still in the CPU's cache (measured
    19 µs against 32-34 for the others). None where /dev/shm or dd is missing."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shutil.which("dd") is None:
        return None
    times = [w["elapsed_s"] / w["ops"] for w in agent_once(workload, shm, runs)]
    return median(times) if times else None


def host_memory_read(size: int, io_size: int = HOST_READ_IO, runs: int = 5) -> Optional[float]:
    """Seconds a dd call takes to read io_size bytes of a size-byte file in memory on this
    machine itself (:func:`bare_dd`). It measures this machine's memory copy, to which the gcf
    profile's 128 KiB read cell adds only its CPU quota and system calls."""
    return bare_dd({"op": "read", "direct": True, "prepare": True, "file_size": size,
                    "io_size": io_size}, runs)


def host_call_write(runs: int = 5) -> Optional[float]:
    """Seconds a 512 B dd write from /dev/urandom takes on this machine itself (:func:`bare_dd`):
    the reference of its call speed (:data:`HOST_CALL_IO`)."""
    return bare_dd({"op": "write", "source": "urandom", "file_size": HOST_CALL_FILE,
                    "io_size": HOST_CALL_IO}, runs)


#: this machine's own disk under the thesis's 10 KB direct reads (20 reads of 512 B, the
#: findings-cv workload), no sandbox, on the battery's work directory (the filesystem behind
#: the platform's /tmp loop devices): the median and CV of HOST_DISK_RUNS runs, before the
#: battery and after it. On 2026-11-29 one VM's bare runs went from a 1.0 ms median with a tight
#: spread to 1.67 ms, p90 5.3 ms, p99 25 ms (CV 1.8) between sessions, and the 2048 MB cell's
#: CV with them (0.45-1.0 against the thesis's 0.32).
HOST_DISK_FILE, HOST_DISK_IO, HOST_DISK_RUNS = 10_000, 512, 60


def host_disk_read(where: Path, runs: int = HOST_DISK_RUNS) -> Optional[dict]:
    """The median (s) and CV of ``runs`` runs of the agent's dd engine reading a 10 KB file in
    512 B direct reads in ``where``, no sandbox (:func:`agent_once`); None where dd is missing
    or O_DIRECT is refused there (tmpfs)."""
    if shutil.which("dd") is None:
        return None
    where.mkdir(parents=True, exist_ok=True)
    got = agent_once({"op": "read", "direct": True, "prepare": True, "file_size": HOST_DISK_FILE,
                      "io_size": HOST_DISK_IO}, where, runs)
    if any(w.get("direct_effective") is False for w in got) or len(got) < 2:
        return None
    t = np.asarray([w["elapsed_s"] for w in got])
    return {"median_s": float(np.median(t)), "cv": float(t.std(ddof=1) / t.mean()), "n": len(t)}


#: the campaigns whose finding rests on this machine's disk as much as on the profile: the 10 KB
#: direct reads' spread at 128 and 2048 MB (findings-cv). The disk probe (host_disk_read) runs
#: right after each run of one; where it read a CV over compare.HOST_DISK_CV the campaign runs
#: again (STEAL_REPEATS times at most, as for the hypervisor), once the probe reads calm or
#: DISK_CALM_WAIT_S have passed. The decision rests on the bare disk, never on what the campaign
#: measured. At d22ef3f the probe went from CV 0.17 to 0.61 over the battery, findings-cv's
#: 2048 MB reads had a CV of 0.69 (the thesis: 0.32), and alone, five minutes later with the
#: probe at 0.18-0.22, 0.20.
DISK_BOUND = ("findings-cv",)
DISK_CALM_WAIT_S, DISK_CALM_POLL_S = 240.0, 20.0


def wait_for_calm_disk(where: Path, wait_s: float, poll_s: float) -> tuple[Optional[dict], float]:
    """Read the disk probe in ``where`` every ``poll_s`` until its CV is HOST_DISK_CV or less, or
    ``wait_s`` have passed: (the last reading, the seconds waited)."""
    start = time.monotonic()
    while True:
        got = host_disk_read(where)
        waited = time.monotonic() - start
        if disk_calm(got) or waited >= wait_s:
            return got, round(waited, 1)
        time.sleep(poll_s)


def run_kept(spec: Path, steal: StealLog, say: Say, console: Any = None,
             calm_wait_s: float = DISK_CALM_WAIT_S) -> Path:
    """Run the campaign ``spec``, measured into ``steal`` under its file's stem, once more when
    the hypervisor took STEAL_NOTE or more of this machine's CPU time during it (STEAL_REPEATS),
    or, for a DISK_BOUND campaign, when the disk probe after it read a CV over HOST_DISK_CV;
    return the results file kept. A repeat starts afresh in a file of its own beside the run it
    replaces, which stays for reading. A DISK_BOUND campaign's probe readings go in
    ``steal.disk[stem]``, one entry a run (``after`` it; ``before`` it and ``waited_s`` for a
    repeat; ``calm_wait_s`` bounds the wait for a calm disk, 0 for --quick, whose campaigns
    are shorter than the wait)."""
    name, where = spec.stem, spec.parent
    disk_bound = name in DISK_BOUND
    runs: list[dict] = [{"run": 1}] if disk_bound else []

    def attempt(k: int) -> Path:
        db = spec.with_suffix(".db") if k == 1 else spec.with_name(f"{name}-run{k}.db")
        run_campaign(spec, db, progress=False, console=console)
        return db

    def calm(k: int) -> bool:
        got = host_disk_read(where)
        runs[-1]["after"] = got
        return disk_calm(got)

    def before_repeat(k: int) -> None:
        f = steal.fractions.get(name)
        if f is not None and f >= STEAL_NOTE:
            why = f"the hypervisor took {STEAL_NOTE:.0%} or more of this machine's CPU time during run {k - 1}"
        else:
            why = (f"this machine's own disk varied after run {k - 1} (10 KB direct reads with no "
                   f"sandbox: CV {runs[-1]['after']['cv']:.2f}, over {HOST_DISK_CV:.2f})")
        if disk_bound:
            now, waited = wait_for_calm_disk(where, calm_wait_s, DISK_CALM_POLL_S)
            runs.append({"run": k, "before": now, "waited_s": waited})
            why += f"; the disk read CV {now['cv']:.2f} after a wait of {waited:.0f} s" if now else ""
        say(f"fidelity: {name} again (run {k}): {why}")

    kept = steal.run(name, attempt, limit=STEAL_NOTE, repeats=STEAL_REPEATS,
                     calm=calm if disk_bound else None, before_repeat=before_repeat)
    if disk_bound:
        steal.disk[name] = runs
    return kept


def run_battery(cfg: BatteryConfig, say: Say, console: Any = None,
                after: Optional[Callable[[str, dict[str, str], StealLog], Any]] = None) -> BatteryRun:
    """Start a platform, run every campaign of the battery through ``run_campaign``, read the
    local figures, stop the platform. ``after(endpoint, results, steal)`` runs on the same
    platform once the battery's campaigns are done (the findings' campaigns, each measured into
    ``steal`` too); its value is kept."""
    cfg.workdir.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()[0]
    steal = StealLog()  # what the hypervisor took from this machine's CPUs, per campaign
    # before the platform loads the machine
    host_read = host_memory_read(cfg.scaled_file("read"))
    host_call_before = host_call_write()
    host_disk = {"before": host_disk_read(cfg.workdir)}
    pdir = cfg.workdir / "platform"
    # a shared directory for the sharedfs workloads of the findings' campaigns (EFS's stand-in)
    state = local_platform.start(profile="lambda", data_dir=pdir, port=cfg.port,
                                 shared_dir=cfg.workdir / "shared")
    try:
        health = local_platform.health(state["endpoint"]) or {}
        results: dict[str, str] = {}
        for name, spec in specs(cfg, state["endpoint"]).items():
            path = cfg.workdir / f"{name}.yaml"
            path.write_text(yaml.safe_dump(spec, sort_keys=False))
            say(f"fidelity: {name} ({path})")
            results[name] = str(run_kept(path, steal, say, console))
        extra = after(state["endpoint"], dict(results), steal) if after else None
    finally:
        local_platform.stop(pdir)
        # its functions were deleted by the campaigns; what is left is a code store (~10 MB a
        # run) nothing reads again. The log stays, beside the results files.
        shutil.rmtree(pdir / "platform", ignore_errors=True)
        shutil.rmtree(cfg.workdir / "shared", ignore_errors=True)
    host_call_after = host_call_write()
    host_disk["after"] = host_disk_read(cfg.workdir)
    host_call = None if None in (host_call_before, host_call_after) else (host_call_before, host_call_after)
    local = read_all(cfg, {k: Path(v) for k, v in results.items()})
    platform = {k: health.get(k) for k in PLATFORM_FACTS if k in health}
    for key, v in local.items():
        if "/tmp/" in key:
            # what the explanation of a /tmp figure may rest on: calibrated limits in force or not
            v.facts.update(calibrated=bool(health.get("calibration")),
                           block_io_limits=health.get("block_io_limits"),
                           tmp_direct_io=health.get("tmp_direct_io"))
            if host_read is not None and key.endswith(f"/io{HOST_READ_IO}") and "/direct_read/" in key:
                v.facts["host_read_per_call_s"] = host_read
            if host_call is not None and "/urandom_write/" in key:
                v.facts["host_call_per_call_s"] = host_call
    machine = {"cpus": os.cpu_count(), "load_1min_before": round(load_before, 2),
               "load_1min_after": round(os.getloadavg()[0], 2)}
    if host_read is not None:
        machine["host_memory_read_per_call_s"] = {"io_size": HOST_READ_IO, "file_size": cfg.scaled_file("read"),
                                                  "seconds": host_read}
    if host_call is not None:
        machine["host_urandom_write_per_call_s"] = {"io_size": HOST_CALL_IO, "file_size": HOST_CALL_FILE,
                                                    "before": host_call[0], "after": host_call[1]}
    if steal.disk:
        host_disk["campaigns"] = steal.disk
    if any(host_disk.values()):
        machine["host_direct_read_10kb"] = {"file_size": HOST_DISK_FILE, "io_size": HOST_DISK_IO,
                                            **host_disk}
    if any(v is not None for v in steal.fractions.values()):
        machine["cpu_steal"] = steal.fractions
    if steal.repeated:
        machine["cpu_steal_repeated"] = steal.repeated
    return BatteryRun(local=local, results=results, platform=platform,
                      scaled_files=cfg.scaled_files, machine=machine, after=extra)


# ------------------------------------------------------------------------------ reading
def read_all(cfg: BatteryConfig, results: dict[str, Path]) -> dict[str, Local]:
    """The local figure of every metric the battery's results files hold."""
    readers = {"tmp": lambda db: read_tmp(db, cfg), "network": read_network,
               "object": lambda db: read_storage(db, "object"),
               "kv": lambda db: read_storage(db, "kv"), "warm": read_warm, "cold": read_cold}
    local: dict[str, Local] = {}
    for name, db in results.items():
        local.update(_with_failures(readers[name](db), db))
    return local


def _measured(db: Path) -> pd.DataFrame:
    with ResultsFile(db) as rf:
        rf.require_campaign()
        df = rf.flat(include_warmups=True)
    df, _ = measured_only(df)
    return df


def failures(db: Path) -> str:
    """How many measured invocations of a results file failed, and the first error, or ""."""
    with ResultsFile(db) as rf:
        df = rf.flat(include_warmups=False)
    failed = df[pd.to_numeric(df["ok"], errors="coerce").fillna(0) == 0]
    if failed.empty:
        return ""
    first = failed.iloc[0]
    msg = str(first.get("error_message") or "")[:160]
    return f"{len(failed)} of {len(df)} invocations failed ({first.get('error_type')}: {msg})"


def _with_failures(local: dict[str, Local], db: Path) -> dict[str, Local]:
    """Every figure read from ``db`` notes the invocations that failed there."""
    note = failures(db)
    if note:
        for v in local.values():
            v.note = f"{v.note}; {note}" if v.note and v.note != "no successful invocation" else note
    return local


def _median(values) -> Optional[float]:
    vals = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return median(vals) if vals else None


def _bool(v) -> Optional[bool]:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return bool(int(v)) if not isinstance(v, str) else v.lower() in ("1", "true")


def replications(df: pd.DataFrame) -> range:
    """The replications of a campaign's rows, 0 to the highest one (empty without rows): in a
    campaign with one block per replication, its blocks."""
    return range(int(pd.to_numeric(df["replication"]).max()) + 1) if len(df) else range(0)


def by_replication(replication, values, reps: range) -> np.ndarray:
    """``values`` indexed by their ``replication`` (0 .. len(reps) - 1; NaN where none is
    there): in a campaign with one block per replication, replication i ran in block i, so two
    cells' arrays pair by block."""
    s = pd.Series(pd.to_numeric(values).to_numpy(float),
                  index=pd.to_numeric(replication).astype(int).to_numpy())
    return s.groupby(level=0).first().reindex(reps).to_numpy(float)


def read_tmp(db: Path, cfg: BatteryConfig) -> dict[str, Local]:
    """Time per dd I/O call per profile and thesis cell (median over invocations), with the
    values by block (replication i ran in block i; NaN where it failed) for the decisions."""
    df = _measured(db)
    blocks = replications(df)
    out: dict[str, Local] = {}
    for profile in ("lambda", "gcf"):
        for c in THESIS_CELLS:
            size = local_file_size(c, cfg)
            sel = df[(df["profile"] == profile) & (pd.to_numeric(df["memory"]) == c.memory_mb)
                     & (pd.to_numeric(df["file_size"]) == size)
                     & (pd.to_numeric(df["io_size"]) == c.io_size) & (df["op"] == c.workload_op)]
            per_call_all = pd.to_numeric(sel["latency_seconds"]) / pd.to_numeric(sel["ops"])
            per_call = per_call_all.dropna()
            direct = [_bool(v) for v in sel["direct_effective"]] if c.op == "direct_read" else []
            facts = {"memory_mb": c.memory_mb, "file_size": size,
                     "ops": _median(pd.to_numeric(sel["ops"]))}
            if direct and any(d is not None for d in direct):
                facts["direct_effective"] = all(d for d in direct if d is not None)
            note = ""
            if c.large:
                note = f"file {format_size(size)} instead of {c.file_size:,} B"
            if direct and facts.get("direct_effective") is False:
                note = (note + "; " if note else "") + "O_DIRECT refused: buffered reads"
            value = _median(per_call) if len(per_call) else None
            out[f"{profile}/tmp/{c.op}/m{c.memory_mb}/f{c.file_size}/io{c.io_size}"] = Local(
                value=value, n=len(per_call), note=note if value is not None else
                (note or "no successful invocation"), facts=facts, samples=tuple(per_call),
                blocks=tuple(by_replication(sel["replication"], per_call_all, blocks)))
    return out


@dataclass
class BurstFigures:
    """Per invocation with a burst: bytes moved in it, its rate (only when it spans at least
    MIN_BURST_SAMPLES samples), the baseline after it; steady rates of invocations without one."""
    burst_bytes: list[float] = field(default_factory=list)
    burst_rate: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    steady: list[float] = field(default_factory=list)
    lumps: int = 0


def burst_figures(series: list[tuple[np.ndarray, float]]) -> BurstFigures:
    """The token bucket fitted to each invocation's series of bytes per interval."""
    out = BurstFigures()
    for b, interval in series:
        try:
            fit = fit_token_bucket(b, interval, seed=SEED)
        except ValueError:
            continue
        if fit.knee and fit.burst_bytes_per_s and fit.burst_end_s is not None:
            span = max(fit.burst_end_s - fit.start_s, 0.0)
            out.burst_bytes.append(fit.burst_bytes_per_s * span)
            out.baseline.append(fit.refill_bytes_per_s)
            # a burst that arrived within a couple of samples (a receiver kept off the CPU,
            # then handed a lump) has no measurable rate
            if span >= MIN_BURST_SAMPLES * interval:
                out.burst_rate.append(fit.burst_bytes_per_s)
            else:
                out.lumps += 1
        else:
            out.steady.append(fit.refill_bytes_per_s)
    return out


def read_network(db: Path) -> dict[str, Local]:
    """Burst bytes, burst rate and baseline fitted per invocation (median over invocations)."""
    df = _measured(db)
    with ResultsFile(db) as rf:
        samples = rf.network_samples()
    samples = samples[(samples["direction"] == "in")
                      & samples["invocation_id"].isin(df["invocation_id"])]
    series = [(pd.to_numeric(g.sort_values("sample")["bytes"]).to_numpy(float),
               float(g["interval_s"].iloc[0])) for _, g in samples.groupby("invocation_id")]
    f = burst_figures(series)
    burst_bytes, burst_rate, baseline, steady, lumps = (
        f.burst_bytes, f.burst_rate, f.baseline, f.steady, f.lumps)
    interval = series[0][1] if series else 0.02
    n = len(burst_bytes)
    facts = {"no_burst": n == 0 and bool(steady)}
    rate_facts = dict(facts, burst=True)
    note = rate_note = ""
    if n == 0:
        note = rate_note = (f"no burst visible: a steady {np.median(steady) / 1e6:.3g} MB/s"
                            if steady else "no successful network invocation")
    elif lumps:
        rate_note = (f"{lumps} of {n} bursts arrived within {MIN_BURST_SAMPLES} samples "
                     f"({MIN_BURST_SAMPLES * interval * 1e3:.0f} ms): no rate measurable there")
    out = {
        "lambda/network/burst_bytes": Local(_median(burst_bytes), n, note, facts),
        "lambda/network/burst_rate": Local(_median(burst_rate), len(burst_rate), rate_note,
                                           rate_facts),
        # without a burst the steady rate is the baseline
        "lambda/network/baseline_rate": Local(_median(baseline or steady), n or len(steady),
                                              note if n == 0 and not steady else "", facts),
    }
    return out


def read_storage(db: Path, name: str) -> dict[str, Local]:
    """Request latency median and p99 per operation (median over invocations)."""
    df = _measured(db)
    service = "s3_standard" if name == "object" else "dynamodb"
    out: dict[str, Local] = {}
    for op, what in (("put", "write"), ("get", "read")):
        sel = df[df["op"] == op]
        for stat, col in (("median", "request_p50_s"), ("p99", "request_p99_s")):
            vals = pd.to_numeric(sel[col]).dropna()
            reqs = int(pd.to_numeric(sel["request_count"]).fillna(0).sum())
            out[f"lambda/storage/{service}/{what}/{stat}"] = Local(
                _median(vals), len(vals),
                f"{reqs} requests in {len(vals)} invocation(s)" if len(vals) else
                "no successful invocation")
    return out


def read_cold(db: Path) -> dict[str, Local]:
    """Cold invocation latency (client) per profile; the runtime's init on the lambda profile."""
    df = _measured(db)
    out: dict[str, Local] = {}
    for profile in ("lambda", "gcf"):
        sel = df[(df["profile"] == profile)]
        if sel.empty:
            continue
        cold = sel[[bool(_bool(v)) for v in sel["cold"]]]
        # the platform's set-up includes the profile's modelled cold-start cost, if it has one
        setup = _median(pd.to_numeric(cold["platform_setup_ms"]).dropna())
        init = _median(pd.to_numeric(cold["platform_init_ms"]).dropna())
        parts = f"platform set-up (modelled part included) {setup:.0f} ms" if setup is not None else ""
        if init is not None:
            parts += f", runtime init {init:.0f} ms"
        lat = pd.to_numeric(cold["client_latency_seconds"]).dropna()
        out[f"{profile}/cold/latency"] = Local(_median(lat), len(lat),
                                               f"medians: {parts}" if parts else "")
        if profile == "lambda":
            inits = pd.to_numeric(cold["platform_init_ms"]).dropna() / 1000.0
            out["lambda/cold/init"] = Local(_median(inits), len(inits),
                                            "the platform's X-Faascope-Init-Ms (Lambda's Init Duration)")
    return out


def read_warm(db: Path) -> dict[str, Local]:
    df = _measured(db)
    warm = df[[not bool(_bool(v)) for v in df["cold"]]]
    lat = pd.to_numeric(warm["client_latency_seconds"]).dropna()
    return {"lambda/warm/latency": Local(_median(lat), len(lat))}
