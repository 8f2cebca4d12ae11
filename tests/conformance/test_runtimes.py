"""Third-party functions on the local platform: built with aws-lambda-go, AWS's awslambdaric and
the lambda_runtime crate (functions/), invoked with boto3, checked against what AWS documents
and what each library does on AWS. No function here contains anything of faascope's.

References (AWS's documentation):
- Runtime API: https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html
- Environment variables of the execution environment:
  https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
- Invoke: https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
- Execution environment lifecycle (init errors, timeouts, a fresh environment after a crash):
  https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html
"""
from __future__ import annotations

import base64
import json
import re

import pytest

from .conftest import HANDLERS, RUNTIMES, client_for

# How each library reports an error the handler returns or raises, and one it panics with.
HANDLED_TYPE = {"go": "errorString", "python": "HandledError", "rust": "HandledError"}
UNHANDLED = {  # runtime -> (errorType test, errorMessage for message "boom ✗")
    "go": (lambda t: t == "string", "boom ✗"),
    "python": (lambda t: t == "RuntimeError", "boom ✗"),
    "rust": (lambda t: "Any" in t, "Lambda panicked: boom ✗"),
}
# An init that fails: aws-lambda-go and lambda_runtime exit before their first /next (AWS then
# reports Runtime.ExitError); awslambdaric reports an import failure with /init/error.
INIT_ERROR = {
    "go": ("Runtime.ExitError", "exit status 1"),
    "python": ("Runtime.ImportModuleError", "Unable to import module 'handler': No module named 'module_that_does_not_exist'"),
    "rust": ("Runtime.ExitError", "exit status 1"),
}
XRAY = re.compile(r"^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=[01](;.*)?$")


