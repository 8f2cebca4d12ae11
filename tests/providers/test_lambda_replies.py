"""One reading of a Lambda Invoke reply: the boto3 path (``LambdaAPIProvider.invoke``) and the burst
driver's aiohttp path (``provider.async_requests()`` sent by ``AsyncInvoker``) turn the same HTTP
reply into the same ``InvokeResult``.

A small Lambda-shaped HTTP server on loopback (a FAKE endpoint, no Go platform) answers each
function name with a canned reply in the form the Invoke API reference gives
(https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html); both clients reach it over real
HTTP, so botocore's own response handling is part of what is compared.
"""
from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from botocore.stub import Stubber

from faascope.driver.aclient import AsyncInvoker, request_factory
from faascope.errors import BadInput
from faascope.providers.base import FunctionConfig, Provider
from faascope.providers.http import HTTPProvider, HTTPRequests
from faascope.providers.lambda_api import LambdaAPIProvider, LambdaRequests

OK = {"ok": True, "cold": False, "instance": {"id": "i-1"}, "timings": {"received_ns": 1},
      "workload": {"kind": "noop", "elapsed_s": 0.0}, "error": None}
TAIL = ("START RequestId: r-1 Version: $LATEST\nEND RequestId: r-1\nREPORT RequestId: r-1\t"
        "Duration: 1.52 ms\tBilled Duration: 2 ms\tMemory Size: 128 MB\tMax Memory Used: 18 MB\t"
        "Init Duration: 45.03 ms\t\n")
PLATFORM = {"X-Faascope-Instance-Id": "i-1", "X-Faascope-Cold": "false"}

