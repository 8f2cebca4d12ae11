"""The agent's JSON Schemas, checked from Python against examples and against a real agent.

The same schema files are checked from Go (agent/runtime/*_test.go); together the two sides
pin the contract between the agent and everything that reads its responses.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "src" / "faascope" / "schemas"
HOST_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def _validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / name).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


REQUEST = _validator("agent-request.schema.json")
RESPONSE = _validator("agent-response.schema.json")

VALID_REQUESTS = [
    {"workload": {"kind": "noop"}},
    {"workload": {"kind": "spin", "iterations": 100_000_000}},
    {"workload": {"kind": "fileio", "op": "write", "file_size": 1, "io_size": 1}},
    {"workload": {"kind": "fileio", "op": "read", "file_size": 1_000_000_000, "io_size": 512,
                  "direct": True}},
    {"workload": {"kind": "fileio", "engine": "dd", "op": "write", "pattern": "sequential",
                  "file_size": 10_000, "io_size": 512, "direct": True, "fsync": "every",
                  "source": "urandom", "path": "sub/f.dat", "prepare": False, "drop": True,
                  "seed": 3}},
    {"workload": {"kind": "fileio", "op": "read", "pattern": "random", "file_size": 64 << 30,
                  "io_size": 1 << 30, "seed": -1}},
    # storage, network and transfer workloads (docs/storage.md)
    {"workload": {"kind": "object", "op": "put", "object_size": 1 << 20, "count": 100, "parallelism": 8,
                  "bucket": "b", "endpoint": "http://127.0.0.1:7070", "max_attempts": 3,
                  "retry_mode": "standard", "on_error": "count"}},
    {"workload": {"kind": "kv", "op": "get", "item_size": 1024, "endpoint": "redis://127.0.0.1:6379/0"}},
    {"workload": {"kind": "kv", "backend": "dynamodb", "op": "put", "table": "t", "consistent_read": True}},
    {"workload": {"kind": "sharedfs", "op": "write", "file_size": 1 << 20, "io_size": 4096, "mode": "shared",
                  "index": 12}},
    {"workload": {"kind": "network", "direction": "both", "sink": "127.0.0.1:9100", "bytes": 1 << 30,
                  "connections": 4, "interval_ms": 20}},
    {"workload": {"kind": "transfer", "via": "object", "chain_length": 4, "payload_size": 1 << 20,
                  "bucket": "b"}},
    {"workload": {"kind": "app", "shape": "sort", "storage": "sharedfs", "input_size": 1_000_000}},
]

INVALID_REQUESTS = [
    {},
    {"workload": None},
    {"workload": {"kind": "noop"}, "extra": 1},
    {"workload": {}},
    {"workload": {"kind": "sleep"}},
    {"workload": {"kind": "noop", "iterations": 1}},
    {"workload": {"kind": "spin"}},
    {"workload": {"kind": "spin", "iterations": 0}},
    {"workload": {"kind": "spin", "iterations": 10**12 + 1}},
    {"workload": {"kind": "spin", "iterations": "10"}},
    {"workload": {"kind": "fileio", "file_size": 1, "io_size": 1}},
    {"workload": {"kind": "fileio", "op": "write", "file_size": 0, "io_size": 1}},
    {"workload": {"kind": "fileio", "op": "write", "file_size": (64 << 30) + 1, "io_size": 1}},
    {"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 1000,
                  "direct": True}},
    {"workload": {"kind": "fileio", "op": "read", "file_size": 4096, "io_size": 512,
                  "fsync": "end"}},
    {"workload": {"kind": "fileio", "engine": "dd", "op": "write", "pattern": "random",
                  "file_size": 4096, "io_size": 512}},
    {"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512,
                  "path": "/etc/passwd"}},
    {"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512,
                  "path": "a/../../x"}},
    {"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512,
                  "path": ""}},
    {"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512,
                  "direct": None}},
    {"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512,
                  "bs": "128k"}},
    {"workload": {"kind": "object", "op": "put", "bucket": "b", "count": 0}},
    {"workload": {"kind": "object", "op": "delete", "bucket": "b"}},
    {"workload": {"kind": "kv", "op": "get", "endpoint": "redis://h:1", "table": "t"}},
    {"workload": {"kind": "kv", "op": "get", "item_size": 409601}},
    {"workload": {"kind": "sharedfs", "op": "write", "file_size": 1, "io_size": 1, "mode": "shared",
                  "drop": True}},
    {"workload": {"kind": "network", "sink": "no-port"}},
    {"workload": {"kind": "transfer", "payload": "abc"}},
    {"workload": {"kind": "transfer", "payload_size": 7 << 20}},
    {"workload": {"kind": "app", "shape": "sort", "input_size": 150}},
    {"workload": {"kind": "app", "shape": "movie"}},
]


def _instance() -> dict:
    return {"id": "0123456789abcdef", "started_at": "2024-05-01T10:00:00.123456789Z",
            "sandbox": "/sandbox/abc", "boot_id": "a9a8fbe1-7ac5-481b-b9a9-de3535721190",
            "cpu_quota": 0.2894, "memory_limit_bytes": 536870912, "hostname": "h", "arch": "amd64",
            "num_cpu": 2, "env": {"function_name": "f", "memory_mb": 512, "log_stream": None}}


def _ok(workload: dict) -> dict:
    return {"ok": True, "cold": False, "instance": _instance(),
            "timings": {"received_ns": 1, "workload_start_ns": 2, "workload_end_ns": 3},
            "workload": workload, "error": None}


LATENCY = {"count": 2, "min_s": 1e-4, "mean_s": 1.5e-4, "p50_s": 1e-4, "p90_s": 2e-4,
           "p99_s": 2e-4, "p999_s": 2e-4, "max_s": 2e-4}
FILEIO = {"kind": "fileio", "elapsed_s": 0.5, "bytes": 262144, "ops": 2, "engine": "native",
          "op": "write", "pattern": "sequential", "file_size": 262144, "io_size": 131072,
          "direct_requested": True, "direct_effective": True, "fsync": "end", "source": "zero",
          "seed": 0, "path": "/tmp/faascope-fileio.dat", "fs_type": "ext4", "prepared": False,
          "dropped": False, "throughput_bytes_per_s": 524288.0, "latency": LATENCY, "fsync_s": 0.01}

RETRY = {"mode": "none", "max_attempts": 1, "max_backoff_s": 20.0, "retry_quota": False, "timeout_s": 0.0,
         "implementation": "aws-sdk-go-v2"}
REQUESTS = {"ok": 10, "failed": 0, "attempts": 10, "retries": 0, "throttles": 0}
OBJECT = {"kind": "object", "elapsed_s": 0.1, "bytes": 10240, "ops": 10, "api": "s3", "op": "get",
          "object_size": 1024, "count": 10, "parallelism": 2, "bucket": "b", "endpoint": "http://127.0.0.1:7070",
          "region": "us-east-1", "path_style": True, "first_key": "faascope/0/0", "last_key": "faascope/0/9",
          "checksum": "when_required", "credentials_source": "environment", "retry": RETRY, "requests": REQUESTS,
          "client_reused": False, "prepared": True, "dropped": True, "throughput_bytes_per_s": 102400.0,
          "iops": 100.0, "latency": LATENCY, "ttfb": LATENCY,
          "latency_samples": {"method": "systematic", "stride": 1, "values_s": [0.0001] * 9 + [0.0002]},
          "error_sample": None}
SERIES = {"bytes": 300, "elapsed_s": 0.05, "throughput_bytes_per_s": 6000.0, "sampled_at": "agent",
          "samples": [100, 200]}
NETWORK = {"kind": "network", "elapsed_s": 0.1, "bytes": 300, "ops": 1, "direction": "in",
           "sink": "127.0.0.1:9100", "protocol": "faascope", "connections": 1, "bytes_limit": 300,
           "duration_ms": 10000, "interval_ms": 20, "io_size": 131072, "in": SERIES, "out": None}
HOP = {"hop": 0, "instance_id": None, "cold": None, "received_ns": None, "start_ns": 1, "payload_bytes": 0,
       "read_s": 0.0, "write_s": 0.0, "invoke_ns": 2, "return_ns": 9, "end_ns": 10, "transfer_s": None}
TRANSFER = {"kind": "transfer", "elapsed_s": 0.1, "bytes": 10, "ops": 2, "via": "inline", "chain_length": 2,
            "payload_size": 10, "session": "ab", "function": "f",
            "hops": [HOP, {**HOP, "hop": 1, "instance_id": "x", "cold": True, "received_ns": 3, "start_ns": 4,
                           "payload_bytes": 10, "invoke_ns": None, "return_ns": None, "end_ns": 8,
                           "transfer_s": 0.002}]}
APP = {"kind": "app", "elapsed_s": 0.3, "bytes": 2000, "ops": 2, "shape": "sort", "storage": "object",
       "location": "s3://b/faascope/", "input_size": 1000, "output_size": 1000, "read_s": 0.1, "compute_s": 0.1,
       "write_s": 0.1, "read_bytes": 1000, "write_bytes": 1000, "prepared": True, "dropped": True,
       "client_reused": False, "checksum": "00ab"}

VALID_RESPONSES = [
    _ok({"kind": "noop", "elapsed_s": 0.0, "bytes": 0, "ops": 0}),
    _ok({"kind": "spin", "elapsed_s": 0.4, "bytes": 0, "ops": 10**8, "cpu_s": 0.1,
         "checksum": "e220a8397b1dcdaf"}),
    _ok(FILEIO),
    _ok({**{k: v for k, v in FILEIO.items() if k not in ("latency", "fsync_s")}, "engine": "dd",
         "wall_s": 0.51, "dd_command": ["/usr/bin/dd", "if=/dev/zero", "of=/tmp/x", "bs=131072",
                                        "count=2", "oflag=direct", "conv=fsync"]}),
    {"ok": False, "cold": True, "instance": _instance(),
     "timings": {"received_ns": 1, "workload_start_ns": None, "workload_end_ns": None},
     "workload": None,
     "error": {"type": "InvalidRequest", "message": "workload.io_size: must not exceed file_size (1024 > 512)"}},
    _ok(OBJECT),
    _ok({**NETWORK, "direction": "both", "out": {**SERIES, "sampled_at": "sink"}}),
    _ok(TRANSFER),
    _ok(APP),
    _ok({**FILEIO, "kind": "sharedfs", "root": "/mnt/shared", "mode": "shared", "index": 2,
         "region_offset": 524288}),
]

INVALID_RESPONSES = [
    # the raw latencies are bounded (the schema's maxItems is the agent's MaxLatencySamples)
    _ok({**OBJECT, "latency_samples": {"method": "systematic", "stride": 1, "values_s": [0.1] * 1001}}),
    _ok({**OBJECT, "latency_samples": {"method": "first", "stride": 1, "values_s": [0.1]}}),
    _ok({k: v for k, v in OBJECT.items() if k != "latency_samples"}),
    {**VALID_RESPONSES[0], "ok": False},  # ok=false needs an error and no workload
    {**VALID_RESPONSES[0], "error": {"type": "IOError", "message": "x"}},
    {**VALID_RESPONSES[0], "extra": 1},
    _ok({"kind": "noop", "elapsed_s": -1.0, "bytes": 0, "ops": 0}),
    _ok({"kind": "spin", "elapsed_s": 0.4, "bytes": 0, "ops": 1}),  # no cpu_s/checksum
    _ok({**FILEIO, "latency": None}),
    _ok({**FILEIO, "bytes": 1.5}),
    _ok({**FILEIO, "surprise": True}),
    _ok({k: v for k, v in FILEIO.items() if k != "direct_effective"}),
    {**VALID_RESPONSES[4], "error": {"type": "Timeout", "message": "x"}},
    _ok({**OBJECT, "secret_access_key": "x"}),  # no field for secrets
    _ok({**OBJECT, "requests": {**REQUESTS, "throttles": -1}}),
    _ok({k: v for k, v in OBJECT.items() if k != "retry"}),  # retry settings are always recorded
    _ok({**NETWORK, "in": {**SERIES, "samples": [1.5]}}),
    _ok({**TRANSFER, "hops": []}),
    _ok({k: v for k, v in APP.items() if k != "compute_s"}),
    _ok({**FILEIO, "kind": "sharedfs"}),  # sharedfs needs root, mode, index, region_offset
]


@pytest.mark.parametrize("request_", VALID_REQUESTS)
def test_valid_requests(request_):
    REQUEST.validate(request_)


@pytest.mark.parametrize("request_", INVALID_REQUESTS)
def test_invalid_requests(request_):
    assert not REQUEST.is_valid(request_), request_


@pytest.mark.parametrize("response", VALID_RESPONSES)
def test_valid_responses(response):
    RESPONSE.validate(response)


@pytest.mark.parametrize("response", INVALID_RESPONSES)
def test_invalid_responses(response):
    assert not RESPONSE.is_valid(response), response


# --- the Python side derives from the request schema ----------------------------------------
# The schema is the one source of the request contract: the spec layer's workload models are
# generated from it (faascope.specs.workloads) and the Go decoder is compared with it field by
# field (agent/workloads/schema_agreement_test.go). These tests read the schema file directly,
# not through faascope's own reader, so a generator that skips or invents a field fails here.
REQUEST_DEFS = json.loads((SCHEMAS / "agent-request.schema.json").read_text())["$defs"]
SCHEMA_KINDS = REQUEST_DEFS["workload"]["properties"]["kind"]["enum"]


def _prop(kind: str, name: str) -> dict:
    """A property with its $ref chain merged in (the referring keys win)."""
    def follow(node: dict) -> dict:
        if "$ref" not in node:
            return node
        target: dict = {"$defs": REQUEST_DEFS}
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        return {**follow(target), **{k: v for k, v in node.items() if k != "$ref"}}
    return follow(REQUEST_DEFS[kind]["properties"][name])


def test_python_models_have_exactly_the_schema_kinds_and_fields():
    from faascope.specs.model import WORKLOAD_MODELS

    dispatched = [b["then"]["$ref"].removeprefix("#/$defs/") for b in REQUEST_DEFS["workload"]["allOf"]]
    assert sorted(dispatched) == sorted(SCHEMA_KINDS)
    assert list(WORKLOAD_MODELS) == SCHEMA_KINDS
    for kind in SCHEMA_KINDS:
        schema_fields = set(REQUEST_DEFS[kind]["properties"])
        model_fields = set(WORKLOAD_MODELS[kind].model_fields)
        assert model_fields == schema_fields, (
            f"{kind}: only in Python {sorted(model_fields - schema_fields)}, "
            f"only in the schema {sorted(schema_fields - model_fields)}")


def _constraint(info, name: str):
    for m in info.metadata:
        if hasattr(m, name):
            return getattr(m, name)
    return None


def test_python_model_fields_follow_the_schema():
    """Types, enums, limits, defaults and required-ness of every generated field are the
    schema's."""
    import typing
    from faascope.specs.model import WORKLOAD_MODELS

    for kind in SCHEMA_KINDS:
        required = set(REQUEST_DEFS[kind].get("required", ())) | {"kind"}
        for name, info in WORKLOAD_MODELS[kind].model_fields.items():
            prop, where = _prop(kind, name), f"{kind}.{name}"
            assert info.is_required() == (name in required), where
            if not info.is_required():
                assert info.default == prop.get("default"), where
            literal = [a for a in typing.get_args(info.annotation) if a is not type(None)] \
                if typing.get_origin(info.annotation) is typing.Union else [info.annotation]
            if "enum" in prop or "const" in prop:
                assert list(typing.get_args(literal[0])) == prop.get("enum", [prop.get("const")]), where
                continue
            for key, attr in (("minimum", "ge"), ("maximum", "le"), ("multipleOf", "multiple_of"),
                              ("minLength", "min_length"), ("maxLength", "max_length"),
                              ("pattern", "pattern")):
                assert _constraint(info, attr) == prop.get(key), (where, key)
            assert prop["type"] in ("integer", "number", "string", "boolean"), where


