"""The local platform's REPORT line bills a cold start's Init Duration (issue #26, "Billing": a
cold custom-runtime invocation billed 1 ms with Init Duration 5.38 ms). A real cold start of
the real agent on the lambda profile, read as faascope reads any Lambda reply."""
from __future__ import annotations

import pytest

from conftest import needs_binaries

pytestmark = [needs_binaries]

#: the REPORT line prints Duration and Init Duration to 0.01 ms: their printed sum may exceed
#: the exact one by up to 0.01 ms
PRINTED = 0.01


def test_cold_report_bills_init_plus_duration(platform_endpoint):
    from faascope.providers.base import FunctionConfig
    from faascope.providers.local import LocalProvider

    p = LocalProvider(endpoint_url=platform_endpoint)
    try:
        p.deploy("fs-billed-init", FunctionConfig(memory_mb=128, timeout_s=10, profile="lambda"))
        cold = p.invoke("fs-billed-init", {"workload": {"kind": "noop"}})
        warm = p.invoke("fs-billed-init", {"workload": {"kind": "noop"}})
    finally:
        p.teardown("fs-billed-init")
        p.close()
    assert cold.status == "ok" and warm.status == "ok"
    rc, rw = cold.platform["report"], warm.platform["report"]
    assert rc["init_duration_ms"] > 0 and "init_duration_ms" not in rw
    assert rc["billed_duration_ms"] >= rc["init_duration_ms"] + rc["duration_ms"] - PRINTED
    assert rc["billed_duration_ms"] <= rc["init_duration_ms"] + rc["duration_ms"] + 1 + PRINTED
    assert rw["duration_ms"] <= rw["billed_duration_ms"] <= rw["duration_ms"] + 1 + PRINTED
