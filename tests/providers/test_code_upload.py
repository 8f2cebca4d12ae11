"""Packages over Lambda's 50 MB direct-upload limit are deployed as deploy tools deploy them:
uploaded to a bucket, then named in CreateFunction / UpdateFunctionCode (Code.S3Bucket/S3Key).
One code path (LambdaAPIProvider._code_source) for AWS (checked against botocore's models with
the Stubber, no live cloud) and the local platform (a real campaign through the S3 stand-in)."""
from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import boto3
import pytest
from botocore.stub import ANY, Stubber
from botocore.validate import validate_parameters
from click.testing import CliRunner

from conftest import needs_binaries
from faascope.cli import cli
from faascope.errors import Failure
from faascope.providers.aws import AWSProvider
from faascope.providers.base import FunctionConfig
from faascope.providers.packaging import ZIP_OVERHEAD_BYTES, build_zip, needs_s3_upload
from faascope.specs.lambda_quotas import DIRECT_UPLOAD_MAX_BYTES, UNZIPPED_MAX_BYTES

ROOT = Path(__file__).resolve().parents[2]
ROLE = "arn:aws:iam::123456789012:role/faascope-exec"
ACTIVE = {"Configuration": {"FunctionName": "f", "State": "Active", "LastUpdateStatus": "Successful",
                            "MemorySize": 256, "Timeout": 60, "Environment": {"Variables": {}}}}
#: over the direct-upload limit (50 MB = 52,428,800 B) and under the 250 MB unzipped one
LARGE = 60 * 1024 * 1024


def test_quotas_are_the_platforms_own():
    """One fact, one source: the Go platform enforces the same two numbers (limits.go)."""
    go = (ROOT / "agent/platform/limits.go").read_text()
    assert int(re.search(r"maxZippedBytes\s*=\s*(\d+)", go).group(1)) == DIRECT_UPLOAD_MAX_BYTES
    assert int(re.search(r"maxUnzippedBytes\s*=\s*(\d+)", go).group(1)) == UNZIPPED_MAX_BYTES


@needs_binaries
def test_needs_s3_upload_bounds_the_real_zip(tmp_path):
    """The wiring's guess (image size + overhead) never misses a zip that is over the limit: a
    package padded to just under the guess's threshold zips to at most the limit."""
    edge = DIRECT_UPLOAD_MAX_BYTES - ZIP_OVERHEAD_BYTES
    assert not needs_s3_upload(edge) and needs_s3_upload(edge + 1) and not needs_s3_upload(None)
    z = build_zip(tmp_path / "edge.zip", image_size=edge)
    assert z.stat().st_size <= DIRECT_UPLOAD_MAX_BYTES


def _provider(**storage) -> AWSProvider:
    p = AWSProvider(role=ROLE, region="eu-west-1", storage=storage)
    p._storage_ready = True
    return p


@needs_binaries
def test_aws_large_package_is_uploaded_to_s3_then_named(aws_env, monkeypatch):
    p = _provider(s3_bucket="faascope-results-bucket", s3_prefix="runs/")
    s3 = boto3.client("s3", region_name="eu-west-1")
    monkeypatch.setattr(p, "s3_client", lambda: s3)
    name = "faascope-big-c0ffee-1a2b3c4d"
    key = ANY
    with Stubber(p.control) as lam, Stubber(s3) as st:
        lam.add_client_error("get_function", "ResourceNotFoundException", http_status_code=404)
        st.add_response("put_object", {}, {"Bucket": "faascope-results-bucket", "Key": key, "Body": ANY})
        lam.add_response("create_function", {"FunctionName": name, "State": "Pending"})
        lam.add_response("get_function", ACTIVE)  # the function_active_v2 waiter
        st.add_response("delete_object", {}, {"Bucket": "faascope-results-bucket", "Key": key})
        calls = []
        p.control.meta.events.register("before-parameter-build.lambda.CreateFunction",
                                       lambda params, **_: calls.append(json.loads(json.dumps(params, default=str))))
        p.deploy(name, FunctionConfig(memory_mb=256, image_size=LARGE))
        lam.assert_no_pending_responses()
        st.assert_no_pending_responses()
    code = calls[0]["Code"]
    assert set(code) == {"S3Bucket", "S3Key"} and code["S3Bucket"] == "faascope-results-bucket"
    assert code["S3Key"].startswith("runs/faascope-code/" + name + "/") and code["S3Key"].endswith(".zip")
    validate_parameters(calls[0], p.control.meta.service_model.operation_model("CreateFunction").input_shape)
    up = p.describe_function(name)["code"]  # what the campaign's `deployed` event records
    assert up["via"] == "s3" and up["zipped_bytes"] > DIRECT_UPLOAD_MAX_BYTES
    p.close()