def test_sizes_and_milliseconds_are_marked_in_the_schema():
    """The spec layer reads 10MiB or 2s only where the schema says x-unit: every integer field
    named like a size or a time in ms carries it, and it is only on integers."""
    for kind in SCHEMA_KINDS:
        for name in REQUEST_DEFS[kind]["properties"]:
            prop = _prop(kind, name)
            looks = name.endswith("_size") or name == "bytes" or name.endswith("_ms")
            if prop.get("type") == "integer" and looks:
                want = "ms" if name.endswith("_ms") else "bytes"
                assert prop.get("x-unit") == want, f"{kind}.{name} needs \"x-unit\": \"{want}\""
            if "x-unit" in prop:
                assert prop["type"] == "integer" and prop["x-unit"] in ("bytes", "ms"), f"{kind}.{name}"


@pytest.mark.parametrize("request_", VALID_REQUESTS)
def test_python_models_accept_what_the_schema_accepts(request_):
    from faascope.specs.model import WORKLOAD_MODELS, agent_request

    w = request_["workload"]
    model = WORKLOAD_MODELS[w["kind"]].model_validate(w)
    assert model.schema_problems() == []
    REQUEST.validate(agent_request(model))
    # the request sent is what was asked, plus the schema's defaults
    assert agent_request(model)["workload"].items() >= w.items()


