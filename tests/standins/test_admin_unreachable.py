"""The S3 and DynamoDB stand-ins show functions their data-plane API only (issue #29: "stand-ins
expose to functions only what the managed service does ... the same for the shaper and moto").

moto's server has its own control API under ``/moto-api/`` (``POST /moto-api/reset`` wipes every
table); VersityGW serves its admin API (PATCH /list-users, /create-user, ...) on the S3 port
unless given an admin port of its own. Real servers, started by the stand-ins' own start
function with a shaper in front (profile lambda), reached as a function reaches them: through
the shaper (a shaped profile's endpoints) and directly (profile unlimited's). The shaper itself
has no control API: every request it takes goes to its backend (agent/shaper).
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import urllib.request
from pathlib import Path

import boto3
import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

from faascope import standins

pytestmark = pytest.mark.skipif(
    shutil.which("versitygw") is None and not any(
        (Path(standins.default_data_dir()) / "bin").glob("versitygw-*/versitygw")),
    reason="needs a VersityGW build")


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory):
    st = standins.start(("s3", "dynamodb"), work_dir=tmp_path_factory.mktemp("w"), shape=("lambda",),
                        memory=False)
    yield st
    st.stop()


def _http(method: str, url: str, body: bytes = b"", headers: dict | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body if method != "GET" else None, method=method,
                                 headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _signed(method: str, url: str, s3: standins.Server) -> tuple[int, bytes]:
    """A request signed with the stand-in's keys (the ones a function gets), as VersityGW's
    admin client signs its calls."""
    req = AWSRequest(method=method, url=url, data=b"")
    S3SigV4Auth(Credentials(s3.extra["access_key"], s3.extra["secret_key"]), "s3",
              s3.extra["region"]).add_auth(req)
    return _http(method, url, b"", dict(req.headers.items()))


@pytest.mark.parametrize("profile", ["lambda", "unlimited"])
def test_moto_control_api_is_refused_and_dynamodb_still_works(stand_ins, profile):
    d = stand_ins.servers_for(profile)["dynamodb"]
    assert (profile == "lambda") == (d.extra["name"] == "faascope-shaper")
    ddb = boto3.client("dynamodb", endpoint_url=d.endpoint, region_name=d.extra["region"],
                       aws_access_key_id="x", aws_secret_access_key="x",
                       config=Config(retries={"total_max_attempts": 1}))
    table = d.extra["table"]
    ddb.put_item(TableName=table, Item={"pk": {"S": profile}, "v": {"S": "kept"}})
    for method, path in (("POST", "/moto-api/reset"), ("GET", "/moto-api/"), ("GET", "/moto-api/data.json"),
                         ("POST", "//moto-api/reset"), ("GET", "/moto-api")):
        code, body = _http(method, d.endpoint + path)
        assert code == 400, (method, path, code, body[:200])
        assert json.loads(body)["__type"].endswith("UnknownOperationException")
    # the table and its item survived the reset attempt; the data plane answers as before
    got = ddb.get_item(TableName=table, Key={"pk": {"S": profile}}, ConsistentRead=True)
    assert got["Item"]["v"]["S"] == "kept"
    assert table in ddb.list_tables()["TableNames"]


@pytest.mark.parametrize("profile", ["lambda", "unlimited"])
def test_versitygw_admin_api_is_off_the_s3_port_and_s3_still_works(stand_ins, profile):
    s = stand_ins.servers_for(profile)["s3"]
    for path in ("/list-buckets", "/list-users", "/create-user", "/change-bucket-owner", "/create-bucket"):
        code, body = _signed("PATCH", s.endpoint + path, s)
        # with the admin API on this port: PATCH /list-buckets answered 200 with every bucket and
        # its owner, /list-users 501 XAdminMethodNotSupported; S3 has no PATCH at all
        assert code == 405 and b"<Code>MethodNotAllowed</Code>" in body, (path, code, body[:300])
    s3 = boto3.client("s3", endpoint_url=s.endpoint, region_name=s.extra["region"],
                      aws_access_key_id=s.extra["access_key"], aws_secret_access_key=s.extra["secret_key"],
                      config=Config(retries={"total_max_attempts": 1}, s3={"addressing_style": "path"}))
    s3.put_object(Bucket=s.extra["bucket"], Key="admin-test", Body=b"data plane")
    assert s3.get_object(Bucket=s.extra["bucket"], Key="admin-test")["Body"].read() == b"data plane"


def test_versitygw_admin_socket_is_for_this_user_alone(stand_ins):
    sock = Path(stand_ins.servers["s3"].extra.get("admin_socket", "none"))
    assert stat.S_ISSOCK(os.stat(sock).st_mode)  # the admin API listens there, and only there
    assert stat.S_IMODE(os.stat(sock.parent).st_mode) == 0o700


def test_control_paths():
    from faascope.standins.moto_server import is_control_path

    assert all(map(is_control_path, ["/moto-api", "/moto-api/", "/moto-api/reset", "//moto-api/x"]))
    assert not any(map(is_control_path, ["/", "/moto-apix", "/bucket/moto-api/reset", ""]))


def test_admin_socket_path_fits_a_socket_address_and_goes_with_the_stand_ins(tmp_path):
    long_work = tmp_path / ("w" * 120)
    long_work.mkdir()
    sock = standins.admin_socket(long_work)
    assert len(str(sock)) <= standins.SOCKET_PATH_MAX < 108  # sun_path, NUL included
    assert stat.S_IMODE(os.stat(sock.parent).st_mode) == 0o700
    st = standins.StandIns(servers={"s3": standins.Server("s3", None, None, "", "",
                                                          extra={"admin_socket": str(sock)})})
    st.stop()
    assert not sock.parent.exists()