@needs_binaries
def test_aws_large_package_update_goes_through_s3_too(aws_env, monkeypatch):
    """A function that exists with other code: UpdateFunctionCode names the uploaded object."""
    p = _provider(code_bucket="faascope-deploy")
    s3 = boto3.client("s3", region_name="eu-west-1")
    monkeypatch.setattr(p, "s3_client", lambda: s3)
    current = {"Configuration": {**ACTIVE["Configuration"], "CodeSha256": "other", "Architectures": ["x86_64"],
                                 "EphemeralStorage": {"Size": 512}}, "Tags": {}}
    calls = []
    p.control.meta.events.register("before-parameter-build.lambda.UpdateFunctionCode",
                                   lambda params, **_: calls.append(json.loads(json.dumps(params, default=str))))
    with Stubber(p.control) as lam, Stubber(s3) as st:
        lam.add_response("get_function", current)
        st.add_response("put_object", {}, {"Bucket": "faascope-deploy", "Key": ANY, "Body": ANY})
        lam.add_response("update_function_code", {"FunctionName": "f"})
        lam.add_response("get_function", ACTIVE)  # the function_updated_v2 waiter
        st.add_response("delete_object", {}, {"Bucket": "faascope-deploy", "Key": ANY})
        p.deploy("f", FunctionConfig(memory_mb=256, timeout_s=60, image_size=LARGE))
        lam.assert_no_pending_responses()
        st.assert_no_pending_responses()
    assert calls[0]["S3Bucket"] == "faascope-deploy" and "ZipFile" not in calls[0]
    assert calls[0]["S3Key"].startswith("faascope-code/f/")  # code_bucket: no s3_prefix
    validate_parameters(calls[0], p.control.meta.service_model.operation_model("UpdateFunctionCode").input_shape)
    p.close()


@needs_binaries
def test_aws_small_package_stays_inline(aws_env):
    p = _provider(s3_bucket="faascope-results-bucket")
    calls = []
    p.control.meta.events.register("before-parameter-build.lambda.CreateFunction",
                                   lambda params, **_: calls.append(params))
    with Stubber(p.control) as lam:
        lam.add_client_error("get_function", "ResourceNotFoundException", http_status_code=404)
        lam.add_response("create_function", {"FunctionName": "f", "State": "Pending"})
        lam.add_response("get_function", ACTIVE)
        p.deploy("f", FunctionConfig(memory_mb=256))
    assert set(calls[0]["Code"]) == {"ZipFile"} and p.describe_function("f")["code"]["via"] == "inline"
    p.close()


@needs_binaries
def test_aws_large_package_without_a_bucket_says_what_to_set(aws_env):
    p = _provider()
    with Stubber(p.control) as lam:
        lam.add_client_error("get_function", "ResourceNotFoundException", http_status_code=404)
        with pytest.raises(Failure, match=r"over Lambda's 52428800-byte limit.*code_bucket"):
            p.deploy("f", FunctionConfig(memory_mb=256, image_size=LARGE))
        lam.assert_no_pending_responses()  # no CreateFunction was sent
    p.close()


def test_image_size_over_the_unzipped_limit_is_refused_at_plan(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("name: too-big\nprovider: {kind: local}\nfunction: {memory_mb: 256}\n"
                    "workload: {kind: noop}\nfactors:\n  image_size: [12MiB, 300MiB]\n")
    r = CliRunner().invoke(cli, ["plan", str(spec)])
    assert r.exit_code == 2 and "image_size" in r.output, r.output


@pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root (cgroups, namespaces)")
@needs_binaries
def test_local_campaign_deploys_a_package_over_the_direct_limit(tmp_path, platform_dir):
    """`image_size: 60MiB` used to plan, then fail at CreateFunction (413: the 70 MB request
    limit). Now the campaign brings the S3 stand-in, uploads the package, names it, and a
    platform reading code from that stand-in runs the cold start."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: big-package
provider:
  kind: local
  settings: {{data_dir: "{platform_dir}"}}
function: {{memory_mb: 256}}
workload: {{kind: noop}}
factors:
  image_size: [60MiB]
design: {{replications: 1, warmup: 0, seed: 3}}
""")
    db = tmp_path / "r.db"
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db), "--no-progress"])
    assert r.exit_code == 0, r.output
    with sqlite3.connect(db) as c:
        responses = [json.loads(x[0]) for x in c.execute("SELECT response_json FROM invocations")]
        events = [json.loads(d) for k, d in c.execute("SELECT kind, detail_json FROM events") if k == "standins"]
    assert responses and all(x["ok"] for x in responses), responses
    assert events[0]["code_via_s3"]["bucket"]
    with sqlite3.connect(db) as c:
        deployed = [json.loads(d) for k, d in c.execute("SELECT kind, detail_json FROM events") if k == "deployed"]
    assert deployed[0]["provider"]["code"]["via"] == "s3"
    # the running platform reads no S3: the campaign ran on one of its own that does
    assert events[0]["platform"]["how"] == "dedicated"
