"""The cost model, the price tables, the plan's cost estimate and the report helpers."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.cost import (Pricing, available, cost_table, gcf_cost, invocation_cost,
                           invocation_costs, lambda_cost, lambda_gb, load_table, pareto_front,
                           storage_cost)
from faascope.errors import BadInput

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- tables
def test_every_table_has_version_date_source_and_currency():
    tables = available()
    assert {"aws_lambda", "gcp_functions", "aws_s3", "gcp_storage", "aws_dynamodb", "aws_efs"} <= set(tables)
    for name, versions in tables.items():
        for v in versions:
            t = load_table(name, v)
            assert t.name == name and t.version == v
            assert len(t.date) == 10 and t.date[4] == "-"
            assert t.source.startswith("https://")
            assert t.currency == "USD"
            assert t.prices and all(isinstance(x, float) for x in t.prices.values())


def test_table_prices_are_the_briefs():
    lam = load_table("aws_lambda")
    assert lam["gb_second_x86_64"] == 0.0000166667
    assert lam["gb_second_arm64"] == 0.0000133334
    assert lam["requests_per_million"] == 0.20
    assert lam["ephemeral_gb_second"] == 0.0000000309
    assert lam["mb_per_gb"] == 1024 and lam["granularity_ms"] == 1
    gcf = load_table("gcp_functions")
    assert (gcf["vcpu_second"], gcf["gib_second"], gcf["requests_per_million"],
            gcf["granularity_ms"]) == (0.000024, 0.0000025, 0.40, 100)
    s3 = load_table("aws_s3")
    assert (s3["put_per_1000"], s3["get_per_1000"]) == (0.005, 0.0004)


# --------------------------------------------------------------------------- Lambda
def test_lambda_gb_is_memory_mb_over_1024_exactly():
    # AWS bills GB-s with GB = MemorySize(MB) / 1024: 128 MB = 0.125 GB, 1536 MB = 1.5 GB
    assert lambda_gb(128) == 0.125
    assert lambda_gb(1536) == 1.5
    assert lambda_gb(10240) == 10.0
    c = lambda_cost(128, 1.0)
    assert c.memory_gb_s == 0.125
    assert c.compute == 0.125 * 0.0000166667


def test_lambda_awss_own_worked_example():
    # AWS's pricing page example: 3M requests of 120 ms at 1,536 MB -> 540,000 GB-s = $9.00 compute
    # + $0.60 requests. Reading MB as 10^6 bytes/GB as 10^9 (1.536 GB) would give $9.22 instead.
    c = lambda_cost(1536, 0.120)
    assert 3e6 * c.memory_gb_s == pytest.approx(540_000)
    assert round(3e6 * c.compute, 2) == 9.00
    assert round(3e6 * c.request, 2) == 0.60
    assert round(3e6 * c.total, 2) == 9.60


def test_lambda_bills_per_started_millisecond():
    assert lambda_cost(128, 0.001).billed_s == pytest.approx(0.001)
    assert lambda_cost(128, 0.0010001).billed_s == pytest.approx(0.002)
    assert lambda_cost(128, 0.0904).billed_s == pytest.approx(0.091)
    # the REPORT line's Billed Duration is taken as is
    assert lambda_cost(128, 0.0904, billed=True).billed_s == 0.0904


def test_lambda_arm64_and_ephemeral_storage():
    x86 = lambda_cost(1024, 2.0)
    arm = lambda_cost(1024, 2.0, arch="arm64")
    assert x86.compute == 2.0 * 0.0000166667
    assert arm.compute == 2.0 * 0.0000133334
    assert x86.ephemeral == 0.0                               # 512 MB is free
    e = lambda_cost(1024, 2.0, ephemeral_mb=10240)
    assert e.ephemeral == pytest.approx((10240 - 512) / 1024 * 2.0 * 0.0000000309)
    assert e.total == pytest.approx(e.compute + e.request + e.ephemeral)
    with pytest.raises(BadInput):
        lambda_cost(128, 1.0, arch="sparc")


# --------------------------------------------------------------------------- GCF / Cloud Run
def test_gcf_100ms_granularity_and_tier_cpu():
    c = gcf_cost(256, 0.150)
    assert c.billed_s == pytest.approx(0.2)
    assert c.vcpu_s == pytest.approx(0.167 * 0.2)
    assert c.compute == pytest.approx(0.167 * 0.2 * 0.000024 + 0.25 * 0.2 * 0.0000025)
    assert c.request == pytest.approx(0.4e-6)
    assert gcf_cost(128, 0.1).billed_s == pytest.approx(0.1)
    assert gcf_cost(128, 0.1000001).billed_s == pytest.approx(0.2)
    # Cloud Run: the configured CPU
    cr = invocation_cost("cloudrun", 512, 1.0, vcpu=0.5)
    assert cr.compute == pytest.approx(0.5 * 0.000024 + 0.5 * 0.0000025)


def test_storage_requests_and_transfer():
    s3 = storage_cost("s3", puts=1000, gets=10_000, bytes_out_internet=2 * 10**9)
    assert s3["requests"] == pytest.approx(0.005 + 0.004)
    assert s3["transfer"] == pytest.approx(0.18)
    assert storage_cost("gcs", puts=1000, gets=1000)["requests"] == pytest.approx(0.0054)
    assert storage_cost("dynamodb", write_units=10**6, read_units=10**6)["total"] == pytest.approx(0.75)
    assert storage_cost("efs", bytes_read=10**9, bytes_written=10**9)["total"] == pytest.approx(0.09)
    with pytest.raises(BadInput):
        storage_cost("ftp")


# --------------------------------------------------------------------------- overrides
def test_pricing_override_and_version_pin_are_recorded():
    p = Pricing({"versions": {"aws_lambda": "2024-11-01"}, "aws_lambda": {"gb_second_x86_64": 0.00002}})
    assert lambda_cost(1024, 1.0, pricing=p).compute == 0.00002
    prov = p.provenance(["aws_lambda"])[0]
    assert prov["overridden"] == {"gb_second_x86_64": 0.00002}
    assert load_table("aws_lambda")["gb_second_x86_64"] == 0.0000166667  # not mutated


@pytest.mark.parametrize("override,field", [
    ({"azure": {"x": 1}}, "pricing.azure"),
    ({"aws_lambda": {"gb_second": 1}}, "pricing.aws_lambda.gb_second"),
    ({"aws_lambda": {"gb_second_arm64": -1}}, "pricing.aws_lambda.gb_second_arm64"),
    ({"versions": {"aws_lambda": "1999-01-01"}}, "pricing.versions.aws_lambda"),
])
def test_bad_pricing_override_names_the_field(override, field):
    with pytest.raises(BadInput) as e:
        Pricing(override, field_prefix="pricing")
    assert e.value.field == field


# --------------------------------------------------------------------------- plan
THESIS = ROOT / "examples" / "thesis-local-fileio.yaml"


def test_plan_json_has_cost_estimate_and_keeps_the_contract_keys():
    r = CliRunner().invoke(cli, ["plan", str(THESIS), "--format", "json", "--seed", "1"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert {"cells", "excluded", "invocations"} <= set(d)
    c = d["cost_estimate"]
    assert c["currency"] == "USD"
    assert c["total"] > 0
    assert {t["table"] for t in c["tables"]} >= {"aws_lambda", "gcp_functions"}
    assert {r["platform"] for r in c["per_cell"]} == {"aws_lambda", "gcf"}
    assert sum(r["invocations"] for r in c["per_cell"]) == d["invocations"]
    assert c["total"] == pytest.approx(sum(r["total"] for r in c["per_cell"]), rel=1e-6)
    # lambda-profile cells are priced as Lambda, gcf-profile cells as GCF
    for row in c["per_cell"]:
        assert row["platform"] == ("gcf" if row["levels"]["profile"] == "gcf" else "aws_lambda")
    assert c["as_if"]["aws_lambda"]["total"] > 0 and c["as_if"]["gcf"]["total"] > 0


def test_plan_cost_scales_with_replications():
    def total(n):
        r = CliRunner().invoke(cli, ["plan", str(THESIS), "--format", "json", "--replications", str(n)])
        return json.loads(r.output)["cost_estimate"]
    two, twenty = total(2), total(20)
    # cold starts are per function, so the total is a little less than 10x
    assert 9 * two["total"] < twenty["total"] <= 10 * two["total"]


def test_plan_table_prints_the_cost_line():
    r = CliRunner().invoke(cli, ["plan", str(THESIS)])
    assert r.exit_code == 0, r.output
    assert "Estimated cost" in r.output and "aws_lambda@" in r.output


def _spec(tmp_path, settings: str, kind: str = "aws") -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(f"""
name: costs
provider:
  kind: {kind}
  settings: {settings}
