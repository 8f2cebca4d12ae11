"""The requests the ``aws`` provider sends to a live AWS account, checked against botocore's own
service models (the models the AWS SDK and CLI are generated from). No live cloud: botocore's
Stubber answers instead of AWS; the client still validates every parameter against the real
Lambda / S3 / DynamoDB model before the stub is reached, and we validate again explicitly."""
from __future__ import annotations

import base64
import io
import json
import re

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber
from botocore.validate import validate_parameters

from conftest import SECRET_KEY, SESSION_TOKEN, needs_binaries
from faascope.providers.aws import AWSProvider
from faascope.providers.base import FunctionConfig
from faascope.providers.cleanup import clean_buckets, clean_functions, clean_tables

ROLE = "arn:aws:iam::123456789012:role/faascope-exec"
EFS_AP = "arn:aws:elasticfilesystem:eu-west-1:123456789012:access-point/fsap-0123456789abcdef0"
STORAGE = {"s3_bucket": "faascope-results-bucket", "create_bucket": True,
           "dynamodb_table": "faascope-kv", "create_table": True,
           "efs_access_point_arn": EFS_AP, "efs_mount_path": "/mnt/efs",
           "subnet_ids": ["subnet-0123456789abcdef0"], "security_group_ids": ["sg-0123456789abcdef0"]}
ACTIVE = {"Configuration": {"FunctionName": "f", "State": "Active", "LastUpdateStatus": "Successful",
                            "MemorySize": 256, "Timeout": 60, "Environment": {"Variables": {}}}}


def captured_params(client) -> list[tuple[str, dict]]:
    """Record every call's API parameters (botocore validates them against the model next)."""
    calls: list[tuple[str, dict]] = []

    def hook(params, model, **_):
        calls.append((model.name, json.loads(json.dumps(params, default=lambda b: "<bytes>"))))
    client.meta.events.register("before-parameter-build", hook)
    return calls


def validate(client, op: str, params: dict) -> None:
    shape = client.meta.service_model.operation_model(op).input_shape
    validate_parameters(params, shape)  # raises ParamValidationError on any mismatch


def make_provider(**kw) -> AWSProvider:
    p = AWSProvider(role=ROLE, region="eu-west-1", storage=STORAGE, tags={"team": "io-lab"}, **kw)
    p.bind_campaign("c0ffee12", "thesis-aws")
    return p


def no_secret(obj) -> None:
    s = json.dumps(obj, default=str)
    assert SECRET_KEY not in s and SESSION_TOKEN not in s and "AKIAFAKE" not in s


@needs_binaries
def test_aws_create_request_validates_against_botocore_model_no_live_cloud(aws_env):
    p = make_provider()
    p._storage_ready = True  # storage has its own test below
    calls = captured_params(p.control)
    with Stubber(p.control) as stub:
        stub.add_client_error("get_function", "ResourceNotFoundException", http_status_code=404)
        stub.add_response("create_function", {"FunctionName": "f", "State": "Pending"})
        stub.add_response("get_function", ACTIVE)  # the function_active_v2 waiter
        p.deploy("faascope-thesis-aws-c0ffee-1a2b3c4d", FunctionConfig(
            memory_mb=2048, ephemeral_mb=10240, timeout_s=900, arch="arm64"))
        stub.assert_no_pending_responses()
    op, params = [c for c in calls if c[0] == "CreateFunction"][0]
    raw = dict(params)
    raw["Code"] = {"ZipFile": b"zip"}
    validate(p.control, "CreateFunction", raw)
    assert params["Runtime"] == "provided.al2023" and params["Handler"] == "bootstrap"
    assert params["Architectures"] == ["arm64"]
    assert params["MemorySize"] == 2048 and params["EphemeralStorage"] == {"Size": 10240}
    assert params["Timeout"] == 900 and params["Role"] == ROLE
    assert params["VpcConfig"] == {"SubnetIds": STORAGE["subnet_ids"],
                                   "SecurityGroupIds": STORAGE["security_group_ids"]}
    assert params["FileSystemConfigs"] == [{"Arn": EFS_AP, "LocalMountPath": "/mnt/efs"}]
    env = params["Environment"]["Variables"]
    assert env["FAASCOPE_S3_BUCKET"] == "faascope-results-bucket"
    assert env["FAASCOPE_DYNAMODB_TABLE"] == "faascope-kv"
    assert env["FAASCOPE_SHARED_DIR"] == "/mnt/efs"
    assert "FAASCOPE_COLD_NONCE" in env
    tags = params["Tags"]
    assert tags["faascope:created-by"] == "faascope" and tags["faascope:campaign"] == "c0ffee12"
    assert tags["faascope:spec"] == "thesis-aws" and tags["team"] == "io-lab"
    # what the model says beyond types: the FunctionName pattern, tag and env limits (AWS docs)
    op_model = p.control.meta.service_model.operation_model("CreateFunction")
    pattern = op_model.input_shape.members["FunctionName"].metadata.get("pattern")
    if pattern:
        assert re.fullmatch(pattern, params["FunctionName"])
    assert all(len(k) <= 128 and len(v) <= 256 for k, v in tags.items())
    assert len(json.dumps(env)) < 4096
    no_secret(calls)
    no_secret(p.describe())
    p.close()


