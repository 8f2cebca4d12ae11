"""Stand-ins shaped like the cloud: the faascope-shaper in front of REAL VersityGW and moto
servers, driven with boto3. The shaper's own statistics (the lognormal through median and p99)
are tested in agent/shaper; here: which profile gets which figures, that boto3 sees S3's
latency and SlowDown through it, and the command line."""
from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from click.testing import CliRunner

from faascope import calibration, standins
from faascope.cli import cli
from faascope.providers.local_platform import PROFILES
from faascope.standins import shaping
from go_binaries import skip_unless_built

KEYS = dict(region_name=standins.DEFAULT_REGION, aws_access_key_id=standins.DEFAULT_ACCESS_KEY,
            aws_secret_access_key=standins.DEFAULT_SECRET_KEY)


def s3_client(endpoint: str, **retries) -> "boto3.client":
    return boto3.client("s3", endpoint_url=endpoint, **KEYS,
                        config=Config(s3={"addressing_style": "path"},
                                      retries=retries or {"mode": "standard", "max_attempts": 1}))


def test_every_platform_profile_has_a_shaping_and_unlimited_none():
    assert set(shaping.PROFILE_SHAPING) == set(PROFILES)
    assert shaping.shaping_for("unlimited") is None
    assert shaping.shaping_for("lambda").role == "published"
    gcf = shaping.shaping_for("gcf")
    assert gcf.role == "assumed" and "Cloud Storage" in gcf.reason


def test_routes_take_every_figure_from_the_table():
    t = calibration.load_table(shaping.TABLE)
    s3 = shaping.route("s3", 1, "http://127.0.0.1:2", t)
    assert (s3["write"]["median_ms"], s3["write"]["p99_ms"]) == (t.value("s3_standard_write_median"),
                                                                t.value("s3_standard_write_p99"))
    assert (s3["read"]["median_ms"], s3["read"]["p99_ms"]) == (t.value("s3_standard_read_median"),
                                                              t.value("s3_standard_read_p99"))
    assert (s3["write_rate"]["per_s"], s3["read_rate"]["per_s"]) == (3500, 5500)
    ddb = shaping.route("dynamodb", 1, "http://127.0.0.1:3", t)
    assert ddb["write"] == {"median_ms": 5.57, "p99_ms": 11.65} and "write_rate" not in ddb
    assert ddb["read"] == {"median_ms": 3.83, "p99_ms": 9.71}


def test_a_user_file_overrides_a_figure_and_is_recorded(tmp_path):
    f = tmp_path / "slow.yaml"
    f.write_text("extends: standins-aws\nentries:\n"
                 "  s3_prefix_write_rate: {value: 2, unit: req/s, source: a test}\n")
    t = shaping.load(shaping.shaping_for("lambda"), f)
    assert shaping.route("s3", 1, "http://x:2", t)["write_rate"]["per_s"] == 2
    d = shaping.describe(shaping.shaping_for("lambda"), t, {"s3": "http://x:1"})
    assert d["table"].startswith("standins-aws@") and d["overridden"] == {"s3_prefix_write_rate": str(f)}


def quantile(xs: list[float], p: float) -> float:
    return sorted(xs)[int(len(xs) * p)]


@pytest.fixture(scope="module")
def shaped(tmp_path_factory):
    """S3 and DynamoDB shaped for lambda; S3's prefix write rate lowered by a user file so that
    SlowDown is reachable from one Python client (the documented 3,500/s is not)."""
    d = tmp_path_factory.mktemp("shaped")
    f = d / "slow-prefix.yaml"
    f.write_text("extends: standins-aws\nentries:\n"
                 "  s3_prefix_write_rate: {value: 0.2, unit: req/s, source: a test}\n"
                 "  s3_prefix_write_burst: {value: 10, unit: '1', source: a test}\n")
    with standins.start(["s3", "dynamodb"], work_dir=d / "work", shape=("lambda",), calibration_file=f) as st:
        yield st


