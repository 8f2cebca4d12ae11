"""A python3.* function as a user zips it: no bootstrap, no runtime client, Handler handler.handler.
Like LocalStack's introspection and uncaught-exception functions (whose answers on AWS are
recorded in tests/conformance/recorded/localstack_runtimes): it returns its environment and
context, raises when asked, reads the files its "read" list names (its cgroup's limits) and
imports the modules its "import" list names."""
import os
import sys


def handler(event, context):
    event = event if isinstance(event, dict) else {}
    if "error_msg" in event:
        raise Exception(f"Failed: {event.get('error_msg')}")
    return {
        "environment": dict(os.environ),
        "ctx": {
            "function_name": context.function_name,
            "function_version": context.function_version,
            "invoked_function_arn": context.invoked_function_arn,
            "memory_limit_in_mb": context.memory_limit_in_mb,
            "aws_request_id": context.aws_request_id,
            "log_group_name": context.log_group_name,
            "log_stream_name": context.log_stream_name,
            "remaining_time_in_millis": context.get_remaining_time_in_millis(),
        },
        "packages": [],
        "python": "%d.%d" % sys.version_info[:2],
        "python_release": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable,
        "files": {p: _read(p) for p in event.get("read", [])},
        "imports": {m: _import(m) for m in event.get("import", [])},
    }


def _import(module):
    try:
        __import__(module)
        return "ok"
    except ImportError as e:
        return f"error: {e}"


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return f"error: {e.strerror}"
