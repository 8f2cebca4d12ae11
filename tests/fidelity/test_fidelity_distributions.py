"""Whole-distribution fidelity on the committed reference subsets (Skyrise's request latencies,
lambda-perf's init durations): the subsets represent the published data, their attribution and
licenses are there, and the comparison (nearest-rank quantiles, two-sample KS) tells a resample
of a distribution from a shifted or scaled copy of it."""
from __future__ import annotations

import json
import math
from importlib import resources

import numpy as np
import pytest

from faascope import calibration
from faascope.calibration import reference as ref_mod
from faascope.fidelity import distributions as dist

ALL = [(name, s) for name in ref_mod.FILES for s in ref_mod.sets(name)]
ROOT = resources.files("faascope.calibration").joinpath(ref_mod.DISTRIBUTIONS_DIR)


def test_every_file_names_its_source_and_license_and_the_license_text_is_there():
    readme = ROOT.joinpath("README.md").read_text()
    for name in ref_mod.FILES:
        doc = json.loads(ROOT.joinpath(f"{name}.json").read_text())
        assert doc["repository"] in readme and doc["license"] in readme
        assert len(doc["commit"]) == 40
        text = ROOT.joinpath(doc["license_file"]).read_text()
        assert {"MIT": "MIT License", "Apache-2.0": "Apache License"}[doc["license"]] in text
        assert doc["license_file"] in readme


@pytest.mark.parametrize("name, set_name", ALL)
def test_subset_represents_the_full_published_data(name, set_name):
    # Dvoretzky-Kiefer-Wolfowitz: a sample of n has sup|F_n - F| <= eps with probability
    # 1 - alpha, eps = sqrt(ln(2/alpha) / 2n); so the full data's p50 and p90 lie between the
    # subset's quantiles at q -/+ eps (alpha = 0.001, every set: a real failure, not bad luck)
    r = ref_mod.reference(name, set_name)
    n = len(r.values_s)
    assert 250 <= n <= 500                      # a few hundred values, a few KB
    eps = math.sqrt(math.log(2 / 0.001) / (2 * n))
    for key, q in (("p50", 0.5), ("p90", 0.9)):
        lo = np.quantile(r.values_s, max(q - eps, 0), method="inverted_cdf")
        hi = np.quantile(r.values_s, min(q + eps, 1), method="inverted_cdf")
        assert lo <= r.full_quantiles_s[key] <= hi, (key, lo, r.full_quantiles_s[key], hi)


def test_standins_table_medians_and_p99s_are_these_files_full_data():
    # one data set, two places: the standins-aws figures are the full data's percentiles
    # (Skyrise's own index floor(n*p/100), one rank from the nearest rank kept here)
    t = calibration.load_table("standins-aws")
    for svc in ("s3_standard", "s3_express", "efs", "dynamodb"):
        for op in ("write", "read"):
            r = ref_mod.reference("skyrise-request-latency", f"{svc}_{op}")
            for stat, q in (("median", "p50"), ("p99", "p99")):
                assert t.value(f"{svc}_{op}_{stat}") == pytest.approx(
                    r.full_quantiles_s[q] * 1e3, rel=0.002)


def test_lambda_perf_median_is_the_anchor():
    t = calibration.load_table("published-anchors")
    r = ref_mod.reference("lambda-perf-init", "go_provided_al2023_128")
    # the anchor (49.4 ms, a 2025 median) and these 40 days' median agree within 1 %
    assert r.full_quantiles_s["p50"] * 1e3 == pytest.approx(
        t.value("lambda_perf_init_go_al2023"), rel=0.01)


def test_quantiles_are_nearest_rank():
    v = np.arange(1.0, 101.0)   # 1..100: nearest-rank p50 = 50, p90 = 90, p99 = 99
    assert dist.quantiles(v) == {"p50": 50.0, "p90": 90.0, "p99": 99.0}


@pytest.mark.parametrize("name, set_name", ALL)
def test_a_resample_is_close_and_a_shifted_copy_is_far(name, set_name):
    r = ref_mod.reference(name, set_name)
    rng = np.random.default_rng(7)
    same = dist.compare_sample(rng.choice(r.values_s, size=len(r.values_s)), r)
    assert same.within and same.ks_d < 0.15 and same.ks_p > 0.001
    # scaled ×1.5: every quantile ratio is exactly 1.5 (still within the bar), D is large
    scaled = dist.compare_sample(r.values_s * 1.5, r)
    assert all(x == pytest.approx(1.5) for x in scaled.ratios.values())
    assert scaled.ks_d > 0.25 and scaled.ks_p < 1e-6
    # the median's shift by half its IQR: D sees it
    q25, q75 = np.quantile(r.values_s, [0.25, 0.75])
    shifted = dist.compare_sample(r.values_s + (q75 - q25) / 2, r)
    assert shifted.ks_d > 0.2 and shifted.ks_p < 1e-4


def test_ks_false_alarms_on_resamples_are_at_most_nominal():
    # 200 resamples of one set against the set: the KS test at 0.05 rejects about 5 % or less
    # (a conservative test on ties and a discrete reference; never far above 5 %)
    r = ref_mod.reference("skyrise-request-latency", "dynamodb_read")
    rng = np.random.default_rng(11)
    rejected = sum(dist.compare_sample(rng.choice(r.values_s, 300), r).ks_p < 0.05
                   for _ in range(200))
    assert rejected <= 0.08 * 200


def test_quantiles_only_have_no_distance_and_say_why():
    r = ref_mod.reference("skyrise-request-latency", "s3_standard_read")
    c = dist.compare_quantiles({"p50": r.full_quantiles_s["p50"], "p90": None, "p99": None}, 3, r,
                               why_no_ks="per-invocation percentiles only")
    assert c.ks_d is None and "per-invocation" in c.note and not c.within
    assert c.ratios["p50"] == pytest.approx(1.0, rel=0.05)
    doc = dist.as_json(c)
    assert doc["ks_statistic"] is None and doc["reference"] == "skyrise-request-latency:s3_standard_read"
