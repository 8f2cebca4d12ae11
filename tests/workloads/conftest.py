"""Real stand-ins (VersityGW, redis-server, the faascope sink, a shared directory) and a real
local platform that exposes them to its sandboxes, for the storage and network workload tests."""
from __future__ import annotations

import json
import os
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from jsonschema import Draft202012Validator

from faascope import standins
from faascope.providers import local_platform
from faascope.providers.packaging import build_zip

SCHEMAS = Path(__file__).resolve().parents[2] / "src" / "faascope" / "schemas"
RESPONSE = Draft202012Validator(json.loads((SCHEMAS / "agent-response.schema.json").read_text()))
REQUEST = Draft202012Validator(json.loads((SCHEMAS / "agent-request.schema.json").read_text()))


def sandboxes() -> bool:
    return os.geteuid() == 0 and os.path.exists("/sys/fs/cgroup")


@pytest.fixture(scope="session")
def stand_ins(tmp_path_factory):
    # VersityGW is built once into faascope's data directory (a few minutes the first time).
    with standins.start(work_dir=tmp_path_factory.mktemp("standins")) as st:
        yield st


@pytest.fixture(scope="session")
def platform(tmp_path_factory, stand_ins):
    data = tmp_path_factory.mktemp("platform")
    state = local_platform.start(profile="lambda", data_dir=data, port=0, keep_alive="30s",
                                 expose=stand_ins.expose, shared_dir=Path(stand_ins.servers["shared"].endpoint))
    yield state
    local_platform.stop(data)


@pytest.fixture(scope="session")
def shaped(platform):
    """Whether sandboxes get their own network namespace (and so the token-bucket shaper)."""
    h = local_platform.health(platform["endpoint"]) or {}
    return not h.get("host_network", True)


@pytest.fixture(scope="session")
def lambda_client(platform):
    return boto3.client("lambda", endpoint_url=platform["endpoint"], region_name="us-east-1",
                        aws_access_key_id="local", aws_secret_access_key="local",
                        config=Config(retries={"max_attempts": 1}, read_timeout=300))


@pytest.fixture(scope="session")
def agent_zip(tmp_path_factory) -> bytes:
    return build_zip(tmp_path_factory.mktemp("pkg") / "fn.zip").read_bytes()


@pytest.fixture
def make_function(lambda_client, agent_zip, stand_ins, request):
    created = []

    def make(name, memory=512, tags=None, env=None):
        name = f"{name}-{abs(hash(request.node.name)) % 10**6}"
        variables = {**stand_ins.function_env(), **(env or {})}
        lambda_client.create_function(
            FunctionName=name, Runtime="provided.al2023", Role="arn:aws:iam::000000000000:role/faascope",
            Handler="bootstrap", Code={"ZipFile": agent_zip}, MemorySize=memory, Timeout=120,
            Environment={"Variables": variables}, Tags={"faascope:profile": "lambda", **(tags or {})})
        created.append(name)
        # Like Lambda, the platform answers Pending and refuses invocations until Active.
        lambda_client.get_waiter("function_active_v2").wait(
            FunctionName=name, WaiterConfig={"Delay": 0.1, "MaxAttempts": 300})
        return name

    yield make
    for name in created:
        lambda_client.delete_function(FunctionName=name)


@pytest.fixture
def invoke(lambda_client):
    def call(name, workload, ok=True):
        REQUEST.validate({"workload": workload})
        r = lambda_client.invoke(FunctionName=name, Payload=json.dumps({"workload": workload}))
        body = json.loads(r["Payload"].read())
        assert "FunctionError" not in r, body
        errors = list(RESPONSE.iter_errors(body))
        assert not errors, f"{errors[0].message} at {list(errors[0].path)}"
        if ok:
            assert body["ok"], body["error"]
        return body
    return call


@pytest.fixture(scope="session")
def s3(stand_ins):
    s = stand_ins.s3_settings()
    return boto3.client("s3", endpoint_url=s["endpoint"], region_name=s["region"],
                        aws_access_key_id=s["access_key_id"], aws_secret_access_key=s["secret_access_key"],
                        config=Config(s3={"addressing_style": "path"}))
