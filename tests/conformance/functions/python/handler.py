"""A conformance function run by AWS's awslambdaric, nothing of faascope's in it. The payload's
"op" picks what it does (see tests/conformance/README.md)."""
import os
import time

if os.environ.get("FAIL_INIT"):
    import module_that_does_not_exist  # noqa: F401  (init error: awslambdaric's Runtime.ImportModuleError)


class HandledError(Exception):
    pass


def handle(event, context):
    op = event.get("op", "echo") if isinstance(event, dict) else "echo"
    if op == "error":
        raise HandledError(event.get("message", "handled"))
    if op == "panic":
        raise RuntimeError(event.get("message", "unhandled"))
    if op == "exit":
        os._exit(3)
    if op == "sleep":
        time.sleep(float(event.get("seconds", 1)))
        return {"slept": event.get("seconds", 1)}
    if op == "print":
        print(event.get("line", ""))
        return {"printed": True}
    cc = context.client_context
    ident = context.identity
    return {
        "payload": event,
        "context": {
            "request_id": context.aws_request_id,
            "invoked_function_arn": context.invoked_function_arn,
            "remaining_ms": context.get_remaining_time_in_millis(),
            "client_context": None if cc is None else {
                "custom": cc.custom, "env": cc.env,
                "client": None if cc.client is None else {
                    "installation_id": cc.client.installation_id, "app_title": cc.client.app_title}},
            "identity": None if ident is None or not (ident.cognito_identity_id or ident.cognito_identity_pool_id) else {
                "identity_id": ident.cognito_identity_id, "identity_pool_id": ident.cognito_identity_pool_id},
            "trace_id": os.environ.get("_X_AMZN_TRACE_ID"),
        },
        "env": {n: os.environ.get(n) for n in event.get("env", [])},
        "rss_kb": rss_kb(),
    }


def rss_kb():
    """The process's resident set (VmRSS of /proc/self/status) in KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1
