"""The ``aws`` provider end to end against the local platform: the same Lambda API, so only the
endpoint differs (``provider.settings.endpoint_url``). Real functions, real agent, real REPORT
lines; credentials from the standard chain (the environment here, with recognisable fake
secrets that must never reach the results)."""
from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import boto3
import pandas as pd
import pytest
from click.testing import CliRunner

from conftest import SECRET_KEY, SESSION_TOKEN, needs_binaries
from faascope.cli import cli

pytestmark = [pytest.mark.slow, needs_binaries]

ROLE = "arn:aws:iam::000000000000:role/faascope-test"


def _spec(tmp_path: Path, endpoint: str, name: str = "aws-e2e") -> Path:
    p = tmp_path / "spec.yaml"
    p.write_text(f"""
name: {name}
provider:
  kind: aws
  settings:
    role: {ROLE}
    region: us-east-1
    endpoint_url: {endpoint}
    keep_functions: true
    tags: {{team: io-lab}}
    storage: {{s3_bucket: faascope-e2e-bucket, dynamodb_table: faascope-e2e}}
function: {{memory_mb: 128, ephemeral_mb: 1024, timeout_s: 30}}
workload: {{kind: fileio, op: write, file_size: 64KiB, io_size: 4KiB}}
factors:
  memory: [128, 256]
design: {{replications: 2, seed: 7, cold: true}}
""")
    return p


def _lambda(endpoint):
    return boto3.client("lambda", endpoint_url=endpoint, region_name="us-east-1")


def test_aws_provider_campaign_end_to_end_on_the_local_platform(tmp_path, platform_endpoint, aws_env):
    results = tmp_path / "r.db"
    r = CliRunner().invoke(cli, ["run", str(_spec(tmp_path, platform_endpoint)), "--results", str(results)])
    assert r.exit_code == 0, r.output

    con = sqlite3.connect(results)
    con.row_factory = sqlite3.Row
    camp = dict(con.execute("SELECT * FROM campaign").fetchone())
    uid = camp["uid"]
    rows = [dict(x) for x in con.execute("SELECT * FROM invocations_flat")]
    assert len(rows) == 4 and all(x["status"] == "ok" for x in rows)
    # the REPORT line of every invocation is in the record
    for x in rows:
        assert x["billed_duration_ms"] >= 1
        assert x["report_duration_ms"] > 0
        assert x["billed_duration_ms"] >= x["report_duration_ms"]
        assert x["max_memory_used_mb"] >= 1
        assert x["config_memory_mb"] in (128, 256) and x["config_arch"] == "x86_64"
    # cold: true forces a cold start per cell: those report an Init Duration
    assert all(x["init_duration_ms"] is not None for x in rows if x["cold_forced"])

    # what was created: provided.al2023, memory, ephemeral storage, tags, storage env
    lam = _lambda(platform_endpoint)
    names = sorted({x["function_name"] for x in rows})
    assert len(names) == 2
    for n in names:
        f = lam.get_function(FunctionName=n)
        cfg, tags = f["Configuration"], f["Tags"]
        assert cfg["Runtime"] == "provided.al2023" and cfg["Handler"] == "bootstrap"
        assert cfg["MemorySize"] in (128, 256) and cfg["EphemeralStorage"]["Size"] == 1024
        assert tags["faascope:created-by"] == "faascope"
        assert tags["faascope:campaign"] == uid
        assert tags["faascope:spec"] == "aws-e2e"
        assert tags["team"] == "io-lab"
        env = cfg["Environment"]["Variables"]
        assert env["FAASCOPE_S3_BUCKET"] == "faascope-e2e-bucket"
        assert env["FAASCOPE_DYNAMODB_TABLE"] == "faascope-e2e"

    # the provider's description (storage, role, tags) is recorded; no secret anywhere
    events = [json.loads(e["detail_json"]) for e in con.execute(
        "SELECT * FROM events WHERE kind = 'deployed'")]
    assert len(events) == 2
    assert events[0]["provider"]["storage"]["s3_bucket"] == "faascope-e2e-bucket"
    assert events[0]["provider"]["region"] == "us-east-1"
    assert events[0]["provider"]["tags"]["faascope:campaign"] == uid
    con.close()
    dump = "\n".join(sqlite3.connect(results).iterdump())
    assert SECRET_KEY not in dump and SESSION_TOKEN not in dump
    assert "AKIAFAKEFAKEFAKE" not in dump

    # cost from the recorded billed durations
    from faascope.cost import cost_table, lambda_cost
    df = pd.read_sql_query("SELECT * FROM invocations_flat", sqlite3.connect(results))
    t = cost_table(df, by=["memory"])
    r128 = t[t["memory"] == 128].iloc[0]
    sub = df[df["memory"] == 128]
    want = sum(lambda_cost(128, b / 1000, billed=True, ephemeral_mb=1024).total
               for b in sub["billed_duration_ms"])
    assert r128["cost_total"] == pytest.approx(want)

    # cleanup: dry run lists, then removes, then finds nothing (idempotent)
    runner = CliRunner()
    base = ["cleanup", "--provider", "aws", "--endpoint-url", platform_endpoint, "--format", "json"]
    dry = json.loads(runner.invoke(cli, base + ["--campaign", str(results), "--dry-run"]).output)
    assert sorted(x["name"] for x in dry["resources"]) == names
    assert {x["action"] for x in dry["resources"]} == {"would-delete"}
    assert all(lam.get_function(FunctionName=n) for n in names)  # still there
    done = runner.invoke(cli, base + ["--campaign", uid])
    assert done.exit_code == 0, done.output
    assert {x["action"] for x in json.loads(done.output)["resources"]} == {"deleted"}
    again = json.loads(runner.invoke(cli, base + ["--campaign", uid]).output)
    assert again["resources"] == []
    assert not any(f["FunctionName"] in names for f in lam.list_functions()["Functions"])