@skip_unless_built()
def test_boto3_sees_the_calibrated_latency_through_the_shaper(shaped):
    """1 KB PUTs and GETs: the shaped medians are the table's within sampling error and this
    machine's overhead (the shaper holds each answer for its drawn latency, so a median below
    the table's can only be sampling error: n=30 gives SE(ln median) ≈ 1.25·σ/√30 ≈ 0.11 for
    S3 writes, so 0.7× is 3 SE), far above the unshaped server's on the same objects."""
    t = calibration.load_table(shaping.TABLE)
    shaped_s3 = s3_client(shaped.shaped["lambda"]["s3"].endpoint)
    raw_s3 = s3_client(shaped.servers["s3"].endpoint)
    times: dict[str, list[float]] = {"put": [], "get": [], "raw_put": []}
    body = os.urandom(1000)
    for i in range(30):
        t0 = time.perf_counter()
        shaped_s3.put_object(Bucket=standins.DEFAULT_BUCKET, Key=f"lat{i}/k", Body=body)
        t1 = time.perf_counter()
        assert shaped_s3.get_object(Bucket=standins.DEFAULT_BUCKET, Key=f"lat{i}/k")["Body"].read() == body
        t2 = time.perf_counter()
        raw_s3.put_object(Bucket=standins.DEFAULT_BUCKET, Key=f"raw{i}/k", Body=body)
        times["put"].append((t1 - t0) * 1000)
        times["get"].append((t2 - t1) * 1000)
        times["raw_put"].append((time.perf_counter() - t2) * 1000)
    put, get = statistics.median(times["put"]), statistics.median(times["get"])
    assert 0.7 * t.value("s3_standard_write_median") < put < 3 * t.value("s3_standard_write_median"), times
    assert 0.7 * t.value("s3_standard_read_median") < get < 3 * t.value("s3_standard_read_median"), times
    assert put > get  # writes are slower than reads on S3, as published
    # the shaper adds what the cloud takes, not what the host does
    assert min(times["put"]) > 0.2 * t.value("s3_standard_write_median")


@skip_unless_built()
def test_a_large_object_passes_both_ways_intact(shaped):
    """Bodies stream through the proxy (boto3 sends Expect: 100-continue for large PUTs), and
    the S3 signature, which covers the Host header, still verifies at VersityGW."""
    s3 = s3_client(shaped.shaped["lambda"]["s3"].endpoint)
    body = os.urandom(3 * 1024 * 1024 + 17)
    s3.put_object(Bucket=standins.DEFAULT_BUCKET, Key="big/object", Body=body)
    assert s3.get_object(Bucket=standins.DEFAULT_BUCKET, Key="big/object")["Body"].read() == body
    assert s3.head_object(Bucket=standins.DEFAULT_BUCKET, Key="big/object")["ContentLength"] == len(body)


@skip_unless_built()
def test_dynamodb_operations_are_classed_by_their_target(shaped):
    ddb = boto3.client("dynamodb", endpoint_url=shaped.shaped["lambda"]["dynamodb"].endpoint, **KEYS)
    t = calibration.load_table(shaping.TABLE)
    puts, gets = [], []
    for i in range(20):
        t0 = time.perf_counter()
        ddb.put_item(TableName=standins.DEFAULT_TABLE, Item={"pk": {"S": f"k{i}"}, "v": {"B": b"x" * 1000}})
        t1 = time.perf_counter()
        assert ddb.get_item(TableName=standins.DEFAULT_TABLE, Key={"pk": {"S": f"k{i}"}})["Item"]["v"]["B"] == b"x" * 1000
        puts.append((t1 - t0) * 1000)
        gets.append((time.perf_counter() - t1) * 1000)
    assert statistics.median(puts) > 0.7 * t.value("dynamodb_write_median"), puts
    assert statistics.median(gets) > 0.7 * t.value("dynamodb_read_median"), gets


