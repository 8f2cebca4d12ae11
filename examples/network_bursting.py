"""Network bursting: move more than a token bucket's budget and watch the burst, the budget and
the baseline appear in 20 ms samples; then fit the bucket back from the samples.

    python examples/network_bursting.py                        # a small bucket: 16 MiB budget, 16 MiB/s
    python examples/network_bursting.py --shape lambda --bytes 700000000   # Lambda's (Skyrise, 2024; docs/platform.md)
    python examples/network_bursting.py --plot bursting.png

On AWS, run the same `network` workload against a faascope sink on an EC2 host
(`python -m faascope.standins.sink --host 0.0.0.0 --port 9100` there; loopback only is the
default) and fit the returned samples the same way.
"""
from __future__ import annotations

import argparse

from faascope.analysis.bandwidth import fit_token_bucket, parse_net_shape, series_frame

from storage_lab import Lab

MiB = 1 << 20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default=f"size={8 * MiB},refill_ms=500,one_time_burst={8 * MiB},peak={256 * MiB}")
    ap.add_argument("--bytes", type=int, default=48 * MiB)
    ap.add_argument("--connections", type=int, default=2)
    ap.add_argument("--interval-ms", type=int, default=20)
    ap.add_argument("--plot", help="write a figure of rate and cumulative bytes here")
    a = ap.parse_args()
    expected = parse_net_shape(a.shape)
    with Lab() as lab:
        name = lab.function("bursting", tags={"faascope:net-shape": a.shape})
        w = lab.invoke(name, {"kind": "network", "direction": "both", "bytes": a.bytes,
                              "connections": a.connections, "interval_ms": a.interval_ms,
                              "duration_ms": 120000})["workload"]
    dt = a.interval_ms / 1000
    figs = []
    for d in ("in", "out"):
        s = w[d]
        fit = fit_token_bucket(s["samples"], dt)
        e = expected.get(d, {})
        print(f"{d:3s} sampled by the {s['sampled_at']}: {s['bytes'] / MiB:.0f} MiB in {s['elapsed_s']:.2f} s")
        print(f"    fit: {fit.summary()}")
        if e:
            print(f"    configured: budget {e['budget_bytes'] / MiB:.2f} MiB, baseline "
                  f"{e['refill_bytes_per_s'] / MiB:.2f} MiB/s"
                  + (f", peak {e['burst_bytes_per_s'] / MiB:.0f} MiB/s" if e.get("burst_bytes_per_s") else ""))
        figs.append((d, series_frame(s["samples"], dt), fit))
    if a.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np

        from faascope.analysis.bandwidth import _model_cum

        fig, axes = plt.subplots(2, 2, figsize=(11, 6), sharex=True)
        for col, (d, df, fit) in enumerate(figs):
            axes[0, col].step(df.t_s, df.rate_bytes_per_s / MiB, where="post")
            axes[0, col].set_title(f"{d}: rate per {a.interval_ms} ms (MiB/s)")
            axes[1, col].plot(df.t_s, df.cumulative_bytes / MiB, label="measured")
            if fit.knee:
                t = np.concatenate([[0.0], df.t_s.to_numpy()])
                axes[1, col].plot(t, _model_cum(t, fit.start_s, fit.burst_bytes_per_s, fit.budget_bytes,
                                                fit.refill_bytes_per_s) / MiB, "--", label="token-bucket fit")
            axes[1, col].set_xlabel("s")
            axes[1, col].set_ylabel("cumulative MiB")
            axes[1, col].legend()
        fig.tight_layout()
        fig.savefig(a.plot, dpi=120)
        print(f"figure: {a.plot}")


if __name__ == "__main__":
    main()
