"""The staggering heatmaps: % improvement of each staggered cell over launching all at once, one
panel per metric (rows batch sizes, columns delays). The numbers come from
`faascope.analysis.concurrency.heatmap_panels`; this module describes the figure, for the report's
concurrency section and for `faascope stagger grid --figure`."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from faascope.report.figures import save_plot
from faascope.report.plot.model import Axis, Heatmap, Panel, Plot
from faascope.report.plot.render_plotly import to_plotly

#: colours saturate at ±100 %: an improvement cannot exceed 100 %, a slow-down can be any size
#: (the cell's text still gives the value)
COLOR_LIMIT = 100.0
TITLE = "% improvement over launching all at once (batch size × delay)"
#: the mark of a cell whose interval excludes 0 (the change is significant)
SIGNIFICANT = "*"
SIGNIFICANCE_NOTE = ("* marks a cell whose {conf} interval (Fieller's, over bursts) excludes 0; "
                     "without it the change may be noise. A cell with fewer than {need} bursts a side "
                     "has no interval and no mark.")
COLUMNS = 4                # panels per row


def delay_label(d: Any) -> str:
    """A stagger delay for a tick or a table: 50 ms, 2 s."""
    d = float(d)
    return f"{d * 1e3:g} ms" if d < 1 else f"{d:g} s"


def heatmaps_plot(panels: list[dict], title: str = TITLE) -> Plot:
    """A grid of heatmaps, one per panel of `heatmap_panels` (diverging: 0 = no change, blue =
    better)."""
    out = []
    for p in panels:
        z = np.asarray(p["z"], dtype=float)
        sig = np.asarray(p.get("significant", np.zeros(z.shape, dtype=bool)), dtype=bool)
        text = [["" if not np.isfinite(v) else f"{v:+.0f}%" + (SIGNIFICANT if s else "")
                 for v, s in zip(row, srow)] for row, srow in zip(z, sig)]
        hm = Heatmap(z, [delay_label(d) for d in p["delays"]], [str(b) for b in p["batch_sizes"]], text,
                     -COLOR_LIMIT, COLOR_LIMIT, colorbar="% better than all at once",
                     hover="batch %{y}, delay %{x}: %{z:.1f}% better than all at once (%{text})<extra></extra>")
        out.append(Panel([hm], Axis("delay"), Axis("batch size"), title=p["title"]))
    return Plot(out, title=title, cols=min(COLUMNS, len(panels)))


def static_size(panels: list[dict]) -> tuple[float, float]:
    """The publication figure's size in inches."""
    cols = min(COLUMNS, len(panels))
    return 3.2 * cols, 2.8 * math.ceil(len(panels) / cols) + 0.6


def html_height(panels: list[dict]) -> int:
    """The interactive figure's height in pixels."""
    return 260 * math.ceil(len(panels) / min(COLUMNS, len(panels))) + 80


def write_heatmaps(panels: list[dict], path: str | Path, title: str = TITLE) -> None:
    """One file: .html (interactive, self-contained) or .png/.pdf/.svg (publication)."""
    plot = heatmaps_plot(panels, title)
    if str(path).endswith(".html"):
        to_plotly(plot, html_height(panels), standalone=True).write_html(str(path), include_plotlyjs=True)
        return
    save_plot(plot, static_size(panels), [Path(path)])
