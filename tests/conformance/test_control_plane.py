"""The Lambda control plane: the same boto3 calls against the local platform and against moto
(an independent emulator, in server mode on loopback), each compared with what AWS documents:
HTTP status, error code (e.response['Error']['Code']) and response fields.

The platform must answer as AWS documents. Where moto departs from AWS, MOTO_DEVIATIONS records
what moto answers instead, and the moto run asserts exactly that deviation: nothing is compared
silently, and a moto release that changes its answer shows up here. Invoke needs Docker under
moto, so the tests at the end of this module run against the platform only.

AWS's documentation:
- API reference: https://docs.aws.amazon.com/lambda/latest/api/ (API_<Operation>.html for each
  operation below; FunctionName accepts a name, a full ARN, a partial ARN and name:qualifier:
  https://docs.aws.amazon.com/lambda/latest/api/API_GetFunction.html#API_GetFunction_RequestSyntax)
- Errors common to all operations (UnknownOperationException 404, ValidationException 400):
  https://docs.aws.amazon.com/lambda/latest/api/CommonErrors.html and
  https://docs.aws.amazon.com/awsconsolehelpdocs/latest/gsg/common-errors.html
- Function states (a new function is Pending, then Active; an update is InProgress, then
  Successful): https://docs.aws.amazon.com/lambda/latest/dg/functions-states.html
- Reserved environment variables:
  https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
- Invoke (InvalidRequestContentException, RequestTooLargeException, 429 reasons):
  https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import uuid
import zipfile
from dataclasses import dataclass

import botocore.auth
import botocore.awsrequest
import botocore.credentials
import pytest
import requests
from botocore.exceptions import ClientError

from .conftest import ROLE, client_for

ACCOUNT_ARN = r"arn:aws:lambda:us-east-1:\d{12}"

# Where moto (5.x, server mode) departs from AWS's documented behaviour: check key ->
# (what moto answers, why it is wrong). The platform is held to AWS's answer in every case.
MOTO_DEVIATIONS: dict[str, tuple[object, str]] = {
    "create.state": ("Active", "a new function is Active at once; AWS: Pending, then Active (functions-states.html)"),
    "create.bad_name": ((201, None), "accepts 'bad name!'; AWS: 400 ValidationException (FunctionName pattern)"),
    "create.bad_memory": ((201, None), "accepts MemorySize 40000; AWS: 400 ValidationException (range 128-32768)"),
    "create.corrupt_zip": ((201, None), "accepts a package that is not a zip; AWS: 400 InvalidParameterValueException"),
    "create.reserved_env": ((201, None), "accepts reserved variables (AWS_REGION, ...); AWS: 400 InvalidParameterValueException"),
    "name.partial_arn": ((500, "500"), "a partial ARN (123456789012:function:name) crashes moto's handler (500); AWS accepts it"),
    "name.qualified": ((404, "404"), "name:$LATEST is not found; AWS accepts name:qualifier"),
    "versions.missing": ((200, None), "ListVersionsByFunction of a missing function answers 200 with no versions; AWS: 404"),
    "alias.get_status": (201, "GetAlias answers 201; AWS: 200"),
    "alias.update_status": (201, "UpdateAlias answers 201; AWS: 200"),
    "alias.delete_status": (201, "DeleteAlias answers 201; AWS: 204"),
    "tags.tag_status": (200, "TagResource answers 200; AWS: 204"),
    "account_settings": ((404, "404"), "GetAccountSettings is not routed in server mode (HTML 404); AWS: 200 with AccountLimit and AccountUsage"),
    "layers.delete_status": (200, "DeleteLayerVersion answers 200; AWS: 204"),
    "unknown_operation": ((404, None), "an unknown path is an HTML 404 without an error type; AWS: 404 UnknownOperationException"),
}


@dataclass
class Result:
    status: int
    code: str | None
    body: dict

    @property
    def sc(self):
        return (self.status, self.code)


def call(client, op: str, **kw) -> Result:
    try:
        r = getattr(client, op)(**kw)
        meta = r.pop("ResponseMetadata")
        return Result(meta["HTTPStatusCode"], None, r)
    except ClientError as e:
        return Result(e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"],
                      {"Message": e.response["Error"].get("Message", "")})


def expect(target: str, key: str, actual, aws):
    """actual must be AWS's answer, or for moto the deviation MOTO_DEVIATIONS records."""
    if target == "moto" and key in MOTO_DEVIATIONS:
        moto_answer, why = MOTO_DEVIATIONS[key]
        assert actual == moto_answer, f"moto's recorded deviation {key!r} ({why}) changed: now {actual!r}"
    else:
        assert actual == aws, f"{target}: {key}: {actual!r}, AWS answers {aws!r}"


