"""How many warm instances the local platform holds on this machine, and what each costs.

For each step N (``--steps``, rising, on one platform): warm-up bursts of N concurrent noop
invocations until N distinct instances exist (each member that finds no idle instance starts
one), then one timed warm burst of N: all connections opened first, then one request written on
each at once; the time until the last reply, how many were ok, how many started cold. After
each step the bench records:

- the platform process: resident memory, open descriptors (and its RLIMIT_NOFILE), threads;
- the instances: the sum of their memory cgroups' usage (memory.usage_in_bytes: the function's
  processes, their page cache and kernel memory) and the resident memory of their processes;
  per instance = (platform tree now - the platform idle) / instances;
- the memory per instance three ways: the process tree's RSS (counts the agent binary's shared
  pages once per process), its PSS (shares them out) and the drop of MemAvailable since the
  platform was idle (the machine's view, other tenants' changes included);
- the machine: MemAvailable, tasks (processes + threads) vs kernel.pid_max, open files vs
  fs.file-max, the user's namespaces vs user.max_*_namespaces, loopback sockets, free disk
  under the data directory (each instance unpacks its code: the bytes per instance);
- the first limit hit: an error from the platform or the client (which call, which errno), or
  the projection that the next step would not fit (memory, disk, tasks), which stops the bench.

The client (``--client``): ``h2c`` (default) is the Go dispatcher (agent/cmd/faascope-dispatch)
sending every member as a stream of a few HTTP/2 cleartext connections (1000 streams each,
opened ahead), so the platform holds a few client sockets instead of one per member;
``asyncio`` is this file's own HTTP/1.1 client, one connection per member (every one a
descriptor of the platform's too). The warm-up grows the instances by at most ``--warm-step``
cold starts per burst, so a step's cold starts fit the init timeout on two cores, and its members
spin ~2 ms (``--warm-spin``) so that each holds its instance while the others arrive.
``--pid-max N`` raises kernel.pid_max for the run (root) and restores it at the end. Prints one
row per step and writes bench/out/scale.json (or --out).

    python bench/scale.py [--steps 100,500,1000,2000,3000,5000] [--profile unlimited]
                          [--network isolated] [--client h2c|asyncio] [--pid-max 65536]
                          [--port 9372] [--data-dir /var/tmp/pio-scale] [--quick]
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import http.client
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
FN = "scale-fn"
NOOP = json.dumps({"workload": {"kind": "noop"}}).encode()
MIB = 1 << 20
MEMINFO_KEYS = ("MemAvailable", "AnonPages", "Shmem", "Cached", "Slab", "SUnreclaim", "KernelStack", "PageTables",
                "Percpu")


# --------------------------------------------------------------------------- the client
async def _one(host: str, port: int, path: str, body: bytes, start: asyncio.Event,
               connected: list, sem: asyncio.Semaphore) -> dict:
    async with sem:  # bounds connects in flight (the listen backlog), not requests
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError as e:
            connected.append(0)
            return {"ok": False, "error": f"connect: {e.__class__.__name__}: {e}"}
    connected.append(1)
    req = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    try:
        await start.wait()
        t0 = time.perf_counter()
        writer.write(req)
        await writer.drain()
        status_line = await reader.readline()
        headers = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            k, _, v = line.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        data = await reader.readexactly(int(headers.get("content-length", "0")))
        t1 = time.perf_counter()
        status = int(status_line.split()[1]) if status_line else 0
        out = {"status": status, "ok": status == 200, "latency_s": t1 - t0, "t_end": t1,
               "instance": headers.get("x-faascope-instance-id"), "cold": headers.get("x-faascope-cold") == "true"}
        if status != 200:
            out["error"] = f"HTTP {status}: {data[:200].decode(errors='replace')}"
        else:
            try:
                out["received_ns"] = json.loads(data)["timings"]["received_ns"]
            except (ValueError, KeyError, TypeError):
                pass
        return out
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as e:
        return {"ok": False, "error": f"request: {e.__class__.__name__}: {e}"}
    finally:
        writer.close()


async def _burst(host: str, port: int, n: int, body: bytes, connect_parallel: int) -> dict:
    start, connected, sem = asyncio.Event(), [], asyncio.Semaphore(connect_parallel)
    path = f"/2015-03-31/functions/{FN}/invocations"
    tasks = [asyncio.create_task(_one(host, port, path, body, start, connected, sem)) for _ in range(n)]
    t_connect = time.perf_counter()
    # every member connected (or failed to), then the burst
    while len(connected) < n:
        await asyncio.sleep(0.01)
    connect_s = time.perf_counter() - t_connect
    t0 = time.perf_counter()
    start.set()
    res = await asyncio.gather(*tasks)
    ends = [r["t_end"] for r in res if "t_end" in r]
    recv = [r["received_ns"] for r in res if "received_ns" in r]
    errors: dict[str, int] = {}
    for r in res:
        if not r["ok"]:
            errors[r["error"][:160]] = errors.get(r["error"][:160], 0) + 1
    lat = sorted(r["latency_s"] for r in res if r.get("ok"))
    return {"n": n, "ok": sum(r["ok"] for r in res), "cold": sum(r.get("cold", False) for r in res),
            "instances": {r["instance"] for r in res if r.get("instance")},
            "connect_s": connect_s, "burst_s": (max(ends) - t0) if ends else None,
            "arrival_spread_ms": (max(recv) - min(recv)) / 1e6 if recv else None,
            "latency_p50_ms": lat[len(lat) // 2] * 1e3 if lat else None,
            "latency_max_ms": lat[-1] * 1e3 if lat else None, "errors": errors}


def burst_h2c(endpoint: str, n: int, body: bytes = NOOP, streams: int = 1000) -> dict:
    """One burst of n members through the Go dispatcher over h2c (see the module's docstring)."""
    from faascope.binaries import dispatch_binary

    addr = endpoint.removeprefix("http://")
    path = f"/2015-03-31/functions/{FN}/invocations"
    lines = [json.dumps({"config": {"total": n, "lead_ns": 300_000_000, "h2c": True, "h2c_streams": streams,
                                    "connect_timeout_ns": 30_000_000_000, "read_timeout_ns": 600_000_000_000}})]
    b64 = base64.b64encode(body).decode()
    warm = {"method": "GET", "target": "/faascope/health"}
    for k in range(n):
        lines.append(json.dumps({"k": k, "offset_ns": 0, "scheme": "http", "addr": addr, "host": addr,
                                 "method": "POST", "target": path, "body": b64, "warm": warm,
                                 "headers": [["Content-Type", "application/json"]]}))
    lines += [json.dumps({"go": True}), json.dumps({"end": True})]
    proc = subprocess.run([str(dispatch_binary())], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=1800)
    ready, done, res = {}, {}, []
    for line in proc.stdout.splitlines():
        m = json.loads(line)
        if "ready" in m:
            ready = m["ready"]
        elif "done" in m:
            done = m["done"]
        elif "k" in m:
            res.append(m)
    if proc.returncode != 0 or not ready:
        raise RuntimeError(f"faascope-dispatch exited {proc.returncode}: {proc.stderr[-2000:]}")
    out: list[dict] = []
    for r in res:
        hdr = {k.lower(): v for k, v in r.get("headers") or []}
        status = r.get("status", 0)
        o = {"ok": r["transport"] == "replied" and status == 200, "instance": hdr.get("x-faascope-instance-id"),
             "cold": hdr.get("x-faascope-cold") == "true", "send_ns": r.get("send_ns")}
        data = base64.b64decode(r.get("body") or "")
        if r["transport"] != "replied":
            o["error"] = f"{r['transport']}: {(r.get('error') or {}).get('type')}: {(r.get('error') or {}).get('message', '')[:120]}"
        elif status != 200:
            o["error"] = f"HTTP {status}: {data[:200].decode(errors='replace')}"
        else:
            o["end_ns"], o["latency_s"] = r["end_ns"], (r["end_ns"] - r["send_ns"]) / 1e9
            try:
                o["received_ns"] = json.loads(data)["timings"]["received_ns"]
            except (ValueError, KeyError, TypeError):
                pass
        out.append(o)
    errors: dict[str, int] = {}
    for r in out:
        if not r["ok"]:
            errors[r["error"][:160]] = errors.get(r["error"][:160], 0) + 1
    lat = sorted(r["latency_s"] for r in out if r.get("ok"))
    sends = [r["send_ns"] for r in out if r.get("send_ns")]
    recv = [r["received_ns"] for r in out if "received_ns" in r]
    ends = [r["end_ns"] for r in out if "end_ns" in r]
    start = ready.get("start_ns") or (min(sends) if sends else 0)
    return {"n": n, "ok": sum(r["ok"] for r in out), "cold": sum(r.get("cold", False) for r in out),
            "instances": {r["instance"] for r in out if r.get("instance")},
            "connect_s": ready.get("connect_s"), "client_connections": ready.get("connected"),
            "burst_s": (max(ends) - start) / 1e9 if ends else None,
            "send_spread_ms": (max(sends) - min(sends)) / 1e6 if sends else None,
            "arrival_spread_ms": (max(recv) - min(recv)) / 1e6 if recv else None,
            "latency_p50_ms": lat[len(lat) // 2] * 1e3 if lat else None,
            "latency_max_ms": lat[-1] * 1e3 if lat else None, "errors": errors,
            "client_max_rss_kb": done.get("max_rss_kb")}


def burst(endpoint: str, n: int, body: bytes = NOOP, connect_parallel: int = 256, client: str = "asyncio") -> dict:
    if client == "h2c":
        return burst_h2c(endpoint, n, body)
    host, port = endpoint.removeprefix("http://").rsplit(":", 1)
    return asyncio.run(_burst(host, int(port), n, body, connect_parallel))


# --------------------------------------------------------------------------- measurements
def proc_status(pid: int) -> dict:
    out = {}
    for line in open(f"/proc/{pid}/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "Threads"):
            out[k] = int(v.split()[0])
    out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    for line in open(f"/proc/{pid}/limits"):
        if line.startswith("Max open files"):
            out["nofile_soft"] = int(line.split()[3])
    return out


def pss_kb(pid: int) -> int:
    """Proportional set size: shared pages (the agent binary's, mapped by every instance) divided
    among the processes that map them."""
    try:
        for line in open(f"/proc/{pid}/smaps_rollup"):
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(pid: int) -> dict:
    """Resident and proportional kB and thread count of pid and all its descendants."""
    children: dict[int, list[int]] = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                st = open(f"/proc/{p}/stat").read()
            except OSError:
                continue
            children.setdefault(int(st[st.rindex(")") + 2:].split()[1]), []).append(int(p))
    rss = pss = procs = threads = 0
    todo = [pid]
    while todo:
        q = todo.pop()
        try:
            s = proc_status(q) if q == pid else {}
            if q != pid:
                for line in open(f"/proc/{q}/status"):
                    if line.startswith("VmRSS:"):
                        s["VmRSS"] = int(line.split()[1])
                    elif line.startswith("Threads:"):
                        s["Threads"] = int(line.split()[1])
        except OSError:
            continue
        rss += s.get("VmRSS", 0)
        pss += pss_kb(q)
        threads += s.get("Threads", 0)
        procs += 1
        todo.extend(children.get(q, []))
    return {"rss_kb": rss, "pss_kb": pss, "processes": procs, "threads": threads}


def cgroup_usage(parent: str) -> tuple[int, int]:
    """(sum of memory.usage_in_bytes over the instances' groups, count) under the platform's
    memory cgroup (v1) or its unified-hierarchy group (v2)."""
    for base in (Path("/sys/fs/cgroup/memory") / parent.strip("/"), Path("/sys/fs/cgroup") / parent.strip("/")):
        if base.is_dir():
            total = count = 0
            for d in base.iterdir():
                f = d / "memory.usage_in_bytes"
                if not f.exists():
                    f = d / "memory.current"
                try:
                    total += int(f.read_text())
                    count += 1
                except (OSError, ValueError):
                    pass
            return total, count
    return 0, 0


def meminfo() -> dict:
    out = {}
    for line in open("/proc/meminfo"):
        k, _, v = line.partition(":")
        out[k] = int(v.split()[0])
    return out


def machine(data_dir: Path) -> dict:
    tasks = int(open("/proc/loadavg").read().split()[3].split("/")[1])
    file_nr = [int(x) for x in open("/proc/sys/fs/file-nr").read().split()]
    du = shutil.disk_usage(data_dir)
    tcp = sum(1 for _ in open("/proc/net/tcp")) - 1
    return {"mem_available_mb": meminfo()["MemAvailable"] / 1024, "tasks": tasks,
            "pid_max": int(open("/proc/sys/kernel/pid_max").read()),
            "threads_max": int(open("/proc/sys/kernel/threads-max").read()),
            "open_files": file_nr[0], "file_max": file_nr[2],
            "max_mnt_namespaces": int(open("/proc/sys/user/max_mnt_namespaces").read()),
            "max_net_namespaces": int(open("/proc/sys/user/max_net_namespaces").read()),
            "tcp_sockets_host_ns": tcp, "disk_free_gb": du.free / 1e9}


def namespaces_of_user() -> dict:
    """Distinct namespaces held by processes (what user.max_*_namespaces counts, roughly)."""
    seen: dict[str, set] = {"mnt": set(), "pid": set(), "net": set(), "uts": set(), "ipc": set()}
    for p in os.listdir("/proc"):
        if p.isdigit():
            for k in seen:
                try:
                    seen[k].add(os.readlink(f"/proc/{p}/ns/{k}"))
                except OSError:
                    pass
    return {k: len(v) for k, v in seen.items()}


# --------------------------------------------------------------------------- the platform
def request(endpoint: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict, dict]:
    host, port = endpoint.removeprefix("http://").rsplit(":", 1)
    c = http.client.HTTPConnection(host, int(port), timeout=120)
    c.request(method, path, body=json.dumps(body).encode() if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    raw = r.read()
    c.close()
    return r.status, (json.loads(raw) if raw else {}), dict(r.getheaders())


def create_function(endpoint: str, profile: str, memory: int) -> None:
    import base64
    import io
    import zipfile

    from faascope.binaries import agent_binary

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        info = zipfile.ZipInfo("bootstrap", date_time=(2024, 1, 1, 0, 0, 0))
        info.external_attr = 0o100755 << 16
        z.writestr(info, agent_binary().read_bytes())
    status, body, _ = request(endpoint, "POST", "/2015-03-31/functions", {
        "FunctionName": FN, "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/bench",
        "Handler": "bootstrap", "MemorySize": memory, "Timeout": 60,
        "Code": {"ZipFile": base64.b64encode(buf.getvalue()).decode()}, "Tags": {"faascope:profile": profile}})
    if status != 201:
        raise RuntimeError(f"CreateFunction: {status} {body}")
    for _ in range(200):
        if request(endpoint, "GET", f"/2015-03-31/functions/{FN}")[1]["Configuration"].get("State") == "Active":
            return
        time.sleep(0.05)


def fmt(v) -> str:
    return f"{v:.1f}" if isinstance(v, float) else str(v)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", help="burst sizes, rising (default 100,500,1000,2000,3000,5000)")
    ap.add_argument("--profile", default="unlimited", choices=("unlimited", "lambda", "gcf"))
    ap.add_argument("--memory", type=int, default=128, help="MemorySize of the function (MB)")
    ap.add_argument("--network", default="isolated", choices=("isolated", "host"))
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--data-dir", type=Path, help="the platform's data directory (default: new under /var/tmp)")
    ap.add_argument("--reserve-mb", type=float, default=2048, help="memory left to the machine's other work")
    ap.add_argument("--reserve-disk-gb", type=float, default=10, help="disk left free under the data directory")
    ap.add_argument("--warm-rounds", type=int, default=30, help="warm-up bursts per step at most")
    ap.add_argument("--warm-step", type=int, default=500,
                    help="new instances a warm-up burst asks for at most (its cold starts run at once)")
    ap.add_argument("--warm-spin", type=int, default=500_000,
                    help="spin iterations of a warm-up member (~2 ms here): it holds its instance while "
                         "the burst's later members arrive, so they start new ones instead of reusing it")
    ap.add_argument("--warm-min-gain", type=float, default=0.01,
                    help="stop warming once a round adds fewer than this fraction of N new instances")
    ap.add_argument("--client", default="h2c", choices=("h2c", "asyncio"),
                    help="h2c: the Go dispatcher over HTTP/2 cleartext; asyncio: HTTP/1.1, a connection per member")
    ap.add_argument("--pid-max", type=int, default=0,
                    help="raise kernel.pid_max to this for the run (root; restored at the end)")
    ap.add_argument("--quick", action="store_true", help="steps 20,100")
    ap.add_argument("--out", type=Path, default=OUT / "scale.json")
    a = ap.parse_args()
    steps = [int(x) for x in (a.steps or ("20,100" if a.quick else "100,500,1000,2000,3000,5000")).split(",")]

    from faascope.providers import local_platform

    warm_body = json.dumps({"workload": {"kind": "spin", "iterations": a.warm_spin}}).encode() if a.warm_spin else NOOP
    pid_max_was = None
    if a.pid_max:
        pid_max_was = int(Path("/proc/sys/kernel/pid_max").read_text())
        if a.pid_max > pid_max_was:
            Path("/proc/sys/kernel/pid_max").write_text(str(a.pid_max))
            print(f"kernel.pid_max {pid_max_was} -> {a.pid_max} for this run", flush=True)
        else:
            pid_max_was = None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the client's own sockets
    data = a.data_dir or Path(tempfile.mkdtemp(prefix="pio-scale-", dir="/var/tmp"))
    data.mkdir(parents=True, exist_ok=True)
    st = local_platform.start(profile=a.profile, data_dir=data, port=a.port, keep_alive="60m",
                              concurrency=max(steps) + 100, network=a.network)
    endpoint, pid = st["endpoint"], int(st["pid"])
    result = {"command": "python bench/scale.py " + " ".join(sys.argv[1:]), "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "profile": a.profile, "network": a.network, "memory_mb": a.memory, "isolation": st["isolation"],
              "cpus": os.cpu_count(), "mem_total_mb": meminfo()["MemTotal"] / 1024, "client_nofile": hard,
              "client": a.client, "pid_max_raised_from": pid_max_was,
              "steps": [], "first_limit": None}
    rows = result["steps"]
    try:
        create_function(endpoint, a.profile, a.memory)
        first = burst(endpoint, 1)
        if not first["ok"]:
            raise RuntimeError(f"first invocation failed: {first['errors']}")
        status, body, _ = request(endpoint, "POST", f"/2015-03-31/functions/{FN}/invocations", {"workload": {"kind": "noop"}})
        cg_parent = body["instance"]["sandbox"].rsplit("/", 1)[0] if st["isolation"] == "namespaces" else ""
        idle = proc_status(pid)
        base_tree = tree(pid)
        disk0 = shutil.disk_usage(data).free
        mem0 = meminfo()
        avail0 = mem0["MemAvailable"]
        result["platform_idle"] = {"rss_mb": idle["VmRSS"] / 1024, "fds": idle["fds"], "threads": idle["Threads"],
                                   "nofile_soft": idle["nofile_soft"], "tree_rss_mb_1_instance": base_tree["rss_kb"] / 1024}
        instances: set = set(first["instances"])
        print(f"platform {endpoint} pid {pid} ({a.profile}, network {a.network}, {st['isolation']}): "
              f"idle RSS {idle['VmRSS'] / 1024:.1f} MB, {idle['fds']} fds, RLIMIT_NOFILE {idle['nofile_soft']}", flush=True)
        print(f"{'N':>6} {'inst':>6} {'warm s':>7} {'burst ok':>9} {'cold':>5} {'burst s':>8} {'send ms':>8} {'arr ms':>8} "
              f"{'plat RSS':>9} {'RSS/inst':>8} {'PSS/inst':>8} {'cg MB/inst':>10} {'plat fds':>9} {'fds/inst':>8} {'thr':>6} "
              f"{'tasks':>6} {'t/inst':>6} {'avail MB':>9} {'disk GB':>8}", flush=True)
        for n in steps:
            row: dict = {"n": n}
            m = machine(data)
            if rows:
                prev = rows[-1]
                more = n - prev["instances"]
                # what an instance costs the machine: its unshared memory (PSS shares the agent
                # binary's pages out), or the measured drop of MemAvailable if that is more
                need_mb = more * max(prev["pss_mb_per_instance"], prev["mem_available_drop_mb_per_instance"])
                need_disk = more * prev["disk_mb_per_instance"] / 1024
                need_tasks = more * prev["tasks_per_instance"]
                why = None
                if m["mem_available_mb"] - need_mb < a.reserve_mb:
                    why = (f"memory: {more} more instances need ~{need_mb:.0f} MB, "
                           f"{m['mem_available_mb']:.0f} MB available (reserve {a.reserve_mb:.0f})")
                elif m["disk_free_gb"] - need_disk < a.reserve_disk_gb:
                    why = (f"disk: {more} more instances need ~{need_disk:.1f} GB (unpacked code and /tmp), "
                           f"{m['disk_free_gb']:.1f} GB free (reserve {a.reserve_disk_gb:.0f})")
                elif m["tasks"] + need_tasks > 0.95 * min(m["pid_max"], m["threads_max"]):
                    why = (f"tasks: {more} more instances need ~{need_tasks:.0f} tasks, {m['tasks']} of "
                           f"kernel.pid_max {m['pid_max']} in use")
                if why:
                    result["first_limit"] = {"at_n": n, "kind": "projection", "detail": why}
                    print(f"stop before N={n}: {why}", flush=True)
                    break
            t0 = time.perf_counter()
            errors: dict = {}
            for _ in range(a.warm_rounds):
                if len(instances) >= n:
                    break
                before = len(instances)
                w = burst(endpoint, min(n, len(instances) + a.warm_step), body=warm_body, client=a.client)
                instances |= w["instances"]
                if len(instances) < n and len(instances) - before < a.warm_min_gain * n:
                    # the last few: members find warm instances free again before they arrive
                    # (the arrival spread of N is seconds); the timed burst starts the rest cold
                    row["warm_stopped"] = f"a round added {len(instances) - before} instances"
                    break
                for k, v in w["errors"].items():
                    errors[k] = errors.get(k, 0) + v
                if w["errors"]:
                    break
            row["warm_s"] = time.perf_counter() - t0
            row["instances"] = len(instances)
            if errors:
                row["warm_errors"] = errors
            b = burst(endpoint, n, client=a.client) if not errors else {"ok": 0, "errors": {}}
            row.update({f"burst_{k}": v for k, v in b.items() if k not in ("instances", "n")})
            instances |= b.get("instances", set())
            for k, v in b["errors"].items():
                errors[k] = errors.get(k, 0) + v
            p = proc_status(pid)
            t = tree(pid)
            cg_bytes, cg_count = cgroup_usage(cg_parent) if cg_parent else (0, 0)
            m = machine(data)
            ninst = max(len(instances), 1)
            row.update({
                "platform_rss_mb": p["VmRSS"] / 1024, "platform_fds": p["fds"], "platform_threads": p["Threads"],
                "platform_nofile_soft": p["nofile_soft"],
                "platform_mb_per_instance": (p["VmRSS"] - idle["VmRSS"]) / 1024 / ninst,
                "fds_per_instance": (p["fds"] - idle["fds"]) / ninst,
                "tree_rss_mb": t["rss_kb"] / 1024, "tree_processes": t["processes"], "tree_threads": t["threads"],
                "tree_mb_per_instance": (t["rss_kb"] - idle["VmRSS"]) / 1024 / ninst,
                "tree_pss_mb": t["pss_kb"] / 1024, "pss_mb_per_instance": (t["pss_kb"] - idle["VmRSS"]) / 1024 / ninst,
                "mem_available_drop_mb_per_instance": (avail0 - meminfo()["MemAvailable"]) / 1024 / ninst,
                # where the machine's memory went, per instance (kB): the kernel's own (slab:
                # namespaces, sockets, cgroups; thread stacks; page tables) beside the processes'
                "meminfo_kb_per_instance": {k: (v - mem0.get(k, 0)) / ninst for k, v in meminfo().items()
                                            if k in MEMINFO_KEYS},
                "cgroups": cg_count, "cgroup_mb_per_instance": cg_bytes / MIB / max(cg_count, 1),
                "tasks_per_instance": t["threads"] / ninst,
                "disk_mb_per_instance": (disk0 - m["disk_free_gb"] * 1e9) / MIB / ninst,
                "namespaces": namespaces_of_user(), **{f"machine_{k}": v for k, v in m.items()},
            })
            rows.append(row)
            print(f"{n:>6} {len(instances):>6} {row['warm_s']:>7.1f} {b['ok']:>5}/{n:<4}"
                  f"{b.get('cold', 0):>5} {fmt(b.get('burst_s') or 0):>8} {fmt(b.get('send_spread_ms') or 0):>8} "
                  f"{fmt(b.get('arrival_spread_ms') or 0):>8} "
                  f"{row['platform_rss_mb']:>9.1f} {row['tree_mb_per_instance']:>8.2f} {row['pss_mb_per_instance']:>8.2f} "
                  f"{row['cgroup_mb_per_instance']:>10.2f} "
                  f"{p['fds']:>9} {row['fds_per_instance']:>8.2f} {p['Threads']:>6} {m['tasks']:>6} {row['tasks_per_instance']:>6.2f} "
                  f"{m['mem_available_mb']:>9.0f} {m['disk_free_gb']:>8.1f}", flush=True)
            if errors:
                top = max(errors, key=errors.get)
                result["first_limit"] = {"at_n": n, "kind": "error", "detail": top, "errors": errors}
                print(f"first limit at N={n}: {top} (x{errors[top]})", flush=True)
                break
            if b["ok"] < n:
                result["first_limit"] = {"at_n": n, "kind": "incomplete burst", "detail": f"{b['ok']}/{n} ok"}
                break
    finally:
        local_platform.stop(data, wait_s=300)
        if pid_max_was is not None:
            Path("/proc/sys/kernel/pid_max").write_text(str(pid_max_was))
            print(f"kernel.pid_max restored to {pid_max_was}", flush=True)
        if not a.data_dir:
            shutil.rmtree(data, ignore_errors=True)
    if result["first_limit"] is None:
        result["first_limit"] = {"at_n": None, "kind": "none", "detail": f"all steps up to {steps[-1]} completed"}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2, default=list))
    print(f"first limit: {result['first_limit']['detail']}\nwrote {a.out}")


if __name__ == "__main__":
    main()
