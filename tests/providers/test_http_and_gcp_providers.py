"""The ``http`` and ``gcp`` providers against real agents in HTTP mode on loopback (what Cloud
Run, Cloud Functions 2nd gen, Knative and OpenFaaS run), and the GCP control-plane requests
checked against Google's published discovery documents. Tests with ``no_live_cloud`` in their
name replace Google's API with a local fake; nothing here reaches a cloud."""
from __future__ import annotations

import http.server
import json
import sqlite3
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import discovery
from conftest import free_port
from faascope.cli import cli
from faascope.errors import BadInput, Failure
from faascope.providers.base import FunctionConfig
from faascope.providers.gcp import GCPProvider, cpu_quantity, gcp_name, resolve_cpu
from faascope.providers.http import HTTPProvider, redact_url

NOOP = {"workload": {"kind": "noop"}}
TOKEN = "eyJFAKE-ID-TOKEN-must-never-be-recorded.sig"
HEADER_SECRET = "openfaas-FAKE-SECRET-must-never-be-recorded"


# --------------------------------------------------------------------------- http provider
def test_http_round_robin_over_real_agents(agent_urls):
    p = HTTPProvider(agent_urls)
    p.deploy("f", FunctionConfig(memory_mb=128))
    res = [p.invoke("f", NOOP) for _ in range(4)]
    assert [r.status for r in res] == ["ok"] * 4
    eps = [r.platform["endpoint"] for r in res]
    assert eps == [redact_url(u) for u in agent_urls] * 2
    ids = [r.response["instance"]["id"] for r in res]
    assert ids[0] == ids[2] and ids[1] == ids[3] and ids[0] != ids[1]
    assert all(r.send_ns <= r.headers_ns <= r.end_ns for r in res)
    assert all(r.client_latency_s > 0 and r.attempts == 1 for r in res)
    p.close()


def test_http_per_cell_routing_keeps_each_cell_on_one_endpoint(agent_urls):
    p = HTTPProvider(agent_urls, routing="per_cell")
    p.deploy("f", FunctionConfig(memory_mb=128))
    a = {"workload": {"kind": "spin", "iterations": 10}}
    b = {"workload": {"kind": "spin", "iterations": 20}}
    ea = {p.invoke("f", a).platform["endpoint"] for _ in range(3)}
    eb = {p.invoke("f", b).platform["endpoint"] for _ in range(3)}
    assert len(ea) == 1 and len(eb) == 1 and ea != eb
    p.close()


def test_http_endpoints_with_declared_memory(agent_urls):
    p = HTTPProvider([{"url": agent_urls[0], "memory_mb": 128, "name": "small"},
                      {"url": agent_urls[1], "memory_mb": 2048, "name": "big"}])
    p.deploy("small", FunctionConfig(memory_mb=128))
    p.deploy("big", FunctionConfig(memory_mb=2048))
    assert {p.invoke("small", NOOP).platform["endpoint_name"] for _ in range(3)} == {"small"}
    assert p.invoke("big", NOOP).platform["endpoint_name"] == "big"
    with pytest.raises(Failure, match="512 MB"):
        p.deploy("mid", FunctionConfig(memory_mb=512))
    assert p.describe()["memory_controlled"] is True
    with pytest.raises(Failure, match="cold"):
        p.force_cold("small")
    p.close()


def test_http_agent_error_and_fileio_through_http_mode(agent_urls):
    p = HTTPProvider(agent_urls[:1])
    p.deploy("f", FunctionConfig(memory_mb=128))
    bad = p.invoke("f", {"workload": {"kind": "fileio", "file_size": 10, "io_size": 100}})
    assert bad.status == "agent_error" and bad.error_type == "InvalidRequest"
    assert bad.platform["http_status"] == 400
    ok = p.invoke("f", {"workload": {"kind": "fileio", "op": "write", "file_size": 65536,
                                     "io_size": 4096}})
    assert ok.status == "ok" and ok.response["workload"]["bytes"] == 65536
    p.close()


def test_http_connection_refused_counts_every_attempt():
    url = f"http://127.0.0.1:{free_port()}/"
    p = HTTPProvider([url], max_attempts=3, connect_timeout_s=1)
    p.deploy("f", FunctionConfig(memory_mb=128))
    r = p.invoke("f", NOOP)
    assert r.status == "client_error" and r.attempts == 3 and r.retries == 2
    # named as every provider names a call that never left this machine (the campaign stops
    # and records nothing); the socket's own error stays in the message
    assert r.error_type == "EndpointConnectionError" and "ConnectionRefusedError" in r.error_message


