"""`faascope run` on the REAL local platform starts the stand-ins a spec's payloads need, by
itself: VersityGW for object, redis-server for kv, moto's server for kv on DynamoDB, the shared
directory for sharedfs (a dedicated platform when the running one mounts none); the campaign's
`standins` event names each server and its version, and what was started stops at the end."""
from __future__ import annotations

import json
import os
import socket
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import boto3
import pytest
from click.testing import CliRunner

from faascope import standins
from faascope.cli import cli
from faascope.providers import local_platform
from faascope.providers.base import FunctionConfig
from faascope.standins.wiring import open_provider
from go_binaries import skip_unless_built

pytestmark = [pytest.mark.slow, skip_unless_built(),
              pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root (cgroups, namespaces)")]


def listening(endpoint: str) -> bool:
    host_port = endpoint.split("//")[-1].split("/")[0]
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", int(host_port.rsplit(":", 1)[1]))) == 0


def run_spec(tmp_path: Path, platform_dir: Path, workload: str, factors: str) -> tuple[list[dict], dict]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: standins-{tmp_path.name[:20]}
provider:
  kind: local
  settings: {{data_dir: "{platform_dir}"}}
function: {{memory_mb: 256}}
workload: {workload}
factors:
  {factors}
design: {{replications: 1, warmup: 0, seed: 3}}
""")
    db = tmp_path / "r.db"
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db), "--no-progress"])
    assert r.exit_code == 0, r.output
    with sqlite3.connect(db) as c:
        responses = [json.loads(x[0]) for x in c.execute("SELECT response_json FROM invocations")]
        events = [(k, json.loads(d)) for k, d in c.execute("SELECT kind, detail_json FROM events")]
    st = [d for k, d in events if k == "standins"]
    assert len(st) == 1, events
    assert responses and all(x["ok"] for x in responses), responses
    return responses, st[0]


def test_object_campaign_starts_versitygw_and_stops_it(tmp_path, platform_dir):
    responses, ev = run_spec(tmp_path, platform_dir, "{kind: object, op: put, object_size: 4096, count: 3}",
                             "op: [put, get]")
    assert [(s["kind"], s["server"], s["version"], s["started"]) for s in ev["servers"]] == \
        [("s3", "versitygw", standins.VERSITYGW_VERSION, True)]
    # functions of the platform's default profile (lambda) reach S3 through its shaper only
    shaped = ev["shaping"]["lambda"]
    assert ev["default_profile"] == "lambda" and shaped["table"].startswith("standins-aws@")
    assert ev["platform"]["how"] == "running" and ev["expose"] == shaped["endpoints"]["s3"].rsplit(":", 1)[1]
    # the spec names no endpoint, bucket or keys: the function's environment did
    w = [x["workload"] for x in responses]
    assert {x["op"] for x in w} == {"put", "get"} and all(x["requests"]["ok"] == 3 for x in w)
    assert all(x["credentials_source"] == "environment" for x in w)
    assert not listening(ev["servers"][0]["endpoint"])  # stopped with the campaign
    assert not listening(shaped["endpoints"]["s3"])


def test_kv_redis_campaign_starts_redis_server(tmp_path, platform_dir):
    responses, ev = run_spec(tmp_path, platform_dir, "{kind: kv, op: put, item_size: 128, count: 4}",
                             "op: [put, get]")
    (s,) = ev["servers"]
    assert (s["kind"], s["server"], s["started"]) == ("redis", "redis-server", True)
    assert s["version"][:1].isdigit() and s["endpoint"].startswith("redis://127.0.0.1:")
    assert all(x["workload"]["backend"] == "redis" and x["workload"]["ops"] == 4 for x in responses)
    assert not listening(s["endpoint"])


def test_sharedfs_campaign_gets_a_platform_with_the_shared_directory(tmp_path, platform_dir):
    responses, ev = run_spec(
        tmp_path, platform_dir,
        "{kind: sharedfs, op: write, file_size: 65536, io_size: 4096, fsync: end}", "mode: [private, shared]")
    # the running platform mounts no shared directory: a dedicated one did, and is gone
    assert ev["platform"]["how"] == "dedicated" and ev["platform"]["shared_dir"] == str(platform_dir / "shared")
    assert [(s["kind"], s["server"]) for s in ev["servers"]] == [("shared", "directory")]
    assert all(x["workload"]["root"] == "/mnt/shared" and x["workload"]["bytes"] == 65536 for x in responses)
    assert sorted(p.name for p in (platform_dir / "shared").iterdir()) == \
        ["faascope-sharedfs.dat", "faascope-sharedfs.dat.0"]
    assert local_platform.health(ev["platform"]["endpoint"]) is None
    assert not list(platform_dir.glob("campaign-platform-*"))
    assert local_platform.running(platform_dir) is not None  # the user's platform is untouched


def test_running_stand_ins_of_the_data_dir_are_reused_and_left_running(tmp_path, platform_dir):
    r = CliRunner().invoke(cli, ["standins", "start", "--only", "redis", "--data-dir", str(platform_dir)])
    assert r.exit_code == 0, r.output
    try:
        saved = standins.load(platform_dir).servers["redis"]
        _, ev = run_spec(tmp_path, platform_dir, "{kind: kv, op: put, item_size: 16, count: 2}", "count: [1, 2]")
        assert [(s["kind"], s["endpoint"], s["started"]) for s in ev["servers"]] == \
            [("redis", saved.endpoint, False)]
        assert standins.alive(saved)
    finally:
        standins.stop_saved(platform_dir)


def test_kv_dynamodb_put_then_get_against_moto_started_by_faascope(platform_dir):
    """The agent's DynamoDB path (AWS SDK for Go v2) end to end against moto's server, which
    faascope starts with the table; the items are read back with boto3 in between."""
    settings = SimpleNamespace(data_dir=str(platform_dir), endpoint_url=None, max_attempts=1,
                               read_timeout_s=300.0, connect_timeout_s=10.0, keep_alive_s=None)
    put = {"workload": {"kind": "kv", "backend": "dynamodb", "op": "put", "item_size": 1000, "count": 6,
                        "parallelism": 2, "index": 4}}
    get = {"workload": {**put["workload"], "op": "get", "prepare": False, "consistent_read": True}}
    events = []
    provider = open_provider("local", settings, [put, get], lambda k, d: events.append((k, d)))
    try:
        # the platform that serves the campaign (the user's, left running), the stand-ins,
        # then what the host delivers through them (the capacity probe)
        ((platform_kind, platform), (kind, ev), (probe_kind, probe)) = events
        assert (platform_kind, platform["phase"], platform["how"], platform["owner"]) == \
            ("platform", "start", "running", "user")
        assert probe_kind == "host_capacity" and probe["standins"]["dynamodb"]["bytes_per_s"] > 0, probe
        (s,) = ev["servers"]
        assert (kind, s["kind"], s["server"], s["started"]) == ("standins", "dynamodb", "moto", True)
        assert int(s["version"].split(".")[0]) >= 5
        provider.deploy("standins-ddb", FunctionConfig.from_dict({"memory_mb": 256}))
        p = provider.invoke("standins-ddb", put)
        assert p.status == "ok" and p.response["ok"], (p.error_message, p.response)
        w = p.response["workload"]
        shaped = ev["shaping"]["lambda"]["endpoints"]["dynamodb"]
        assert (w["backend"], w["table"], w["endpoint"]) == ("dynamodb", standins.DEFAULT_TABLE, shaped)
        assert w["requests"]["ok"] == 6 and w["bytes"] == 6000 and w["credentials_source"] == "environment"
        ddb = boto3.client("dynamodb", endpoint_url=s["endpoint"], region_name="us-east-1",
                           aws_access_key_id="x", aws_secret_access_key="x")
        item = ddb.get_item(TableName=standins.DEFAULT_TABLE, Key={"pk": {"S": "faascope:4:5"}})["Item"]
        assert len(item["v"]["B"]) == 1000
        g = provider.invoke("standins-ddb", get)
        assert g.status == "ok" and g.response["ok"], (g.error_message, g.response)
        assert g.response["workload"]["requests"]["ok"] == 6 and g.response["workload"]["bytes"] == 6000
        provider.teardown("standins-ddb")
    finally:
        provider.close()
    assert not listening(s["endpoint"])


def test_transfer_chain_reaches_the_platform_api_and_s3_without_endpoints(platform_dir):
    """transfer needs the platform's own API inside the sandbox (the faascope:expose tag) and,
    via object, the S3 stand-in: the payload names neither."""
    settings = SimpleNamespace(data_dir=str(platform_dir), endpoint_url=None, max_attempts=1,
                               read_timeout_s=300.0, connect_timeout_s=10.0, keep_alive_s=None)
    chain = {"workload": {"kind": "transfer", "via": "object", "chain_length": 2, "payload_size": 50000}}
    events = []
    provider = open_provider("local", settings, [chain], lambda k, d: events.append((k, d)))
    try:
        port = local_platform.running(platform_dir)["endpoint"].rsplit(":", 1)[1]
        assert events[0][0] == "platform" and events[1][0] == "standins"
        assert port in events[1][1]["expose"].split(",")
        assert provider.standin_env["AWS_ENDPOINT_URL_LAMBDA"] == f"http://127.0.0.1:{port}"
        provider.deploy("standins-chain", FunctionConfig.from_dict({"memory_mb": 256}))
        r = provider.invoke("standins-chain", chain)
        assert r.status == "ok" and r.response["ok"], (r.error_message, r.response)
        hops = r.response["workload"]["hops"]
        assert len(hops) == 2 and hops[1]["payload_bytes"] == 50000 and hops[1]["transfer_s"] > 0
        provider.teardown("standins-chain")
    finally:
        provider.close()


def test_a_shaper_left_running_by_standins_start_is_reused(platform_dir):
    """`faascope standins start --shape lambda` for the platform's data directory: a campaign
    of the lambda profile uses that shaper (and its server) and leaves both running."""
    r = CliRunner().invoke(cli, ["standins", "start", "--only", "s3", "--shape", "lambda",
                                 "--data-dir", str(platform_dir)])
    assert r.exit_code == 0, r.output
    try:
        saved = standins.load(platform_dir)
        settings = SimpleNamespace(data_dir=str(platform_dir), endpoint_url=None, max_attempts=1,
                                   read_timeout_s=300.0, connect_timeout_s=10.0, keep_alive_s=None)
        events = []
        payload = {"workload": {"kind": "object", "op": "put", "object_size": 1024, "count": 2}}
        provider = open_provider("local", settings, [payload], lambda k, d: events.append((k, d)),
                                 profiles=["lambda", "unlimited", "gcf"])
        try:
            ((platform_kind, _), (_, ev), (probe_kind, _)) = events
            assert platform_kind == "platform"
            assert probe_kind == "host_capacity"
            lam = ev["shaping"]["lambda"]
            assert lam["started"] is False and lam["endpoints"]["s3"] == saved.shaped["lambda"]["s3"].endpoint
            assert ev["shaping"]["unlimited"] is None
            # gcf: a shaper of its own, started for the campaign, with S3's figures marked assumed
            gcf = ev["shaping"]["gcf"]
            assert gcf["started"] is True and gcf["role"] == "assumed" and gcf["table"] == lam["table"]
            assert gcf["endpoints"]["s3"] != lam["endpoints"]["s3"]
            assert ev["expose_by_profile"]["gcf"] == gcf["endpoints"]["s3"].rsplit(":", 1)[1]
            assert provider.standins_for(FunctionConfig.from_dict({"memory_mb": 128, "profile": "unlimited"}))[0][
                "FAASCOPE_S3_ENDPOINT_URL"] == saved.servers["s3"].endpoint
        finally:
            provider.close()
        assert standins.alive(saved.shaped["lambda"]["s3"]) and standins.alive(saved.servers["s3"])
    finally:
        standins.stop_saved(platform_dir)
