"""The modelled front end (issue #26, "Warm vs cold"): the calibrated profiles add the cloud's
request path (STeLLAR's warm median, 18 ms: ``front_end_delay``) to every invocation's client
latency, outside the function's Duration and Billed Duration, less the platform's own path on
this machine (agent/platform/frontend.go), and say so per invocation and in the platform's
status. Real platforms, real agent: one with the front end (the default), one
started with ``--no-front-end``."""
from __future__ import annotations

import math
import statistics

import pytest

from faascope import calibration
from faascope.providers import local_platform

from go_binaries import skip_unless_built

pytestmark = [skip_unless_built()]

COLD, WARM = 5, 10


def _anchor(key: str) -> float:
    return calibration.load_table("published-anchors").value(key)


def _measure(tmp_path) -> tuple[dict, dict]:
    """Client latencies (s) of COLD cold and WARM warm 128 MB noops on the lambda profile, with
    the replies' front end and REPORT fields, and the platform's status: on a platform with the
    front end and on one without, both running at once and invoked in turn, so that a slow
    stretch of this machine (minutes of x1.35-2, measured 2026-11-28) lands on both sides of
    the comparison, not on one (it failed a clean-clone group run once when they ran apart)."""
    from faascope.providers.base import FunctionConfig
    from faascope.providers.local import LocalProvider

    sides = {"on": True, "off": False}
    started, providers = {}, {}
    replies = {k: {"cold": [], "warm": [], "in_order": []} for k in sides}
    try:
        for k, front_end in sides.items():
            started[k] = local_platform.start(profile="lambda", data_dir=tmp_path / k, port=0,
                                              keep_alive="30s", front_end=front_end)
            providers[k] = LocalProvider(endpoint_url=started[k]["endpoint"])
            providers[k].deploy("fs-front-end", FunctionConfig(memory_mb=128, timeout_s=10,
                                                               profile="lambda"))
        health = {k: local_platform.health(started[k]["endpoint"]) for k in sides}
        for _ in range(COLD):
            for k, p in providers.items():
                p.force_cold("fs-front-end")
                replies[k]["cold"].append(p.invoke("fs-front-end", {"workload": {"kind": "noop"}}))
                replies[k]["in_order"].append(replies[k]["cold"][-1])
            for _ in range(WARM // COLD + 1):
                for k, p in providers.items():
                    replies[k]["warm"].append(p.invoke("fs-front-end",
                                                       {"workload": {"kind": "noop"}}))
                    replies[k]["in_order"].append(replies[k]["warm"][-1])
    finally:
        for p in providers.values():
            p.close()
        for k in started:
            local_platform.stop(tmp_path / k)
    out = []
    for k in sides:
        cold, warm = replies[k]["cold"], replies[k]["warm"]
        res = cold + warm
        assert all(r.status == "ok" for r in res)
        assert [r.platform["cold"] for r in cold] == ["true"] * COLD
        assert all(r.platform["cold"] == "false" for r in warm)
        out.append({"cold": [r.client_latency_s for r in cold],
                    "warm": [r.client_latency_s for r in warm],
                    "front_end_ms": [float(r.platform.get("front_end_ms", "nan")) for r in res],
                    "paths_ms": [_platform_path_ms(r.platform) for r in res],
                    # (front end, path) of each reply in the order the platform served them
                    "in_order": [(float(r.platform["front_end_ms"]), _platform_path_ms(r.platform))
                                 for r in replies[k]["in_order"]],
                    "reports": [r.platform["report"] for r in res], "health": health[k]})
    return out[0], out[1]


def _platform_path_ms(platform: dict) -> float:
    """The invocation's own path through the platform (ms): its steps less the function's run
    and the cold start."""
    steps = dict(kv.split("=") for kv in platform["invoke_steps"].split(","))
    steps.pop("cold_start", None)
    return sum(float(v) for v in steps.values()) - float(platform["duration_ms"])


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    return _measure(tmp_path_factory.mktemp("front-end"))


def test_every_warm_reply_pays_the_front_end_outside_its_duration(both):
    on, off = both
    front = calibration.load_table("platform-lambda").value("front_end_delay")
    assert front == _anchor("stellar_warm_median") == 18.0  # one figure, one source
    assert all(0 <= f < front for f in on["front_end_ms"]) and set(off["front_end_ms"]) == {0.0}
    # every client latency, warm ones included, holds the front end applied to it ...
    lats = on["cold"] + on["warm"]
    assert all(lat * 1000 >= f for lat, f in zip(lats, on["front_end_ms"]))
    # ... on top of the function's Init Duration and Duration (REPORT), never inside them: what
    # the client waited is at least all three (it also waits the platform's set-up and loopback)
    for r, lat, f in zip(on["reports"], lats, on["front_end_ms"]):
        assert lat * 1000 >= f + r["duration_ms"] + r.get("init_duration_ms", 0.0) - 0.01, (r, lat)
        assert r["billed_duration_ms"] <= r["duration_ms"] + r.get("init_duration_ms", 0.0) + 1.01
    # the front end and the platform's own path make the modelled figure once, not the modelled
    # figure plus this machine's path: each reply's delay is 18 ms less the median of the paths
    # so far (each invocation here ran alone), never below nothing. The platform measures its
    # path a moment after its last step ends (never before), so the delay is at most that
    # figure; the headers' steps are rounded to the µs.
    paths = [p for _, p in on["in_order"]]
    for i, (f, _) in enumerate(on["in_order"]):
        want = max(0.0, front - statistics.median(paths[:i + 1]))
        assert want - 2.0 <= f <= want + 0.01, (i, f, want, paths[:i + 1])
    # without the front end, the platform's path is there all the same
    assert min(off["paths_ms"]) > 0
    # the platform's status says what was applied, and who turned it off
    assert on["health"]["calibration"]["lambda"]["front_end_ms"] == front
    assert on["health"]["calibration"]["gcf"]["front_end_ms"] == front
    assert off["health"]["calibration"]["lambda"]["front_end_ms"] == 0
    assert off["health"]["calibration"]["lambda"]["overridden"] == {"front_end_delay": "--no-front-end"}


def test_cold_warm_ratio_moves_toward_stellars(both):
    """The modelled parts are constants and this machine's load only adds time, so each side's
    fastest invocation is its modelled path plus the least of the machine's: the ratio of the
    fastest cold over the fastest warm: here on 21.2, off 137 (warm 21.8 against 3.2 ms). The
    ratio of medians flipped on a loaded CI machine (on 19.4, off 24.1: warm medians off of
    about 18 ms, as long as the front end itself)."""
    on, off = both
    published = _anchor("stellar_cold_median_aws") / _anchor("stellar_warm_median")  # 448 / 18
    ratio = {k: min(m["cold"]) / min(m["warm"]) for k, m in (("on", on), ("off", off))}
    dist = {k: abs(math.log(r / published)) for k, r in ratio.items()}
    assert dist["on"] < dist["off"], (ratio, published)
    # with the front end, within x2 of STeLLAR's (its cold part is fitted, its warm part is 18 ms
    # plus this machine's loopback path)
    assert dist["on"] < math.log(2), (ratio, published)