def invoke(lam, name, payload, **kw):
    """(response, decoded body) of a RequestResponse invoke."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
    r = lam.invoke(FunctionName=name, Payload=data, **kw)
    raw = r["Payload"].read()
    return r, json.loads(raw) if raw else None


def cold(r) -> bool:
    return r["ResponseMetadata"]["HTTPHeaders"].get("x-faascope-cold") == "true"


def instance(r) -> str:
    return r["ResponseMetadata"]["HTTPHeaders"].get("x-faascope-instance-id", "")


@pytest.fixture(scope="module", params=RUNTIMES)
def rt(request):
    return request.param


@pytest.fixture(scope="module")
def fn(rt, deploy):
    """The runtime's function with a 30 s timeout and one variable of the user's."""
    return deploy(rt, "main", timeout=30, env={"GREETING": "grüß dich ✓"})


def test_payload_round_trip_unicode(lam, fn):
    sent = {"op": "echo", "text": "héllo wörld ✓ 日本語 😀 \u0000 \"quoted\" \\", "n": 12345678901234,
            "f": 0.5, "list": [1, None, True, {"k": []}], "nested": {"ключ": "значение"}}
    r, body = invoke(lam, fn, sent)
    assert r["StatusCode"] == 200 and "FunctionError" not in r
    assert r["ExecutedVersion"] == "$LATEST"
    assert body["payload"] == sent


def test_payload_round_trip_5mb(lam, fn):
    blob = "".join(chr(ord("a") + i % 26) for i in range(5 * 2**20))
    r, body = invoke(lam, fn, {"op": "echo", "blob": blob})
    assert r["StatusCode"] == 200 and "FunctionError" not in r
    assert body["payload"]["blob"] == blob


def test_handled_error(lam, fn, rt):
    r, body = invoke(lam, fn, {"op": "error", "message": "bad input ✗"})
    assert r["StatusCode"] == 200
    assert r["FunctionError"] == "Unhandled"  # Lambda reports every function error as Unhandled
    assert body["errorType"] == HANDLED_TYPE[rt]
    assert body["errorMessage"] == "bad input ✗"
    _, ok = invoke(lam, fn, {"op": "echo"})
    assert ok["payload"] == {"op": "echo"}


def test_unhandled_error_then_next_invocation_works(lam, fn, rt):
    type_ok, message = UNHANDLED[rt]
    r, body = invoke(lam, fn, {"op": "panic", "message": "boom ✗"})
    assert r["FunctionError"] == "Unhandled"
    assert type_ok(body["errorType"]), body
    assert body["errorMessage"] == message
    r2, ok = invoke(lam, fn, {"op": "echo"})
    assert "FunctionError" not in r2, ok
    assert ok["payload"] == {"op": "echo"}


def test_exit_after_answer_next_invocations_get_fresh_instances(lam, deploy):
    """aws-lambda-go answers a panic with /error, then exits. Lambda starts a new execution
    environment for the next invocation; the dead one must never be handed an invocation
    (issue #15, first defect)."""
    name = deploy("go", "exit-after-answer")
    seen = set()
    for i in range(3):
        r, body = invoke(lam, name, {"op": "panic", "message": f"panic {i}"})
        assert r["FunctionError"] == "Unhandled" and body["errorType"] == "string", body
        seen.add(instance(r))
        r, ok = invoke(lam, name, {"op": "echo", "i": i})
        assert "FunctionError" not in r, ok
        assert ok["payload"] == {"op": "echo", "i": i}
        assert cold(r), "the instance that exited after answering was reused"
        assert instance(r) not in seen
        seen.add(instance(r))


def test_exit_during_invocation_is_runtime_exit_error_then_fresh_instance(lam, fn):
    r, body = invoke(lam, fn, {"op": "exit"})
    assert r["FunctionError"] == "Unhandled"
    assert body["errorType"] == "Runtime.ExitError"
    assert "exit status 3" in body["errorMessage"]
    r2, ok = invoke(lam, fn, {"op": "echo"})
    assert "FunctionError" not in r2, ok
    assert cold(r2)


def test_context_fields(lam, fn, rt):
    conf = lam.get_function_configuration(FunctionName=fn)
    r, body = invoke(lam, fn, {"op": "echo"})
    ctx = body["context"]
    assert ctx["request_id"] == r["ResponseMetadata"]["RequestId"]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", ctx["request_id"])
    # Invoked by name: the unqualified ARN, the same as the function's.
    assert ctx["invoked_function_arn"] == conf["FunctionArn"]
    assert re.fullmatch(rf"arn:aws:lambda:us-east-1:\d{{12}}:function:{fn}", ctx["invoked_function_arn"])
    assert 0 < ctx["remaining_ms"] <= 30_000
    assert ctx["remaining_ms"] > 30_000 - 20_000  # plenty left of a 30 s timeout, on any machine
    assert ctx["client_context"] is None and ctx["identity"] is None


def test_trace_id_is_xray_format(lam, fn):
    _, body = invoke(lam, fn, {"op": "echo"})
    assert XRAY.match(body["context"]["trace_id"] or ""), body["context"]["trace_id"]


# Where a runtime library reads the client context under another name than the one AWS's mobile
# SDKs send ("env": what aws-lambda-go and awslambdaric read): lambda_runtime 1.x deserialises
# `environment` (its src/types.rs), so from the same header it sees an empty env. A library's
# choice, not the platform's: the header it gets is the one the others get.
CLIENT_CONTEXT_LIBRARY_DEVIATIONS = {"rust": {"env": {}}}


def test_client_context_passed(lam, fn, rt):
    cc = {"client": {"installation_id": "inst-1", "app_title": "conformance", "app_version_name": "1",
                     "app_version_code": "1", "app_package_name": "p"},
          "custom": {"k": "v ✓"}, "env": {"platform": "conformance"}}
    r, body = invoke(lam, fn, {"op": "echo"},
                     ClientContext=base64.b64encode(json.dumps(cc).encode()).decode())
    got = body["context"]["client_context"]
    assert got is not None, "Lambda-Runtime-Client-Context was not sent to the runtime"
    assert got["custom"] == {"k": "v ✓"}
    assert got["env"] == CLIENT_CONTEXT_LIBRARY_DEVIATIONS.get(rt, {"env": {"platform": "conformance"}})["env"]
    assert got["client"]["installation_id"] == "inst-1" and got["client"]["app_title"] == "conformance"


ENV_NAMES = ["TZ", "LANG", "PATH", "LD_LIBRARY_PATH", "LAMBDA_TASK_ROOT", "LAMBDA_RUNTIME_DIR",
             "AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_VERSION",
             "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME", "AWS_LAMBDA_RUNTIME_API",
             "AWS_LAMBDA_INITIALIZATION_TYPE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_EXECUTION_ENV",
             "_HANDLER", "GREETING"]


def test_environment_variables(lam, fn, rt):
    """The variables AWS defines for an OS-only (provided.*) runtime, with AWS's values."""
    _, body = invoke(lam, fn, {"op": "echo", "env": ENV_NAMES})
    env = body["env"]
    assert env["TZ"] == ":UTC"
    assert env["LANG"] == "en_US.UTF-8"
    path = (env["PATH"] or "").split(":")
    for d in ("/usr/local/bin", "/usr/bin", "/bin", "/opt/bin"):
        assert d in path or d + "/" in path, env["PATH"]
    ld = (env["LD_LIBRARY_PATH"] or "").split(":")
    for d in ("/var/task", "/var/task/lib", "/opt/lib"):
        assert d in ld, env["LD_LIBRARY_PATH"]
    assert env["LAMBDA_TASK_ROOT"] == "/var/task"
    assert env["LAMBDA_RUNTIME_DIR"] == "/var/runtime"
    assert env["AWS_LAMBDA_FUNCTION_NAME"] == fn
    assert env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] == "256"
    assert env["AWS_LAMBDA_FUNCTION_VERSION"] == "$LATEST"
    assert env["AWS_LAMBDA_LOG_GROUP_NAME"] == f"/aws/lambda/{fn}"
    # YYYY/MM/DD/[version]<execution environment GUID, 32 hex digits>:
    # https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs.html
    assert re.fullmatch(r"\d{4}/\d{2}/\d{2}/\[\$LATEST\][0-9a-f]{32}", env["AWS_LAMBDA_LOG_STREAM_NAME"] or ""), \
        env["AWS_LAMBDA_LOG_STREAM_NAME"]
    assert re.fullmatch(r"[\w.\-]+:\d+", env["AWS_LAMBDA_RUNTIME_API"] or "")
    assert env["AWS_LAMBDA_INITIALIZATION_TYPE"] == "on-demand"
    assert env["AWS_REGION"] == "us-east-1" and env["AWS_DEFAULT_REGION"] == "us-east-1"
    assert env["AWS_EXECUTION_ENV"] is None  # unset for OS-only runtimes
    assert env["_HANDLER"] == HANDLERS[rt]
    assert env["GREETING"] == "grüß dich ✓"


