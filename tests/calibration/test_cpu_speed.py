"""The gcf profile's calibrated CPU speed (issue #26, "The thesis, writes"): GCF's vCPU did the
thesis's CPU-bound dd calls at 0.889 of Lambda's speed, so a gcf sandbox's CPU quota is its
tier's vCPU x cpu_speed (the agent reads the quota from its own cgroup)."""
from __future__ import annotations

import os

import pytest

from faascope import calibration
from faascope.providers import local_platform

from go_binaries import skip_unless_built

pytestmark = [skip_unless_built(),
              pytest.mark.skipif(os.geteuid() != 0, reason="CPU quotas need the namespaces isolation (root)")]


def test_gcf_sandbox_quota_is_its_vcpu_times_the_calibrated_speed(tmp_path):
    from faascope.providers.base import FunctionConfig
    from faascope.providers.local import LocalProvider

    speed = calibration.load_table("platform-gcf").value("cpu_speed")
    data = tmp_path / "p"
    state = local_platform.start(profile="lambda", data_dir=data, port=0, keep_alive="10s")
    try:
        p = LocalProvider(endpoint_url=state["endpoint"])
        quotas = {}
        try:
            for profile in ("gcf", "lambda"):
                name = f"fs-cpu-{profile}"
                p.deploy(name, FunctionConfig(memory_mb=2048, timeout_s=10, profile=profile))
                r = p.invoke(name, {"workload": {"kind": "noop"}})
                assert r.status == "ok", r
                quotas[profile] = r.response["instance"]["cpu_quota"]
                p.teardown(name)
        finally:
            p.close()
    finally:
        local_platform.stop(data)
    if quotas["gcf"] is None:
        pytest.skip("the agent could not read its CPU quota here")
    assert quotas["gcf"] == pytest.approx(1.0 * speed, abs=1e-3)       # GCF's 2 GiB tier: 1 vCPU
    assert quotas["lambda"] == pytest.approx(2048 / 1769, abs=1e-3)    # the reference, unscaled