def test_aws_tag_resource_request_validates_against_botocore_model_no_live_cloud(aws_env):
    p = make_provider()
    arn = "arn:aws:lambda:eu-west-1:123456789012:function:faascope-x"
    params = {"Resource": arn, "Tags": p._tags(FunctionConfig(memory_mb=128))}
    validate(p.control, "TagResource", params)
    calls = captured_params(p.control)
    with Stubber(p.control) as stub:
        stub.add_response("tag_resource", {}, expected_params=params)
        p.control.tag_resource(**params)
    assert calls[0][1]["Tags"]["faascope:campaign"] == "c0ffee12"


def test_aws_invoke_request_and_report_line_validate_against_botocore_model_no_live_cloud(aws_env):
    p = make_provider()
    body = json.dumps({"ok": True, "cold": True, "instance": {"id": "i"}, "timings": {},
                       "workload": {"kind": "noop", "elapsed_s": 0.0}, "error": None}).encode()
    tail = ("START RequestId: 8f5 Version: $LATEST\nEND RequestId: 8f5\nREPORT RequestId: 8f5\t"
            "Duration: 1.52 ms\tBilled Duration: 47 ms\tMemory Size: 128 MB\tMax Memory Used: 18 MB\t"
            "Init Duration: 45.03 ms\t\n")
    expected = {"FunctionName": "fn", "InvocationType": "RequestResponse", "LogType": "Tail",
                "Payload": ANY}
    validate(p.client, "Invoke", {**expected, "Payload": b"{}"})
    with Stubber(p.client) as stub:
        stub.add_response("invoke", {"StatusCode": 200, "ExecutedVersion": "$LATEST",
                                     "LogResult": base64.b64encode(tail.encode()).decode(),
                                     "Payload": StreamingBody(io.BytesIO(body), len(body))},
                          expected_params=expected)
        r = p.invoke("fn", {"workload": {"kind": "noop"}})
    assert r.status == "ok"
    assert r.platform["report"] == {"duration_ms": 1.52, "billed_duration_ms": 47,
                                    "memory_size_mb": 128, "max_memory_used_mb": 18,
                                    "init_duration_ms": 45.03}
    # a function error is a result, not an exception
    err = b'{"errorType":"Runtime.ExitError","errorMessage":"exit status 2"}'
    with Stubber(p.client) as stub:
        stub.add_response("invoke", {"StatusCode": 200, "FunctionError": "Unhandled",
                                     "Payload": StreamingBody(io.BytesIO(err), len(err))})
        r = p.invoke("fn", {"workload": {"kind": "noop"}})
    assert r.status == "function_error" and r.error_type == "Runtime.ExitError"


def test_aws_update_and_force_cold_requests_validate_against_botocore_model_no_live_cloud(aws_env):
    p = make_provider()
    calls = captured_params(p.control)
    with Stubber(p.control) as stub:
        stub.add_response("update_function_configuration", {"FunctionName": "fn"})
        stub.add_response("get_function", ACTIVE)
        stub.add_response("update_function_configuration", {"FunctionName": "fn"})
        stub.add_response("get_function", ACTIVE)
        p.update_configuration("fn", FunctionConfig(memory_mb=1024, ephemeral_mb=2048, timeout_s=120))
        p.force_cold("fn")
    ops = [c for c in calls if c[0] == "UpdateFunctionConfiguration"]
    assert ops[0][1] == {"FunctionName": "fn", "MemorySize": 1024, "EphemeralStorage": {"Size": 2048},
                         "Timeout": 120}
    assert set(ops[1][1]["Environment"]["Variables"]) >= {"FAASCOPE_COLD_NONCE"}