def small_zip(files: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in (files or {"bootstrap": b"#!/bin/sh\nexit 1\n"}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o100755 << 16
            z.writestr(info, data)
    return buf.getvalue()


# ---- the two targets ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def moto_endpoint():
    from moto.server import ThreadedMotoServer
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="module", params=["platform", "moto"])
def target(request, platform_endpoint):
    """(name, endpoint, lambda client, role ARN) of the platform or of moto."""
    if request.param == "platform":
        return "platform", platform_endpoint, client_for(platform_endpoint), ROLE
    endpoint = request.getfixturevalue("moto_endpoint")
    iam = client_for(endpoint, service="iam")
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
                                                        "Action": "sts:AssumeRole"}]}
    try:
        role = iam.create_role(RoleName="conformance", AssumeRolePolicyDocument=json.dumps(policy))["Role"]["Arn"]
    except ClientError:
        role = iam.get_role(RoleName="conformance")["Role"]["Arn"]
    return "moto", endpoint, client_for(endpoint), role


@pytest.fixture
def make(target):
    """make(**create_kw) -> (Result of CreateFunction, name); functions are deleted after the test."""
    _, _, lam, role = target
    made = []

    def create(name=None, zip_bytes=None, **kw):
        name = name or f"cp-{uuid.uuid4().hex[:10]}"
        args = dict(FunctionName=name, Runtime="provided.al2023", Role=role, Handler="bootstrap",
                    Code={"ZipFile": zip_bytes if zip_bytes is not None else small_zip()}) | kw
        res = call(lam, "create_function", **args)
        if res.status == 201:
            made.append(name)
            if res.body.get("State") == "Pending":
                # As a deploy tool does: AWS refuses some operations on a Pending function.
                # res stays the create's response, from before the wait.
                wait_active(lam, name)
        return res, name

    yield create
    for name in made:
        call(lam, "delete_function", FunctionName=name)


def wait_active(lam, name):
    lam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})


# ---- create ---------------------------------------------------------------------------------

def test_create_function(target, make):
    t, _, lam, role = target
    z = small_zip()
    res, name = make(zip_bytes=z, MemorySize=256, Timeout=7, Description="d ✓")
    assert res.status == 201, res
    c = res.body
    assert c["FunctionName"] == name
    assert re.fullmatch(rf"{ACCOUNT_ARN}:function:{name}", c["FunctionArn"])
    assert (c["Runtime"], c["Handler"], c["Role"], c["MemorySize"], c["Timeout"], c["Description"]) == \
        ("provided.al2023", "bootstrap", role, 256, 7, "d ✓")
    assert c["Version"] == "$LATEST" and c["PackageType"] == "Zip"
    assert c["CodeSize"] == len(z)
    assert c["CodeSha256"] == base64.b64encode(hashlib.sha256(z).digest()).decode()
    expect(t, "create.state", c.get("State"), "Pending")


def test_create_duplicate_is_conflict(target, make):
    _, name = make()
    res, _ = make(name=name)
    assert res.sc == (409, "ResourceConflictException")


def test_create_bad_name(target, make):
    res, _ = make(name="bad name!")
    expect(target[0], "create.bad_name", res.sc, (400, "ValidationException"))


def test_create_bad_memory(target, make):
    res, _ = make(MemorySize=40000)
    expect(target[0], "create.bad_memory", res.sc, (400, "ValidationException"))


