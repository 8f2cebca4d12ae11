"""A FAKE, in-process provider for driver tests: no platform, no agent, no network.

It answers like the agent (the response schema, src/faascope/schemas) after a short sleep, tracks warm/cold
instances per function like a platform would, and can be told to fail some invocations. Tests that
use it say so in their names (``..._with_in_process_fake_provider``).

Run as a script it runs a campaign with this fake provider, so a test can SIGKILL it:
    python driver_fakes.py SPEC RESULTS [--resume] [--delay-ms N] [--sigterm-in-teardown]
        [--add-replications N] [--may-have-run-after N] [--rerun-may-have-run]
(--sigterm-in-teardown: the provider sends SIGTERM to its own process while tearing down;
--may-have-run-after N: every call after the first N ends as a platform that died behind a proxy
does, ``MayHaveRun.ConnectionClosedError``.)
"""
from __future__ import annotations

import json
import os
import random
import secrets
import signal
import sys
import time

from faascope.providers.base import FunctionConfig, Provider
from faascope.providers.invocation import InvokeResult, classify, classify_user


class InProcessFakeProvider(Provider):
    kind = "fake"

    def __init__(self, delay_s: float = 0.002, fail_every: int = 0, seed: int = 0,
                 sigterm_in_teardown: bool = False, may_have_run_after: int | None = None):
        self.delay_s = delay_s
        #: every call after this many (None: none) answers like a platform that died behind a proxy
        self.may_have_run_after = may_have_run_after
        self.sigterm_in_teardown = sigterm_in_teardown
        self.fail_every = fail_every
        self.rng = random.Random(seed)
        self.functions: dict[str, FunctionConfig] = {}
        self.instance: dict[str, str | None] = {}
        self.calls: list[tuple[str, str]] = []
        self.invocations = 0

    def deploy(self, name, config):
        self.calls.append(("deploy", name))
        self.functions[name] = config
        self.instance[name] = None

    def update_configuration(self, name, config):
        self.calls.append(("update", name))
        self.functions[name] = config
        self.instance[name] = None

    def force_cold(self, name):
        self.calls.append(("force_cold", name))
        self.instance[name] = None

    def invoke(self, name, payload):
        self.calls.append(("invoke", name))
        self.invocations += 1
        send = time.time_ns()
        cold = self.instance.get(name) is None
        if cold:
            self.instance[name] = secrets.token_hex(8)
        elapsed = self.delay_s * (0.5 + self.rng.random())
        time.sleep(elapsed)
        end = time.time_ns()
        if self.may_have_run_after is not None and self.invocations > self.may_have_run_after:
            # the proxy accepted the request, then the connection closed without a reply: the
            # function may have run (as the Lambda API provider names it)
            return InvokeResult(status="client_error", error_type="MayHaveRun.ConnectionClosedError",
                                error_message="Connection was closed before we received a valid "
                                              "response from endpoint URL", send_ns=send, end_ns=end)
        if self.fail_every and self.invocations % self.fail_every == 0:
            body = json.dumps({"errorType": "Runtime.ExitError", "errorMessage": "fake crash"}).encode()
            fields = classify(body, "Unhandled")
        elif self.functions.get(name) is not None and self.functions[name].user_code:
            # a user's own function: it echoes its event; the platform's REPORT gives the time
            ms = elapsed * 1000
            report = {"duration_ms": ms, "billed_duration_ms": int(ms) + 1,
                      "memory_size_mb": self.functions[name].memory_mb, "max_memory_used_mb": 30}
            if cold:
                report["init_duration_ms"] = 100.0
            fields = classify_user(json.dumps({"echo": payload}).encode(), None, cold)
            return InvokeResult(**fields, send_ns=send, headers_ns=end, end_ns=time.time_ns(),
                                attempts=1, retries=0, request_id=secrets.token_hex(4),
                                platform={"report": report})
        else:
            w = payload["workload"]
            body = json.dumps({
                "ok": True, "cold": cold,
                "instance": {"id": self.instance[name], "started_at": "", "sandbox": f"/fake/{name}",
                             "boot_id": "fake", "cpu_quota": None, "memory_limit_bytes": None},
                "timings": {"received_ns": send, "workload_start_ns": send, "workload_end_ns": end},
                "workload": {"kind": w["kind"], "elapsed_s": elapsed,
                             "bytes": w.get("file_size", 0), "ops": 1},
                "error": None}).encode()
            fields = classify(body, None)
        return InvokeResult(**fields, send_ns=send, headers_ns=end, end_ns=time.time_ns(),
                            attempts=1, retries=0, request_id=secrets.token_hex(4))

    def teardown(self, name):
        self.calls.append(("teardown", name))
        if self.sigterm_in_teardown:  # once, as a user's Ctrl-C or a service manager would
            self.sigterm_in_teardown = False
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
        self.functions.pop(name, None)


def main(argv: list[str]) -> None:
    from faascope.driver.runner import run_campaign

    spec, results = argv[0], argv[1]
    resume = "--resume" in argv
    delay_ms = 2.0
    if "--delay-ms" in argv:
        delay_ms = float(argv[argv.index("--delay-ms") + 1])
    term = "--sigterm-in-teardown" in argv
    add = int(argv[argv.index("--add-replications") + 1]) if "--add-replications" in argv else 0
    mhr = int(argv[argv.index("--may-have-run-after") + 1]) if "--may-have-run-after" in argv else None
    s = run_campaign(spec, results, resume=resume, progress=False, add_replications=add,
                     rerun_may_have_run="--rerun-may-have-run" in argv,
                     provider_factory=lambda loaded: InProcessFakeProvider(
                         delay_s=delay_ms / 1000, sigterm_in_teardown=term,
                         may_have_run_after=mhr))
    print(json.dumps({"recorded": s.recorded, "planned": s.planned, "ran_now": s.ran_now}))


if __name__ == "__main__":
    main(sys.argv[1:])
