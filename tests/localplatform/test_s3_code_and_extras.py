"""Deploy tools' way in: the package uploaded to S3 first (the local S3 stand-in, VersityGW),
then CreateFunction / UpdateFunctionCode / PublishLayerVersion naming it; and the control
operations they call around it (tags, reserved concurrency, account settings, layers), all
through boto3 against a real platform and a real S3 server."""
from __future__ import annotations

import io
import json
import zipfile

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from faascope import standins
from faascope.processes import stop_process
from faascope.providers import local_platform

ROLE = "arn:aws:iam::000000000000:role/faascope"


@pytest.fixture(scope="module")
def s3_platform(tmp_path_factory):
    """A VersityGW stand-in and a platform reading code from it, as `faascope run` wires them."""
    work = tmp_path_factory.mktemp("s3code")
    try:
        server = standins.start_s3(work / "standin", data_dir=work)
    except Exception as e:  # noqa: BLE001 - no VersityGW build here: nothing to test against
        pytest.skip(f"no S3 stand-in: {e}")
    try:
        extra = server.extra
        state = local_platform.start(profile="lambda", data_dir=work / "platform", port=0, keep_alive="1s",
                                     concurrency=20, s3={"endpoint": server.endpoint, **extra})
        try:
            creds = dict(region_name="us-east-1", aws_access_key_id=extra["access_key"],
                         aws_secret_access_key=extra["secret_key"])
            s3 = boto3.client("s3", endpoint_url=server.endpoint, config=Config(s3={"addressing_style": "path"}), **creds)
            lam = boto3.client("lambda", endpoint_url=state["endpoint"], region_name="us-east-1",
                               aws_access_key_id="local", aws_secret_access_key="local",
                               config=Config(retries={"max_attempts": 1}, read_timeout=120))
            yield s3, lam, extra["bucket"], state
        finally:
            local_platform.stop(work / "platform")
    finally:
        stop_process(server.pid, standins.STOP_WAIT_S)


def test_health_names_the_s3_endpoint(s3_platform):
    _, _, _, state = s3_platform
    assert local_platform.health(state["endpoint"])["s3_endpoint"].startswith("http://127.0.0.1:")


def test_create_update_and_layer_from_s3(s3_platform, agent_zip):
    s3, lam, bucket, _ = s3_platform
    s3.put_object(Bucket=bucket, Key="deploy/agent.zip", Body=agent_zip)
    cfg = lam.create_function(FunctionName="from-s3", Runtime="provided.al2023", Role=ROLE, Handler="bootstrap",
                              Code={"S3Bucket": bucket, "S3Key": "deploy/agent.zip"}, MemorySize=256, Timeout=30)
    try:
        assert cfg["CodeSize"] == len(agent_zip)
        lam.get_waiter("function_active_v2").wait(FunctionName="from-s3")  # as on Lambda: Pending first
        out = lam.invoke(FunctionName="from-s3", Payload=json.dumps({"workload": {"kind": "noop"}}))
        assert json.loads(out["Payload"].read())["ok"] is True

        layer_zip = io.BytesIO()
        with zipfile.ZipFile(layer_zip, "w") as z:
            z.writestr("lib/data.txt", "from a layer")
        s3.put_object(Bucket=bucket, Key="deploy/layer.zip", Body=layer_zip.getvalue())
        layer = lam.publish_layer_version(LayerName="s3-layer", Content={"S3Bucket": bucket, "S3Key": "deploy/layer.zip"},
                                          CompatibleRuntimes=["provided.al2023"])
        assert layer["Version"] == 1 and layer["Content"]["CodeSize"] == len(layer_zip.getvalue())
        assert layer["LayerVersionArn"].endswith(":layer:s3-layer:1")
        cfg = lam.update_function_configuration(FunctionName="from-s3", Layers=[layer["LayerVersionArn"]])
        assert cfg["Layers"] == [{"Arn": layer["LayerVersionArn"], "CodeSize": len(layer_zip.getvalue())}]
        assert [l["LayerName"] for l in lam.list_layers()["Layers"]] == ["s3-layer"]
        lam.get_waiter("function_updated_v2").wait(FunctionName="from-s3")

        cfg = lam.update_function_code(FunctionName="from-s3", S3Bucket=bucket, S3Key="deploy/agent.zip")
        assert cfg["CodeSize"] == len(agent_zip)
        lam.get_waiter("function_updated_v2").wait(FunctionName="from-s3")
        out = lam.invoke(FunctionName="from-s3", Payload=json.dumps({"workload": {"kind": "noop"}}))
        assert json.loads(out["Payload"].read())["ok"] is True
        lam.delete_layer_version(LayerName="s3-layer", VersionNumber=1)
    finally:
        lam.delete_function(FunctionName="from-s3")


