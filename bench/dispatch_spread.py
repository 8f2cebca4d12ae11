"""Dispatch spread of a burst: the Go dispatcher vs the asyncio (aiohttp) sender vs a naive
thread-pool boto3 client, and one large warm burst on the real local platform.

For bursts "sent at once", two spreads (last − first) per method:

- send spread, on the client: when each request went to its socket (the Go dispatcher's time just
  before each request's one write; the async driver's ``on_request_headers_sent`` trace; boto3's
  ``before-send`` event in the thread pool);
- arrival spread, at the server, in another process, so client and server share no GIL or loop:
  ``aiohttp`` = the Python stand-in (an aiohttp server speaking the Lambda Invoke call, its
  handler's first line: ~0.1-0.3 ms of Python per request on one core, so it bounds the arrival
  spread); ``sink`` = the Go stand-in (``faascope-dispatch sink``, reads on every core: the
  senders and the loopback stack); ``--platform`` = the real local platform with a warm pool as
  large as the burst (the agents' ``received_ns``, so it includes the platform handing each
  request to an instance).

Every method gets its connections opened and its requests prepared (signed) before the clock
starts; the thread pool's threads exist before the burst. Rounds interleave the methods (the
order rotates each round). Prints the median and the range (min–max) over rounds; writes
bench/out/dispatch_spread.json.

``--scale N``: one warm burst of N noop invocations on the local platform through the Go
dispatcher, after warm-up bursts that build N warm instances (stopping early when the machine's
available memory runs low: then the largest pool it held is reported). Prints the spreads, the
platform's memory (its processes' resident sets: the platform and every instance), the memory
per warm instance, the dispatcher's peak RSS and open files.

    python bench/dispatch_spread.py [--sizes 1000] [--rounds 5] [--servers aiohttp,sink]
                                    [--platform 1000] [--scale 5000] [--out F]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
NOOP = {"workload": {"kind": "noop"}}


# --------------------------------------------------------------------------- the stand-in server
def serve(port_q, stop_evt):
    from aiohttp import web

    arrivals: list[int] = []
    body = json.dumps({"ok": True, "cold": False, "instance": {"id": "x", "sandbox": "/x",
                       "boot_id": "b"}, "timings": {"received_ns": 0, "workload_start_ns": 0,
                       "workload_end_ns": 0}, "workload": {"kind": "noop", "elapsed_s": 0,
                       "bytes": 0, "ops": 0}, "error": None}).encode()

    async def invoke(request):
        t = time.time_ns()
        if request.headers.get("X-Amz-Invocation-Type") == "DryRun":
            return web.Response(status=204)
        arrivals.append(t)
        await request.read()
        return web.Response(body=body, content_type="application/json")

    async def take(request):
        out = list(arrivals)
        arrivals.clear()
        return web.json_response(out)

    async def main():
        app = web.Application()
        app.router.add_post("/2015-03-31/functions/{name}/invocations", invoke)
        app.router.add_get("/arrivals", take)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=8192)
        await site.start()
        port_q.put(site._server.sockets[0].getsockname()[1])
        while not stop_evt.is_set():
            await asyncio.sleep(0.2)
        await runner.cleanup()

    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(main())


def arrivals(endpoint: str) -> list[int]:
    import urllib.request
    with urllib.request.urlopen(endpoint + "/arrivals", timeout=30) as r:
        return json.load(r)


def spread(ns: list[int]) -> float | None:
    return (max(ns) - min(ns)) / 1e6 if ns else None


def boto_client(endpoint: str, n: int):
    import boto3
    from botocore.config import Config

    return boto3.client("lambda", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="bench", aws_secret_access_key="bench",
                        config=Config(max_pool_connections=n, retries={"total_max_attempts": 1},
                                      read_timeout=300, connect_timeout=30))


# --------------------------------------------------------------------------- the clients
def run_async(client, n: int, fn: str) -> dict:
    from faascope.driver.aclient import AsyncInvoker
    from faascope.driver.dispatch import Member, dispatch
    from faascope.providers.lambda_api import LambdaRequests

    async def main():
        inv = AsyncInvoker(LambdaRequests(client), max_connections=n)
        await inv.preconnect(fn, n)
        got = []
        members = [Member(row={}, member=i, batch=0, offset_s=0.0, copy=0, function=fn)
                   for i in range(n)]
        out = await dispatch(inv, members, json.dumps(NOOP).encode(), lead_s=0.05 + 0.0002 * n,
                             on_result=lambda m, r: got.append(r))
        await inv.close()
        return got, out

    got, out = asyncio.run(main())
    sends = [r.send_ns for r in got if r.send_ns]
    return {"send": sends, "received": [r.response["timings"]["received_ns"] for r in got
                                        if r.response and r.response["timings"]["received_ns"]],
            "ok": sum(r.status == "ok" for r in got), "start_ns": out["start_ns"]}


def run_go(client, n: int, fn: str, payload: dict = NOOP) -> dict:
    from faascope.driver.dispatch import Member
    from faascope.driver.go_dispatch import dispatch_go
    from faascope.providers.lambda_api import LambdaRequests

    got = []
    members = [Member(row={}, member=i, batch=0, offset_s=0.0, copy=0, function=fn) for i in range(n)]
    out = asyncio.run(dispatch_go(LambdaRequests(client), members, json.dumps(payload).encode(),
                                  on_result=lambda m, r: got.append(r)))
    sends = [r.send_ns for r in got if r.send_ns]
    return {"send": sends, "received": [r.response["timings"]["received_ns"] for r in got
                                        if r.response and r.response["timings"]["received_ns"]],
            "ok": sum(r.status == "ok" for r in got), "start_ns": out["start_ns"],
            "instances": {r.response["instance"]["id"] for r in got if r.response},
            "dispatcher": {**(out["done"] or {}), **(out["ready"] or {})}}


def start_sink() -> tuple[subprocess.Popen, str]:
    from faascope.binaries import dispatch_binary

    p = subprocess.Popen([str(dispatch_binary()), "sink", "--listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, text=True)
    return p, p.stdout.readline().strip()


def run_threads(client, n: int, fn: str, pool: ThreadPoolExecutor) -> dict:
    local = threading.local()
    sends: list[int] = []
    lock = threading.Lock()

    def before_send(**_):
        local.t = time.time_ns()

    client.meta.events.register("before-send.lambda.Invoke", before_send)
    # warm the connection pool: n concurrent DryRuns
    list(pool.map(lambda _: client.invoke(FunctionName=fn, InvocationType="DryRun"), range(n)))
    body = json.dumps(NOOP).encode()
    gate = threading.Event()
    results = []

    def one(_):
        gate.wait()
        r = client.invoke(FunctionName=fn, Payload=body)
        with lock:
            sends.append(local.t)
        return r["Payload"].read()

    futs = [pool.submit(one, i) for i in range(n)]
    time.sleep(0.2)  # every thread parked at the gate
    gate.set()
    for f in futs:
        results.append(json.loads(f.result()))
    client.meta.events.unregister("before-send.lambda.Invoke", before_send)
    return {"send": sends, "received": [r["timings"]["received_ns"] for r in results
                                        if r.get("timings", {}).get("received_ns")],
            "ok": sum(bool(r.get("ok")) for r in results)}


# --------------------------------------------------------------------------- main
METHODS = ("go", "async", "threads")


def summary(values: list) -> dict:
    v = [x for x in values if x is not None]
    if not v:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(v), "min": min(v), "max": max(v)}


def cell(s: dict) -> str:
    if s["median"] is None:
        return "–"
    return f"{s['median']:.1f} ({s['min']:.1f}–{s['max']:.1f})"


def bench_endpoint(endpoint: str, sizes: list[int], rounds: int, fn: str, stand_in: bool,
                   methods=METHODS) -> dict:
    out = {}
    for n in sizes:
        rows = {m: [] for m in methods}
        client = boto_client(endpoint, n)
        with ThreadPoolExecutor(max_workers=n) as pool:
            list(pool.map(lambda _: None, range(n)))  # the threads exist before the burst
            for r in range(rounds):
                order = list(methods[r % len(methods):]) + list(methods[:r % len(methods)])
                for which in order:
                    if stand_in:
                        arrivals(endpoint)  # reset
                    t0 = time.perf_counter()
                    res = (run_go(client, n, fn) if which == "go" else
                           run_async(client, n, fn) if which == "async" else
                           run_threads(client, n, fn, pool))
                    took = time.perf_counter() - t0
                    arr = arrivals(endpoint) if stand_in else res["received"]
                    rows[which].append({"send_spread_ms": spread(res["send"]),
                                        "arrival_spread_ms": spread(arr), "ok": res["ok"],
                                        "seconds": round(took, 3),
                                        "load": os.getloadavg()[0]})
                    if which == "go":  # the dispatcher's own cost: peak memory, open files
                        rows[which][-1].update(
                            dispatcher_max_rss_mb=(res["dispatcher"].get("max_rss_kb") or 0) / 1024,
                            dispatcher_fds=res["dispatcher"].get("fds"),
                            connect_s=res["dispatcher"].get("connect_s"))
        summ = {}
        for which, rs in rows.items():
            summ[which] = {k: summary([x[k] for x in rs])
                           for k in ("send_spread_ms", "arrival_spread_ms")}
            summ[which]["ok_min"] = min(x["ok"] for x in rs)
        out[n] = {"summary": summ, "rounds": rows}
        print(f"n={n}: median (min–max) over {rounds} rounds, ms")
        for which in methods:
            sm = summ[which]
            extra = ""
            if which == "go":
                rs = rows["go"]
                extra = (f"   dispatcher: peak RSS ≤ {max(x['dispatcher_max_rss_mb'] for x in rs):.0f} MB, "
                         f"{max(x['dispatcher_fds'] for x in rs)} open files, connect "
                         f"{statistics.median(x['connect_s'] for x in rs):.2f} s")
            print(f"  {which:8s} send {cell(sm['send_spread_ms']):>24s}   arrival "
                  f"{cell(sm['arrival_spread_ms']):>24s}   ok ≥ {sm['ok_min']}/{n}{extra}", flush=True)
    return out


def tree_rss_kb(pid: int) -> tuple[int, int]:
    """(resident kB of ``pid`` and all its descendants, number of processes)."""
    children: dict[int, list[int]] = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            st = open(f"/proc/{p}/stat").read()
        except OSError:
            continue
        ppid = int(st[st.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(p))
    total, count, todo = 0, 0, [pid]
    while todo:
        q = todo.pop()
        try:
            for line in open(f"/proc/{q}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
        count += 1
        todo.extend(children.get(q, []))
    return total, count


def mem_available_mb() -> float:
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def scale_burst(n: int, data_dir: Path) -> dict:
    """One warm burst of ``n`` on the local platform (see the module doc)."""
    import resource

    from faascope.providers import local_platform
    from faascope.providers.base import FunctionConfig
    from faascope.providers.local import LocalProvider

    st = local_platform.start(profile="gcf", data_dir=data_dir, port=0, keep_alive="60m",
                              network="host", concurrency=n + 100)
    out: dict = {"n": n}
    try:
        pid = int(st["pid"])
        prov = LocalProvider(endpoint_url=st["endpoint"])
        prov.deploy("bench-fn", FunctionConfig(memory_mb=128, profile="gcf"))
        client = boto_client(st["endpoint"], n)
        rss0, _ = tree_rss_kb(pid)
        out["platform_rss_mb_idle"] = rss0 / 1024
        instances: set = set()
        t0 = time.perf_counter()
        # warm-up bursts: every member that finds no idle instance starts one; a 50 ms spin
        # keeps the instances busy so that the next round's extra members start new ones
        for rnd in range(6):
            want = n - len(instances)
            if want <= 0:
                break
            avail = mem_available_mb()
            rss, procs = tree_rss_kb(pid)
            per = (rss - rss0) / 1024 / max(len(instances), 1)
            if instances and avail - 1024 < per * want:
                out["stopped_warming"] = (f"{avail:.0f} MB available, {per:.1f} MB per instance: "
                                          f"{want} more would not fit")
                break
            r = run_go(client, n, "bench-fn", {"workload": {"kind": "spin", "iterations": 5_000_000}})
            instances |= r["instances"]
            print(f"  warm-up round {rnd}: {r['ok']}/{n} ok, {len(instances)} instances, "
                  f"{time.perf_counter() - t0:.0f} s", flush=True)
        out["warm_up_s"] = time.perf_counter() - t0
        rss, procs = tree_rss_kb(pid)
        out.update(instances=len(instances), platform_rss_mb=rss / 1024, platform_processes=procs,
                   mb_per_instance=(rss - rss0) / 1024 / max(len(instances), 1),
                   mem_available_mb=mem_available_mb())
        size = min(n, len(instances)) if out.get("stopped_warming") else n
        t1 = time.perf_counter()
        r = run_go(client, size, "bench-fn")
        out.update(burst=size, seconds=time.perf_counter() - t1, ok=r["ok"],
                   send_spread_ms=spread(r["send"]), arrival_spread_ms=spread(r["received"]),
                   dispatcher_max_rss_mb=(r["dispatcher"].get("max_rss_kb") or 0) / 1024,
                   dispatcher_fds=r["dispatcher"].get("fds"),
                   connect_s=r["dispatcher"].get("connect_s"),
                   driver_max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                   platform_rss_mb_after=tree_rss_kb(pid)[0] / 1024,
                   cold_in_burst=len(r["instances"] - instances))
        prov.teardown("bench-fn")
    finally:
        local_platform.stop(data_dir)
    print("  " + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
                           for k, v in out.items()), flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--servers", default="aiohttp,sink", help="stand-ins: aiohttp (Python), sink (Go)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--platform", default="", help="also on the real local platform for these sizes")
    ap.add_argument("--scale", type=int, default=0, help="one warm burst of this size on the platform")
    ap.add_argument("--out", default=str(OUT / "dispatch_spread.json"))
    ap.add_argument("--quick", action="store_true", help="bursts of 200, 2 rounds, the Go sink only")
    a = ap.parse_args()
    if a.quick:
        a.sizes, a.rounds, a.servers = "200", 2, "sink"
    sizes = [int(x) for x in a.sizes.split(",") if x]
    methods = tuple(m for m in a.methods.split(",") if m)
    import resource
    import tempfile

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    result = {"machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg(),
                          "nofile": hard}, "rounds": a.rounds,
              "command": "python bench/dispatch_spread.py " + " ".join(sys.argv[1:])}
    servers = [x for x in a.servers.split(",") if x]
    if "aiohttp" in servers and sizes:
        q, stop = mp.Queue(), mp.Event()
        proc = mp.Process(target=serve, args=(q, stop), daemon=True)
        proc.start()
        endpoint = f"http://127.0.0.1:{q.get(timeout=30)}"
        try:
            print(f"aiohttp stand-in (another process) at {endpoint}")
            result["stand_in"] = bench_endpoint(endpoint, sizes, a.rounds, "bench-fn", True, methods)
        finally:
            stop.set()
            proc.join(10)
    if "sink" in servers and sizes:
        sink, endpoint = start_sink()
        try:
            print(f"Go sink (faascope-dispatch sink) at {endpoint}")
            result["sink"] = bench_endpoint(endpoint, sizes, a.rounds, "bench-fn", True, methods)
        finally:
            sink.kill()
            sink.wait(10)
    if a.platform:
        from faascope.providers import local_platform
        from faascope.providers.base import FunctionConfig
        from faascope.providers.local import LocalProvider

        psizes = [int(x) for x in a.platform.split(",") if x]
        d = Path(tempfile.mkdtemp(prefix="pd-bench-"))
        st = local_platform.start(profile="gcf", data_dir=d, port=0, keep_alive="30m",
                                  network="host", concurrency=max(psizes) + 100)
        try:
            prov = LocalProvider(endpoint_url=st["endpoint"])
            prov.deploy("bench-fn", FunctionConfig(memory_mb=128, profile="gcf"))
            client = boto_client(st["endpoint"], max(psizes))
            # a warm pool as large as the largest burst: every burst member finds an instance
            inst: set = set()
            for _ in range(6):
                if len(inst) >= max(psizes):
                    break
                inst |= run_go(client, max(psizes), "bench-fn",
                               {"workload": {"kind": "spin", "iterations": 5_000_000}})["instances"]
            print(f"local platform (gcf, warm pool {len(inst)}): arrival = the agents' received_ns")
            result["platform"] = bench_endpoint(st["endpoint"], psizes, a.rounds, "bench-fn",
                                                False, methods)
            prov.teardown("bench-fn")
        finally:
            local_platform.stop(d)
    if a.scale:
        print(f"warm burst of {a.scale} on the local platform (Go dispatcher)")
        result["scale"] = scale_burst(a.scale, Path(tempfile.mkdtemp(prefix="pd-scale-")))
    result["machine"]["load_after"] = os.getloadavg()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
