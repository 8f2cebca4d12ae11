"""Soak with a hostile neighbour: are well-behaved functions' measurements unaffected?

One platform, one run. Well-behaved functions (the agent's noop, spin and 4 MiB fileio write and
direct read, each its own function at 1769 MB = 1 vCPU) are invoked in a fixed rotation by one
client thread, in blocks ordered A B A C, A B A C, …:

  A  alone: no neighbour invoked; the neighbours' instances were retired after the previous
     block (counted through /faascope/instances at each A block's start: must be 0);
  B  beside two hostile functions (a tiny static Go Lambda runtime, the isolation tests'
     agent/platform/testdata/hostile, built here with CGO_ENABLED=0 and deployed through boto3 like
     any function), invoked back to back by a second thread. Every hostile invocation adds keys to
     its user and session keyrings and looks for the key its twin tried to add (keyctl search and
     /proc/keys), takes every inotify instance it can (and keeps them), tries unshare(user/mount),
     clone(CLONE_NEWUSER), mount, umount, keyctl, ptrace and `unshare -Urm`, floods the Runtime API
     with connections each asking for /next, and leaves one more background CPU spinner behind
     after its response (up to --hostile-spinners per sandbox);
  C  the control: beside two benign functions of the same size kept as busy (the agent
     spinning back to back), so B/C separates what hostility adds from ordinary CPU sharing
     with a busy neighbour on a machine with few cores.

Invocations that straddle a block switch, and cold starts, are left out. Per workload it prints
the round-trip latency in each phase (median, p95, p99, n), the B/A, C/A and B/C ratios of
medians with a two-level bootstrap interval (blocks resampled, then invocations within them, so
block-to-block drift widens the interval instead of masquerading as interference) and each
neighbour block's ratio to the A block before it; then what the hostile functions got, attempt
by attempt; then the soak's leak check (processes, cgroups, mounts, loop devices, sandbox dirs
back to baseline once every function is deleted). Writes JSON; exits 1 if anything leaked, a
well-behaved invocation failed or a hostile attempt succeeded.

    python bench/soak_hostile.py [--cycles 3] [--block-seconds 12] [--port 0] [--data-dir D]
        [--neighbour-memory 1024] [--flood 300] [--out bench/out/soak_hostile.json]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

GOOD = {  # function name -> workload, fixed sizes
    "good-noop": {"kind": "noop"},
    "good-spin": {"kind": "spin", "iterations": 20_000_000},
    "good-write": {"kind": "fileio", "op": "write", "file_size": 4 << 20, "io_size": 128 << 10},
    "good-read": {"kind": "fileio", "op": "read", "file_size": 4 << 20, "io_size": 128 << 10, "direct": True},
}
HOSTILE = ("hostile-a", "hostile-b")
# The control neighbour: the agent spinning, as busy as the hostile functions' spinners keep them
# (a single thread saturates a 0.58 vCPU quota), so B/C is what the hostility adds to a busy neighbour.
CONTROL = ("busy-a", "busy-b")
CONTROL_WORKLOAD = {"kind": "spin", "iterations": 60_000_000}

# The hostile runtime is the one the platform's isolation tests deploy (its operation "attack" is
# this soak's): one source, built from the agent's module here as isolation_test.go builds it.
HOSTILE_SRC = Path(__file__).resolve().parents[1] / "agent" / "platform" / "testdata" / "hostile"


def attack_request(name: str, twin: str, i: int, flood: int, spinners: int) -> dict:
    """The hostile runtime's "attack" request for invocation i of function name (its twin's key
    is the one the twin added on invocation i - 1)."""
    return {"op": "attack", "add_desc": f"soak-{name}-{i}", "find_desc": f"soak-{twin}-{i - 1}",
            "flood": flood, "max_spinners": spinners}


# --- statistics (pure; tested in tests/reliability/test_soak_hostile_stats.py) -----------------

def percentile(xs: list[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation between order statistics (numpy's default)."""
    if not xs:
        raise ValueError("no observations")
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def median(xs: list[float]) -> float:
    return percentile(xs, 0.5)


def summary(xs: list[float]) -> dict:
    return {"n": len(xs), "median": median(xs), "p95": percentile(xs, 0.95), "p99": percentile(xs, 0.99)}


