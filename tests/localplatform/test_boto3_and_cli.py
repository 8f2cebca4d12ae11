"""boto3 and the AWS CLI, unmodified, against the local platform."""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time

import pytest

from .conftest import needs_sandboxes


def invoke(client, name, workload, **kw):
    r = client.invoke(FunctionName=name, Payload=json.dumps({"workload": workload}), **kw)
    return r, json.loads(r["Payload"].read())


def test_boto3_create_invoke_warm_then_cold_after_keep_alive(lambda_client, make_function):
    name = make_function("ka")
    fn = lambda_client.get_function(FunctionName=name)
    assert fn["Configuration"]["State"] == "Active"
    assert fn["Configuration"]["MemorySize"] == 256
    _, first = invoke(lambda_client, name, {"kind": "noop"})
    assert first["ok"] and first["cold"]
    _, second = invoke(lambda_client, name, {"kind": "noop"})
    assert not second["cold"] and second["instance"]["id"] == first["instance"]["id"]
    time.sleep(1.6)  # the fixture's platform keeps instances warm for 1 s
    _, third = invoke(lambda_client, name, {"kind": "noop"})
    assert third["cold"] and third["instance"]["id"] != first["instance"]["id"]


def test_log_tail_has_report_line(lambda_client, make_function):
    name = make_function("tail")
    r, body = invoke(lambda_client, name, {"kind": "noop"}, LogType="Tail")
    log = base64.b64decode(r["LogResult"]).decode()
    assert body["ok"]
    assert "REPORT RequestId:" in log and "Billed Duration:" in log and "Init Duration:" in log


def test_unknown_function_is_resource_not_found(lambda_client):
    with pytest.raises(lambda_client.exceptions.ResourceNotFoundException):
        lambda_client.invoke(FunctionName="does-not-exist", Payload=b"{}")


def test_function_error_header_on_timeout(lambda_client, make_function):
    name = make_function("to", timeout=1)
    r, body = invoke(lambda_client, name, {"kind": "spin", "iterations": 10**11})
    assert r["FunctionError"] == "Unhandled"
    assert body["errorType"] == "Sandbox.Timedout"


@pytest.mark.skipif(not needs_sandboxes(), reason="CPU quotas need root and cgroups")
def test_spin_is_about_four_times_slower_at_256_than_1024_mb(lambda_client, make_function):
    # lambda profile: vCPU = MB / 1769, so 256 MB gets 1/4 of 1024 MB's CPU. Runs alternate
    # between the two so that any other load on the machine hits both alike.
    names = {mem: make_function(f"spin{mem}", memory=mem) for mem in (256, 1024)}
    for name in names.values():
        invoke(lambda_client, name, {"kind": "spin", "iterations": 1000})  # cold starts out of the way
    runs = {256: [], 1024: []}
    for _ in range(4):
        for mem, name in names.items():
            runs[mem].append(invoke(lambda_client, name, {"kind": "spin", "iterations": 100_000_000})[1]["workload"]["elapsed_s"])
    # Other load only ever slows a run (it takes CPU the quota would have given), and it slows the
    # 1024 MB runs (0.58 vCPU to find) more than the 256 MB ones (0.145): the fastest run of each
    # is the one closest to its quota, so the ratio of minima is the quotas' ratio (issue #29:
    # the median's ratio fell under 3.3 on a loaded machine).
    times = {mem: min(r) for mem, r in runs.items()}
    ratio = times[256] / times[1024]
    assert 3.3 < ratio < 4.8, f"256 MB / 1024 MB elapsed ratio {ratio:.2f} ({times}, load average {os.getloadavg()})"


@pytest.mark.skipif(not needs_sandboxes(), reason="memory limits need root and cgroups")
def test_gcf_write_larger_than_memory_fails_cleanly_and_platform_serves_on(lambda_client, make_function):
    name = make_function("gcfoom", memory=256, profile="gcf")
    r, body = invoke(lambda_client, name, {"kind": "fileio", "op": "write", "file_size": 512 * 2**20,
                                           "io_size": 2**20})
    assert r["FunctionError"] == "Unhandled"
    assert body["errorType"] == "Runtime.OutOfMemory"
    _, ok = invoke(lambda_client, name, {"kind": "noop"})
    assert ok["ok"]


@pytest.mark.skipif(shutil.which("aws") is None, reason="the AWS CLI is installed by scripts/setup.sh (test extra)")
def test_aws_cli_lists_and_invokes(platform_endpoint, make_function, tmp_path):
    name = make_function("cli")
    env = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_DEFAULT_REGION": "us-east-1",
           "PATH": "/usr/bin:/bin:" + str(__import__("os").environ.get("PATH", ""))}
    out = subprocess.run(["aws", "lambda", "list-functions", "--endpoint-url", platform_endpoint],
                         env=env, capture_output=True, text=True, check=True)
    assert name in [f["FunctionName"] for f in json.loads(out.stdout)["Functions"]]
    outfile = tmp_path / "out.json"
    payload = json.dumps({"workload": {"kind": "noop"}})
    args = ["aws", "lambda", "invoke", "--function-name", name, "--payload", payload, str(outfile),
            "--endpoint-url", platform_endpoint]
    ver = subprocess.run(["aws", "--version"], env=env, capture_output=True, text=True).stdout
    if ver.startswith("aws-cli/2"):
        args[-2:-2] = ["--cli-binary-format", "raw-in-base64-out"]
    res = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    assert json.loads(res.stdout)["StatusCode"] == 200
    assert json.loads(outfile.read_text())["ok"] is True