def test_cleanup_campaign_filter_leaves_other_functions(tmp_path, platform_endpoint, aws_env):
    from faascope.providers.aws import AWSProvider
    from faascope.providers.base import FunctionConfig

    a = AWSProvider(role=ROLE, endpoint_url=platform_endpoint)
    a.bind_campaign("campaignA", "s")
    b = AWSProvider(role=ROLE, endpoint_url=platform_endpoint)
    b.bind_campaign("campaignB", "s")
    cfg = FunctionConfig(memory_mb=128, timeout_s=10)
    a.deploy("fs-clean-a", cfg)
    b.deploy("fs-clean-b", cfg)
    lam = _lambda(platform_endpoint)
    lam.create_function(FunctionName="not-faascope", Runtime="provided.al2023", Role=ROLE,
                        Handler="bootstrap", Code={"ZipFile": a._zip("x86_64", None)},
                        MemorySize=128, Tags={"owner": "someone-else"})
    try:
        from faascope.providers.cleanup import run_cleanup
        out = run_cleanup("aws", "campaignA", endpoint_url=platform_endpoint)
        assert [r["name"] for r in out["resources"]] == ["fs-clean-a"]
        left = {f["FunctionName"] for f in lam.list_functions()["Functions"]}
        assert {"fs-clean-b", "not-faascope"} <= left and "fs-clean-a" not in left
        out = run_cleanup("aws", None, endpoint_url=platform_endpoint)  # all of faascope's
        assert [r["name"] for r in out["resources"]] == ["fs-clean-b"]
        assert "not-faascope" in {f["FunctionName"] for f in lam.list_functions()["Functions"]}
    finally:
        lam.delete_function(FunctionName="not-faascope")
        a.close()
        b.close()


def test_local_provider_functions_are_tagged_and_cleaned(tmp_path, platform_endpoint):
    from faascope.providers.base import FunctionConfig
    from faascope.providers.cleanup import run_cleanup
    from faascope.providers.local import LocalProvider

    p = LocalProvider(endpoint_url=platform_endpoint)
    p.bind_campaign("localcamp", "spec")
    p.deploy("fs-local-tagged", FunctionConfig(memory_mb=128, timeout_s=10, profile="lambda"))
    res = p.invoke("fs-local-tagged", {"workload": {"kind": "noop"}})
    assert res.status == "ok"
    assert res.platform["report"]["billed_duration_ms"] >= 1
    p.close()
    out = run_cleanup("local", "localcamp", endpoint_url=platform_endpoint)
    assert [r["name"] for r in out["resources"]] == ["fs-local-tagged"]
    assert run_cleanup("local", "localcamp", endpoint_url=platform_endpoint)["resources"] == []


@pytest.fixture
def s3_server(tmp_path):
    """A real S3-compatible server (VersityGW, built once by scripts/setup.sh), or the one named by
    FAASCOPE_TEST_S3_ENDPOINT."""
    if os.environ.get("FAASCOPE_TEST_S3_ENDPOINT"):
        yield (os.environ["FAASCOPE_TEST_S3_ENDPOINT"], os.environ.get("FAASCOPE_TEST_S3_ACCESS_KEY", "test"),
               os.environ.get("FAASCOPE_TEST_S3_SECRET_KEY", "test"))
        return
    from faascope.processes import stop_process
    from faascope.standins import STOP_WAIT_S, start_s3

    srv = start_s3(tmp_path / "s3work")
    try:
        yield srv.endpoint, srv.extra["access_key"], srv.extra["secret_key"]
    finally:
        stop_process(srv.pid, STOP_WAIT_S)


def test_aws_provider_creates_tags_and_cleans_a_bucket_on_a_local_s3_server(tmp_path, monkeypatch, s3_server,
                                                                           platform_endpoint):
    from faascope.providers.aws import AWSProvider
    from faascope.providers.cleanup import run_cleanup

    ep, key, secret = s3_server
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    p = AWSProvider(role=ROLE, endpoint_url=platform_endpoint,
                    storage={"s3_bucket": "faascope-s3-e2e", "create_bucket": True, "s3_endpoint_url": ep})
    p.bind_campaign("s3camp", "spec")
    assert p.ensure_storage() == {"s3_bucket": "faascope-s3-e2e"}
    s3 = p.s3_client()
    s3.put_object(Bucket="faascope-s3-e2e", Key="faascope/x", Body=b"1")
    tags = {t["Key"]: t["Value"] for t in s3.get_bucket_tagging(Bucket="faascope-s3-e2e")["TagSet"]}
    assert tags["faascope:campaign"] == "s3camp"
    out = run_cleanup("aws", "s3camp", endpoint_url=platform_endpoint, s3_endpoint_url=ep)
    assert any(r["kind"] == "s3-bucket" and r["action"] == "deleted" for r in out["resources"])