# function name -> (status, headers, body); "{tail}" headers are sent only when LogType=Tail
REPLIES = {
    "ok": (200, {"X-Amzn-RequestId": "r-ok", **PLATFORM}, json.dumps(OK).encode()),
    "ok-tail": (200, {"X-Amzn-RequestId": "r-1", "X-Amz-Log-Result": "{tail}", **PLATFORM},
                json.dumps(OK).encode()),
    "agent-error": (200, {"X-Amzn-RequestId": "r-ae"},
                    json.dumps(dict(OK, ok=False, error={"type": "NoSpace", "message": "full"})).encode()),
    "handled": (200, {"X-Amzn-RequestId": "r-h", "X-Amz-Function-Error": "Handled"},
                b'{"errorType": "ValueError", "errorMessage": "bad input"}'),
    "unhandled": (200, {"X-Amzn-RequestId": "r-u", "X-Amz-Function-Error": "Unhandled"},
                  b'{"errorType": "Runtime.ExitError", "errorMessage": "signal: killed"}'),
    "timed-out": (200, {"X-Amzn-RequestId": "r-t", "X-Amz-Function-Error": "Unhandled"},
                  b"Task timed out after 3.00 seconds"),
    "throttle": (429, {"X-Amzn-RequestId": "r-429", "X-Amzn-ErrorType": "TooManyRequestsException"},
                 b'{"Type": "User", "message": "Rate Exceeded.", '
                 b'"Reason": "ReservedFunctionConcurrentInvocationLimitExceeded"}'),
    "bare-429": (429, {}, b""),
    "missing": (404, {"X-Amzn-RequestId": "r-404",
                      "X-Amzn-ErrorType": "ResourceNotFoundException:http://internal.amazon.com/"},
                b'{"Type": "User", "Message": "Function not found: missing"}'),
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        name = self.path.split("/functions/", 1)[1].split("/", 1)[0]
        status, headers, body = REPLIES[name]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers.items():
            if v == "{tail}":
                if self.headers.get("X-Amz-Log-Type") != "Tail":
                    continue
                v = base64.b64encode(TAIL.encode()).decode()
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def provider(endpoint: str, log_tail: bool = True) -> LambdaAPIProvider:
    return LambdaAPIProvider(endpoint_url=endpoint, role="arn:aws:iam::000000000000:role/x",
                             credentials=("fake", "fake"), max_attempts=1, log_tail=log_tail,
                             kind="local")


def via_async(p: LambdaAPIProvider, name: str, log_tail: bool = True):
    async def main():
        inv = AsyncInvoker(p.async_requests(log_tail=log_tail), max_connections=2)
        try:
            return await inv.send(inv.factory.prepare(name, {"workload": {"kind": "noop"}}))
        finally:
            await inv.close()
    return asyncio.run(main())


def comparable(r) -> dict:
    """Everything the reply says: not the clock readings, not the async pool's connection note and
    not the attempt counts (each client's retry policy, not the reply's reading; the async client
    never retries, boto3 follows the provider's botocore retry config, e.g. on a throttle)."""
    d = dataclasses.asdict(r)
    for k in ("send_ns", "headers_ns", "end_ns"):
        assert d.pop(k) is not None, k
    assert d.pop("attempts") == d.pop("retries") + 1
    if d["platform"]:
        d["platform"].pop("connection", None)
        d["platform"] = d["platform"] or None
    return d


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_sync_and_async_lambda_paths_give_identical_results_with_fake_lambda_endpoint(endpoint, name):
    p = provider(endpoint)
    sync, asyn = p.invoke(name, {"workload": {"kind": "noop"}}), via_async(p, name)
    assert comparable(sync) == comparable(asyn)
    assert (asyn.attempts, asyn.retries) == (1, 0)


def test_lambda_reply_fields_are_read_as_before_with_fake_lambda_endpoint(endpoint):
    """What each reply means (the same on both paths, by the test above)."""
    p = provider(endpoint)
    r = {n: p.invoke(n, {}) for n in REPLIES}
    ok = r["ok"]
    assert (ok.status, ok.response, ok.request_id, ok.log_tail) == ("ok", OK, "r-ok", None)
    assert ok.platform == {"instance_id": "i-1", "cold": "false"}
    tail = r["ok-tail"]
    assert tail.log_tail == TAIL
    assert tail.platform == {"instance_id": "i-1", "cold": "false",
                             "report": {"duration_ms": 1.52, "billed_duration_ms": 2,
                                        "memory_size_mb": 128, "max_memory_used_mb": 18,
                                        "init_duration_ms": 45.03}}
    ae = r["agent-error"]
    assert (ae.status, ae.error_type, ae.error_message) == ("agent_error", "NoSpace", "full")
    h = r["handled"]
    assert (h.status, h.function_error, h.error_type, h.error_message, h.response) == \
        ("function_error", "Handled", "ValueError", "bad input", None)
    u = r["unhandled"]
    assert (u.status, u.function_error, u.error_type) == ("function_error", "Unhandled", "Runtime.ExitError")
    t = r["timed-out"]
    assert (t.status, t.error_type, t.raw_payload) == \
        ("function_error", "Unhandled", "Task timed out after 3.00 seconds")
    th = r["throttle"]
    assert (th.status, th.error_type, th.error_message, th.request_id, th.platform) == \
        ("client_error", "TooManyRequestsException", "HTTP 429: Rate Exceeded.", "r-429", None)
    b = r["bare-429"]
    assert (b.status, b.error_type, b.error_message) == ("client_error", "TooManyRequestsException", "HTTP 429")
    m = r["missing"]
    assert (m.status, m.error_type, m.error_message) == \
        ("client_error", "ResourceNotFoundException", "HTTP 404: Function not found: missing")


def test_no_log_tail_unless_asked_on_either_path_with_fake_lambda_endpoint(endpoint):
    p = provider(endpoint, log_tail=False)
    sync, asyn = p.invoke("ok-tail", {}), via_async(p, "ok-tail", log_tail=False)
    assert sync.log_tail is None and asyn.log_tail is None
    assert comparable(sync) == comparable(asyn)


def test_a_stubbed_client_error_reads_as_the_http_reply_would_no_live_cloud():
    """Without an HTTP reply (botocore's Stubber answers instead), botocore's parsed error is read
    the same way: the throttle is the same result as over HTTP."""
    p = provider("http://127.0.0.1:9")
    with Stubber(p.client) as stub:
        stub.add_client_error("invoke", service_error_code="TooManyRequestsException",
                              service_message="Rate Exceeded.", http_status_code=429)
        r = p.invoke("fn", {})
    assert (r.status, r.error_type, r.error_message, r.attempts, r.retries) == \
        ("client_error", "TooManyRequestsException", "HTTP 429: Rate Exceeded.", 1, 0)


class _NoBursts(Provider):
    kind = "gcp"

    def deploy(self, name: str, config: FunctionConfig) -> None: ...
    def update_configuration(self, name: str, config: FunctionConfig) -> None: ...
    def force_cold(self, name: str) -> None: ...
    def invoke(self, name: str, payload: dict): ...
    def teardown(self, name: str) -> None: ...


def test_each_provider_owns_its_burst_requests():
    p = provider("http://127.0.0.1:9")
    f = p.async_requests(log_tail=True)
    assert isinstance(f, LambdaRequests) and f.log_tail and f.client is p.client
    assert isinstance(request_factory(p), LambdaRequests)  # the driver's shim delegates
    h = HTTPProvider(["http://127.0.0.1:9/"], headers={"Authorization": "Bearer x"})
    hf = request_factory(h)
    assert isinstance(hf, HTTPRequests)
    prep = hf.prepare("f", {"workload": {"kind": "noop"}})
    assert prep.method == "POST" and prep.headers["Authorization"] == "Bearer x"
    dry = hf.prepare("f", b"{}", dry_run=True)
    assert dry.method == "GET" and str(dry.url) == "http://127.0.0.1:9/healthz"
    assert f.prepare("f", b"{}", dry_run=True).method == "POST"  # a Lambda DryRun invoke
    with pytest.raises(BadInput) as e:
        request_factory(_NoBursts())
    assert e.value.field == "provider.kind"
    assert str(e.value) == ("provider.kind: bursts need the Lambda API (providers local, aws) or "
                            "agent URLs (http); the 'gcp' provider is not supported yet")