@pytest.mark.parametrize("request_", [r for r in INVALID_REQUESTS
                                      if isinstance(r.get("workload"), dict)
                                      and r["workload"].get("kind") in SCHEMA_KINDS
                                      and set(r) == {"workload"}])
def test_python_models_refuse_what_the_schema_refuses(request_):
    """Refused, or (a spec's convenience) normalised into a request the schema accepts, such as
    the string "10" read as 10: the spec layer never sends what the schema refuses."""
    from pydantic import ValidationError
    from faascope.specs.model import WORKLOAD_MODELS, agent_request

    w = request_["workload"]
    try:
        model = WORKLOAD_MODELS[w["kind"]].model_validate(w)
    except ValidationError:
        return
    if model.schema_problems():
        return
    sent = agent_request(model)
    REQUEST.validate(sent)
    assert not sent["workload"].items() >= w.items(), w


@pytest.mark.parametrize("response", VALID_RESPONSES)
def test_responses_parse_into_one_typed_object(response):
    from faascope.schemas.response import parse_response

    r = parse_response(response)
    assert r.ok is response["ok"] and r.cold is response["cold"]
    assert r.instance_id == response["instance"]["id"] and r.boot_id == response["instance"]["boot_id"]
    assert r.received_ns == response["timings"]["received_ns"]
    assert r.workload_end_ns == response["timings"]["workload_end_ns"]
    w = response["workload"]
    if w is None:
        assert r.workload is None and r.error_type == response["error"]["type"]
        assert r.kind is None and r.measures == {}
    else:
        assert (r.kind, r.elapsed_s, r.bytes, r.ops) == (w["kind"], w["elapsed_s"], w["bytes"], w["ops"])
        assert r.measures == {k: v for k, v in w.items() if k not in ("kind", "elapsed_s", "bytes", "ops")}
        assert r.error_type is None