def test_http_settings_are_validated(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("name: x\nprovider: {kind: http, settings: {endpoints: [], routing: random}}\n"
                    "workload: {kind: noop}\n")
    r = CliRunner().invoke(cli, ["plan", str(spec)])
    assert r.exit_code == 2
    assert "provider.settings.endpoints" in r.output and "provider.settings.routing" in r.output
    with pytest.raises(BadInput, match="endpoints\\[0\\].url"):
        HTTPProvider([{"url": "ftp://x/"}])


def _dump(db: Path) -> str:
    return "\n".join(sqlite3.connect(db).iterdump())


def test_http_campaign_never_records_header_secrets(tmp_path, agent_urls, monkeypatch):
    monkeypatch.setenv("FS_TEST_TOKEN", HEADER_SECRET)
    monkeypatch.setenv("FS_TEST_PASSWORD", "pa55word")
    monkeypatch.setenv("FS_TEST_QS", "qs-secret")
    # secrets reach the spec only as ${VAR}: the spec itself is stored verbatim with the results
    url_with_secret = (agent_urls[0].replace("http://", "http://user:${FS_TEST_PASSWORD}@")
                       + "?token=${FS_TEST_QS}")
    spec = tmp_path / "s.yaml"
    spec.write_text(f"""
name: http-e2e
provider:
  kind: http
  settings:
    endpoints: ["{url_with_secret}", "{agent_urls[1]}"]
    headers: {{Authorization: "Bearer ${{FS_TEST_TOKEN}}"}}
workload: {{kind: spin, iterations: 1000}}
factors: {{iterations: [1000, 2000]}}
design: {{replications: 3, seed: 1}}
""")
    db = tmp_path / "r.db"
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db)])
    assert r.exit_code == 0, r.output
    rows = sqlite3.connect(db).execute("SELECT status FROM invocations").fetchall()
    assert [s for (s,) in rows] == ["ok"] * 6
    d = _dump(db)
    assert HEADER_SECRET not in d and "pa55word" not in d and "qs-secret" not in d
    assert "Authorization" in d  # the header's name is recorded, not its value


# --------------------------------------------------------------------------- gcp provider
class Recorder(http.server.BaseHTTPRequestHandler):
    """Records request headers and relays the body to a real agent."""
    seen: list = []
    agent: str = ""

    def do_POST(self):  # noqa: N802
        import urllib.request
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Recorder.seen.append(dict(self.headers))
        with urllib.request.urlopen(urllib.request.Request(Recorder.agent, data=body, method="POST",
                                    headers={"Content-Type": "application/json"})) as r:
            out = r.read()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *a):
        pass


@pytest.fixture
def recorder(agent_urls):
    Recorder.seen, Recorder.agent = [], agent_urls[0]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown()


def test_gcp_invocation_sends_an_id_token_for_the_service_url(recorder):
    audiences = []
    p = GCPProvider(project="my-project-1", urls=recorder,
                    token_fetcher=lambda aud: audiences.append(aud) or TOKEN)
    p.deploy("f", FunctionConfig(memory_mb=256))
    r1, r2 = p.invoke("f", NOOP), p.invoke("f", NOOP)
    assert r1.status == r2.status == "ok"
    assert Recorder.seen[0]["Authorization"] == f"Bearer {TOKEN}"
    assert audiences == [recorder.rstrip("/")]  # fetched once, cached
    assert TOKEN not in json.dumps(p.describe()) and TOKEN not in json.dumps(r1.__dict__, default=str)
    p.close()


def test_gcp_urls_per_memory_against_real_agents(agent_urls):
    p = GCPProvider(project="my-project-1", urls={"128": agent_urls[0], "2048": agent_urls[1]},
                    auth="none")
    p.deploy("a", FunctionConfig(memory_mb=128))
    p.deploy("b", FunctionConfig(memory_mb=2048))
    ra, rb = p.invoke("a", NOOP), p.invoke("b", NOOP)
    assert ra.status == rb.status == "ok"
    assert ra.response["instance"]["id"] != rb.response["instance"]["id"]
    with pytest.raises(Failure, match="512 MB"):
        p.deploy("c", FunctionConfig(memory_mb=512))
    with pytest.raises(Failure, match="cold"):
        p.force_cold("a")
    p.close()


def test_gcp_campaign_with_an_id_token_from_the_environment_never_records_it(tmp_path, agent_urls,
                                                                            monkeypatch):
    monkeypatch.setenv("FAASCOPE_GCP_ID_TOKEN", TOKEN)
    spec = tmp_path / "s.yaml"
    spec.write_text(f"""
name: gcp-e2e
provider:
  kind: gcp
  settings: {{project: my-project-1, urls: {{"128": "{agent_urls[0]}", "256": "{agent_urls[1]}"}}}}
workload: {{kind: noop}}
factors: {{memory: [128, 256]}}
design: {{replications: 2, seed: 1}}
""")
    db = tmp_path / "r.db"
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db)])
    assert r.exit_code == 0, r.output
    assert [s for (s,) in sqlite3.connect(db).execute("SELECT status FROM invocations")] == ["ok"] * 4
    assert TOKEN not in _dump(db)
    # priced as GCF (the tier CPU) in the plan
    plan = json.loads(CliRunner().invoke(cli, ["plan", str(spec), "--format", "json"]).output)
    assert {c["platform"] for c in plan["cost_estimate"]["per_cell"]} == {"gcf"}