def test_create_corrupt_zip_refused(target, make):
    res, _ = make(zip_bytes=b"this is not a zip file")
    expect(target[0], "create.corrupt_zip", res.sc, (400, "InvalidParameterValueException"))


def test_create_reserved_environment_variables_refused(target, make):
    res, _ = make(Environment={"Variables": {"AWS_REGION": "mars-1", "LAMBDA_TASK_ROOT": "/x"}})
    expect(target[0], "create.reserved_env", res.sc, (400, "InvalidParameterValueException"))
    if res.status == 400:
        assert "AWS_REGION" in res.body["Message"] and "LAMBDA_TASK_ROOT" in res.body["Message"]


def test_create_exec_wrapper_allowed(target, make):
    res, _ = make(Environment={"Variables": {"AWS_LAMBDA_EXEC_WRAPPER": "/opt/wrapper"}})
    assert res.status == 201, res
    assert res.body["Environment"]["Variables"] == {"AWS_LAMBDA_EXEC_WRAPPER": "/opt/wrapper"}


def test_create_with_publish_returns_version_1(target, make):
    _, _, lam, _ = target
    res, name = make(Publish=True)
    assert res.status == 201, res
    assert res.body["Version"] == "1"
    versions = call(lam, "list_versions_by_function", FunctionName=name)
    assert [v["Version"] for v in versions.body["Versions"]] == ["$LATEST", "1"]