def test_parse_response_never_raises_on_foreign_replies():
    from faascope.schemas.response import parse_response

    for foreign in (None, "crash", [], {"errorType": "Runtime.ExitError"},
                    {"ok": True, "timings": "x", "instance": None, "workload": 3}):
        r = parse_response(foreign)
        assert r.workload is None and r.received_ns is None and r.instance_id is None


# --- a real agent in HTTP mode -------------------------------------------------------------

def _agent_binary(tmp_dir: Path) -> Path:
    """Build the agent from source when Go is available (so the test sees the current code),
    else use the binary the package build installed."""
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if go:
        out = tmp_dir / "faascope-agent"
        env = dict(os.environ, CGO_ENABLED="0")
        subprocess.run([go, "build", "-o", str(out), "./cmd/faascope-agent"], cwd=ROOT / "agent",
                       env=env, check=True, capture_output=True, timeout=300)
        return out
    built = ROOT / "src" / "faascope" / "_bin" / f"faascope-agent-{HOST_ARCH.get(platform.machine(), 'amd64')}"
    if built.exists():
        return built
    pytest.skip("neither Go nor a built agent binary is available")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("agent")
    binary = _agent_binary(tmp)
    work = tmp / "tmp"
    work.mkdir()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_LAMBDA")}
    shared = tmp / "shared"
    shared.mkdir()
    env.update(PORT=str(port), TMPDIR=str(work), FAASCOPE_SHARED_DIR=str(shared))
    for k in ("FAASCOPE_S3_BUCKET", "FAASCOPE_REDIS_URL", "FAASCOPE_NETWORK_SINK"):
        env.pop(k, None)
    proc = subprocess.Popen([str(binary)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"agent did not start: {proc.stderr.read().decode()}")
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _invoke(url: str, payload: dict | str) -> tuple[int, dict]:
    body = payload if isinstance(payload, str) else json.dumps(payload)
    req = urllib.request.Request(url + "/", data=body.encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


AGENT_CASES = [
    ({"workload": {"kind": "noop"}}, 200),
    ({"workload": {"kind": "spin", "iterations": 1_000_000}}, 200),
    ({"workload": {"kind": "fileio", "op": "write", "file_size": 1 << 20, "io_size": 128 << 10,
                   "direct": True, "fsync": "end", "source": "urandom"}}, 200),
    ({"workload": {"kind": "fileio", "op": "read", "file_size": 1 << 20, "io_size": 128 << 10,
                   "direct": True, "prepare": False}}, 200),
    ({"workload": {"kind": "fileio", "op": "read", "pattern": "random", "file_size": 1 << 20,
                   "io_size": 4096, "seed": 1}}, 200),
    ({"workload": {"kind": "fileio", "engine": "dd", "op": "write", "file_size": 1 << 20,
                   "io_size": 128 << 10, "direct": True}}, 200),
    ({"workload": {"kind": "fileio", "engine": "dd", "op": "read", "file_size": 1 << 20,
                   "io_size": 128 << 10, "direct": True, "prepare": False, "drop": True}}, 200),
    ({"workload": {"kind": "fileio", "op": "read", "file_size": 4096, "io_size": 512,
                   "prepare": False, "path": "absent.dat"}}, 500),
    ({"workload": {"kind": "fileio", "op": "write", "file_size": 512, "io_size": 1024}}, 400),
    ({"workload": {"kind": "fileio", "op": "write", "file_size": 512, "io_size": 512,
                   "path": "../escape"}}, 400),
    ('{"workload": ', 400),
    ({"workload": {"kind": "sharedfs", "op": "write", "file_size": 1 << 16, "io_size": 4096, "mode": "shared",
                   "index": 3}}, 200),
    ({"workload": {"kind": "app", "shape": "inference", "storage": "tmp", "input_size": 1 << 16}}, 200),
    ({"workload": {"kind": "transfer", "chain_length": 1, "payload_size": 100}}, 200),
    ({"workload": {"kind": "object", "op": "put"}}, 400),  # no bucket here or in the environment
    ({"workload": {"kind": "network", "sink": "127.0.0.1:1", "bytes": 10}}, 500),
]


def test_agent_responses_match_schema(agent):
    seen_cold = []
    for payload, status in AGENT_CASES:
        got_status, response = _invoke(agent, payload)
        errors = sorted(RESPONSE.iter_errors(response), key=str)
        assert not errors, f"{payload}: {errors[0].message} in {response}"
        assert got_status == status, (payload, response)
        assert response["ok"] == (status == 200)
        if isinstance(payload, dict):
            if status == 200:
                REQUEST.validate(payload)
                assert response["workload"]["kind"] == payload["workload"]["kind"]
            elif status == 400 and ".." in json.dumps(payload):
                assert not REQUEST.is_valid(payload)
        seen_cold.append(response["cold"])
    assert seen_cold[0] and not any(seen_cold[1:])


def test_agent_fileio_figures(agent):
    size = 1 << 20
    _, w = _invoke(agent, {"workload": {"kind": "fileio", "op": "write", "file_size": size,
                                        "io_size": 64 << 10, "path": "fig.dat"}})
    wl = w["workload"]
    assert wl["bytes"] == size and wl["ops"] == 16 and wl["latency"]["count"] == 16
    assert wl["throughput_bytes_per_s"] == pytest.approx(size / wl["elapsed_s"])
    assert wl["latency"]["min_s"] <= wl["latency"]["p50_s"] <= wl["latency"]["p99_s"] <= wl["latency"]["max_s"]
    _, s = _invoke(agent, {"workload": {"kind": "spin", "iterations": 1000}})
    _, s2 = _invoke(agent, {"workload": {"kind": "spin", "iterations": 1000}})
    assert s["workload"]["checksum"] == s2["workload"]["checksum"]
    assert s["instance"]["id"] == s2["instance"]["id"]