def test_gcp_without_google_auth_says_how_to_install_it(monkeypatch):
    import builtins
    real = builtins.__import__

    def fake(name, *a, **kw):
        if name.startswith("google"):
            raise ImportError(name=name)
        return real(name, *a, **kw)
    monkeypatch.setattr(builtins, "__import__", fake)
    monkeypatch.delenv("FAASCOPE_GCP_ID_TOKEN", raising=False)
    p = GCPProvider(project="my-project-1", image="us-docker.pkg.dev/p/r/agent:1")
    with pytest.raises(Failure, match="google-auth"):
        p.deploy("f", FunctionConfig(memory_mb=256))
    with pytest.raises(Failure, match=r"pip install 'google-auth\[requests\]'"):
        p.id_token("https://x.a.run.app")


# --------------------------------------------------------------------------- request shapes
RUN = discovery.load("run.v2.subset.json")
CF = discovery.load("cloudfunctions.v2.subset.json")
TIERS = [128, 256, 512, 1024, 2048, 4096, 8192]


@pytest.mark.parametrize("memory", TIERS)
def test_gcp_cloud_run_service_body_matches_the_documented_rest_shape_no_live_cloud(memory):
    p = GCPProvider(project="my-project-1", image="us-docker.pkg.dev/my-project-1/r/agent:1",
                    service_account="fs@my-project-1.iam.gserviceaccount.com",
                    storage={"gcs_bucket": "faascope-data"}, labels={"team": "IO Lab"})
    p.bind_campaign("c0ffee12", "Thesis_GCF")
    body = p.cloud_run_service_body(FunctionConfig(memory_mb=memory, timeout_s=300),
                                    {**p.env(), "FAASCOPE_COLD_NONCE": "ab"})
    discovery.check(RUN, "GoogleCloudRunV2Service", body)
    c = body["template"]["containers"][0]
    want = {128: "83m", 256: "167m", 512: "333m", 1024: "583m", 2048: "1", 4096: "2", 8192: "2"}[memory]
    assert c["resources"]["limits"] == {"cpu": want, "memory": f"{memory}Mi"}
    assert c["resources"]["cpuIdle"] is True            # request-based billing (fractional CPU needs it)
    assert body["template"]["maxInstanceRequestConcurrency"] == 1
    assert body["template"]["timeout"] == "300s"
    assert body["template"]["executionEnvironment"] == (
        "EXECUTION_ENVIRONMENT_GEN1" if memory < 512 else "EXECUTION_ENVIRONMENT_GEN2")
    assert body["labels"] == {"team": "io-lab", "faascope-created-by": "faascope",
                              "faascope-campaign": "c0ffee12", "faascope-spec": "thesis_gcf"}
    assert {"name": "FAASCOPE_GCS_BUCKET", "value": "faascope-data"} in c["env"]


def test_gcp_cloud_run_match_lambda_cpu_and_invalid_combinations_no_live_cloud():
    p = GCPProvider(project="my-project-1", image="img", cpu="match_lambda")
    b = p.cloud_run_service_body(FunctionConfig(memory_mb=1024), {})
    assert b["template"]["containers"][0]["resources"]["limits"]["cpu"] == "579m"
    assert resolve_cpu(128, "match_lambda") == 0.08
    bad = GCPProvider(project="my-project-1", image="img", cpu=0.3)
    with pytest.raises(BadInput, match="0.3 vCPU with 1024"):
        bad.cloud_run_service_body(FunctionConfig(memory_mb=1024), {})
    assert cpu_quantity(1.0) == "1" and cpu_quantity(0.083) == "83m"


@pytest.mark.parametrize("memory", TIERS)
def test_gcp_cloud_functions_body_matches_the_documented_rest_shape_no_live_cloud(memory):
    p = GCPProvider(project="my-project-1", service="cloud_functions",
                    source={"bucket": "src-bucket", "object": "agent-gcf.zip"})
    p.bind_campaign("c0ffee12", "thesis")
    body = p.gcf_function_body("faascope-thesis-c0ffee-1a2b3c4d", FunctionConfig(memory_mb=memory),
                               {"FAASCOPE_COLD_NONCE": "ab"})
    discovery.check(CF, "Function", body)
    sc = body["serviceConfig"]
    assert sc["availableMemory"] == f"{memory}Mi"
    assert sc["availableCpu"] == {128: "0.083", 256: "0.167", 512: "0.333", 1024: "0.583",
                                  2048: "1", 4096: "2", 8192: "2"}[memory]
    assert body["environment"] == "GEN_2" and sc["maxInstanceRequestConcurrency"] == 1