def test_state_pending_then_active_and_update_in_progress_then_successful(target, make):
    t, _, lam, _ = target
    res, name = make()  # waits for Active with boto3's waiter, as a deploy tool does
    expect(t, "create.state", res.body.get("State"), "Pending")
    c = lam.get_function_configuration(FunctionName=name)
    assert c["State"] == "Active" and c["LastUpdateStatus"] == "Successful"
    u = call(lam, "update_function_configuration", FunctionName=name, MemorySize=512)
    assert u.status == 200 and u.body["MemorySize"] == 512
    lam.get_waiter("function_updated_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    c = lam.get_function_configuration(FunctionName=name)
    assert c["LastUpdateStatus"] == "Successful" and c["MemorySize"] == 512


# ---- missing functions, names, qualifiers ----------------------------------------------------

@pytest.mark.parametrize("op", ["get_function", "get_function_configuration", "delete_function"])
def test_missing_function_is_not_found(target, op):
    res = call(target[2], op, FunctionName=f"missing-{uuid.uuid4().hex[:8]}")
    assert res.sc == (404, "ResourceNotFoundException")


def test_list_functions(target, make):
    _, name = make()
    res = call(target[2], "list_functions")
    assert res.status == 200
    assert name in [f["FunctionName"] for f in res.body["Functions"]]


def test_names_as_arn_partial_arn_and_qualified(target, make):
    t, _, lam, _ = target
    res, name = make()
    arn = res.body["FunctionArn"]
    full = call(lam, "get_function", FunctionName=arn)
    assert full.status == 200 and full.body["Configuration"]["FunctionName"] == name
    partial = call(lam, "get_function", FunctionName=arn.split(":", 4)[4])  # 123456789012:function:name
    expect(t, "name.partial_arn", partial.sc, (200, None))
    qualified = call(lam, "get_function", FunctionName=f"{name}:$LATEST")
    expect(t, "name.qualified", qualified.sc, (200, None))


def test_unknown_qualifier_is_not_found(target, make):
    _, name = make()
    lam = target[2]
    assert call(lam, "get_function", FunctionName=name, Qualifier="nope").sc == (404, "ResourceNotFoundException")
    assert call(lam, "get_function", FunctionName=f"{name}:nope").sc == (404, "ResourceNotFoundException")
    assert call(lam, "get_function", FunctionName=name, Qualifier="7").sc == (404, "ResourceNotFoundException")


# ---- versions and aliases --------------------------------------------------------------------

def test_versions(target, make):
    t, _, lam, _ = target
    _, name = make()
    pub = call(lam, "publish_version", FunctionName=name, Description="first")
    assert pub.status == 201, pub
    assert pub.body["Version"] == "1" and pub.body["FunctionArn"].endswith(f":function:{name}:1")
    listed = call(lam, "list_versions_by_function", FunctionName=name)
    assert listed.status == 200
    assert [v["Version"] for v in listed.body["Versions"]] == ["$LATEST", "1"]
    got = call(lam, "get_function", FunctionName=name, Qualifier="1")
    assert got.status == 200 and got.body["Configuration"]["Version"] == "1"
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    assert call(lam, "publish_version", FunctionName=missing).sc == (404, "ResourceNotFoundException")
    expect(t, "versions.missing", call(lam, "list_versions_by_function", FunctionName=missing).sc,
           (404, "ResourceNotFoundException"))


def test_aliases(target, make):
    t, _, lam, _ = target
    _, name = make()
    call(lam, "publish_version", FunctionName=name)
    made = call(lam, "create_alias", FunctionName=name, Name="live", FunctionVersion="1")
    assert made.status == 201, made
    assert re.fullmatch(rf"{ACCOUNT_ARN}:function:{name}:live", made.body["AliasArn"])
    assert (made.body["Name"], made.body["FunctionVersion"]) == ("live", "1")
    got = call(lam, "get_alias", FunctionName=name, Name="live")
    expect(t, "alias.get_status", got.status, 200)
    assert got.body["AliasArn"] == made.body["AliasArn"]
    listed = call(lam, "list_aliases", FunctionName=name)
    assert listed.status == 200 and [a["Name"] for a in listed.body["Aliases"]] == ["live"]
    by_alias = call(lam, "get_function", FunctionName=name, Qualifier="live")
    assert by_alias.status == 200
    upd = call(lam, "update_alias", FunctionName=name, Name="live", Description="now")
    expect(t, "alias.update_status", upd.status, 200)
    assert upd.body["Description"] == "now"
    assert call(lam, "get_alias", FunctionName=name, Name="nope").sc == (404, "ResourceNotFoundException")
    dele = call(lam, "delete_alias", FunctionName=name, Name="live")
    expect(t, "alias.delete_status", dele.status, 204)
    assert call(lam, "get_alias", FunctionName=name, Name="live").sc == (404, "ResourceNotFoundException")
    assert call(lam, "list_aliases", FunctionName=f"missing-{uuid.uuid4().hex[:8]}").sc == (404, "ResourceNotFoundException")


# ---- tags, concurrency, account, layers ------------------------------------------------------

def test_tags(target, make):
    t, _, lam, _ = target
    res, _ = make()
    arn = res.body["FunctionArn"]
    tag = call(lam, "tag_resource", Resource=arn, Tags={"team": "conformance", "k": "v ✓"})
    expect(t, "tags.tag_status", tag.status, 204)
    listed = call(lam, "list_tags", Resource=arn)
    assert listed.status == 200 and listed.body["Tags"].items() >= {"team": "conformance", "k": "v ✓"}.items()
    assert call(lam, "untag_resource", Resource=arn, TagKeys=["team"]).status == 204
    after = call(lam, "list_tags", Resource=arn).body["Tags"]
    assert "team" not in after and after.get("k") == "v ✓"
    assert call(lam, "tag_resource", Resource=arn + "-missing", Tags={"a": "1"}).sc == (404, "ResourceNotFoundException")


def test_reserved_concurrency(target, make):
    lam = target[2]
    _, name = make()
    put = call(lam, "put_function_concurrency", FunctionName=name, ReservedConcurrentExecutions=5)
    assert put.status == 200 and put.body == {"ReservedConcurrentExecutions": 5}
    got = call(lam, "get_function_concurrency", FunctionName=name)
    assert got.status == 200 and got.body == {"ReservedConcurrentExecutions": 5}
    assert call(lam, "delete_function_concurrency", FunctionName=name).status == 204
    after = call(lam, "get_function_concurrency", FunctionName=name)
    assert after.status == 200 and after.body == {}
    missing = call(lam, "put_function_concurrency", FunctionName=f"missing-{uuid.uuid4().hex[:8]}",
                   ReservedConcurrentExecutions=1)
    assert missing.sc == (404, "ResourceNotFoundException")


def test_account_settings(target):
    t, _, lam, _ = target
    res = call(lam, "get_account_settings")
    expect(t, "account_settings", res.sc, (200, None))
    if res.status == 200:
        limit, usage = res.body["AccountLimit"], res.body["AccountUsage"]
        for k in ("TotalCodeSize", "CodeSizeUnzipped", "CodeSizeZipped", "ConcurrentExecutions",
                  "UnreservedConcurrentExecutions"):
            assert isinstance(limit[k], int) and limit[k] > 0, (k, limit)
        assert isinstance(usage["TotalCodeSize"], int) and isinstance(usage["FunctionCount"], int)
        assert limit["CodeSizeZipped"] == 52428800 and limit["CodeSizeUnzipped"] == 262144000


def test_layers(target):
    t, _, lam, _ = target
    layer = f"conf-layer-{uuid.uuid4().hex[:8]}"
    z = small_zip({"lib/x.txt": b"layer file"})
    pub = call(lam, "publish_layer_version", LayerName=layer, Content={"ZipFile": z},
               CompatibleRuntimes=["provided.al2023"], Description="d")
    assert pub.status == 201, pub
    assert pub.body["Version"] == 1
    assert re.fullmatch(rf"{ACCOUNT_ARN}:layer:{layer}:1", pub.body["LayerVersionArn"])
    assert pub.body["Content"]["CodeSize"] == len(z)
    assert pub.body["Content"]["CodeSha256"] == base64.b64encode(hashlib.sha256(z).digest()).decode()
    listed = call(lam, "list_layers")
    assert listed.status == 200
    mine = [x for x in listed.body["Layers"] if x["LayerName"] == layer]
    assert len(mine) == 1 and mine[0]["LatestMatchingVersion"]["Version"] == 1
    got = call(lam, "get_layer_version", LayerName=layer, VersionNumber=1)
    assert got.status == 200 and got.body["LayerVersionArn"] == pub.body["LayerVersionArn"]
    dele = call(lam, "delete_layer_version", LayerName=layer, VersionNumber=1)
    expect(t, "layers.delete_status", dele.status, 204)


def test_unknown_operation(target):
    """A signed request to a path Lambda does not have: AWS's UnknownOperationException (404)."""
    t, endpoint, _, _ = target
    req = botocore.awsrequest.AWSRequest(method="GET", url=endpoint + "/2015-03-31/no-such-operation")
    botocore.auth.SigV4Auth(botocore.credentials.Credentials("testing", "testing"), "lambda", "us-east-1").add_auth(req)
    r = requests.get(req.url, headers=dict(req.headers), timeout=30)
    expect(t, "unknown_operation", (r.status_code, r.headers.get("x-amzn-ErrorType", "").split(":")[0] or None),
           (404, "UnknownOperationException"))


def test_moto_deviations_are_documented():
    """Every recorded deviation says why it is one, with AWS's answer."""
    for key, (_, why) in MOTO_DEVIATIONS.items():
        assert "AWS" in why, key


# ---- platform only: invoke (moto needs Docker for it) -----------------------------------------

@pytest.fixture(scope="module")
def go_fn(deploy):
    return deploy("go", "cp")


def test_invoke_non_json_payload_is_invalid_request_content(lam, go_fn):
    res = call(lam, "invoke", FunctionName=go_fn, Payload=b"this is { not json")
    assert res.sc == (400, "InvalidRequestContentException")


def test_invoke_unknown_qualifier_is_not_found(lam, go_fn):
    assert call(lam, "invoke", FunctionName=go_fn, Qualifier="nope", Payload=b"{}").sc == (404, "ResourceNotFoundException")
    assert call(lam, "invoke", FunctionName=f"{go_fn}:nope", Payload=b"{}").sc == (404, "ResourceNotFoundException")


def test_invoke_by_arn_partial_arn_version_and_alias(lam, go_fn):
    arn = lam.get_function_configuration(FunctionName=go_fn)["FunctionArn"]
    for name in (arn, arn.split(":", 4)[4], f"{go_fn}:$LATEST"):
        res = call(lam, "invoke", FunctionName=name, Payload=b'{"op":"echo"}')
        assert res.status == 200 and "FunctionError" not in res.body, (name, res)
    v = lam.publish_version(FunctionName=go_fn)["Version"]
    lam.create_alias(FunctionName=go_fn, Name="live", FunctionVersion=v)
    r = lam.invoke(FunctionName=go_fn, Qualifier="live", Payload=b'{"op":"echo"}')
    assert r["ExecutedVersion"] == v
    assert json.loads(r["Payload"].read())["context"]["invoked_function_arn"] == f"{arn}:live"
    r = lam.invoke(FunctionName=f"{go_fn}:{v}", Payload=b'{"op":"echo"}')
    assert r["ExecutedVersion"] == v


def test_event_invoke_has_request_id_and_async_payload_limit(lam, go_fn):
    r = lam.invoke(FunctionName=go_fn, InvocationType="Event", Payload=b'{"op":"echo"}')
    assert r["StatusCode"] == 202
    assert re.fullmatch(r"[0-9a-f-]{36}", r["ResponseMetadata"]["HTTPHeaders"].get("x-amzn-requestid", ""))
    big = json.dumps({"op": "echo", "blob": "x" * (1536 * 1024)}).encode()  # over the async limit (256 KB, 1 MB since 2025)
    assert call(lam, "invoke", FunctionName=go_fn, InvocationType="Event", Payload=big).sc == (413, "RequestTooLargeException")


def test_reserved_concurrency_zero_throttles_invoke(lam, deploy):
    name = deploy("go", "throttle")
    lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=0)
    try:
        with pytest.raises(ClientError) as e:
            lam.invoke(FunctionName=name, Payload=b'{"op":"echo"}')
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429
        assert e.value.response["Error"]["Code"] == "TooManyRequestsException"
        assert e.value.response.get("Reason") == "ReservedFunctionConcurrentInvocationLimitExceeded"
    finally:
        lam.delete_function_concurrency(FunctionName=name)
    r = lam.invoke(FunctionName=name, Payload=b'{"op":"echo"}')
    assert "FunctionError" not in r


