"""The network workload through the local platform's token-bucket shaper, and the fit that
recovers the bucket from the samples (docs/storage.md)."""
from __future__ import annotations

import pytest

from faascope.analysis.bandwidth import fit_token_bucket, parse_net_shape

MiB = 1 << 20
# 16 MiB budget (8 MiB bucket + 8 MiB one-time burst), 16 MiB/s baseline, 256 MiB/s line rate.
SHAPE = f"size={8 * MiB},refill_ms=500,one_time_burst={8 * MiB},peak={256 * MiB}"


def test_network_recovers_the_token_bucket(make_function, invoke, stand_ins, shaped):
    if not shaped:
        pytest.skip("sandboxes share the host's network here (no root/namespaces): no shaper to measure")
    sink = stand_ins.servers["sink"]
    name = make_function("net", tags={"faascope:net-shape": SHAPE})
    body = invoke(name, {"kind": "network", "direction": "both", "bytes": 40 * MiB, "connections": 2,
                         "interval_ms": 20, "duration_ms": 20000})
    w = body["workload"]
    expected = parse_net_shape(SHAPE)
    for d in ("in", "out"):
        series = w[d]
        assert series["bytes"] == 40 * MiB
        assert series["sampled_at"] == ("agent" if d == "in" else "sink")
        fit = fit_token_bucket(series["samples"], interval_s=0.02)
        exp = expected[d]
        print(d, fit.summary())
        assert fit.knee, (d, fit)
        assert fit.budget_bytes == pytest.approx(exp["budget_bytes"], rel=0.10), (d, fit.summary())
        assert fit.refill_bytes_per_s == pytest.approx(exp["refill_bytes_per_s"], rel=0.10), (d, fit.summary())
        # The 16 MiB beyond the budget take (40-16)/16 = 1.5 s at the baseline.
        assert 1.3 < series["elapsed_s"] < 2.5
    assert sink.port and w["sink"].endswith(f":{sink.port}")


def test_network_unshaped_function_is_fast(make_function, invoke, stand_ins):
    name = make_function("net-free", tags={"faascope:net-shape": "none"})
    w = invoke(name, {"kind": "network", "direction": "in", "bytes": 32 * MiB, "interval_ms": 10})["workload"]
    assert w["in"]["bytes"] == 32 * MiB and w["out"] is None
    assert w["in"]["throughput_bytes_per_s"] > 64 * MiB


def test_network_bad_sink_is_an_io_error(make_function, invoke):
    name = make_function("net-bad")
    body = invoke(name, {"kind": "network", "sink": "127.0.0.1:1", "bytes": 1024}, ok=False)
    assert body["error"]["type"] == "IOError" and "connect" in body["error"]["message"]
