"""A cold start's init is billed (issue #26, "Billing"): Lambda bills the INIT phase of custom
runtimes (what faascope deploys) and, since 1 August 2025, of every on-demand function; the rule
lives in one key of the price tables (``init_billed``), read by the cost model and followed by
the local platform's REPORT line (agent/platform/billing.go, checked against the table by
TestBillingRuleIsThePriceTables)."""
from __future__ import annotations

import pandas as pd
import pytest

from faascope.cost import Pricing, gcf_cost, invocation_costs, lambda_cost, load_table

LAMBDA_GB_S = 0.0000166667
REQUEST = 0.20 / 1e6


def test_the_rule_is_one_key_of_each_function_price_table():
    assert load_table("aws_lambda")["init_billed"] == 1
    assert load_table("gcp_functions")["init_billed"] == 1


def test_lambda_bills_init_plus_duration_rounded_up_once():
    # the cold start: Init Duration 5.38 ms, Duration 0.62 ms -> 6 ms billed, not 1 ms
    c = lambda_cost(128, 0.00062, init_s=0.00538)
    assert c.billed_s == pytest.approx(0.006, abs=1e-12)
    assert c.total == pytest.approx(0.125 * 0.006 * LAMBDA_GB_S + REQUEST, rel=1e-12)
    # the sum is rounded, not each part: 0.5 + 0.4 ms is one started millisecond
    assert lambda_cost(128, 0.0005, init_s=0.0004).billed_s == pytest.approx(0.001)
    # a Billed Duration (REPORT's) already holds the init: never added twice
    assert lambda_cost(128, 0.006, init_s=0.00538, billed=True).billed_s == 0.006
    # the rule before 1 Aug 2025 for managed ZIP runtimes, by overriding the key
    old = Pricing({"aws_lambda": {"init_billed": 0}})
    assert lambda_cost(128, 0.00062, init_s=0.00538, pricing=old).billed_s == pytest.approx(0.001)


def test_gcf_bills_a_cold_starts_init_before_its_100_ms_rounding():
    assert gcf_cost(256, 0.08, init_s=0.05).billed_s == pytest.approx(0.2)
    assert gcf_cost(256, 0.08).billed_s == pytest.approx(0.1)


def test_cost_table_adds_init_to_platform_durations_only():
    df = pd.DataFrame({
        "config_memory_mb": [128, 128, 128, 128],
        "billed_duration_ms": [None, 7, None, None],
        "report_duration_ms": [0.62, 0.62, None, None],
        "init_duration_ms": [5.38, 5.38, 5.38, None],
        "platform_init_ms": [None, None, None, 5.38],
        "platform_duration_ms": [None, None, None, 0.62],
        "client_latency_seconds": [0.02, 0.02, 0.02, 0.02],
    })
    c = invocation_costs(df, platform="aws_lambda")
    # report duration + Init Duration; Billed Duration as is; client latency (holds the init
    # already) as is; platform duration + the platform's init
    assert c["billed_s"].tolist() == pytest.approx([0.006, 0.007, 0.02, 0.006])
    old = invocation_costs(df, platform="aws_lambda", pricing=Pricing({"aws_lambda": {"init_billed": 0}}))
    assert old["billed_s"].tolist() == pytest.approx([0.001, 0.007, 0.02, 0.001])