function: {{memory_mb: 1024, arch: arm64, ephemeral_mb: 4096}}
workload: {{kind: spin, iterations: 1000000}}
design: {{replications: 1000, seed: 3}}
""")
    return p


def test_aws_plan_prices_arm64_and_ephemeral_and_honours_overrides(tmp_path):
    role = "arn:aws:iam::123456789012:role/faascope"
    base = json.loads(CliRunner().invoke(cli, ["plan", str(_spec(tmp_path, f"{{role: '{role}'}}")),
                                               "--format", "json"]).output)["cost_estimate"]
    cell = base["per_cell"][0]
    b = cell["per_invocation_breakdown"]
    assert cell["platform"] == "aws_lambda"
    assert b["compute"] == pytest.approx(b["memory_gb_s"] * 0.0000133334)
    assert b["ephemeral"] == pytest.approx((4096 - 512) / 1024 * b["billed_s"] * 0.0000000309)
    over = json.loads(CliRunner().invoke(cli, ["plan", str(_spec(
        tmp_path, f"{{role: '{role}', pricing: {{aws_lambda: {{gb_second_arm64: 0.0000266668}}}}}}")),
        "--format", "json"]).output)["cost_estimate"]
    ob = over["per_cell"][0]["per_invocation_breakdown"]
    assert ob["compute"] == pytest.approx(2 * b["compute"])
    assert over["tables"][0]["overridden"] == {"gb_second_arm64": 0.0000266668}


def test_bad_pricing_in_a_spec_exits_2_naming_the_field(tmp_path):
    role = "arn:aws:iam::123456789012:role/faascope"
    r = CliRunner().invoke(cli, ["plan", str(_spec(
        tmp_path, f"{{role: '{role}', pricing: {{aws_lambda: {{gb_secnd: 1}}}}}}"))])
    assert r.exit_code == 2
    assert "provider.settings.pricing" in r.output and "gb_secnd" in r.output


def test_http_plan_cost_unknown_unless_price_as(tmp_path):
    r = CliRunner().invoke(cli, ["plan", str(_spec(tmp_path, "{endpoints: ['http://127.0.0.1:1/']}", "http")),
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["cost_estimate"]["total"] is None
    r = CliRunner().invoke(cli, ["plan", str(_spec(
        tmp_path, "{endpoints: ['http://127.0.0.1:1/'], price_as: gcf}", "http")), "--format", "json"])
    assert json.loads(r.output)["cost_estimate"]["per_cell"][0]["platform"] == "gcf"


# --------------------------------------------------------------------------- report helpers
def _flat():
    rows = []
    for prof, mem, lat, billed in [("lambda", 128, 0.50, 501), ("lambda", 2048, 0.05, 51),
                                   ("gcf", 128, 0.30, None), ("gcf", 2048, 0.04, None)]:
        for i in range(4):
            rows.append({"profile": prof, "memory": mem, "latency_seconds": lat + i * 0.001,
                         "billed_duration_ms": billed, "platform_duration_ms": lat * 1000 + 1,
                         "client_latency_seconds": lat + 0.01, "ok": 1, "warmup": 0})
    rows.append({"profile": "lambda", "memory": 128, "latency_seconds": 9.0, "billed_duration_ms": 9000,
                 "platform_duration_ms": 9000, "client_latency_seconds": 9.0, "ok": 1, "warmup": 1})
    return pd.DataFrame(rows)


def test_invocation_costs_use_billed_duration_for_lambda():
    df = _flat()
    df = df[df["profile"] == "lambda"]
    c = invocation_costs(df)
    assert c["billed_s"].iloc[0] == pytest.approx(0.501)
    assert c["cost"].iloc[0] == pytest.approx(lambda_cost(128, 0.501, billed=True).total)


def test_cost_table_groups_prices_each_platform_and_skips_warmups():
    t = cost_table(_flat(), by=["profile", "memory"])
    assert len(t) == 4 and set(t["n"]) == {4}
    # GCF rows have no REPORT line: their platform duration is used, rounded up to 100 ms
    g = t[(t.profile == "gcf") & (t.memory == 128)].iloc[0]
    assert g["platform"] == "gcf"
    assert g["billed_s_mean"] == pytest.approx(0.4)          # 301..304 ms -> 400 ms
    assert g["cost_per_invocation"] == pytest.approx(gcf_cost(128, 0.301).total)
    assert g["cost_total"] == pytest.approx(4 * g["cost_per_invocation"])
    assert g["cost_per_million"] == pytest.approx(1e6 * g["cost_per_invocation"])
    lam = t[(t.profile == "lambda") & (t.memory == 2048)].iloc[0]
    assert lam["latency_median"] == pytest.approx(0.0515)
    assert lam["billed_s_mean"] == pytest.approx(0.051)     # REPORT's Billed Duration as is
    assert lam["cost_per_invocation"] == pytest.approx(lambda_cost(2048, 0.051).total)
    # a chosen column is used for every row
    t2 = cost_table(_flat(), by=["profile"], duration_col="client_latency_seconds")
    assert set(t2["n"]) == {8}


def test_cost_table_needs_memory_and_a_duration():
    with pytest.raises(BadInput):
        cost_table(_flat().drop(columns=["memory"]))
    with pytest.raises(BadInput):
        cost_table(_flat()[["profile", "memory", "latency_seconds"]])
    one = cost_table(_flat().drop(columns=["memory"]), memory_mb=512, platform="aws")
    assert len(one) == 1 and one["platform"].iloc[0] == "aws_lambda"


def test_pareto_front():
    df = pd.DataFrame({"cfg": list("abcde"), "cost": [1.0, 2.0, 3.0, 2.5, 1.0],
                       "lat": [5.0, 3.0, 1.0, 4.0, 6.0]})
    f = pareto_front(df, "cost", "lat")
    assert list(f["cfg"]) == ["a", "b", "c"]       # d is beaten by b, e by a
    assert list(f["pareto_rank"]) == [0, 1, 2]
    with pytest.raises(BadInput):
        pareto_front(df, "price", "lat")


def test_cost_table_then_pareto_front():
    t = cost_table(_flat(), by=["profile", "memory"], duration_col="platform_duration_ms")
    f = pareto_front(t, "cost_per_invocation", "latency_mean")
    assert len(f) >= 1
    assert f["cost_per_invocation"].is_monotonic_increasing
    assert f["latency_mean"].is_monotonic_decreasing


# --------------------------------------------------------------------------- break-even
def test_break_even_interval_is_gray_and_graefes_five_minutes():
    # Gray & Graefe 1997, "The five-minute rule ten years later": 128 pages/MB of RAM, 64 accesses/s
    # per disk, $2000 per disk, $15 per MB of RAM -> 266 s ("five minutes")
    from faascope.cost.breakeven import break_even_interval

    t = break_even_interval(access_cost=2000 / 64, hold_cost_per_second=15 / 128)
    assert round(t) == 267
    assert break_even_interval(1.0, 0.0) == float("inf")


def test_ram_break_even_with_lambda_prices():
    # 1 GiB read in 0.5 s by a 2048 MB function, no request fee: T = 0.5 s x 2 GB / 1 GB = 1 s,
    # whatever the GB-s price (it cancels); with an S3 GET fee the interval grows by fee/(1 GB x price)
    from faascope.cost.breakeven import ram_break_even_s

    p = load_table("aws_lambda")["gb_second_x86_64"]
    assert ram_break_even_s(1024**3, 0.5, 2048, p) == pytest.approx(1.0)
    fee = 0.0004 / 1000
    assert ram_break_even_s(1024**3, 0.5, 2048, p, fee) == pytest.approx(1.0 + fee / p)
