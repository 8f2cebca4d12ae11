"""Which stand-ins a payload needs, per workload kind (faascope.standins.needs), read from the
agent request as JSON: the defaults of the request schema select the backend."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from faascope.standins.needs import BY_KIND, Needs, needs, needs_of

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "src" / "faascope" / "schemas"
                     / "agent-request.schema.json").read_text())


def kinds(workload: dict) -> set[str]:
    return needs({"workload": workload}).kinds


@pytest.mark.parametrize("kind", ["noop", "spin", "fileio", "not-a-kind"])
def test_local_kinds_need_nothing(kind):
    n = needs({"workload": {"kind": kind}})
    assert not n and n.kinds == set() and not n.lambda_api


def test_object_needs_s3_and_its_bucket():
    assert kinds({"kind": "object", "op": "put"}) == {"s3"}
    n = needs({"workload": {"kind": "object", "op": "get", "bucket": "mine"}})
    assert n.kinds == {"s3"} and n.buckets == {"mine"}
    # a server the payload names is the user's; GCS's JSON API is not an S3 stand-in's
    assert kinds({"kind": "object", "op": "put", "endpoint": "http://10.0.0.1:9000"}) == set()
    assert kinds({"kind": "object", "op": "put", "api": "gcs"}) == set()


def test_kv_backend_selects_redis_or_dynamodb():
    assert kinds({"kind": "kv", "op": "put"}) == {"redis"}  # the schema's default backend
    assert kinds({"kind": "kv", "op": "put", "backend": "redis"}) == {"redis"}
    n = needs({"workload": {"kind": "kv", "op": "get", "backend": "dynamodb", "table": "t1"}})
    assert n.kinds == {"dynamodb"} and n.tables == {"t1"}
    assert kinds({"kind": "kv", "op": "put", "endpoint": "redis://10.0.0.1:6379/0"}) == set()


def test_sharedfs_needs_the_shared_directory():
    assert kinds({"kind": "sharedfs", "op": "write", "file_size": 1, "io_size": 1}) == {"shared"}


def test_network_needs_a_sink_unless_it_names_one():
    assert kinds({"kind": "network"}) == {"sink"}
    assert kinds({"kind": "network", "sink": "10.0.0.1:9100"}) == set()


def test_transfer_needs_the_platform_api_and_what_it_goes_through():
    n = needs({"workload": {"kind": "transfer"}})
    assert n.kinds == set() and n.lambda_api and n  # inline: only the Lambda API
    assert needs({"workload": {"kind": "transfer", "via": "object"}}).kinds == {"s3"}
    assert needs({"workload": {"kind": "transfer", "via": "kv"}}).kinds == {"redis"}
    assert needs({"workload": {"kind": "transfer", "via": "kv", "backend": "dynamodb"}}).kinds == {"dynamodb"}
    assert not needs({"workload": {"kind": "transfer", "lambda_endpoint": "http://h:1"}}).lambda_api


def test_app_storage_selects_the_stand_in():
    assert kinds({"kind": "app", "shape": "sort"}) == {"s3"}  # default storage: object
    assert kinds({"kind": "app", "shape": "sort", "storage": "kv"}) == {"redis"}
    assert kinds({"kind": "app", "shape": "sort", "storage": "kv", "backend": "dynamodb"}) == {"dynamodb"}
    assert kinds({"kind": "app", "shape": "video", "storage": "sharedfs"}) == {"shared"}
    assert kinds({"kind": "app", "shape": "inference", "storage": "tmp"}) == set()


def test_a_campaign_needs_the_union_and_a_bare_workload_is_accepted():
    n = needs_of([{"workload": {"kind": "kv", "op": "put", "backend": "dynamodb"}},
                  {"kind": "object", "op": "put", "bucket": "b"},
                  {"workload": {"kind": "noop"}}])
    assert n.kinds == {"dynamodb", "s3"} and n.buckets == {"b"} and n.tables == set()
    assert not needs_of([]) and isinstance(needs_of([]), Needs)


def test_every_storage_kind_of_the_schema_is_read_and_its_defaults_agree():
    storage_kinds = {"object", "kv", "sharedfs", "network", "transfer", "app"}
    schema_kinds = {d["properties"]["kind"]["const"] for d in SCHEMA["$defs"].values()
                    if isinstance(d, dict) and "const" in d.get("properties", {}).get("kind", {})}
    assert storage_kinds <= schema_kinds and set(BY_KIND) == storage_kinds
    props = SCHEMA["$defs"]
    assert props["kv"]["properties"]["backend"]["default"] == "redis"
    assert props["transfer"]["properties"]["via"]["default"] == "inline"
    assert props["app"]["properties"]["storage"]["default"] == "object"