def test_missing_object_is_lambdas_error(s3_platform):
    _, lam, bucket, _ = s3_platform
    with pytest.raises(ClientError) as e:
        lam.create_function(FunctionName="missing", Runtime="provided.al2023", Role=ROLE, Handler="bootstrap",
                            Code={"S3Bucket": bucket, "S3Key": "no/such.zip"})
    err = e.value.response["Error"]
    assert err["Code"] == "InvalidParameterValueException"
    assert err["Message"] == ("Error occurred while GetObject. S3 Error Code: NoSuchKey. "
                              "S3 Error Message: The specified key does not exist.")


def test_tags_concurrency_and_account_settings_through_boto3(s3_platform, agent_zip):
    _, lam, _, _ = s3_platform
    arn = lam.create_function(FunctionName="extras", Runtime="provided.al2023", Role=ROLE, Handler="bootstrap",
                              Code={"ZipFile": agent_zip}, Tags={"team": "io"})["FunctionArn"]
    lam.get_waiter("function_active_v2").wait(FunctionName="extras")
    try:
        lam.tag_resource(Resource=arn, Tags={"stage": "dev"})
        lam.untag_resource(Resource=arn, TagKeys=["team"])
        assert lam.list_tags(Resource=arn)["Tags"] == {"stage": "dev"}
        with pytest.raises(ClientError) as e:
            lam.list_tags(Resource=arn.replace(":extras", ":nope"))
        assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"

        assert lam.put_function_concurrency(FunctionName="extras", ReservedConcurrentExecutions=0)[
            "ReservedConcurrentExecutions"] == 0
        assert lam.get_function_concurrency(FunctionName="extras")["ReservedConcurrentExecutions"] == 0
        assert lam.get_function(FunctionName="extras")["Concurrency"] == {"ReservedConcurrentExecutions": 0}
        with pytest.raises(ClientError) as e:
            lam.invoke(FunctionName="extras", Payload=b"{}")
        assert e.value.response["Error"]["Code"] == "TooManyRequestsException"
        assert e.value.response["Reason"] == "ReservedFunctionConcurrentInvocationLimitExceeded"
        with pytest.raises(ClientError) as e:
            lam.put_function_concurrency(FunctionName="extras", ReservedConcurrentExecutions=19)
        assert "below its minimum value of [2]" in e.value.response["Error"]["Message"]
        lam.put_function_concurrency(FunctionName="extras", ReservedConcurrentExecutions=5)

        settings = lam.get_account_settings()
        assert settings["AccountLimit"]["ConcurrentExecutions"] == 20
        assert settings["AccountLimit"]["UnreservedConcurrentExecutions"] == 15
        assert settings["AccountLimit"]["CodeSizeZipped"] == 52428800
        assert settings["AccountUsage"]["FunctionCount"] >= 1
        lam.delete_function_concurrency(FunctionName="extras")
        assert "ReservedConcurrentExecutions" not in lam.get_function_concurrency(FunctionName="extras")
    finally:
        lam.delete_function(FunctionName="extras")