def ratio_ci(a_blocks: list[list[float]], b_blocks: list[list[float]], reps: int = 2000,
             level: float = 0.95, seed: int = 1) -> tuple[float, float, float]:
    """B/A ratio of medians and a two-level percentile bootstrap interval.

    Each replicate draws as many blocks as each phase has, with replacement, then invocations
    with replacement within each drawn block; so variation between blocks of the same phase (drift,
    a neighbour's burst) widens the interval. Empty blocks are ignored; a phase with no
    observations is an error."""
    a_blocks = [b for b in a_blocks if b]
    b_blocks = [b for b in b_blocks if b]
    if not a_blocks or not b_blocks:
        raise ValueError("each phase needs observations")
    point = median([x for b in b_blocks for x in b]) / median([x for b in a_blocks for x in b])
    rng = random.Random(seed)

    def draw(blocks: list[list[float]]) -> list[float]:
        out: list[float] = []
        for _ in blocks:
            blk = blocks[rng.randrange(len(blocks))]
            out.extend(rng.choices(blk, k=len(blk)))
        return out

    ratios = sorted(median(draw(b_blocks)) / median(draw(a_blocks)) for _ in range(reps))
    tail = (1 - level) / 2
    return point, percentile(ratios, tail), percentile(ratios, 1 - tail)


def pair_ratios(blocks: list[dict], phase: str) -> list[float]:
    """Median of each `phase` block over the median of the A block just before it (run order)."""
    out = []
    for prev, blk in zip(blocks, blocks[1:]):
        if blk["phase"] == phase and prev["phase"] == "A" and prev["obs"] and blk["obs"]:
            out.append(median(blk["obs"]) / median(prev["obs"]))
    return out


def block_order(cycles: int) -> list[str]:
    """A B A C per cycle: every neighbour block has an alone block on each side."""
    return ["A", "B", "A", "C"] * cycles


def tally_hostile(replies: list[dict]) -> dict:
    """Per attempt, how often each outcome came back (flood: summed answers per status)."""
    t: dict[str, Counter] = {}
    flood: Counter = Counter()
    for r in replies:
        for k, v in r.items():
            if k == "flood":
                flood.update(v)
            elif k not in ("uid", "proc_keys_lines", "inotify_held", "spinners_alive"):
                t.setdefault(k, Counter())[str(v)] += 1
    out = {k: dict(v) for k, v in sorted(t.items())}
    out["flood"] = dict(flood)
    if replies:
        out["proc_keys_lines_max"] = max(r.get("proc_keys_lines", 0) for r in replies)
        out["inotify_held_max"] = max(r.get("inotify_held", 0) for r in replies)
        out["spinners_alive_max"] = max(r.get("spinners_alive", 0) for r in replies)
        out["uids"] = sorted({r.get("uid") for r in replies})
    return out


# Attempts that must fail, and the outcome that counts as refused.
REFUSED = {"add_key_user": {"EPERM"}, "add_key_session": {"EPERM"}, "keyctl_search": {"EPERM"},
           "keyctl": {"EPERM"}, "unshare_user": {"EPERM"}, "unshare_mount": {"EPERM"}, "mount": {"EPERM"},
           "umount": {"EPERM"}, "clone_newuser": {"EPERM"}, "ptrace": {"EPERM"}, "found_twin_key": {"False"}}


def hostile_successes(tally: dict) -> dict:
    """The attempts with any outcome other than refused (unshare -Urm: anything giving uid 0)."""
    bad = {k: {o: n for o, n in tally.get(k, {}).items() if o not in ok} for k, ok in REFUSED.items()}
    bad = {k: v for k, v in bad.items() if v}
    uid0 = {o: n for o, n in tally.get("unshare_cmd", {}).items() if o.startswith("0 ")}
    if uid0:
        bad["unshare_cmd"] = uid0
    return bad


# --- the run -------------------------------------------------------------------------------------

