"""The `network` section (network workloads): throughput over time per cell (the receiver's
bytes per interval as a rate) with the fitted token bucket drawn over it, and the bucket's
burst rate, budget and refill rate with their intervals, per state of the bucket as the
invocations began (fresh, partial, drained). Statistics: `faascope.analysis.network`."""
from __future__ import annotations

from faascope.analysis.network import PARAMETERS, cell_series, fit_cells, fitted_rate, load_samples
from faascope.analysis.per_cell import cell_columns, has_values
from faascope.report.figures import Fig
from faascope.report.items import Block, Text, table
from faascope.report.plot.model import Axis, Legend, Line, Panel, Plot
from faascope.report.sections.context import Ctx
from faascope.store.bucket_state import DRAINED_FRACTION
from faascope.report.sections.workload_cells import MiB, all_factors, cell_styles, key_of, measured_rows

DIRECTIONS = {"in": "received by the function (in)", "out": "sent by the function (out, sink-sampled)"}


def _size(v) -> str:
    return "–" if v is None else f"{v / MiB:.4g} MiB"


def _rate(v) -> str:
    return "–" if v is None else f"{v / MiB:.4g} MiB/s"


def _param(row, p: str) -> str:
    fmt = _size if p == "budget_bytes" else _rate
    v, ci = row[p], row[f"{p}_ci"]
    out = fmt(v)
    if v is not None and ci is not None:
        out += f" [{fmt(ci[0])}, {fmt(ci[1])}]"
    spread = row[f"{p}_per_invocation"]
    if spread is not None:
        out += f"; per invocation {fmt(spread[0])}–{fmt(spread[1])}"
    return out


#: how a state's lines are drawn (the fitted bucket is dashed in every state)
STATE_WIDTH = {"fresh": 1.6, "partial": 1.0, "drained": 0.7, "unknown": 1.2}


def _state(row) -> str:
    """The bucket-state column: the state, with the starting budgets where recorded."""
    st, b = row["bucket_state"], row.get("bucket_bytes")
    if b is None or (isinstance(b, float) and b != b):
        return st
    lo, hi = b
    return f"{st} ({_size(lo)})" if lo == hi else f"{st} ({_size(lo)}–{_size(hi)})"


def network_section(ctx: Ctx) -> Block | None:
    df = measured_rows(ctx)
    src = ctx.data.source
    if src.kind != "store" or not (has_values(df, "net_in_bytes") or has_values(df, "net_out_bytes")):
        return None
    samples = load_samples(src.path)
    if samples.empty:
        return None
    factors = [f for f in all_factors(ctx) if f in df.columns]
    keys = cell_columns(df, factors)
    series = cell_series(samples, df, factors)
    if series.empty:
        return None
    fits = fit_cells(series, samples, df, factors)
    cells = cell_styles(ctx, df)
    series_key = [key_of(r, keys) for _, r in series.iterrows()]
    fit_key = [key_of(r, keys) for _, r in fits.iterrows()]
    panels = []
    for direction, title in DIRECTIONS.items():
        marks = []
        for c in cells:
            mine = series[(series["direction"] == direction).to_numpy() & [k == c.key for k in series_key]]
            for state, s in mine.groupby("bucket_state", sort=False):
                name = c.label if mine["bucket_state"].nunique() == 1 else f"{c.label}, {state} bucket"
                # each value holds over its interval: a step from the interval's start, closed at the last end
                rate = (s["rate_bytes_per_s"] / MiB).tolist()
                x = (s["t_s"] - s["interval_s"]).tolist() + [float(s["t_s"].iloc[-1])]
                marks.append(Line(x, rate + rate[-1:], name=name, color=c.color,
                                  width=STATE_WIDTH.get(state, 1.2), step=True,
                                  hover=f"{name}: %{{y:.4g}} MiB/s at %{{x:.3f}} s<extra></extra>"))
                f = fits[(fits["direction"] == direction).to_numpy() & [k == c.key for k in fit_key]
                         & (fits["bucket_state"] == state).to_numpy()]
                fit = f["fit"].iloc[0] if len(f) else None
                if fit is not None:
                    x, y = fitted_rate(fit, float(s["t_s"].max()))
                    marks.append(Line(x, [v / MiB for v in y], name=f"{name} (fit)", color=c.color, dash="dash",
                                      width=2, legend=False, hover=f"{name} fitted: %{{y:.4g}} MiB/s<extra></extra>"))
        if marks:
            panels.append(Panel(marks, Axis("s from the transfer's start"), Axis("throughput (MiB/s)"),
                                title=title))
    if not panels:
        return None
    b = Block("network", "Network throughput over time and the token bucket")
    b.items.append(Fig("network_throughput_over_time", "Throughput over time per cell, with the fitted token bucket",
                       Plot(panels, title="Network throughput over time", legend=Legend("cell"), cols=1),
                       caption="Solid: the mean over the cell's invocations of the bytes received in each "
                               "interval, as a rate. Dashed: the rate the fitted token bucket allows (burst rate "
                               "until the budget is spent, then the refill rate).",
                       size=(7.0, 3.0 * len(panels) + 0.5), height=340 * len(panels) + 60))
    label = {c.key: c.label for c in cells}
    rows = []
    for _, r in fits.iterrows():
        k = key_of(r, keys)
        if r["fit"] is None:
            rows.append([label.get(k, str(k)), r["direction"], _state(r), r["invocations"],
                         f"not fitted: {r['reason']}"] + [_param(r, p) for p, _ in PARAMETERS])
            continue
        fit = r["fit"]
        rows.append([label.get(k, str(k)), r["direction"], _state(r), r["invocations"],
                     "burst then refill" if fit.knee else "steady (no burst visible)"]
                    + [_param(r, p) for p, _ in PARAMETERS])
    b.items.append(table("Fitted token bucket per cell (estimate [95% bootstrap CI])",
                         ["cell", "direction", "bucket at start", "invocations", "shape"] + [name for _, name in PARAMETERS], rows,
                         ["Fitted to the cell's mean series (faascope.analysis.bandwidth.fit_token_bucket): "
                          "cumulative bytes min(P·(t−t0), B + r·(t−t0)); intervals from a block bootstrap of the "
                          "residuals within the series; 'per invocation' is the range of the same fit to each "
                          "invocation's series. 'bucket at start': the state of the sandbox's bucket as the invocations "
                          "began (fresh: full, one-time burst included; drained: under "
                          f"{DRAINED_FRACTION:.0%} left; partial: between; "
                          "recorded by the local platform, faascope.store.bucket_state; a cold start without a record "
                          "counts as fresh, a warm one as unknown). Each state is fitted apart: a fit to invocations "
                          "that started from different budgets describes no bucket."]))
    if (fits["fit"].notna() & fits["fit"].map(lambda f: f is not None and not f.knee)).all():
        b.items.append(Text("No burst is visible in any cell: the transfers ran at a steady rate (an unshaped "
                            "network, or a budget larger than the transfer).", "note"))
    return b
