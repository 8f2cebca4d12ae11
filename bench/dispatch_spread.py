"""Dispatch spread of a burst: faascope's async driver vs a naive thread-pool boto3 client.

For bursts of 100, 500 and 1000 invocations "sent at once", two spreads (last − first):

- send spread, on the client: when each request went to its socket (the async driver's
  ``on_request_headers_sent`` trace; boto3's ``before-send`` event in the thread pool);
- arrival spread, at the server: when the server had read each request (its handler's first
  line), in another process, so client and server do not share a GIL or an event loop.

The server is a stand-in for the platform's front end (an aiohttp server speaking the Lambda
Invoke call, answering a noop agent reply at once), so the numbers are the clients' and not the
cold starts' (on the real platform a burst beyond its warm pool floods it with cold starts, see
docs/concurrency.md). ``--platform`` adds the real local platform for the sizes given, with a
warm pool as large as the burst, reading arrival from the agents' ``received_ns``.

Both clients get a warm connection pool first (as many connections as the burst) and requests
prepared (signed) before the clock starts; the thread pool's threads exist before the burst.
Rounds alternate the clients. Prints medians over rounds and the ratio thread-pool / async;
writes bench/out/dispatch_spread.json.

    python bench/dispatch_spread.py [--sizes 100,500,1000] [--rounds 5] [--platform 100] [--out F]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import statistics
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
def bench_endpoint(endpoint: str, sizes: list[int], rounds: int, fn: str, stand_in: bool) -> dict:
    out = {}
    for n in sizes:
        rows = {"async": [], "threads": []}
        client = boto_client(endpoint, n)
        with ThreadPoolExecutor(max_workers=n) as pool:
            list(pool.map(lambda _: None, range(n)))  # the threads exist before the burst
            for r in range(rounds):
                order = ("async", "threads") if r % 2 == 0 else ("threads", "async")
                for which in order:
                    if stand_in:
                        arrivals(endpoint)  # reset
                    t0 = time.perf_counter()
                    res = run_async(client, n, fn) if which == "async" else run_threads(client, n, fn, pool)
                    took = time.perf_counter() - t0
                    arr = arrivals(endpoint) if stand_in else res["received"]
                    rows[which].append({"send_spread_ms": spread(res["send"]),
                                        "arrival_spread_ms": spread(arr), "ok": res["ok"],
                                        "seconds": round(took, 3)})
        summ = {}
        for which, rs in rows.items():
            summ[which] = {k: statistics.median([x[k] for x in rs if x[k] is not None])
                           for k in ("send_spread_ms", "arrival_spread_ms")}
            summ[which]["ok_min"] = min(x["ok"] for x in rs)
        summ["ratio_send"] = summ["threads"]["send_spread_ms"] / summ["async"]["send_spread_ms"]
        summ["ratio_arrival"] = summ["threads"]["arrival_spread_ms"] / summ["async"]["arrival_spread_ms"]
        out[n] = {"median": summ, "rounds": rows}
        print(f"n={n:5d}  async: send {summ['async']['send_spread_ms']:8.1f} ms, arrival "
              f"{summ['async']['arrival_spread_ms']:8.1f} ms | thread pool: send "
              f"{summ['threads']['send_spread_ms']:8.1f} ms, arrival "
              f"{summ['threads']['arrival_spread_ms']:8.1f} ms | ratio send "
              f"{summ['ratio_send']:.1f}x, arrival {summ['ratio_arrival']:.1f}x", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,500,1000")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--platform", default="", help="also on the real local platform for these sizes")
    ap.add_argument("--out", default=str(OUT / "dispatch_spread.json"))
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",") if x]
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    result = {"machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()},
              "rounds": a.rounds}
    q, stop = mp.Queue(), mp.Event()
    proc = mp.Process(target=serve, args=(q, stop), daemon=True)
    proc.start()
    endpoint = f"http://127.0.0.1:{q.get(timeout=30)}"
    try:
        print(f"stand-in Lambda endpoint (another process) at {endpoint}; medians of {a.rounds} rounds")
        result["stand_in"] = bench_endpoint(endpoint, sizes, a.rounds, "bench-fn", True)
    finally:
        stop.set()
        proc.join(10)
    if a.platform:
        import tempfile

        from faascope.providers import local_platform
        from faascope.providers.base import FunctionConfig
        from faascope.providers.local import LocalProvider

        psizes = [int(x) for x in a.platform.split(",") if x]
        d = Path(tempfile.mkdtemp(prefix="faascope-bench-"))
        st = local_platform.start(profile="gcf", data_dir=d, port=0, keep_alive="10m", network="host")
        try:
            prov = LocalProvider(endpoint_url=st["endpoint"])
            prov.deploy("bench-fn", FunctionConfig(memory_mb=128, profile="gcf"))
            # a warm pool as large as the largest burst: every burst member finds an instance
            run_async(prov.client, max(psizes), "bench-fn")
            print(f"local platform (gcf, warm pool {max(psizes)}): arrival = the agents' received_ns")
            result["platform"] = bench_endpoint(st["endpoint"], psizes, a.rounds, "bench-fn", False)
            prov.teardown("bench-fn")
        finally:
            local_platform.stop(d)
    result["machine"]["load_after"] = os.getloadavg()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