def test_shape_checker_rejects_what_the_api_would():
    with pytest.raises(discovery.ShapeError, match="unknown field"):
        discovery.check(RUN, "GoogleCloudRunV2Service", {"template": {"memory": "1Gi"}})
    with pytest.raises(discovery.ShapeError, match="output-only"):
        discovery.check(RUN, "GoogleCloudRunV2Service", {"uri": "https://x"})
    with pytest.raises(discovery.ShapeError, match="google-duration"):
        discovery.check(RUN, "GoogleCloudRunV2Service", {"template": {"timeout": "5m"}})


def test_gcp_names_are_valid_service_ids():
    n = gcp_name("faascope-Thesis_local.fileio-ab12cd-1a2b3c4d")
    assert n == "faascope-thesis-local-fileio-ab12cd-1a2b3c4d"
    long = gcp_name("faascope-" + "x" * 60 + "-1a2b3c4d")
    assert len(long) <= 49 and long.endswith("1a2b3c4d")


class FakeResponse:
    def __init__(self, status: int, body: dict):
        self.status_code, self._body, self.text = status, body, json.dumps(body)

    def json(self):
        return self._body


class FakeRunAPI:
    """Stands in for the Cloud Run Admin API (no live cloud): answers create/patch with a
    long-running operation, GET with the service whose uri is a real local agent."""

    def __init__(self, uri: str):
        self.uri, self.calls, self.services = uri, [], set()

    def request(self, method, url, json=None, timeout=None):
        self.calls.append((method, url, json))
        name = url.split("run.googleapis.com/v2/")[1]
        if method == "GET" and "/operations/" in name:
            return FakeResponse(200, {"name": name, "done": True, "response": {}})
        if method == "GET":
            if name not in self.services:
                return FakeResponse(404, {"error": {"code": 404, "message": "not found"}})
            return FakeResponse(200, {"name": name, "uri": self.uri})
        if method == "POST":
            sid = url.split("serviceId=")[1]
            self.services.add(name.split("?")[0] + "/" + sid)
            return FakeResponse(200, {"name": "projects/p/locations/r/operations/op1", "done": False})
        if method == "PATCH":
            return FakeResponse(200, {"name": "projects/p/locations/r/operations/op2", "done": False})
        if method == "DELETE":
            self.services.discard(name)
            return FakeResponse(200, {"name": "projects/p/locations/r/operations/op3", "done": True})
        raise AssertionError(method)


def test_gcp_deploy_invoke_cold_teardown_with_a_fake_run_api_no_live_cloud(agent_urls):
    fake = FakeRunAPI(agent_urls[0])
    p = GCPProvider(project="my-project-1", region="europe-west1", image="img:1", session=fake,
                    auth="none", poll_interval_s=0)
    p.bind_campaign("c0ffee12", "spec")
    cfg = FunctionConfig(memory_mb=256, timeout_s=60)
    p.deploy("faascope-spec-c0ffee-1a2b3c4d", cfg)
    post = [c for c in fake.calls if c[0] == "POST"][0]
    assert post[1] == ("https://run.googleapis.com/v2/projects/my-project-1/locations/europe-west1/"
                       "services?serviceId=faascope-spec-c0ffee-1a2b3c4d")
    discovery.check(RUN, "GoogleCloudRunV2Service", post[2])
    path = RUN["methods"]["create"]["path"]
    assert path == "v2/{+parent}/services" and "serviceId" in RUN["methods"]["create"]["parameters"]
    r = p.invoke("faascope-spec-c0ffee-1a2b3c4d", NOOP)
    assert r.status == "ok"
    p.force_cold("faascope-spec-c0ffee-1a2b3c4d")
    patch = [c for c in fake.calls if c[0] == "PATCH"][0]
    discovery.check(RUN, "GoogleCloudRunV2Service", patch[2])
    env0 = {e["name"]: e["value"] for e in post[2]["template"]["containers"][0]["env"]}
    env1 = {e["name"]: e["value"] for e in patch[2]["template"]["containers"][0]["env"]}
    assert env0["FAASCOPE_COLD_NONCE"] != env1["FAASCOPE_COLD_NONCE"]  # a new revision
    p.update_configuration("faascope-spec-c0ffee-1a2b3c4d", FunctionConfig(memory_mb=512, timeout_s=60))
    last = [c for c in fake.calls if c[0] == "PATCH"][-1]
    assert last[2]["template"]["containers"][0]["resources"]["limits"]["memory"] == "512Mi"
    p.teardown("faascope-spec-c0ffee-1a2b3c4d")
    assert fake.calls[-1][0] == "DELETE" and not fake.services
    p.close()
