import json
import re

from faascope.driver.campaign import function_name
from faascope.providers.base import FunctionConfig
from faascope.providers.invocation import classify

OK = {"ok": True, "cold": False, "instance": {"id": "i"}, "timings": {}, "workload": {"elapsed_s": 1},
      "error": None}


def test_ok_agent_and_function_errors_are_told_apart():
    assert classify(json.dumps(OK).encode(), None)["status"] == "ok"
    agent_err = dict(OK, ok=False, workload=None, error={"type": "NoSpace", "message": "full"})
    r = classify(json.dumps(agent_err).encode(), None)
    assert (r["status"], r["error_type"], r["error_message"]) == ("agent_error", "NoSpace", "full")
    r = classify(b'{"errorType": "Runtime.ExitError", "errorMessage": "signal: killed"}', "Unhandled")
    assert (r["status"], r["error_type"]) == ("function_error", "Runtime.ExitError")
    assert r["function_error"] == "Unhandled"
    r = classify(b"Task timed out", "Unhandled")
    assert r["status"] == "function_error" and r["raw_payload"] == "Task timed out"
    r = classify(b"<html>", None)
    assert r["status"] == "function_error" and r["error_type"] == "InvalidAgentResponse"


def test_function_names_are_valid_lambda_names():
    cfg = FunctionConfig(memory_mb=128, profile="gcf")
    n = function_name("faascope", "a.very.long.spec-name_with.dots" * 3, "0123abcd", cfg.identity())
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", n)
    assert n != function_name("faascope", "x", "0123abcd", FunctionConfig(memory_mb=256).identity())


def test_shared_functions_ignore_memory_but_not_profile():
    a = FunctionConfig(memory_mb=128, profile="gcf")
    b = FunctionConfig(memory_mb=2048, profile="gcf")
    c = FunctionConfig(memory_mb=128, profile="lambda")
    assert a.identity("shared") == b.identity("shared") != c.identity("shared")
    assert a.identity() != b.identity()
