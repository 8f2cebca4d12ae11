"""The storage server goes away mid-campaign and comes back: the kv workload answers with a
structured error (attempts counted, no hang) while Redis is down, and works again once it is back
on the same port, from the same warm instance."""
from __future__ import annotations

import json
import os
import time

import boto3
import pytest
from botocore.config import Config

from faascope import standins
from faascope.processes import stop_process
from faascope.providers import local_platform
from faascope.providers.packaging import build_zip

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="real sandboxes need root")


def test_redis_outage_is_a_recorded_error_then_recovers(tmp_path):
    redis = standins.start_redis(tmp_path / "redis")
    data = tmp_path / "platform"
    state = local_platform.start(data_dir=data, port=0, expose=str(redis.port))
    lam = boto3.client("lambda", endpoint_url=state["endpoint"], region_name="us-east-1",
                       aws_access_key_id="x", aws_secret_access_key="x",
                       config=Config(retries={"max_attempts": 1}, read_timeout=60))
    try:
        lam.create_function(FunctionName="kv", Runtime="provided.al2023", Role="arn:aws:iam::000000000000:role/r", Handler="bootstrap",
                            Code={"ZipFile": build_zip(tmp_path / "fn.zip").read_bytes()}, MemorySize=256,
                            Timeout=30, Environment={"Variables": {"FAASCOPE_REDIS_URL": redis.endpoint}})
        lam.get_waiter("function_active_v2").wait(FunctionName="kv", WaiterConfig={"Delay": 0.1})
        put = {"workload": {"kind": "kv", "op": "put", "item_size": 256, "count": 20, "max_attempts": 2,
                            "timeout_ms": 500}}

        def call() -> tuple[dict, float]:
            t0 = time.monotonic()
            body = json.loads(lam.invoke(FunctionName="kv", Payload=json.dumps(put))["Payload"].read())
            return body, time.monotonic() - t0

        before, _ = call()
        assert before["ok"], before
        stop_process(redis.pid, standins.STOP_WAIT_S)  # the server goes away
        down, took = call()
        assert not down["ok"] and down["error"]["type"] == "IOError", down
        assert took < 20, f"an outage must fail fast, not hang ({took:.1f} s)"
        back = standins.start_redis(tmp_path / "redis", port=redis.port)  # and comes back
        redis = back
        after, _ = call()
        assert after["ok"] and not after["cold"], after  # the same warm instance recovers
        assert after["workload"]["requests"]["ok"] == 20
    finally:
        local_platform.stop(data)
        stop_process(redis.pid, standins.STOP_WAIT_S)
