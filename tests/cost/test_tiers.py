"""Cross-platform resource tiers: the 2024 thesis's table must come
out exactly."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.tiers import GCF_TIERS, derive_tiers, gcf_vcpu, lambda_vcpu, round3

STUDY_MEMORY = [128, 256, 512, 1024, 2048]
# the thesis's tiers: Lambda vCPU = MB/1769 (0.072 … 1.158), GCF 0.083/0.167/0.333/0.583/1
THESIS_LAMBDA_ENDS = (0.072, 1.158)
THESIS_GCF = [0.083, 0.167, 0.333, 0.583, 1.0]


def test_study_tier_table_reproduced_to_the_digits_the_brief_gives():
    tiers = derive_tiers(["aws", "gcf"], STUDY_MEMORY)
    assert [t.memory_mb for t in tiers] == STUDY_MEMORY
    aws = [round3(t.cells[0].vcpu) for t in tiers]
    gcf = [t.cells[1].vcpu for t in tiers]
    assert (aws[0], aws[-1]) == THESIS_LAMBDA_ENDS
    assert aws == [0.072, 0.145, 0.289, 0.579, 1.158]
    assert gcf == THESIS_GCF
    # memory is identical on both platforms in every tier
    assert all(c.memory_mb == t.memory_mb for t in tiers for c in t.cells)
    assert all(t.complete for t in tiers)


def test_cpu_difference_per_tier():
    tiers = derive_tiers(["aws", "gcf"], STUDY_MEMORY)
    diffs = [round3(t.cpu_diff["gcf"]) for t in tiers]
    assert diffs == [0.011, 0.022, 0.044, 0.004, -0.158]
    assert tiers[-1].cpu_diff_pct["gcf"] == pytest.approx(100 * (1 - 2048 / 1769) / (2048 / 1769))


def test_lambda_is_exactly_memory_over_1769():
    for mb in (128, 1769, 3008, 10240):
        assert lambda_vcpu(mb) == mb / 1769
    assert lambda_vcpu(1769) == 1.0


def test_gcf_tier_lookup_rounds_up_to_the_tier():
    assert gcf_vcpu(128) == 0.083
    assert gcf_vcpu(300) == 0.333
    assert [gcf_vcpu(m) for m in GCF_TIERS] == list(GCF_TIERS.values())


def test_cloud_run_matches_the_reference_cpu_within_its_rules():
    tiers = derive_tiers(["aws", "cloudrun"], [128, 256, 1024, 2048, 4096])
    cr = {t.memory_mb: t.cells[1].vcpu for t in tiers}
    assert cr[128] == 0.08        # 0.072 is below Cloud Run's minimum of 0.08
    assert cr[256] == 0.145       # 0.001 steps: 256/1769 = 0.1447
    assert cr[1024] == 0.579
    assert cr[2048] == 1.0        # above 1 GiB only whole CPUs: 1 is closest to 1.158
    assert cr[4096] == 2.0


def test_memory_a_platform_cannot_run_leaves_the_tier_incomplete_with_a_reason():
    (t,) = derive_tiers(["aws", "gcf"], [3008])
    assert not t.complete
    assert "no 3008 MB tier" in t.cells[1].error
    assert t.cpu_diff["gcf"] is None


def test_tiers_command_prints_the_study_table():
    r = CliRunner().invoke(cli, ["tiers", "--platforms", "aws,gcf", "--memory",
                                 "128,256,512,1024,2048"])
    assert r.exit_code == 0, r.output
    for s in ("0.072", "0.145", "0.289", "0.579", "1.158", "0.083", "0.167", "0.333", "0.583",
              "1.000", "+0.011", "-0.158"):
        assert s in r.output


def test_tiers_command_json():
    r = CliRunner().invoke(cli, ["tiers", "--platforms", "lambda,gcf", "--memory", "128,2GiB",
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["reference"] == "aws"
    assert d["tiers"][0]["vcpu"] == {"aws": 0.072, "gcf": 0.083}
    assert d["tiers"][1]["memory_mb"] == 2048
    assert d["tiers"][1]["cpu_diff"]["gcf"] == -0.158


@pytest.mark.parametrize("args,field", [
    (["--platforms", "aws,azure"], "--platforms"),
    (["--memory", "128MB"], "--memory"),
    (["--platforms", "aws,lambda"], "--platforms"),
])
def test_tiers_command_bad_input_exits_2_naming_the_option(args, field):
    r = CliRunner().invoke(cli, ["tiers", *args])
    assert r.exit_code == 2
    assert field in r.output