def test_missing_bootstrap_is_invalid_entrypoint(lam):
    name = f"cp-noboot-{uuid.uuid4().hex[:8]}"
    lam.create_function(FunctionName=name, Runtime="provided.al2023", Role=ROLE, Handler="bootstrap",
                        Code={"ZipFile": small_zip({"README": b"no bootstrap here"})})
    try:
        wait_active(lam, name)
        r = lam.invoke(FunctionName=name, Payload=b"{}")
        assert r["FunctionError"] == "Unhandled"
        assert json.loads(r["Payload"].read())["errorType"] == "Runtime.InvalidEntrypoint"
    finally:
        lam.delete_function(FunctionName=name)


def test_layers_honoured_and_mounted_at_opt(lam, package):
    layer = lam.publish_layer_version(LayerName=f"conf-opt-{uuid.uuid4().hex[:8]}",
                                      Content={"ZipFile": small_zip({"conf/hello.txt": b"from the layer"})})
    name = f"cp-layer-{uuid.uuid4().hex[:8]}"
    c = lam.create_function(FunctionName=name, Runtime="provided.al2023", Role=ROLE, Handler="bootstrap",
                            Code={"ZipFile": package("go")}, Layers=[layer["LayerVersionArn"]])
    try:
        assert [x["Arn"] for x in c.get("Layers", [])] == [layer["LayerVersionArn"]]
        wait_active(lam, name)
        r = lam.invoke(FunctionName=name, Payload=json.dumps({"op": "read", "line": "/opt/conf/hello.txt"}))
        assert json.loads(r["Payload"].read()) == {"content": "from the layer"}
    finally:
        lam.delete_function(FunctionName=name)
