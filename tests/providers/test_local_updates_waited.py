"""The local platform holds every update InProgress for its update window, as AWS holds it for
seconds (agent/platform: Config.UpdateWindow; docs/platform.md "Updates take time"): faascope's
own deploy, reconfigure and forced cold starts wait for it as AWS clients must, so back-to-back
changes of one function are never refused with ResourceConflictException."""
from __future__ import annotations

import time

from conftest import needs_binaries

pytestmark = [needs_binaries]


def test_back_to_back_changes_wait_for_each_update(platform_endpoint):
    from faascope.providers.base import FunctionConfig
    from faascope.providers.local import LocalProvider

    p = LocalProvider(endpoint_url=platform_endpoint)
    name = "fs-updates-waited"
    try:
        p.deploy(name, FunctionConfig(memory_mb=128, timeout_s=10, profile="lambda"))
        t0 = time.monotonic()
        # each would be refused (409, "An update is in progress") were the previous not waited for
        p.force_cold(name)
        p.force_cold(name)
        p.update_configuration(name, FunctionConfig(memory_mb=256, timeout_s=10, profile="lambda"))
        p.deploy(name, FunctionConfig(memory_mb=256, timeout_s=12, profile="lambda"))
        took = time.monotonic() - t0
        conf = p.control.get_function_configuration(FunctionName=name)
        assert conf["LastUpdateStatus"] == "Successful" and conf["MemorySize"] == 256 and conf["Timeout"] == 12
        assert p.invoke(name, {"workload": {"kind": "noop"}}).status == "ok"
    finally:
        p.teardown(name)
        p.close()
    # four updates, each held for the window and polled every wait_delay_s, not every 1 s
    assert took < 4 * 1.0, f"four waited updates took {took:.1f} s"
