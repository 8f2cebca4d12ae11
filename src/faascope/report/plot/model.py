"""What a report figure shows, independent of the library that draws it.

A `Plot` is a grid of `Panel`s; a panel has two `Axis`es and a list of marks. The marks are the
few kinds the report uses: `Line` (optionally stepped, optionally with markers), `Points` (with
optional horizontal error bars), `Bars` (horizontal, optional error bars), `Labels`, `Stairs` (a
histogram), `Boxes` (box plots on a categorical axis), `Heatmap` and `RefLine`. A section
describes its figure once with these; `render_plotly.py` and `render_matplotlib.py` draw it.

Conventions both renderers follow:
- colours are hex strings; dashes and marker symbols use plotly's names (``"dash"``,
  ``"diamond"``), which the matplotlib renderer maps to its own;
- sizes (`width`, `size`) are in plotly's pixels; the matplotlib renderer scales them to points
  for a printed figure of a few inches;
- `hover` / `hover_data` are a plotly hovertemplate and its customdata: what the interactive
  figure says on hover. Print has no hover, so matplotlib ignores them;
- categorical axes are numeric positions 0, 1, … with `Axis.ticks` naming them, so both back ends
  place a mark at the same position.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np


@dataclass
class Axis:
    title: str = ""
    log: bool = False
    log_switch: bool = False           # interactive: linear/log buttons for this axis
    range: tuple[float, float] | None = None
    lower: float | None = None         # the lowest value shown when the range is automatic
    ticks: tuple[Sequence[float], Sequence[str]] | None = None   # positions and their labels
    tick_step: float | None = None     # a tick every `tick_step` (linear axes)
    max_ticks: int | None = None
    small_ticks: bool = False          # long tick labels (e.g. Tukey's pairs): a smaller font
    reversed: bool = False             # categories listed top-down
    percent: bool = False              # values are fractions, labelled as percentages
    date: bool = False                 # values are datetime64
    unit: str = ""                     # "s", "B", … : tick labels with SI prefixes (36 µs, 2 ms)

    def __post_init__(self):
        # "latency_seconds (s)" (the sections' axis titles) -> title "latency_seconds", unit "s":
        # the ticks then say the unit with its prefix, so the title need not
        if not self.unit and not self.percent and not self.date and self.ticks is None:
            for u in ("s",):
                if self.title.endswith(f" ({u})"):
                    self.title, self.unit = self.title[: -len(u) - 3], u
                    break


@dataclass
class Line:
    """A line through (x, y); NaN leaves a gap. `step`: a step function (value held until the next x)."""
    x: Any
    y: Any
    name: str = ""
    color: str = "#000000"
    dash: str = "solid"
    width: float = 1.5
    step: bool = False
    marker: str | None = None          # a marker at every point, e.g. "circle"
    marker_size: float = 6
    legend: bool = True
    hover: str | None = None
    hover_data: Any = None


@dataclass
class Points:
    """Markers at (x, y), optionally with horizontal error bars `xerr` = (below, above)."""
    x: Any
    y: Any
    name: str = ""
    color: str | Sequence[str] = "#000000"   # one colour, or one per point
    marker: str = "circle"
    size: float = 6
    open: bool = False                 # hollow markers (the outline in `color`)
    edge: str | None = None            # outline colour of filled markers
    opacity: float = 1.0
    xerr: tuple[Sequence[float], Sequence[float]] | None = None
    err_color: str | None = None       # default: the marker colour
    err_width: float = 1.5
    legend: bool = True
    legend_color: str = "#555555"      # the legend's swatch when points have several colours
    hover: str | None = None
    hover_data: Any = None


@dataclass
class Bars:
    """Horizontal bars of length `x` at positions `y`, starting at `base` (default 0): stacked
    bars and timelines (Gantt bars) give each bar its start. `height` is the bar's thickness in
    category steps."""
    x: Sequence[float]
    y: Sequence[float]
    color: str | Sequence[str] = "#000000"
    name: str = ""
    opacity: float = 1.0
    xerr: tuple[Sequence[float], Sequence[float]] | None = None
    err_color: str = "#333333"
    legend: bool = False
    hover: str | None = None
    hover_data: Any = None
    base: Sequence[float] | None = None
    height: float = 0.8


@dataclass
class Labels:
    """Labels whose left end is at (x, y), vertically centred (e.g. a value beside its bar)."""
    x: Sequence[float]
    y: Sequence[float]
    text: Sequence[str]
    color: str = "#222222"


@dataclass
class Stairs:
    """A histogram: `counts[i]` between `edges[i]` and `edges[i + 1]`, filled below.
    Hover data are (bin start, bin end, count) per bin."""
    edges: Any
    counts: Any
    color: str = "#000000"
    name: str = ""
    hover: str | None = None


@dataclass
class Boxes:
    """Box plots (quartiles, median, whiskers to the furthest value within 1.5 IQR) of `values[i]`
    at category position `positions[i]`, horizontal. Several `Boxes` in one panel are drawn side
    by side at each position. points: "all" (every value as a jittered dot), "outliers" or "none"."""
    positions: Sequence[int]
    values: Sequence[np.ndarray]
    name: str = ""
    color: str = "#000000"
    points: str = "none"
    fill_alpha: float = 0.25


@dataclass
class Heatmap:
    """Values `z[i][j]` at row label `y[i]` (bottom up) and column label `x[j]`, each cell
    labelled with `text[i][j]`, on a diverging colour scale from `zmin` to `zmax`."""
    z: np.ndarray
    x: Sequence[str]
    y: Sequence[str]
    text: Sequence[Sequence[str]]
    zmin: float
    zmax: float
    colorbar: str = ""
    hover: str | None = None


@dataclass
class RefLine:
    """A vertical reference line at x (e.g. zero difference)."""
    x: float
    color: str = "#444444"
    dash: str = "dash"


@dataclass
class Panel:
    marks: list
    x: Axis = field(default_factory=Axis)
    y: Axis = field(default_factory=Axis)
    title: str = ""


@dataclass
class Legend:
    title: str = ""
    where: str = "right"               # "right" of the plot, or "top" (one row above it)


@dataclass
class Plot:
    """A figure: panels in a grid of `cols` columns (filled row by row), a legend (None: no
    legend) and a title. The report page shows its own heading above the interactive figure, so
    the title is drawn in print only (and in a stand-alone HTML file)."""
    panels: list[Panel]
    title: str = ""
    legend: Legend | None = None
    cols: int = 1
    share_x: bool = False              # one x axis for a column of panels (small multiples)

    @property
    def rows(self) -> int:
        return -(-len(self.panels) // self.cols)


def box_stats(y: np.ndarray) -> dict:
    """Quartiles, median, whisker ends (the furthest values within 1.5 IQR of the box) and mean:
    what a box shows, computed once so both renderers draw the same box."""
    q1, med, q3 = np.quantile(y, [0.25, 0.5, 0.75])
    iqr = q3 - q1
    lo = float(y[y >= q1 - 1.5 * iqr].min())
    hi = float(y[y <= q3 + 1.5 * iqr].max())
    return dict(q1=float(q1), median=float(med), q3=float(q3), lowerfence=lo, upperfence=hi, mean=float(np.mean(y)))


def axis_values(panel: Panel, axis: str) -> np.ndarray:
    """Every value the marks of `panel` place on axis "x" or "y" (with error bar ends), to choose
    log ticks and limits from."""
    out = []
    for m in panel.marks:
        if isinstance(m, (Line, Points, Bars, Labels)):
            v = np.asarray(m.x if axis == "x" else m.y)
            if v.dtype.kind not in "fiu":
                continue
            if axis == "x" and isinstance(m, Bars) and m.base is not None:
                v = v + np.asarray(m.base, dtype=float)   # where the bar ends
            out.append(v.astype(float).ravel())
            if axis == "x" and getattr(m, "xerr", None) is not None:
                lo, hi = (np.asarray(e, dtype=float) for e in m.xerr)
                out += [np.asarray(m.x, dtype=float) - lo, np.asarray(m.x, dtype=float) + hi]
        elif isinstance(m, Stairs) and axis == "x":
            out.append(np.asarray(m.edges, dtype=float))
        elif isinstance(m, Boxes) and axis == "x":
            out += [np.asarray(v, dtype=float) for v in m.values]
    return np.concatenate(out) if out else np.array([])
