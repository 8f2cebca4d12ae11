"""Foreign data priced (issue #25, item 9): the 2024 thesis CSV names its platforms LAMBDA_DD /
GCF_DD and its memory TIER_1 / TIER_5 and has no billed duration, so `faascope report` said "not
priced". A mapping of its columns (faascope.cost.mapping; --price-platform, --price-memory,
--price-duration, --price-map) prices it; the costs are checked against a hand computation from
the published prices (docs/cost.md), and every bad mapping exits 2 naming the option and the
level."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.cost import invocation_costs
from faascope.cost.mapping import parse_duration, price_mapping, pricing_columns
from faascope.errors import BadInput

ROOT = Path(__file__).resolve().parents[2]
THESIS = ROOT / "examples" / "data" / "thesis-2024" / "main_experiment.csv"
PLATFORM = "system_name=LAMBDA_DD:aws_lambda,GCF_DD:gcf"
MEMORY = "resource_tier=TIER_1:128,TIER_5:2048"     # the thesis's tiers (its README)
# the published prices (docs/cost.md; AWS's and Google's pricing pages), typed in here
LAMBDA_GB_S, LAMBDA_REQUEST = 0.0000166667, 0.20 / 1e6
GCF_VCPU_S, GCF_GIB_S, GCF_REQUEST = 0.000024, 0.0000025, 0.40 / 1e6
GCF_VCPU = {128: 0.083, 2048: 1.0}                 # GCF 2nd gen's tier table


@pytest.fixture(scope="module")
def thesis() -> pd.DataFrame:
    return pd.read_csv(THESIS)


def _cell(df, system, tier, op="READ", size=10000):
    return df[(df.system_name == system) & (df.resource_tier == tier) & (df.operation_type == op)
              & (df.file_size_bytes == size)]


def _mapped_costs(rows, **kw):
    pc = pricing_columns(rows, price_mapping(PLATFORM, MEMORY, **kw), platform=None, memory_col=None,
                         timed="latency_seconds", duration_cols=[])
    return pc, invocation_costs(pc.frame, duration_col=pc.duration_col)


@pytest.mark.parametrize("system,tier", [("LAMBDA_DD", "TIER_1"), ("LAMBDA_DD", "TIER_5"),
                                         ("GCF_DD", "TIER_1"), ("GCF_DD", "TIER_5")])
def test_a_thesis_cell_costs_what_the_published_prices_say(thesis, system, tier):
    rows = _cell(thesis, system, tier)
    pc, costs = _mapped_costs(rows)
    assert pc.lower_bound and any("lower bound" in w for w in pc.words)
    mb = 128 if tier == "TIER_1" else 2048
    lat = rows["latency_seconds"].to_numpy(float)
    if system == "LAMBDA_DD":   # 1 ms steps; GB = MB / 1024
        billed = np.ceil(lat * 1000 - 1e-9) / 1000
        hand = billed * (mb / 1024) * LAMBDA_GB_S + LAMBDA_REQUEST
    else:                       # 100 ms steps; vCPU-s of the tier + GiB-s
        billed = np.ceil(lat / 0.1 - 1e-9) * 0.1
        hand = billed * (GCF_VCPU[mb] * GCF_VCPU_S + mb / 1024 * GCF_GIB_S) + GCF_REQUEST
    assert costs["cost"].mean() == pytest.approx(hand.mean(), rel=1e-12)
    assert set(costs["platform"]) == {"aws_lambda" if system == "LAMBDA_DD" else "gcf"}


def test_gcf_tier_1_reads_cost_63_cents_per_million(thesis):
    """Every 10 KB read on GCF TIER_1 took under 100 ms, so each is billed one 100 ms step:
    0.083 vCPU × 0.1 s × $0.000024 + 0.125 GiB × 0.1 s × $0.0000025 + $0.40 / 10⁶."""
    rows = _cell(thesis, "GCF_DD", "TIER_1")
    assert rows["latency_seconds"].max() < 0.1
    _, costs = _mapped_costs(rows)
    assert costs["cost"].to_numpy() == pytest.approx(np.full(len(rows), 6.3045e-7), rel=1e-12)


def test_a_billed_column_is_taken_as_billed(thesis):
    rows = _cell(thesis, "LAMBDA_DD", "TIER_1").assign(billed_ms=250)
    pc, costs = _mapped_costs(rows, duration="billed_ms:billed")
    assert not pc.lower_bound and pc.duration_col == "billed_duration_ms"
    assert costs["cost"].to_numpy() == pytest.approx(0.25 * 0.125 * LAMBDA_GB_S + LAMBDA_REQUEST, rel=1e-12)
    pc, costs = _mapped_costs(rows.assign(run_s=0.0101), duration="run_s")  # unit from the name, rounded up
    assert costs["billed_s"].to_numpy() == pytest.approx(0.011)


def test_parse_errors_name_the_option():
    for kw, option in [({"platform": "system_name=LAMBDA_DD"}, "--price-platform"),
                       ({"memory": "tier=T1:128,T1:256"}, "--price-memory"),
                       ({"duration": "latency"}, "--price-duration"),
                       ({"duration": "latency:hours"}, "--price-duration")]:
        with pytest.raises(BadInput) as e:
            price_mapping(**kw)
        assert e.value.field == option
    assert parse_duration("x_ms").to_seconds == 1e-3 and parse_duration("x:s:billed").billed
    assert price_mapping() is None


# ------------------------------------------------------------------------------------ the report
def _report(tmp_path, *args):
    return CliRunner().invoke(cli, ["report", str(THESIS), "--out", str(tmp_path / "rep"), "--factors",
                                    "system_name,resource_tier", "--scenario",
                                    "operation_type,file_size_bytes,io_size_bytes", "--formats", "none",
                                    "--bootstrap", "200", "-q", *args])


def test_the_report_prices_the_thesis_and_says_it_is_a_lower_bound(tmp_path):
    r = _report(tmp_path)   # without a mapping: not priced, and the message says how to map
    assert r.exit_code == 0, r.output
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "not priced" in md.lower() and "--price-platform" in md
    r = _report(tmp_path, "--price-platform", PLATFORM, "--price-memory", MEMORY)
    assert r.exit_code == 0, r.output
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "not priced" not in md.lower()
    assert "**Cheapest:**" in md and "lower bounds: the timed response priced" in md
    assert "TIER_1 → 128 MB" in md and "GCF_DD → GCF 2nd gen" in md and "**lower bound**" in md
    row = next(line for line in md.splitlines() if line.startswith("| GCF_DD · TIER_1 | GCF 2nd gen |"))
    # $6.3045e-7 per invocation (the hand computation above); every invocation is billed the same
    # 100 ms, so there is no interval to give, and the table says why
    assert "| $0.630, no CI: no spread (all 209 values equal) |" in row


@pytest.mark.parametrize("args,option,named", [
    (["--price-platform", "system_name=LAMBDA_DD:aws_lambda", "--price-memory", MEMORY],
     "--price-platform", "GCF_DD"),
    (["--price-platform", PLATFORM, "--price-memory", "resource_tier=TIER_1:128"], "--price-memory", "TIER_5"),
    (["--price-platform", PLATFORM, "--price-memory", "resource_tier=TIER_1:128,TIER_5:3008"],
     "--price-memory", "TIER_5 → 3008 MB"),
    (["--price-platform", "system_name=LAMBDA_DD:aws_lambda,GCF_DD:azure", "--price-memory", MEMORY],
     "--price-platform", "azure"),
    (["--price-platform", PLATFORM], "--price-memory", "no memory"),
    (["--price-memory", MEMORY], "--price-platform", "which platform"),
    (["--price-platform", PLATFORM, "--price-memory", MEMORY, "--price-duration", "nope:ms"],
     "--price-duration", "nope"),
    (["--price-platform", PLATFORM, "--price-memory", MEMORY, "--price-arch", "arm"], "--price-arch", "arm"),
])
def test_a_bad_mapping_exits_2_naming_the_option_and_the_level(tmp_path, args, option, named):
    r = _report(tmp_path, *args)
    assert r.exit_code == 2, r.output
    assert option in r.output and named in r.output, r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "rep" / "summary.md").exists()   # refused before the analysis


def test_a_mapping_file_and_options_that_override_it(tmp_path):
    f = tmp_path / "prices.yaml"
    f.write_text("platform: {column: system_name, levels: {LAMBDA_DD: aws_lambda, GCF_DD: gcf}}\n"
                 f"memory: {MEMORY}\n")
    from faascope.cost.mapping import price_mapping as pm

    m = pm(file=f)
    assert m.platform.levels == {"LAMBDA_DD": "aws_lambda", "GCF_DD": "gcf"}
    assert m.memory.levels == {"TIER_1": "128", "TIER_5": "2048"}
    assert pm(memory="512", file=f).memory.constant == "512"
    j = tmp_path / "prices.json"
    j.write_text(json.dumps({"platform": PLATFORM, "memory": MEMORY, "duration": "latency_seconds"}))
    assert pm(file=j).duration.column == "latency_seconds"
    r = _report(tmp_path, "--price-map", str(f))
    assert r.exit_code == 0, r.output
    for bad, named in [("cost: 1\n", "cost"), ("[1, 2]\n", "must map"), ("platform: [\n", "YAML")]:
        f.write_text(bad)
        r = _report(tmp_path, "--price-map", str(f))
        assert r.exit_code == 2 and "--price-map" in r.output and named in r.output, r.output