def test_timeout_then_fresh_instance(lam, deploy, rt):
    name = deploy(rt, "timeout", timeout=1)
    r, body = invoke(lam, name, {"op": "sleep", "seconds": 4})
    assert r["FunctionError"] == "Unhandled"
    assert body["errorType"] == "Sandbox.Timedout"
    assert "Task timed out after 1.00 seconds" in body["errorMessage"]
    r2, ok = invoke(lam, name, {"op": "echo"})
    assert "FunctionError" not in r2, ok
    assert ok["payload"] == {"op": "echo"}
    assert cold(r2) and instance(r2) != instance(r)


def test_init_error(lam, deploy, rt):
    name = deploy(rt, "initerr", env={"FAIL_INIT": "1"})
    want_type, want_msg = INIT_ERROR[rt]
    for _ in range(2):  # each invocation tries a new init, and reports its failure again
        r, body = invoke(lam, name, {"op": "echo"})
        assert r["StatusCode"] == 200 and r["FunctionError"] == "Unhandled"
        assert body["errorType"] == want_type, body
        assert want_msg in body["errorMessage"], body


def test_log_tail(lam, fn):
    line = "conformance log line ✓"
    r, body = invoke(lam, fn, {"op": "print", "line": line}, LogType="Tail")
    assert body == {"printed": True}
    rid = r["ResponseMetadata"]["RequestId"]
    log = base64.b64decode(r["LogResult"]).decode()
    assert re.search(rf"^START RequestId: {rid} Version: \$LATEST$", log, re.M), log
    assert line in log
    assert re.search(rf"^END RequestId: {rid}$", log, re.M), log
    assert re.search(rf"^REPORT RequestId: {rid}\tDuration: [\d.]+ ms\tBilled Duration: \d+ ms\t"
                     r"Memory Size: 256 MB\tMax Memory Used: \d+ MB", log, re.M), log
    assert log.index("START") < log.index(line) < log.index("END RequestId") < log.index("REPORT")


def test_max_memory_used_is_at_least_the_resident_set(lam, fn):
    """REPORT's Max Memory Used is the peak of the environment's memory: never below what the
    function's own process has resident (file-backed pages included) at that moment."""
    r, body = invoke(lam, fn, {"op": "echo"}, LogType="Tail")
    log = base64.b64decode(r["LogResult"]).decode()
    used_mb = int(re.search(r"Max Memory Used: (\d+) MB", log).group(1))
    assert used_mb * 1024 >= body["rss_kb"] > 0, (used_mb, body["rss_kb"])


def test_region_follows_the_signing_region(platform_endpoint, deploy):
    """A client that signs for eu-west-1 gets eu-west-1 ARNs and AWS_REGION (issue #15: region).
    One runtime is enough: the region is the platform's, not the library's."""
    eu = client_for(platform_endpoint, region="eu-west-1")
    name = deploy("go", "region", client=eu)
    conf = eu.get_function_configuration(FunctionName=name)
    assert re.fullmatch(rf"arn:aws:lambda:eu-west-1:\d{{12}}:function:{name}", conf["FunctionArn"])
    _, body = invoke(eu, name, {"op": "echo", "env": ["AWS_REGION", "AWS_DEFAULT_REGION"]})
    assert body["context"]["invoked_function_arn"] == conf["FunctionArn"]
    assert body["env"] == {"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1"}
