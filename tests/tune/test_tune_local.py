"""`faascope tune` end to end on the real local platform: a user's own function (a
provided.al2023-style bootstrap script, nothing of faascope's) by name, faascope's agent, and the
AWS path by ARN with the local platform standing in for Lambda's API (``..._mocked_aws``)."""
from __future__ import annotations

import json
import socket
import zipfile
from pathlib import Path

import boto3
import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.cost.pricing import load_table

pytestmark = pytest.mark.slow

USER_BOOTSTRAP = '''#!/usr/bin/python3
# A user's own function: the Lambda Runtime API loop with the standard library only.
import json, os, urllib.request
api = "http://" + os.environ["AWS_LAMBDA_RUNTIME_API"] + "/2018-06-01/runtime/invocation/"
while True:
    with urllib.request.urlopen(api + "next") as r:
        rid = r.headers["Lambda-Runtime-Aws-Request-Id"]
        event = json.loads(r.read() or b"{}")
    total = 0
    for i in range(int(event.get("n", 100000))):   # CPU-bound: faster with more memory
        total += i * i
    body = json.dumps({"total": total}).encode()
    urllib.request.urlopen(urllib.request.Request(api + rid + "/response", data=body,
                                                  method="POST")).read()
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    data = tmp_path_factory.mktemp("platform")
    port = free_port()
    r = CliRunner().invoke(cli, ["platform", "start", "--detach", "--port", str(port),
                                 "--data-dir", str(data)])
    assert r.exit_code == 0, r.output
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client("lambda", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="x", aws_secret_access_key="x")
    yield endpoint, client
    CliRunner().invoke(cli, ["platform", "stop", "--data-dir", str(data)])


def user_zip(tmp_path: Path) -> bytes:
    p = tmp_path / "fn.zip"
    with zipfile.ZipFile(p, "w") as z:
        info = zipfile.ZipInfo("bootstrap")
        info.external_attr = 0o100755 << 16
        z.writestr(info, USER_BOOTSTRAP)
    return p.read_bytes()


def deploy(client, name: str, code: bytes, memory: int = 256, timeout: int = 30) -> None:
    client.create_function(FunctionName=name, Runtime="provided.al2023", Handler="bootstrap",
                           Role="arn:aws:iam::000000000000:role/x", Code={"ZipFile": code},
                           MemorySize=memory, Timeout=timeout)


def expected_cost(memory_mb: int, billed_ms: float) -> float:
    """docs/cost.md's Lambda formula with the price table's numbers (x86_64, 512 MB /tmp)."""
    p = load_table("aws_lambda").prices
    return memory_mb / 1024 * billed_ms / 1000 * p["gb_second_x86_64"] \
        + p["requests_per_million"] / 1e6


def tune(args: list[str]) -> dict:
    r = CliRunner().invoke(cli, ["tune", *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def check_evidence(csv: Path, out: dict, sizes: list[int]) -> pd.DataFrame:
    df = pd.read_csv(csv)
    assert len(df) == out["invocations"]
    assert sorted(df["memory_mb"].unique()) == sizes
    # one cold call per size per round (right after the resize), then warm ones
    cold = df[df["start"] == "cold"].groupby("memory_mb")["round"].apply(list)
    for m in sizes:
        assert cold[m] == sorted(set(df.loc[df["memory_mb"] == m, "round"]))
    for _, r in df[df["ok"] == 1].iterrows():
        assert r["cost_usd"] == pytest.approx(expected_cost(r["memory_mb"],
                                                            r["billed_duration_ms"]), rel=1e-9)
    for k in ("cheapest", "fastest", "balanced"):
        assert out["choices"][k]["memory_mb"] in sizes
    return df


def test_tune_a_users_own_bootstrap_function_by_name_on_the_local_platform(platform, tmp_path):
    endpoint, client = platform
    deploy(client, "users-fn", user_zip(tmp_path))
    csv = tmp_path / "tune.csv"
    out = tune(["--function", "users-fn", "--endpoint-url", endpoint, "--memory", "128,1024",
                "--payload", '{"n": 200000}', "--budget-invocations", "10",
                "--target-ci", "50%", "--results", str(csv)])
    df = check_evidence(csv, out, [128, 1024])
    # 10 invocations cannot be a pilot: the answer says the target was not reached
    assert not out["adaptive"]["target_reached"] and out["stopped_by"] == "invocations budget spent"
    # CPU-bound work with 128/1769 of a CPU against 1024/1769: the larger size is faster
    # (a ratio of about 8 expected; only the ordering is asserted)
    assert out["choices"]["fastest"]["memory_mb"] == 1024
    warm = df[(df["start"] == "warm") & (df["ok"] == 1)].groupby("memory_mb")["latency_seconds"]
    assert warm.median()[128] > 2 * warm.median()[1024]
    # the function is left at the size it had
    assert client.get_function_configuration(FunctionName="users-fn")["MemorySize"] == 256


def test_tune_the_agent_with_a_fileio_payload_on_the_local_platform(platform, tmp_path):
    from faascope.providers.packaging import build_zip

    endpoint, client = platform
    deploy(client, "agent-fn", build_zip(tmp_path / "agent.zip").read_bytes())
    csv = tmp_path / "agent.csv"
    payload = {"workload": {"kind": "fileio", "op": "write", "file_size": 1048576,
                            "io_size": 65536}}
    out = tune(["--function", "agent-fn", "--endpoint-url", endpoint, "--memory", "256,512",
                "--payload", json.dumps(payload), "--budget-invocations", "8",
                "--target-ci", "50%", "--results", str(csv)])
    df = check_evidence(csv, out, [256, 512])
    assert df["ok"].all()


def test_tune_by_arn_mocked_aws(platform, tmp_path, monkeypatch):
    """The AWS path (``--provider aws``, a function ARN, boto3's default credentials) against
    the local platform standing in for Lambda's API."""
    endpoint, client = platform
    deploy(client, "arn-fn", user_zip(tmp_path))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    csv = tmp_path / "arn.csv"
    out = tune(["--function", "arn:aws:lambda:us-east-1:000000000000:function:arn-fn",
                "--provider", "aws", "--endpoint-url", endpoint, "--memory", "128,512",
                "--payload", '{"n": 1000}', "--budget-invocations", "6",
                "--target-ci", "50%", "--results", str(csv)])
    check_evidence(csv, out, [128, 512])


def test_tune_refuses_bad_input_naming_the_option(tmp_path):
    r = CliRunner().invoke(cli, ["tune", "--memory", "64,abc", "--function", "f"])
    assert r.exit_code == 2 and "--memory" in r.output
    r = CliRunner().invoke(cli, ["tune"])
    assert r.exit_code == 2 and "--function" in r.output
    r = CliRunner().invoke(cli, ["tune", "--url", "512=ftp://x"])
    assert r.exit_code == 2 and "--url" in r.output
    r = CliRunner().invoke(cli, ["tune", "--function", "f", "--payload", "{not json",
                                 "--endpoint-url", "http://127.0.0.1:1"])
    assert r.exit_code == 2 and "--payload" in r.output


def test_tune_a_workload_spec_runs_a_campaign_and_answers_from_its_store(tmp_path, monkeypatch,
                                                                        platform):
    """The spec path: /tmp writes in 1 MiB chunks at two sizes, run by the campaign driver with
    adaptive replication on the warm invocations; the answer and its store agree."""
    endpoint, _ = platform
    spec = tmp_path / "writes.yaml"
    spec.write_text(f"""
name: tmp-writes
provider: {{kind: local, settings: {{endpoint_url: "{endpoint}"}}}}
function: {{memory_mb: 512, ephemeral_mb: 1024}}
workload: {{kind: fileio, op: write, file_size: 4MiB, io_size: 1MiB}}
design: {{replications: 3, seed: 1}}
""")
    db = tmp_path / "t.db"
    out = tune(["--spec", str(spec), "--memory", "256,1024", "--target-ci",
                "50%", "--budget-invocations", "60", "--results", str(db)])
    assert out["results"] == str(db)
    import sqlite3
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT json_extract(config_json, '$.memory_mb'), cold_forced, status "
                         "FROM invocations WHERE kind = 'measure'").fetchall()
    assert {m for m, _, _ in rows} == {256, 1024}
    assert all(s == "ok" for _, _, s in rows)
    # each cell's first run is forced cold; the answer counts the others as warm
    sizes = {s["memory_mb"]: s for s in out["sizes"]}
    for m in (256, 1024):
        warm = sum(1 for mm, cold, _ in rows if mm == m and not cold)
        assert sizes[m]["n_warm"] == warm and sizes[m]["n_cold"] >= 1
    assert (tmp_path / "t.yaml").exists()  # the derived spec, next to its store


def test_tune_http_endpoints_one_per_size(tmp_path):
    """--url MB=URL: a user's own HTTP service deployed at two sizes (here two real HTTP servers
    on loopback; the "smaller" one does more work per request), priced as Cloud Run."""
    import threading
    import time as _time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    def server(delay_s):
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                _time.sleep(delay_s)
                body = b'{"ok": true}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass
        s = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        return s

    slow, fast = server(0.06), server(0.005)
    try:
        csv = tmp_path / "http.csv"
        out = tune(["--url", f"512=http://127.0.0.1:{slow.server_port}/",
                    "--url", f"2048=http://127.0.0.1:{fast.server_port}/",
                    "--platform", "cloudrun", "--budget-invocations", "8",
                    "--target-ci", "50%", "--results", str(csv)])
    finally:
        slow.shutdown()
        fast.shutdown()
    df = pd.read_csv(csv)
    assert set(df["start"]) == {"warm"}                 # no cold start is forced over HTTP
    assert out["choices"]["fastest"]["memory_mb"] == 2048
    assert df["ok"].all() and len(df) == out["invocations"]
