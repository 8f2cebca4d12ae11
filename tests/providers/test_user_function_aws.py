"""A user's own function on the ``aws`` provider, as a mock check of the requests it builds
(botocore's Stubber answers instead of AWS; the client validates every parameter against
Lambda's model first): CreateFunction carries the user's runtime, handler, package and
environment; Invoke's replies are read as the function's, not the agent's."""
from __future__ import annotations

import base64
import io
import json
import zipfile

from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from faascope.providers.aws import AWSProvider
from faascope.providers.base import COLD_NONCE_VAR, FunctionConfig
from faascope.providers.packaging import user_package

ROLE = "arn:aws:iam::123456789012:role/my-function-role"
ACTIVE = {"Configuration": {"FunctionName": "f", "State": "Active", "LastUpdateStatus": "Successful",
                            "MemorySize": 512, "Timeout": 30, "Environment": {"Variables": {}}}}
REPORT = ("REPORT RequestId: 1\tDuration: 12.50 ms\tBilled Duration: 13 ms\tMemory Size: 512 MB\t"
          "Max Memory Used: 61 MB\tInit Duration: 230.10 ms\t\n")


def package(tmp_path):
    d = tmp_path / "fn"
    d.mkdir()
    (d / "app.py").write_text("def handler(event, context):\n    return {'hi': event}\n")
    (d / "lib").mkdir()
    (d / "lib" / "util.py").write_text("X = 1\n")
    return d


def config(path, **kw) -> FunctionConfig:
    return FunctionConfig(memory_mb=512, timeout_s=30, code=str(path), runtime="python3.12",
                          handler="app.handler", environment=json.dumps({"BUCKET": "photos"}), **kw)


def test_create_function_request_of_a_user_function_mock_check_no_live_aws(aws_env, tmp_path):
    d = package(tmp_path)
    p = AWSProvider(role=ROLE, region="eu-west-1")
    sent = []
    p.control.meta.events.register("before-parameter-build",
                                   lambda params, model, **_: sent.append((model.name, dict(params))))
    with Stubber(p.control) as stub:
        stub.add_client_error("get_function", "ResourceNotFoundException", http_status_code=404)
        stub.add_response("create_function", {"FunctionName": "f", "State": "Pending"},
                          {"FunctionName": "mine", "Runtime": "python3.12", "Role": ROLE,
                           "Handler": "app.handler", "Code": ANY, "MemorySize": 512,
                           "EphemeralStorage": {"Size": 512}, "Timeout": 30, "Environment": ANY,
                           "Architectures": ["x86_64"], "Tags": ANY, "Description": ANY})
        stub.add_response("get_function", ACTIVE)
        p.deploy("mine", config(d))
        stub.assert_no_pending_responses()
    params = [c for c in sent if c[0] == "CreateFunction"][0][1]
    # the user's package, zipped with its files at the root, the same bytes each time
    code = params["Code"]["ZipFile"]
    assert code == user_package(d)
    with zipfile.ZipFile(io.BytesIO(code)) as z:
        assert sorted(z.namelist()) == ["app.py", "lib/util.py"]
    env = params["Environment"]["Variables"]
    assert env["BUCKET"] == "photos" and COLD_NONCE_VAR in env
    assert "AWS_ENDPOINT_URL_S3" not in env  # AWS's own S3 unless a stand-in is set
    assert params["Description"] == "faascope: a user's function"


def _invoke(p: AWSProvider, name: str, payload: bytes, function_error=None):
    body = StreamingBody(io.BytesIO(payload), len(payload))
    resp = {"StatusCode": 200, "Payload": body,
            "LogResult": base64.b64encode(REPORT.encode()).decode()}
    if function_error:
        resp["FunctionError"] = function_error
    with Stubber(p.client) as stub:
        stub.add_response("invoke", resp, {"FunctionName": name, "InvocationType": "RequestResponse",
                                           "LogType": "Tail", "Payload": ANY})
        return p.invoke(name, {"key": "a"})


def test_invoke_replies_are_the_functions_not_the_agents_mock_check_no_live_aws(aws_env, tmp_path):
    d = package(tmp_path)
    p = AWSProvider(role=ROLE, region="eu-west-1")
    p._config["mine"] = config(d)
    ok = _invoke(p, "mine", b'{"hi": {"key": "a"}}')
    # an agent reading would call this an InvalidAgentResponse function error
    assert ok.status == "ok" and ok.error_type is None
    assert ok.response == {"returned": {"hi": {"key": "a"}}, "cold": True}  # Init Duration: cold
    assert ok.platform["report"] == {"duration_ms": 12.5, "billed_duration_ms": 13,
                                     "memory_size_mb": 512, "max_memory_used_mb": 61,
                                     "init_duration_ms": 230.1}
    text = _invoke(p, "mine", b"plain text")
    assert text.status == "ok" and text.response["returned"] == "plain text"
    err = _invoke(p, "mine", b'{"errorMessage": "no such key", "errorType": "KeyError", '
                             b'"stackTrace": []}', function_error="Unhandled")
    assert err.status == "function_error" and err.function_error == "Unhandled"
    assert (err.error_type, err.error_message) == ("KeyError", "no such key")
    assert err.response["returned"]["errorType"] == "KeyError"
    # faascope's agent's functions are still read as the agent's
    p._config["agent"] = FunctionConfig(memory_mb=512)
    assert _invoke(p, "agent", b'{"hi": 1}').error_type == "InvalidAgentResponse"


def test_environment_points_the_sdks_at_the_stand_ins_and_the_users_variables_win(tmp_path):
    from faascope.providers.lambda_api import user_environment
    from faascope.specs.model import CODE_USES
    from faascope.standins.needs import USES, needs_of, uses_payloads

    standins = {"FAASCOPE_S3_ENDPOINT_URL": "http://127.0.0.1:9100", "FAASCOPE_S3_BUCKET": "faascope"}
    cfg = config(tmp_path)
    env = user_environment(cfg, standins)
    assert env["AWS_ENDPOINT_URL_S3"] == "http://127.0.0.1:9100" and env["BUCKET"] == "photos"
    mine = FunctionConfig(memory_mb=128, code=str(tmp_path), runtime="python3.12", handler="a.b",
                          environment=json.dumps({"AWS_ENDPOINT_URL_S3": "http://elsewhere"}))
    assert user_environment(mine, standins)["AWS_ENDPOINT_URL_S3"] == "http://elsewhere"
    assert "AWS_ENDPOINT_URL_S3" not in user_environment(cfg, {})   # no stand-in: AWS's own S3
    # every name a spec may give in function.code.uses starts the stand-in of that name
    assert set(USES) == set(CODE_USES)
    assert needs_of(uses_payloads(["s3"])).kinds == {"s3"}
    assert needs_of(uses_payloads(["dynamodb"])).kinds == {"dynamodb"}
    assert needs_of(uses_payloads(["redis"])).kinds == {"redis"}
