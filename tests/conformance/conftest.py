"""Fixtures of the conformance suite: one local platform for the session, boto3 clients for it
(and for moto, the independent emulator the control-plane tests compare with), and the
third-party functions built once (builds.py)."""
from __future__ import annotations

import json
import uuid

import boto3
import pytest
from botocore.config import Config

from faascope.providers import local_platform

from . import builds

ROLE = "arn:aws:iam::123456789012:role/conformance"
RUNTIMES = ("go", "python", "rust")
HANDLERS = {"go": "bootstrap", "python": "handler.handle", "rust": "bootstrap"}


def client_for(endpoint: str, region: str = "us-east-1", service: str = "lambda"):
    # Dummy credentials and a region: exactly what a user passes for a local endpoint.
    return boto3.client(service, endpoint_url=endpoint, region_name=region,
                        aws_access_key_id="testing", aws_secret_access_key="testing",
                        config=Config(retries={"max_attempts": 1}, read_timeout=120, connect_timeout=10))


@pytest.fixture(scope="session")
def platform_endpoint(tmp_path_factory):
    data = tmp_path_factory.mktemp("conformance-platform")
    # keep-alive far longer than any test: an instance a test sees replaced was replaced for a
    # reason (it exited, it timed out), never because it idled out.
    state = local_platform.start(profile="lambda", data_dir=data, port=0, keep_alive="10m")
    yield state["endpoint"]
    local_platform.stop(data)


@pytest.fixture(scope="session")
def lam(platform_endpoint):
    return client_for(platform_endpoint)


@pytest.fixture(scope="session")
def package():
    """runtime -> its zip, built (or taken from the cache) on first use."""
    cache: dict[str, bytes] = {}

    def get(runtime: str) -> bytes:
        if runtime not in cache:
            cache[runtime] = builds.BUILDERS[runtime]()
        return cache[runtime]

    yield get
    if builds.build_seconds:
        print("\nconformance function builds (s, 0 = cached):",
              json.dumps({k: round(v, 1) for k, v in builds.build_seconds.items()}))


@pytest.fixture(scope="session")
def deploy(lam, package):
    """deploy(runtime, purpose, **create_kw) -> function name; deleted at the session's end."""
    made: list[tuple] = []

    def make(runtime: str, purpose: str, timeout: int = 30, memory: int = 256, env: dict | None = None,
             client=None, **kw):
        client = client or lam
        name = f"conf-{runtime}-{purpose}-{uuid.uuid4().hex[:6]}"
        args = dict(FunctionName=name, Runtime="provided.al2023", Role=ROLE, Handler=HANDLERS[runtime],
                    Code={"ZipFile": package(runtime)}, MemorySize=memory, Timeout=timeout, **kw)
        if env:
            args["Environment"] = {"Variables": env}
        client.create_function(**args)
        made.append((client, name))
        client.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
        return name

    yield make
    for client, name in made:
        try:
            client.delete_function(FunctionName=name)
        except Exception:  # noqa: BLE001 - best effort at teardown
            pass
