"""Cold vs warm starts: per cell, the latency of invocations that started a fresh instance and of
those that reused one (needs a `cold` column)."""
from __future__ import annotations

import numpy as np

from faascope.analysis import render
from faascope.report.figures import Fig, log_axis, plotly_layout
from faascope.report.items import Block, Text, table
from faascope.report.scenarios import Scenario
from faascope.report.sections.context import Ctx
from faascope.report.sections.helpers import figure_title

STRIP_MAX = 300            # per cell and start state: draw the individual values up to this many


def _alpha(hex_color: str, a: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{a})"


def _rgba(hex_color: str, a: float) -> tuple:
    h = hex_color.lstrip("#")
    return tuple(int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)) + (a,)


def _box_stats(y: np.ndarray) -> dict:
    q1, med, q3 = np.quantile(y, [0.25, 0.5, 0.75])
    iqr = q3 - q1
    lo = float(y[y >= q1 - 1.5 * iqr].min())
    hi = float(y[y <= q3 + 1.5 * iqr].max())
    return dict(q1=float(q1), median=float(med), q3=float(q3), lowerfence=lo, upperfence=hi, mean=float(np.mean(y)))


def coldwarm_section(ctx: Ctx, sc: Scenario) -> Block | None:
    col = ctx.data.cold_col
    if col is None:
        return None
    import plotly.graph_objects as go

    b = Block("coldwarm", "Cold vs warm starts", level=3)
    flags = sc.rows[col].to_numpy(dtype=object)
    parts = {}  # (cell index, state) -> values
    trows = []
    for i, c in enumerate(sc.cells):
        f = flags[c.pos]
        cold = c.y[f == True]  # noqa: E712 - pandas' nullable booleans
        warm = c.y[f == False]  # noqa: E712
        parts[(i, "cold")] = cold
        parts[(i, "warm")] = warm
        med_c = float(np.median(cold)) if len(cold) else None
        med_w = float(np.median(warm)) if len(warm) else None
        ratio = f"{med_c / med_w:.3g}×" if med_c and med_w else "–"
        trows.append([c.label, f"{len(cold):,}", f"{len(warm):,}", render.g4(med_c), render.g4(med_w), ratio])
    n_cold = sum(len(v) for (i, s), v in parts.items() if s == "cold")
    n_warm = sum(len(v) for (i, s), v in parts.items() if s == "warm")
    b.items.append(table(f"Cold and warm invocations per cell (medians in {ctx.unit or 'response units'})",
                         [sc.legend_title or "cell", "cold", "warm", "median cold", "median warm", "cold / warm"], trows))
    if n_cold == 0 or n_warm == 0:
        state = "warm" if n_cold == 0 else "cold"
        b.items.append(Text(f"All {n_cold + n_warm:,} invocations in this scenario were {state} starts, so there is "
                            "nothing to compare.", "note"))
        return b
    labels = [c.label for c in sc.cells]
    fig = go.Figure()
    colors = {"cold": "#0072B2", "warm": "#E69F00"}
    raw = sum(len(v) for v in parts.values()) <= 20_000
    for state in ("cold", "warm"):
        idx = [i for i in range(len(labels)) if len(parts[(i, state)])]
        if not idx:
            continue
        n_state = sum(len(parts[(i, state)]) for i in idx)
        common = dict(orientation="h", name=f"{state} (n={n_state:,})", marker_color=colors[state],
                      line=dict(width=1.3), fillcolor=_alpha(colors[state], 0.25))
        if raw:  # few rows: plotly computes the boxes and can show every point
            xs = np.concatenate([parts[(i, state)] for i in idx])
            ys = np.concatenate([[labels[i]] * len(parts[(i, state)]) for i in idx])
            few = max(len(parts[(i, state)]) for i in idx) <= STRIP_MAX
            fig.add_trace(go.Box(x=xs, y=ys, boxpoints="all" if few else "outliers", jitter=0.5, pointpos=0,
                                 marker=dict(size=5, opacity=0.8), **common))
        else:
            st = [_box_stats(parts[(i, state)]) for i in idx]
            fig.add_trace(go.Box(y=[labels[i] for i in idx], q1=[x["q1"] for x in st],
                                 median=[x["median"] for x in st], q3=[x["q3"] for x in st],
                                 lowerfence=[x["lowerfence"] for x in st], upperfence=[x["upperfence"] for x in st],
                                 mean=[x["mean"] for x in st], boxpoints=False, **common))
    log = ctx.log_for(sc)[0]
    height = max(260, 110 + 56 * len(labels))
    plotly_layout(fig, height=height, xtitle=ctx.axis(), legend_title="start")
    fig.update_layout(boxmode="group")
    fig.update_yaxes(autorange="reversed", automargin=True, title_text=sc.legend_title,
                     categoryorder="array", categoryarray=labels)
    log_axis(fig, "x", log, np.concatenate(list(parts.values())))

    def draw(mf):
        ax = mf.subplots()
        rng = np.random.default_rng(0)
        for i in range(len(labels)):
            for state in ("cold", "warm"):
                v = parts[(i, state)]
                if not len(v):
                    continue
                p = i + (-0.19 if state == "cold" else 0.19)
                s_ = _box_stats(v)
                bp = ax.bxp([{"med": s_["median"], "q1": s_["q1"], "q3": s_["q3"], "whislo": s_["lowerfence"],
                              "whishi": s_["upperfence"], "label": ""}], positions=[p], widths=0.32,
                            orientation="horizontal", patch_artist=True, showfliers=False, manage_ticks=False,
                            medianprops=dict(color="#222", lw=1.2))
                for patch in bp["boxes"]:
                    patch.set_facecolor(_rgba(colors[state], 0.3))
                    patch.set_edgecolor(colors[state])
                if len(v) <= STRIP_MAX:
                    ax.scatter(v, p + rng.uniform(-0.1, 0.1, len(v)), s=8, color=colors[state], alpha=0.8, lw=0,
                               zorder=3)
        ax.set_yticks(range(len(labels)), labels)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        if log:
            ax.set_xscale("log")
        ax.set_xlabel(ctx.axis())
        ax.set_ylabel(sc.legend_title)
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(facecolor=_rgba(colors["cold"], 0.3), edgecolor=colors["cold"],
                                 label=f"cold (n={n_cold:,})"),
                           Patch(facecolor=_rgba(colors["warm"], 0.3), edgecolor=colors["warm"],
                                 label=f"warm (n={n_warm:,})")],
                  title="start", loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
        figure_title(mf, f"Cold vs warm {ctx.response}: {sc.title(ctx.data)}")

    b.items.insert(0, Fig(sc.name("cold_warm", ctx.response), f"{ctx.response}: cold vs warm starts", fig, draw,
                          caption=("Boxes: quartiles and median per cell, split by whether the invocation was the "
                                   "first in a fresh instance (cold, as the agent reported it) or reused one (warm); "
                                   "whiskers reach the most extreme values within 1.5 IQR"
                                   + ("; dots are the individual invocations." if raw else "; outliers not drawn.")),
                          note=None if raw else (f"Summarised: boxes computed from all {n_cold + n_warm:,} "
                                                 "invocations; individual points not drawn."),
                          size=(7.8, min(1.3 + 0.55 * len(labels), 10)), height=height))
    return b