@skip_unless_built()
def test_a_prefix_over_its_rate_gets_slowdown_which_boto3_retries_as_throttling(shaped):
    endpoint = shaped.shaped["lambda"]["s3"].endpoint
    once = s3_client(endpoint)
    # the burst (10 here) passes, then at 0.2/s the bucket is empty: S3's own error, 503 SlowDown
    codes = []
    for i in range(30):
        try:
            once.put_object(Bucket=standins.DEFAULT_BUCKET, Key=f"hot/{i}", Body=b"x")
            codes.append("ok")
        except ClientError as exc:
            codes.append(exc.response["Error"]["Code"])
            assert exc.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert codes[:10] == ["ok"] * 10 and codes.count("SlowDown") >= 5, codes
    # another prefix has its own bucket
    once.put_object(Bucket=standins.DEFAULT_BUCKET, Key="cold/0", Body=b"x")
    # botocore's standard retry mode classes SlowDown as a throttling error and retries it
    from botocore.retries.standard import RetryContext, RetryEventAdapter, ThrottlingErrorDetector

    retried = []
    retrying = s3_client(endpoint, mode="standard", max_attempts=10)
    retrying.meta.events.register("needs-retry.s3.PutObject",
                                  lambda response=None, **kw: retried.append(response) if response else None)
    for _ in range(20):  # empty the prefix's bucket again, then ask at once
        try:
            once.put_object(Bucket=standins.DEFAULT_BUCKET, Key="hot/drain", Body=b"x")
        except ClientError:
            break
    r = retrying.put_object(Bucket=standins.DEFAULT_BUCKET, Key="hot/last", Body=b"x")
    assert r["ResponseMetadata"]["RetryAttempts"] >= 1
    throttled = [resp for resp in retried if resp[1].get("Error", {}).get("Code") == "SlowDown"]
    assert throttled
    ctx = RetryContext(attempt_number=1, parsed_response=throttled[0][1], http_response=throttled[0][0])
    assert ThrottlingErrorDetector(RetryEventAdapter()).is_throttling_error_from_context(ctx)


@skip_unless_built()
def test_standins_start_shape_lambda_and_stop(tmp_path):
    data = tmp_path / "data"
    r = CliRunner().invoke(cli, ["standins", "start", "--only", "s3,dynamodb", "--shape", "lambda",
                                 "--data-dir", str(data), "--work-dir", str(tmp_path / "w"), "--format", "json"])
    try:
        assert r.exit_code == 0, r.output
        doc = json.loads(r.output)
        s3 = doc["shaped"]["lambda"]["s3"]
        assert s3["extra"]["shaping"]["table"] == f"{shaping.TABLE}@{max(calibration.available()[shaping.TABLE])}"
        assert s3["extra"]["shaping"]["endpoints"] == {"s3": s3["endpoint"],
                                                       "dynamodb": doc["shaped"]["lambda"]["dynamodb"]["endpoint"]}
        # the DynamoDB table a function uses is the server's, not the calibration table
        assert doc["shaped"]["lambda"]["dynamodb"]["extra"]["table"] == standins.DEFAULT_TABLE
        assert s3["extra"]["backend"] == doc["servers"]["s3"]["endpoint"] != s3["endpoint"]
        assert doc["servers"]["s3"]["extra"]["store"] in ("/dev/shm",) or \
            doc["servers"]["s3"]["extra"]["store"].startswith("tmpfs")
        saved = standins.load(data)
        assert saved.function_env("lambda")["FAASCOPE_S3_ENDPOINT_URL"] == s3["endpoint"]
        assert saved.function_env("unlimited")["FAASCOPE_S3_ENDPOINT_URL"] == doc["servers"]["s3"]["endpoint"]
        s3_client(s3["endpoint"]).put_object(Bucket=standins.DEFAULT_BUCKET, Key="a/b", Body=b"1")
        st = CliRunner().invoke(cli, ["standins", "status", "--data-dir", str(data)])
        assert "shaped for lambda" in st.output
    finally:
        r2 = CliRunner().invoke(cli, ["standins", "stop", "--data-dir", str(data)])
    assert r2.exit_code == 0 and "stopped" in r2.output
    assert str(tmp_path) not in Path("/proc/mounts").read_text()  # the tmpfs is unmounted


def test_bad_shape_names_the_field(tmp_path):
    r = CliRunner().invoke(cli, ["standins", "start", "--shape", "azure", "--data-dir", str(tmp_path)])
    assert r.exit_code == 2 and "--shape" in r.output
