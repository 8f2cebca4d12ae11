"""The staggering heatmaps: % improvement of each staggered cell over launching all at once, one
panel per metric (rows batch sizes, columns delays). The numbers come from
`faascope.analysis.concurrency.heatmap_panels`; this module only draws them, for the report's
concurrency section and for `faascope stagger grid --figure`."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

#: colours saturate at ±100 %: an improvement cannot exceed 100 %, a slow-down can be any size
#: (the cell's text still gives the value)
COLOR_LIMIT = 100.0
TITLE = "% improvement over launching all at once (batch size × delay)"
COLUMNS = 4                # panels per row


def delay_label(d: Any) -> str:
    """A stagger delay for a tick or a table: 50 ms, 2 s."""
    d = float(d)
    return f"{d * 1e3:g} ms" if d < 1 else f"{d:g} s"


def grid_shape(panels: list[dict]) -> tuple[int, int]:
    """(rows, columns) of the panel grid."""
    cols = min(COLUMNS, len(panels))
    return math.ceil(len(panels) / cols), cols


def static_size(panels: list[dict]) -> tuple[float, float]:
    """The publication figure's size in inches."""
    rows, cols = grid_shape(panels)
    return 3.2 * cols, 2.8 * rows + 0.6


def html_height(panels: list[dict]) -> int:
    """The interactive figure's height in pixels."""
    return 260 * grid_shape(panels)[0] + 80


def draw_heatmaps(mf, panels: list[dict], title: str = "") -> None:
    """Matplotlib: a grid of heatmaps (diverging, 0 = no change, blue = better)."""
    k = len(panels)
    rows, cols = grid_shape(panels)
    axes = np.atleast_1d(mf.subplots(rows, cols, squeeze=False)).ravel()
    lim = COLOR_LIMIT
    im = None
    for ax, p in zip(axes, panels):
        im = ax.imshow(p["z"], cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto", origin="lower")
        ax.grid(False)
        ax.set_xticks(range(len(p["delays"])), [delay_label(d) for d in p["delays"]], fontsize=7)
        ax.set_yticks(range(len(p["batch_sizes"])), [str(b) for b in p["batch_sizes"]], fontsize=7)
        for i in range(p["z"].shape[0]):
            for j in range(p["z"].shape[1]):
                v = p["z"][i, j]
                if np.isfinite(v):
                    ax.text(j, i, f"{v:+.0f}%", ha="center", va="center", fontsize=7,
                            color="white" if abs(v) > lim * 0.6 else "black")
        ax.set_title(p["title"], fontsize=8)
        ax.set_xlabel("delay", fontsize=7)
        ax.set_ylabel("batch size", fontsize=7)
    for ax in axes[k:]:
        ax.set_visible(False)
    if not mf.get_constrained_layout():
        mf.subplots_adjust(hspace=0.65, wspace=0.5, right=0.86)
    if im is not None:
        mf.colorbar(im, ax=list(axes[:k]), shrink=0.8, extend="min",
                    label="% improvement over all at once")
    if title:
        mf.suptitle(title, x=0.01, ha="left", fontsize=10)


def plotly_heatmaps(panels: list[dict], title: str = ""):
    """Plotly: the same grid, hover shows the value."""
    from plotly.subplots import make_subplots
    import plotly.graph_objects as go

    rows, cols = grid_shape(panels)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[p["title"] for p in panels],
                        horizontal_spacing=0.06, vertical_spacing=0.16)
    lim = COLOR_LIMIT
    for i, p in enumerate(panels):
        z = p["z"]
        text = [[("" if not np.isfinite(v) else f"{v:+.0f}%") for v in row] for row in z]
        fig.add_trace(go.Heatmap(
            z=z, x=[delay_label(d) for d in p["delays"]], y=[str(b) for b in p["batch_sizes"]],
            text=text, texttemplate="%{text}", colorscale="RdBu", zmin=-lim, zmax=lim,
            showscale=(i == 0), colorbar=dict(title="% better"),
            hovertemplate="batch %{y}, delay %{x}: %{z:.1f}% better than all at once<extra></extra>"),
            row=i // cols + 1, col=i % cols + 1)
    fig.update_layout(title=title or None, height=260 * rows + 80)
    return fig


def write_heatmaps(panels: list[dict], path: str | Path, title: str = TITLE) -> None:
    """One file: .html (plotly, self-contained) or .png/.pdf/.svg (matplotlib)."""
    path = str(path)
    if path.endswith(".html"):
        plotly_heatmaps(panels, title).write_html(path, include_plotlyjs=True)
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mf = plt.figure(figsize=static_size(panels))
    draw_heatmaps(mf, panels, title)
    mf.savefig(path, dpi=200, bbox_inches="tight")
    plt.close(mf)