def build_hostile(workdir: Path) -> bytes:
    import zipfile
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-buildvcs=false")
    subprocess.run(["go", "build", "-trimpath", "-o", str(workdir.resolve() / "bootstrap"), "."], cwd=HOSTILE_SRC,
                   env=env, check=True, capture_output=True)
    zpath = workdir / "hostile.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as z:
        info = zipfile.ZipInfo("bootstrap")
        info.external_attr = 0o755 << 16
        z.writestr(info, (workdir / "bootstrap").read_bytes())
    return zpath.read_bytes()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=3, help="A B A C cycles (default 3)")
    ap.add_argument("--block-seconds", type=float, default=12, help="length of each block (default 12)")
    ap.add_argument("--settle-seconds", type=float, default=1.0, help="pause after each switch, not measured")
    ap.add_argument("--neighbour-memory", type=int, default=1024,
                    help="MB of each hostile and control function (default 1024 = 0.58 vCPU; with the "
                         "1 vCPU well-behaved function the quotas stay below 2 cores)")
    ap.add_argument("--good-memory", type=int, default=1769)
    ap.add_argument("--hostile-spinners", type=int, default=4, help="spinners left behind per hostile sandbox")
    ap.add_argument("--flood", type=int, default=300, help="Runtime API connections per hostile invocation")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--data-dir", default=None, help="platform data dir (default: a new temporary one)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out" / "soak_hostile.json"))
    ap.add_argument("--quick", action="store_true", help="1 cycle of 4 s blocks, flood 50")
    args = ap.parse_args()
    if args.quick:
        args.cycles, args.block_seconds, args.flood = 1, 4, min(args.flood, 50)

    import glob

    import boto3
    from botocore.config import Config

    from faascope.providers import local_platform
    from faascope.providers.packaging import build_zip
    from soak import cgroup_parent_of, platform_resources

    load_start = os.getloadavg()
    data = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="faascope-soak-hostile-"))
    data.mkdir(parents=True, exist_ok=True)
    hostile_zip = build_hostile(data / "build")
    state = local_platform.start(profile="lambda", data_dir=data, port=args.port, keep_alive="30m", concurrency=16)
    pid, endpoint = state["pid"], state["endpoint"]
    cg = cgroup_parent_of(data)
    client = boto3.client("lambda", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x",
                          config=Config(retries={"total_max_attempts": 1}, read_timeout=60, max_pool_connections=8))
    agent_zip = build_zip(data / "fn.zip").read_bytes()

    def instances() -> list[dict]:
        with urllib.request.urlopen(endpoint + "/faascope/instances", timeout=10) as r:
            return json.loads(r.read()) or []

    def platform_cpu_s() -> float:  # the platform process's own threads (not its sandboxes)
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    def sandbox_cpu_s(functions: tuple) -> float:  # cpuacct of these functions' live instances
        total = 0
        for i in instances():
            if i.get("function") in functions:
                try:
                    total += int(Path(f"/sys/fs/cgroup/cpuacct/{cg}/{i['id']}/cpuacct.usage").read_text())
                except (OSError, ValueError):
                    pass
        return total / 1e9

    def create(name: str, code: bytes, memory: int) -> None:
        client.create_function(FunctionName=name, Runtime="provided.al2023", Role="arn:aws:iam::000000000000:role/faascope-soak", Handler="bootstrap",
                               Code={"ZipFile": code}, MemorySize=memory, Timeout=30)

    before = platform_resources(pid, data, cg)
    for name in GOOD:
        create(name, agent_zip, args.good_memory)
    for name in HOSTILE:
        create(name, hostile_zip, args.neighbour_memory)
    for name in CONTROL:
        create(name, agent_zip, args.neighbour_memory)
    for name, w in GOOD.items():  # cold starts and the first file layout out of the way
        for _ in range(3):
            client.invoke(FunctionName=name, Payload=json.dumps({"workload": w}))

    lock = threading.Lock()
    label: list = [None]  # index of the block being measured, None while switching
    blocks: list[dict] = []
    good_failures: list[dict] = []
    cold_left_out: Counter = Counter()
    stop_all = threading.Event()

    def measure() -> None:
        while not stop_all.is_set():
            for name, w in GOOD.items():
                with lock:
                    at_start = label[0]
                t0 = time.perf_counter()
                try:
                    r = client.invoke(FunctionName=name, Payload=json.dumps({"workload": w}))
                    body = json.loads(r["Payload"].read())
                except Exception as exc:  # noqa: BLE001 - a finding
                    good_failures.append({"fn": name, "error": f"{type(exc).__name__}: {exc}"[:300], "block": at_start})
                    continue
                rt_ms = (time.perf_counter() - t0) * 1000
                with lock:
                    at_end = label[0]
                if not body.get("ok"):
                    good_failures.append({"fn": name, "reply": body, "block": at_start})
                    continue
                if at_start is None or at_start != at_end:
                    continue
                if r["ResponseMetadata"]["HTTPHeaders"].get("x-faascope-cold") == "true" or body.get("cold"):
                    cold_left_out[name] += 1
                    continue
                tm = body.get("timings") or {}
                blocks[at_start]["obs"].setdefault(name, []).append(rt_ms)
                if tm.get("workload_end_ns") and tm.get("workload_start_ns"):
                    blocks[at_start]["work"].setdefault(name, []).append(
                        (tm["workload_end_ns"] - tm["workload_start_ns"]) / 1e6)

    neighbour = {"phase": None}  # "B" or "C" while a neighbour runs
    neighbour_busy = threading.Event()  # a neighbour invocation is in flight
    hostile_replies: list[dict] = []
    neighbour_errors: list[dict] = []
    neighbour_rt: dict[str, list[float]] = {"B": [], "C": []}

    def neighbours() -> None:
        i = 0
        while not stop_all.is_set():
            neighbour_busy.set()
            phase = neighbour["phase"]
            if phase is None:
                neighbour_busy.clear()
                time.sleep(0.05)
                continue
            if phase == "B":
                name, twin = HOSTILE[i % 2], HOSTILE[(i + 1) % 2]
                req = attack_request(name, twin, i, args.flood, args.hostile_spinners)
            else:
                name, req = CONTROL[i % 2], {"workload": CONTROL_WORKLOAD}
            t0 = time.perf_counter()
            try:
                r = client.invoke(FunctionName=name, Payload=json.dumps(req))
                body = json.loads(r["Payload"].read())
                neighbour_rt[phase].append((time.perf_counter() - t0) * 1000)
                if r.get("FunctionError") or (phase == "C" and not body.get("ok")):
                    neighbour_errors.append({"fn": name, "reply": body})
                elif phase == "B":
                    hostile_replies.append(body)
            except Exception as exc:  # noqa: BLE001
                neighbour_errors.append({"fn": name, "error": f"{type(exc).__name__}: {exc}"[:300]})
            neighbour_busy.clear()
            i += 1

    threads = [threading.Thread(target=measure), threading.Thread(target=neighbours)]
    for t in threads:
        t.start()
    neighbours_left_in_a: list[int] = []
    t_run = time.monotonic()
    for k, phase in enumerate(block_order(args.cycles)):
        if phase == "A":  # nothing of the neighbours may be left: count their instances
            neighbours_left_in_a.append(sum(1 for i in instances() if i.get("function") in HOSTILE + CONTROL))
        else:
            neighbour["phase"] = phase
        time.sleep(args.settle_seconds)
        blocks.append({"phase": phase, "obs": {}, "work": {}, "t0": time.monotonic() - t_run})
        pcpu0, t0 = platform_cpu_s(), time.monotonic()
        with lock:
            label[0] = k
        time.sleep(args.block_seconds)
        with lock:
            label[0] = None
        wall = time.monotonic() - t0
        blocks[-1]["platform_cpu"] = (platform_cpu_s() - pcpu0) / wall
        # neighbour instances are new in each block (retired after it), so their total is the block's
        blocks[-1]["neighbour_cpu"] = sandbox_cpu_s(HOSTILE + CONTROL) / wall
        if phase != "A":  # stop the neighbour, then retire its instances (spinners, hoards and all)
            neighbour["phase"] = None
            while neighbour_busy.is_set():
                time.sleep(0.02)
            for name in HOSTILE if phase == "B" else CONTROL:
                client.update_function_configuration(FunctionName=name, Environment={"Variables": {"BLOCK": str(k)}})
                client.get_waiter("function_updated_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1})
    stop_all.set()
    for t in threads:
        t.join()

    # the leak check: delete everything, let teardown finish, compare with the baseline
    for name in list(GOOD) + list(HOSTILE) + list(CONTROL):
        client.delete_function(FunctionName=name)
    time.sleep(3)
    after = platform_resources(pid, data, cg)
    load_end = os.getloadavg()
    local_platform.stop(data)
    platform_log = [line for line in (data / "platform.log").read_text(errors="replace").splitlines()
                    if "failed" in line or "panic" in line][:20]
    leftover_cgroups = glob.glob(f"/sys/fs/cgroup/memory/{cg}/*/")
    if not args.data_dir:
        shutil.rmtree(data, ignore_errors=True)
    grew = {k: (before[k], after[k]) for k in before
            if k not in ("rss_kib", "fds", "threads", "data_dir_bytes") and after[k] > before[k]}
    if after["fds"] > before["fds"] + 8:
        grew["fds"] = (before["fds"], after["fds"])

    per_workload = {}
    for name in GOOD:
        by_phase = {p: [b["obs"].get(name, []) for b in blocks if b["phase"] == p] for p in "ABC"}
        flat = {p: [x for blk in v for x in blk] for p, v in by_phase.items()}
        if not all(flat.values()):
            per_workload[name] = {"error": "no observations in a phase"}
            continue
        entry = {"workload": GOOD[name], **{p: summary(flat[p]) for p in "ABC"}}
        for p in "BC":
            point, lo, hi = ratio_ci(by_phase["A"], by_phase[p])
            entry[f"{p}/A"] = {"median_ratio": point, "ci95": [lo, hi],
                               "per_block": pair_ratios([{"phase": b["phase"], "obs": b["obs"].get(name, [])}
                                                         for b in blocks], p)}
        point, lo, hi = ratio_ci(by_phase["C"], by_phase["B"])
        entry["B/C"] = {"median_ratio": point, "ci95": [lo, hi]}
        entry["work_ms_median"] = {p: (median(w) if (w := [x for b in blocks if b["phase"] == p
                                                           for x in b["work"].get(name, [])]) else None)
                                   for p in "ABC"}
        per_workload[name] = entry
    tally = tally_hostile(hostile_replies)
    succeeded = hostile_successes(tally)
    result = {
        "command": " ".join([Path(sys.executable).name] + sys.argv),
        "args": vars(args), "loadavg_start": load_start, "loadavg_end": load_end, "cpus": os.cpu_count(),
        "blocks": [{"phase": b["phase"], "t0_s": round(b["t0"], 1), "n": {k: len(v) for k, v in b["obs"].items()},
                    "platform_cpu_cores": round(b["platform_cpu"], 3), "neighbour_sandbox_cpu_cores":
                    round(b["neighbour_cpu"], 3)} for b in blocks],
        "cpu_cores_by_phase": {p: {"platform": median([b["platform_cpu"] for b in blocks if b["phase"] == p]),
                                   "neighbour_sandboxes": median([b["neighbour_cpu"] for b in blocks
                                                                  if b["phase"] == p])}
                               for p in "ABC" if any(b["phase"] == p for b in blocks)},
        "workloads": per_workload, "cold_left_out": dict(cold_left_out), "good_failures": good_failures[:20],
        "good_failure_count": len(good_failures),
        "hostile": {"invocations": len(hostile_replies), "tally": tally, "succeeded": succeeded,
                    "round_trip_ms": summary(neighbour_rt["B"]) if neighbour_rt["B"] else None},
        "control": {"workload": CONTROL_WORKLOAD, "invocations": len(neighbour_rt["C"]),
                    "round_trip_ms": summary(neighbour_rt["C"]) if neighbour_rt["C"] else None},
        "neighbour_errors": neighbour_errors[:10], "neighbour_error_count": len(neighbour_errors),
        "neighbour_instances_at_A_block_start": neighbours_left_in_a,
        "leaks": {"before": before, "after": after, "grew": grew, "cgroups_left_after_stop": len(leftover_cgroups),
                  "platform_log": platform_log},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print_table(result)
    bad = (grew or leftover_cgroups or succeeded or good_failures or any(neighbours_left_in_a)
           or not hostile_replies)
    return 1 if bad else 0


def print_table(result: dict) -> None:
    print(f"load average start {result['loadavg_start']}, end {result['loadavg_end']}, {result['cpus']} CPUs")
    print("round trip ms, median/p95/p99 (n); A alone, B beside the hostile functions, C beside busy benign ones")
    cell = lambda s: f"{s['median']:.1f}/{s['p95']:.1f}/{s['p99']:.1f} ({s['n']})"  # noqa: E731
    rat = lambda r: f"{r['median_ratio']:.2f} [{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}]"  # noqa: E731
    for name, w in result["workloads"].items():
        if "error" in w:
            print(f"{name:<11} {w['error']}")
            continue
        print(f"{name:<11} A {cell(w['A'])}  B {cell(w['B'])}  C {cell(w['C'])}")
        print(f"{'':<11} B/A {rat(w['B/A'])} per block {' '.join(f'{x:.2f}' for x in w['B/A']['per_block'])};"
              f" C/A {rat(w['C/A'])} per block {' '.join(f'{x:.2f}' for x in w['C/A']['per_block'])};"
              f" B/C {rat(w['B/C'])}; in-sandbox work ms {w['work_ms_median']}")
    print("CPU (cores, median over blocks) of the platform process and of the neighbours' sandboxes:",
          {p: {k: round(v, 3) for k, v in c.items()} for p, c in result["cpu_cores_by_phase"].items()})
    h = result["hostile"]
    print(f"hostile: {h['invocations']} invocations; neighbour errors {result['neighbour_error_count']};"
          f" succeeded: {h['succeeded'] or 'nothing'}")
    print(json.dumps(h["tally"], indent=1))
    print(f"control: {result['control']['invocations']} invocations; neighbour instances at A starts "
          f"{result['neighbour_instances_at_A_block_start']}")
    print(f"good failures {result['good_failure_count']}; left over: {result['leaks']['grew'] or 'nothing'};"
          f" cgroups after stop {result['leaks']['cgroups_left_after_stop']}")


if __name__ == "__main__":
    raise SystemExit(main())
