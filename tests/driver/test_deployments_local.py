"""A deployment factor end to end on this machine: one campaign over the REAL local platform's
lambda and gcf profiles and a REAL agent served over HTTP (what Cloud Run, Knative or OpenFaaS
run), randomised across them, each invocation recorded with its deployment, priced per
deployment, analysed and reported as one design."""
from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.store.schema import SCHEMA_VERSION
from go_binaries import skip_unless_built

pytestmark = pytest.mark.slow
needs_binaries = skip_unless_built()


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    from faascope.providers import local_platform

    d = tmp_path_factory.mktemp("platform")
    state = local_platform.start(profile="lambda", data_dir=d, port=0, keep_alive="30s")
    yield state["endpoint"]
    local_platform.stop(d)


@pytest.fixture(scope="module")
def agent_url():
    from providers.conftest import free_port, start_agent

    port = free_port()
    proc = start_agent(port)
    yield f"http://127.0.0.1:{port}/"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _ok(args: list[str]):
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return r


@needs_binaries
def test_one_campaign_over_local_profiles_and_an_http_endpoint(tmp_path, platform, agent_url):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: deployments-e2e
provider:
  kind: local
  settings: {{endpoint_url: "{platform}"}}
deployments:
  lambda: {{function: {{profile: lambda}}}}
  gcf: {{function: {{profile: gcf}}}}
  agent-http:
    kind: http
    settings: {{endpoints: ["{agent_url}"], price_as: cloudrun}}
function: {{memory_mb: 256}}
workload: {{kind: fileio, op: write, file_size: 256KiB, io_size: 4KiB}}
factors:
  deployment: [lambda, gcf, agent-http]
  io_size: [4KiB, 64KiB]
design: {{replications: 3, seed: 18}}
""")
    db = tmp_path / "r.db"
    _ok(["run", str(spec), "--results", str(db), "--no-progress"])

    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT deployment, status, function_name, config_json, platform_json, "
                         "order_index FROM invocations ORDER BY order_index").fetchall()
        deployments = {r[0]: r[1:] for r in c.execute(
            "SELECT name, kind, price_platform FROM deployments")}
        schema = c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    assert schema == str(SCHEMA_VERSION)
    assert len(rows) == 18 and {r[1] for r in rows} == {"ok"}
    by_dep: dict[str, list] = {}
    for r in rows:
        by_dep.setdefault(r[0], []).append(r)
    assert {k: len(v) for k, v in by_dep.items()} == {"lambda": 6, "gcf": 6, "agent-http": 6}
    # each deployment ran where it says: the local profiles on the platform's sandboxes (its
    # headers), the HTTP deployment at the agent's URL
    for dep, profile in (("lambda", "lambda"), ("gcf", "gcf")):
        assert {json.loads(r[3])["profile"] for r in by_dep[dep]} == {profile}
        assert all("instance_id" in json.loads(r[4]) for r in by_dep[dep])
    assert {json.loads(r[4])["endpoint"] for r in by_dep["agent-http"]} == {agent_url}
    # one function per deployment and configuration: no two deployments share a function
    names = {dep: {r[2] for r in rs} for dep, rs in by_dep.items()}
    assert not (names["lambda"] & names["gcf"]) and not (names["gcf"] & names["agent-http"])
    # randomised across deployments: the order is not one deployment after another
    order = [r[0] for r in rows]
    assert sum(a != b for a, b in zip(order, order[1:])) > 3
    assert deployments == {"lambda": ("local", "aws_lambda"), "gcf": ("local", "gcf"),
                           "agent-http": ("http", "cloudrun")}

    # the flat view (export) names each invocation's deployment and provider kind
    out = tmp_path / "flat.csv"
    _ok(["export", str(db), "--format", "csv", "--out", str(out)])
    import pandas as pd

    flat = pd.read_csv(out)
    assert set(zip(flat["deployment"], flat["provider_kind"])) == {
        ("lambda", "local"), ("gcf", "local"), ("agent-http", "http")}

    # the cost per deployment, each with its own price table (the http one as it says: cloudrun)
    from faascope.cost import cost_table

    costs = cost_table(flat, by=["deployment"]).set_index("deployment")
    assert costs["platform"].to_dict() == {"lambda": "aws_lambda", "gcf": "gcf",
                                           "agent-http": "cloudrun"}
    assert (costs["cost_total"] > 0).all() and (costs["n"] == 6).all()

    # one analysis over the deployments, and a report that compares them
    r = _ok(["analyze", str(db), "--response", "latency_seconds", "--factors",
             "deployment,io_size", "--format", "json"])
    res = json.loads(r.stdout)
    assert {row["levels"]["deployment"] for row in res["cells"]} == {"lambda", "gcf", "agent-http"}
    rep = tmp_path / "report"
    _ok(["report", str(db), "--out", str(rep), "--formats", "none"])
    summary = (rep / "summary.md").read_text()
    for dep in ("lambda", "gcf", "agent-http"):
        assert dep in summary
    assert "best deployment" in summary.lower()  # the decision table ranks the deployments
