"""Deployments as a factor: the spec is validated per deployment (errors name
``deployments.NAME...``), each cell runs on its deployment's provider and is priced by it. The
AWS + GCP example (the 2024 study's Lambda vs GCF design as one spec) can only be planned here:
no network reaches either cloud."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.designs.cost import estimate_plan_cost
from faascope.designs.plan import build_plan
from faascope.errors import BadInput
from faascope.providers.base import FunctionConfig
from faascope.specs.loader import parse_spec

REPO = Path(__file__).resolve().parents[2]
CLOUD = REPO / "examples/thesis-lambda-vs-gcf-cloud.yaml"
THESIS_LOCAL = REPO / "examples/thesis-local-fileio.yaml"

BASE = {
    "name": "d",
    "provider": {"kind": "local"},
    "deployments": {"lam": {"function": {"profile": "lambda"}},
                    "gcf": {"function": {"profile": "gcf"}},
                    "web": {"kind": "http", "settings": {"endpoints": ["http://127.0.0.1:9/"]}}},
    "workload": {"kind": "noop"},
    "factors": {"deployment": ["lam", "gcf", "web"], "memory": [128, 256]},
}


def spec(**changes) -> dict:
    d = json.loads(json.dumps(BASE))
    d.update(changes)
    return d


def test_cells_carry_their_deployment_and_its_function_fields():
    plan = build_plan(parse_spec(spec()), seed=1)
    assert len(plan.cells) == 6
    by = {(c.deployment, c.function.memory_mb): c for c in plan.cells}
    assert by[("lam", 128)].function.profile == "lambda"
    assert by[("gcf", 256)].function.profile == "gcf"
    assert by[("web", 128)].function.profile is None  # not a local deployment
    configs = [FunctionConfig.from_dict(c.config) for c in plan.cells]
    # a function per deployment and configuration
    assert len({cfg.identity() for cfg in configs}) == 6
    # one-provider campaigns' configurations (and so their function names) are unchanged
    one = build_plan(parse_spec({**spec(), "deployments": {}, "factors": {"memory": [128]}}))
    assert "deployment" not in one.cells[0].config
    assert "deployment" not in FunctionConfig.from_dict(one.cells[0].config).as_dict()


@pytest.mark.parametrize("change,field,words", [
    ({"factors": {"memory": [128]}}, "factors.deployment", "required with deployments"),
    ({"factors": {"deployment": ["lam", "nope"]}}, "factors.deployment[1]", "one of the deployments"),
    ({"deployments": {"web": {"kind": "http", "settings": {}}}}, "deployments.web.settings.endpoints",
     "required"),
    ({"deployments": {"x": {"kind": "http", "settings": {"endpoints": ["http://h/"]},
                           "function": {"profile": "gcf"}}}},
     "deployments.x.function.profile", "only local deployments"),
    ({"deployments": {"x": {"function": {"memroy": 1}}}}, "deployments.x.function.memroy",
     "unknown function field"),
    ({"factors": {"deployment": ["lam"], "profile": ["lambda", "gcf"]}}, "factors.profile",
     "local deployments"),
])
def test_bad_deployments_name_the_field(change, field, words):
    with pytest.raises(BadInput) as ei:
        parse_spec(spec(**change))
    text = f"{ei.value.field or ''} {ei.value.message}"
    assert field in text and words in text


def test_rules_see_the_deployment_and_its_provider_kind():
    s = spec(design={"rules": ["provider != 'http' or memory_mb == 128",
                               "deployment != 'gcf' or memory_mb == 256"]})
    plan = build_plan(parse_spec(s), seed=1)
    assert sorted((c.deployment, c.function.memory_mb) for c in plan.cells) == [
        ("gcf", 256), ("lam", 128), ("lam", 256), ("web", 128)]


def test_a_spec_without_deployments_keeps_its_hash():
    """Resuming a campaign checks the spec's hash: adding the deployments section to the
    model must not change the hash of specs that do not use it."""
    from faascope.specs.loader import load_spec

    loaded = load_spec(THESIS_LOCAL)
    assert "deployments" not in loaded.canonical()


def test_the_cloud_example_plans_as_the_study_design_with_a_cost_per_deployment():
    r = CliRunner().invoke(cli, ["plan", str(CLOUD), "--format", "json"])
    assert r.exit_code == 0, r.output
    cloud = json.loads(r.output)
    r = CliRunner().invoke(cli, ["plan", str(THESIS_LOCAL), "--format", "json"])
    local = json.loads(r.output)
    # the same 16 cells of the study: profile lambda/gcf there, deployment lambda/gcf here; the
    # local example runs the 1,024,000,000 B file scaled to 2 MiB (the same calls, fewer)
    scaled = {1_024_000_000: 2 * 1024**2}

    def cells(plan, factor):
        return sorted(json.dumps({**{k: v for k, v in c["levels"].items() if k != factor},
                                  "file_size": scaled.get(c["levels"]["file_size"],
                                                          c["levels"]["file_size"]),
                                  "platform": c["levels"][factor]}, sort_keys=True)
                      for c in plan["cells"])
    assert len(cloud["cells"]) == 16 and len(cloud["excluded"]) == 16
    assert cells(cloud, "deployment") == cells(local, "profile")
    cost = cloud["cost_estimate"]
    assert set(cost["per_deployment"]) == {"lambda", "gcf"}
    assert cost["per_deployment"]["lambda"] + cost["per_deployment"]["gcf"] == pytest.approx(
        cost["total"], rel=1e-6)
    platforms = {c["deployment"]: c["platform"] for c in cost["per_cell"]}
    assert platforms == {"lambda": "aws_lambda", "gcf": "gcf"}


def test_plan_cost_prices_each_deployment_by_its_own_table():
    s = spec()
    s["deployments"]["web"]["settings"]["price_as"] = "cloudrun"
    loaded = parse_spec(s)
    cost = estimate_plan_cost(build_plan(loaded, seed=1), loaded.spec.provider.parsed_settings())
    assert {c["deployment"]: c["platform"] for c in cost["per_cell"]} == {
        "lam": "aws_lambda", "gcf": "gcf", "web": "cloudrun"}
    assert all(v is not None and v > 0 for v in cost["per_deployment"].values())


def test_the_local_example_plans_three_deployments():
    r = CliRunner().invoke(cli, ["plan", str(REPO / "examples/deployments-local.yaml"), "--format",
                                 "json"])
    assert r.exit_code == 0, r.output
    plan = json.loads(r.output)
    assert {c["levels"]["deployment"] for c in plan["cells"]} == {"lambda", "gcf", "agent-http"}
    assert set(plan["cost_estimate"]["per_deployment"]) == {"lambda", "gcf", "agent-http"}
