"""What ``faascope tune`` measures: a deployed function it can reconfigure (the Lambda API: the
local platform by name, AWS by name or ARN) or HTTP endpoints the user deployed at each memory
size (one URL per size: faascope cannot resize someone else's HTTP service).

A sample is one invocation: the platform's duration (the REPORT line's Duration, what Lambda
bills, rounded up; for HTTP the client's round trip, an upper bound), its billed duration, the
client's round trip, init duration on a cold start, and whether it failed and why."""
from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Optional

from faascope.errors import BadInput
from faascope.providers.lambda_api import parse_report
from faascope.providers.local import local_credentials
from faascope.providers.local_platform import running


@dataclass
class Sample:
    memory_mb: int
    arch: str
    start: str                      # "cold" or "warm"
    ok: bool
    latency_seconds: Optional[float]          # the platform's duration (else the client's)
    client_latency_seconds: float
    billed_duration_ms: Optional[float]
    init_duration_ms: Optional[float]
    max_memory_used_mb: Optional[int]
    error_type: str = ""


class LambdaTarget:
    """A function behind the Lambda API; sizes are set with UpdateFunctionConfiguration (which
    retires its warm instances, on AWS as on the local platform: the next call is cold)."""

    cost_platform = "aws_lambda"

    def __init__(self, client, name: str):
        from botocore.exceptions import ClientError, WaiterError

        self.client, self.name = client, name
        try:
            # a function just created is Pending: it cannot be reconfigured until Active
            client.get_waiter("function_active_v2").wait(
                FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 300})
            conf = client.get_function_configuration(FunctionName=name)
        except (ClientError, WaiterError) as exc:
            raise BadInput(f"cannot read the function {name!r}: "
                           f"{getattr(exc, 'response', {}).get('Error', {}).get('Message') or exc}",
                           field="--function") from None
        self.original_memory = int(conf["MemorySize"])
        self.arch = (conf.get("Architectures") or ["x86_64"])[0]
        self.memory: Optional[int] = None

    def describe(self) -> str:
        return f"function {self.name} ({self.arch})"

    def set_memory(self, memory_mb: int) -> None:
        from botocore.exceptions import ClientError

        try:
            self.client.update_function_configuration(FunctionName=self.name,
                                                      MemorySize=int(memory_mb))
            self.client.get_waiter("function_updated_v2").wait(
                FunctionName=self.name, WaiterConfig={"Delay": 1, "MaxAttempts": 300})
        except ClientError as exc:
            raise BadInput(f"cannot set {self.name} to {memory_mb} MB: "
                           f"{exc.response['Error'].get('Message') or exc}",
                           field="--memory") from None
        self.memory = int(memory_mb)

    def restore(self) -> None:
        if self.memory is not None and self.memory != self.original_memory:
            self.set_memory(self.original_memory)

    def invoke(self, payload: bytes, start: str) -> Sample:
        t0 = time.perf_counter()
        try:
            resp = self.client.invoke(FunctionName=self.name, Payload=payload, LogType="Tail")
            resp["Payload"].read()
            error = resp.get("FunctionError") or ""
        except Exception as exc:  # a failed call is a sample (status), never a crash of the sweep
            return Sample(self.memory or 0, self.arch, start, False, None,
                          time.perf_counter() - t0, None, None, None, type(exc).__name__)
        client_s = time.perf_counter() - t0
        tail = base64.b64decode(resp.get("LogResult") or b"").decode("utf-8", "replace")
        report = parse_report(tail) or {}
        dur = report.get("duration_ms")
        return Sample(self.memory or 0, self.arch, start, not error,
                      dur / 1000 if dur is not None else client_s, client_s,
                      report.get("billed_duration_ms"), report.get("init_duration_ms"),
                      report.get("max_memory_used_mb"), error)


class HTTPTarget:
    """HTTP endpoints of one function deployed at several sizes (``--url 512=https://…``)."""

    def __init__(self, urls: dict[int, str], platform: str, arch: str = "x86_64",
                 timeout_s: float = 900.0):
        self.urls, self.cost_platform, self.arch, self.timeout_s = urls, platform, arch, timeout_s
        self.memory: Optional[int] = None
        self.cold_supported = False

    def describe(self) -> str:
        return f"{len(self.urls)} HTTP endpoint(s)"

    def set_memory(self, memory_mb: int) -> None:
        if memory_mb not in self.urls:
            raise BadInput(f"no --url for {memory_mb} MB", field="--url")
        self.memory = memory_mb

    def restore(self) -> None:
        pass

    def invoke(self, payload: bytes, start: str) -> Sample:
        req = urllib.request.Request(self.urls[self.memory], data=payload, method="POST",
                                     headers={"Content-Type": "application/json"})
        t0 = time.perf_counter()
        error = ""
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                r.read()
        except urllib.error.HTTPError as exc:
            error = f"HTTP{exc.code}"
        except OSError as exc:
            error = type(exc).__name__
        s = time.perf_counter() - t0
        return Sample(self.memory or 0, self.arch, start, not error, s if not error else None, s,
                      None, None, None, error)


def lambda_client(endpoint_url: Optional[str], region: str, credentials=None):
    import boto3
    from botocore.config import Config

    kw = {}
    if credentials:
        kw = {"aws_access_key_id": credentials[0], "aws_secret_access_key": credentials[1]}
    return boto3.client("lambda", endpoint_url=endpoint_url, region_name=region,
                        config=Config(retries={"total_max_attempts": 1, "mode": "standard"},
                                      read_timeout=900, connect_timeout=10), **kw)


def local_client(endpoint_url: Optional[str], data_dir: Optional[str]):
    """The Lambda client of the running local platform (of ``data_dir``), or of ``endpoint_url``."""
    if endpoint_url is None:
        state = running(data_dir)
        if state is None:
            raise BadInput("no local platform runs (start it with `faascope platform start "
                           "--detach` and deploy your function), or pass --endpoint-url",
                           field="--data-dir")
        endpoint_url = state["endpoint"]
    return lambda_client(endpoint_url, "us-east-1", local_credentials()), endpoint_url


def read_payload(text: Optional[str]) -> bytes:
    """The payload: JSON text, or @FILE; {} by default. It must be JSON (Lambda's Invoke takes
    JSON), and it is sent as given, never run."""
    if not text:
        return b"{}"
    if text.startswith("@"):
        try:
            text = open(text[1:], encoding="utf-8").read()
        except OSError as exc:
            raise BadInput(f"cannot read {text[1:]}: {exc}", field="--payload") from None
    try:
        json.loads(text)
    except ValueError as exc:
        raise BadInput(f"not JSON: {exc}", field="--payload") from None
    return text.encode()
