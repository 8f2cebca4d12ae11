"""A real local platform, started the way users start it, for the tests in this folder."""
from __future__ import annotations

import os

import boto3
import pytest
from botocore.config import Config

from faascope.providers import local_platform
from faascope.providers.packaging import build_zip


def needs_sandboxes() -> bool:
    return os.geteuid() == 0 and os.path.exists("/sys/fs/cgroup")


@pytest.fixture(scope="session")
def platform_endpoint(tmp_path_factory):
    data = tmp_path_factory.mktemp("platform")
    state = local_platform.start(profile="lambda", data_dir=data, port=0, keep_alive="1s")
    yield state["endpoint"]
    local_platform.stop(data)


@pytest.fixture(scope="session")
def agent_zip(tmp_path_factory) -> bytes:
    return build_zip(tmp_path_factory.mktemp("pkg") / "fn.zip").read_bytes()


@pytest.fixture(scope="session")
def lambda_client(platform_endpoint):
    # Dummy credentials and a region: exactly what a user passes for a local endpoint.
    return boto3.client("lambda", endpoint_url=platform_endpoint, region_name="us-east-1",
                        aws_access_key_id="local", aws_secret_access_key="local",
                        config=Config(retries={"max_attempts": 1}, read_timeout=120))


@pytest.fixture
def make_function(lambda_client, agent_zip, request):
    created = []

    def make(name, memory=256, profile="lambda", timeout=60, **kw):
        name = f"{name}-{abs(hash(request.node.name)) % 10**6}"
        lambda_client.create_function(
            FunctionName=name, Runtime="provided.al2023", Role="arn:aws:iam::000000000000:role/faascope",
            Handler="bootstrap", Code={"ZipFile": kw.pop("zip", agent_zip)}, MemorySize=memory,
            Timeout=timeout, Tags={"faascope:profile": profile, **kw.pop("tags", {})}, **kw)
        created.append(name)
        # Like Lambda, the platform answers Pending and refuses invocations until Active.
        lambda_client.get_waiter("function_active_v2").wait(
            FunctionName=name, WaiterConfig={"Delay": 0.1, "MaxAttempts": 300})
        return name

    yield make
    for name in created:
        lambda_client.delete_function(FunctionName=name)
