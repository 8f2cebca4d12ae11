"""A FAKE Lambda Invoke endpoint (aiohttp server on loopback) and a provider that deploys nothing,
for burst-driver tests that need no Go platform. Tests that use them say so in their names
(``..._with_fake_lambda_endpoint``).

The server answers ``POST /2015-03-31/functions/{name}/invocations`` like the local platform and
the agent: a DryRun gets 204; an invocation gets the agent's JSON (instance ids from a warm pool
per function, cold on first use, timings in wall-clock ns) after ``delay_s``; beyond
``concurrency`` in-flight invocations it answers 429 TooManyRequestsException. With
``contended_io`` the simulated write time grows with the number of writers in flight (a shared
resource), which is what staggering is for.

Run as a script it runs a burst campaign against a running fake server (so a test can SIGKILL it):
    python burst_fakes.py SPEC RESULTS ENDPOINT [--resume]
"""
from __future__ import annotations

import asyncio
import json
import secrets
import sys
import threading
import time
from pathlib import Path

from aiohttp import web

from faascope.providers.base import FunctionConfig, Provider

BOOT_ID = "fake-boot-0000"


class FakeLambda:
    def __init__(self, delay_s: float = 0.01, concurrency: int = 10_000, contended_io: float = 0.0,
                 fail_every: int = 0, drop_every: int = 0):
        self.delay_s = delay_s
        #: every drop_every-th invocation runs, then its connection closes without a reply (a
        #: platform that died behind a proxy): the client can only say it may have run
        self.drop_every = drop_every
        self.concurrency = concurrency
        self.contended_io = contended_io
        self.fail_every = fail_every
        self.in_flight = 0
        self.peak = 0
        self.idle: dict[str, list[str]] = {}
        self.arrivals: list[int] = []
        self.count = 0
        self.throttled = 0
        self.dry_runs = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.url = ""
        self._runner = None

    async def invoke(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        body = await request.read()
        if request.headers.get("X-Amz-Invocation-Type") == "DryRun":
            self.dry_runs += 1
            return web.Response(status=204)
        received = time.time_ns()
        self.arrivals.append(received)
        if self.in_flight >= self.concurrency:
            self.throttled += 1
            return web.json_response({"Type": "User", "message": "Rate Exceeded.",
                                      "Reason": "ConcurrentInvocationLimitExceeded"}, status=429,
                                     headers={"X-Amzn-ErrorType": "TooManyRequestsException"})
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.count += 1
        n = self.count
        pool = self.idle.setdefault(name, [])
        cold = not pool
        inst = pool.pop() if pool else secrets.token_hex(8)
        try:
            payload = json.loads(body or b"{}")
            w = payload.get("workload", {})
            if cold:
                await asyncio.sleep(self.delay_s * 3)
            start = time.time_ns()
            dur = self.delay_s
            if w.get("kind") == "fileio" and self.contended_io:
                dur += self.contended_io * self.in_flight  # more writers in flight, slower I/O
            await asyncio.sleep(dur)
            end = time.time_ns()
            if self.drop_every and n % self.drop_every == 0:
                request.transport.abort()
                raise asyncio.CancelledError
            if self.fail_every and n % self.fail_every == 0:
                return web.json_response({"errorType": "Runtime.ExitError", "errorMessage": "fake"},
                                         headers={"X-Amz-Function-Error": "Unhandled"})
            result = {"kind": w.get("kind", "noop"), "elapsed_s": (end - start) / 1e9, "bytes": 0,
                      "ops": 0}
            if w.get("kind") == "fileio":
                result["op"] = w.get("op", "write")
            if "index" in w:
                result["index"] = w["index"]
            resp = {"ok": True, "cold": cold,
                    "instance": {"id": inst, "started_at": "2026-01-01T00:00:00Z",
                                 "sandbox": f"/fake/{inst}", "boot_id": BOOT_ID, "cpu_quota": None,
                                 "memory_limit_bytes": None},
                    "timings": {"received_ns": received, "workload_start_ns": start,
                                "workload_end_ns": end},
                    "workload": result, "error": None}
            return web.json_response(resp, headers={"X-Faascope-Instance-Id": inst,
                                                    "X-Faascope-Cold": str(cold).lower()})
        finally:
            self.in_flight -= 1
            pool.append(inst)

    def start(self) -> str:
        ready = threading.Event()

        def run():
            self.loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self.loop)
            app = web.Application()
            app.router.add_post("/2015-03-31/functions/{name}/invocations", self.invoke)
            self._runner = web.AppRunner(app, access_log=None)
            self.loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=4096)
            self.loop.run_until_complete(site.start())
            port = site._server.sockets[0].getsockname()[1]
            self.url = f"http://127.0.0.1:{port}"
            ready.set()
            self.loop.run_forever()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self.url

    def stop(self) -> None:
        if self.loop is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop)
        fut.result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


class FakeEndpointProvider(Provider):
    """Deploys nothing; invokes go to ``endpoint`` through a real boto3 client's signer."""

    kind = "fake"

    def __init__(self, endpoint: str):
        import boto3

        self.client = boto3.client("lambda", endpoint_url=endpoint, region_name="us-east-1",
                                   aws_access_key_id="fake", aws_secret_access_key="fake")
        self.calls: list[tuple[str, str]] = []

    def deploy(self, name, config: FunctionConfig):
        self.calls.append(("deploy", name))

    def update_configuration(self, name, config):
        self.calls.append(("update", name))

    def force_cold(self, name):
        self.calls.append(("force_cold", name))

    def async_requests(self, *, log_tail=False):
        from faascope.providers.lambda_api import LambdaRequests

        return LambdaRequests(self.client, log_tail=log_tail)

    def invoke(self, name, payload):  # pragma: no cover - the burst driver sends itself
        raise AssertionError("the burst driver must not call Provider.invoke")

    def teardown(self, name):
        self.calls.append(("teardown", name))


def spec_text(endpoint: str = "http://127.0.0.1:9", *, name: str = "burst-fake", burst: int = 20,
              reps: int = 2, extra_load: str = "", factors: str = "", rules: str = "",
              workload: str = "{kind: noop}") -> str:
    return f"""
name: {name}
provider: {{kind: local, settings: {{endpoint_url: "{endpoint}"}}}}
function: {{memory_mb: 128, profile: gcf}}
workload: {workload}
load:
  burst_size: {burst}
{extra_load}
{('factors:' + chr(10) + factors) if factors else ''}
design:
  replications: {reps}
  seed: 3
{('  rules: ' + rules) if rules else ''}
"""


if __name__ == "__main__":
    from faascope.driver.runner import run_campaign

    spec, results, endpoint = sys.argv[1], sys.argv[2], sys.argv[3]
    resume = "--resume" in sys.argv
    run_campaign(spec, results, resume=resume, progress=False,
                 provider_factory=lambda loaded: FakeEndpointProvider(endpoint))
    Path(results + ".done").write_text("done")