def test_aws_storage_create_requests_validate_against_botocore_model_no_live_cloud(aws_env, monkeypatch):
    p = make_provider()
    s3 = boto3.client("s3", region_name="eu-west-1")
    ddb = boto3.client("dynamodb", region_name="eu-west-1")
    s3_calls, ddb_calls = captured_params(s3), captured_params(ddb)
    monkeypatch.setattr(p, "s3_client", lambda: s3)
    monkeypatch.setattr(p, "dynamodb_client", lambda: ddb)
    tagset = [{"Key": k, "Value": v} for k, v in sorted(p.all_tags().items())]
    with Stubber(s3) as s, Stubber(ddb) as d:
        s.add_client_error("head_bucket", "404", http_status_code=404)
        s.add_response("create_bucket", {}, expected_params={
            "Bucket": "faascope-results-bucket",
            "CreateBucketConfiguration": {"LocationConstraint": "eu-west-1"}})
        s.add_response("put_bucket_tagging", {}, expected_params={
            "Bucket": "faascope-results-bucket", "Tagging": {"TagSet": tagset}})
        d.add_client_error("describe_table", "ResourceNotFoundException", http_status_code=400)
        d.add_response("create_table", {})
        d.add_response("describe_table", {"Table": {"TableName": "faascope-kv", "TableStatus": "ACTIVE"}})
        created = p.ensure_storage()
    assert created == {"s3_bucket": "faascope-results-bucket", "dynamodb_table": "faascope-kv"}
    ct = [c for c in ddb_calls if c[0] == "CreateTable"][0][1]
    assert ct["BillingMode"] == "PAY_PER_REQUEST"
    assert {"Key": "faascope:campaign", "Value": "c0ffee12"} in ct["Tags"]
    no_secret(s3_calls + ddb_calls)


def test_cleanup_requests_validate_against_botocore_model_no_live_cloud(aws_env):
    lam = boto3.client("lambda", region_name="eu-west-1")
    s3 = boto3.client("s3", region_name="eu-west-1")
    ddb = boto3.client("dynamodb", region_name="eu-west-1")
    ours = {"faascope:created-by": "faascope", "faascope:campaign": "c0ffee12"}
    with Stubber(lam) as st:
        st.add_response("list_functions", {"Functions": [{"FunctionName": "a"}, {"FunctionName": "b"}]})
        st.add_response("get_function", {"Tags": ours}, {"FunctionName": "a"})
        st.add_response("delete_function", {}, {"FunctionName": "a"})
        st.add_response("get_function", {"Tags": {"owner": "else"}}, {"FunctionName": "b"})
        res = clean_functions(lam, "c0ffee12", dry_run=False)
    assert [(r.name, r.action) for r in res] == [("a", "deleted")]
    with Stubber(s3) as st:
        st.add_response("list_buckets", {"Buckets": [{"Name": "faascope-b"}, {"Name": "other"}]})
        st.add_response("get_bucket_tagging", {"TagSet": [{"Key": k, "Value": v} for k, v in ours.items()]},
                        {"Bucket": "faascope-b"})
        st.add_response("list_objects_v2", {"Contents": [{"Key": "faascope/x"}], "IsTruncated": False},
                        {"Bucket": "faascope-b"})
        st.add_response("delete_objects", {}, {"Bucket": "faascope-b",
                                               "Delete": {"Objects": [{"Key": "faascope/x"}], "Quiet": True}})
        st.add_response("delete_bucket", {}, {"Bucket": "faascope-b"})
        st.add_client_error("get_bucket_tagging", "NoSuchTagSet", http_status_code=404,
                            expected_params={"Bucket": "other"})
        res = clean_buckets(s3, None, dry_run=False)
    assert [(r.name, r.action, r.detail) for r in res] == [("faascope-b", "deleted", "1 object(s)")]
    arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/faascope-kv"
    with Stubber(ddb) as st:
        st.add_response("list_tables", {"TableNames": ["faascope-kv"]})
        st.add_response("describe_table", {"Table": {"TableArn": arn}}, {"TableName": "faascope-kv"})
        st.add_response("list_tags_of_resource", {"Tags": [{"Key": k, "Value": v} for k, v in ours.items()]},
                        {"ResourceArn": arn})
        res = clean_tables(ddb, "c0ffee12", dry_run=True)
    assert [(r.name, r.action) for r in res] == [("faascope-kv", "would-delete")]


def test_aws_settings_require_a_role_and_vpc_for_efs(tmp_path):
    from click.testing import CliRunner
    from faascope.cli import cli

    spec = tmp_path / "s.yaml"
    spec.write_text("name: x\nprovider: {kind: aws, settings: {region: eu-west-1}}\n"
                    "workload: {kind: noop}\n")
    r = CliRunner().invoke(cli, ["plan", str(spec)])
    assert r.exit_code == 2 and "provider.settings.role" in r.output
    spec.write_text(f"name: x\nprovider: {{kind: aws, settings: {{role: '{ROLE}', storage: "
                    f"{{efs_access_point_arn: '{EFS_AP}'}}}}}}\nworkload: {{kind: noop}}\n")
    r = CliRunner().invoke(cli, ["plan", str(spec)])
    assert r.exit_code == 2 and "subnet_ids" in r.output
