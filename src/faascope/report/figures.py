"""The report's figures: `Fig` (one figure of a section: its file name, heading, caption and what
it shows) and how figures are saved under figures/.

Two back ends, one description. report.html needs interactive figures that work offline from one
file (hover values, zoom, legend toggles, linear/log buttons): plotly. The publication figures need
PDF with embedded TrueType fonts, SVG with text as text and 200-dpi PNG, drawn on any machine
without a browser: matplotlib (plotly's static export goes through kaleido and a Chrome, and would make
a browser a dependency of `faascope report --formats pdf`). Neither can replace the other, so both
stay. Each figure used to be written twice, a plotly figure and a matplotlib `draw` callback
from the same arrays; the two copies drifted (axis limits, legends, label sizes) and every new
figure cost two implementations. Now a section describes a figure once as a `Plot`
(plot/model.py: panels, marks such as lines, points with error bars, bars, box plots, stairs and
heatmaps, axes with titles, scales and ticks, a legend), and two renderers draw every figure:
plot/render_plotly.py and plot/render_matplotlib.py. What only one medium has stays in its
renderer or is ignored by the other: hover text (a plotly hovertemplate carried by the marks),
linear/log buttons, the printed title (the page shows its own heading). A plotting grammar
library (plotnine, Altair with vl-convert, HoloViews) was not used: it would add a dependency and
a third vocabulary, and none of them gives both a self-contained plotly page and matplotlib
PDFs from one specification. The model holds only the marks the report uses; a new kind is one
dataclass in the model and one drawing function in each renderer's table.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from faascope.errors import Failure
from faascope.report.plot import render_matplotlib, render_plotly
from faascope.report.plot.model import Plot

PNG_DPI = 200


@dataclass
class Fig:
    """A figure of the report.

    name: the file stem under figures/ (what it shows, e.g. ``ecdf_latency_seconds_op=read``);
    title: one line above the figure; plot: what it shows (both renderings are drawn from it);
    caption: how to read it; note: what was summarised or sampled to keep it readable (shown
    next to the figure, in amber); size: the publication figure in inches; height: the
    interactive figure in pixels; key: one of the few figures summary.md shows as images by
    default (the others are drawn only when publication figures are asked for).
    """
    name: str
    title: str
    plot: Plot
    caption: str = ""
    note: str | None = None
    size: tuple[float, float] = (6.4, 4.0)
    height: int = 420
    key: bool = False               # drawn for summary.md even when the publication figures are not asked for
    files: list[str] = field(default_factory=list)
    _plotly: object = field(default=None, init=False, repr=False, compare=False)

    @property
    def plotly(self):
        """The interactive figure, rendered on first use (so the publication figures can be drawn
        in other processes meanwhile, see build.py)."""
        if self._plotly is None:
            self._plotly = render_plotly.to_plotly(self.plot, self.height)
        return self._plotly

    def draw(self, mf) -> None:
        """Draw the publication version onto the matplotlib Figure `mf`."""
        render_matplotlib.draw(self.plot, mf)



def _fork_drawing(chunk, out_dir, formats) -> int:
    """A child process that draws ``chunk``'s figures and exits (status 1 if any failed); its pid."""
    pid = os.fork()
    if pid == 0:  # child: draw its share, exit without running any parent cleanup
        code = 0
        try:
            for f in chunk:
                save_static(f, out_dir, formats)
        except BaseException:  # pragma: no cover - reported by the parent below
            code = 1
        os._exit(code)
    return pid

def slug(text: str) -> str:
    """A file-name-safe spelling that keeps ``=`` (``op=read``) and dots."""
    s = re.sub(r"[^A-Za-z0-9=._+-]+", "-", str(text)).strip("-")
    return s[:150] or "x"


def figure_name(kind: str, response: str, scenario: dict[str, str]) -> str:
    parts = [kind, response] + ([f"{k}={v}" for k, v in scenario.items()] or ["all"])
    return "_".join(slug(p) for p in parts)


def save_static(fig: Fig, out_dir: Path, formats: tuple[str, ...]) -> list[str]:
    """Draw `fig` with matplotlib and save it in every format; returns the file names."""
    paths = [out_dir / f"{fig.name}.{fmt}" for fmt in formats]
    save_plot(fig.plot, fig.size, paths)
    return [p.name for p in paths]


def save_plot(plot: Plot, size: tuple[float, float], paths: list[Path]) -> None:
    """Draw `plot` once with matplotlib (`size` in inches) and save it to each path, in the format
    its suffix names (raster formats at PNG_DPI; pdf and svg without a creation date, so a report built
    twice from the same data gives the same files)."""
    if not paths:
        return
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(render_matplotlib.RC):
        mf = Figure(figsize=size, layout="constrained")
        render_matplotlib.draw(plot, mf)
        for path in paths:
            fmt = Path(path).suffix.lstrip(".").lower() or "png"
            kw = {} if fmt in ("pdf", "svg", "eps", "ps") else {"dpi": PNG_DPI}
            if fmt == "pdf":
                kw["metadata"] = {"Creator": "faascope report", "CreationDate": None}
            elif fmt == "svg":
                kw["metadata"] = {"Date": None}
            mf.savefig(path, format=fmt, **kw)


def start_saving(figs: list[Fig], out_dir: Path, formats: tuple[str, ...], jobs: int = 1):
    """Draw the publication figures in forked worker processes (up to `jobs`) while the caller
    goes on (rendering the interactive figures); returns `finish()`, which waits for them and
    sets each figure's `files`. Without fork, or with one job, it draws them in `finish()`."""

    todo = list(figs)
    if not todo or not formats:
        return lambda: None
    if jobs <= 1 or not hasattr(os, "fork"):
        return lambda: save_all(todo, out_dir, formats, jobs=1)
    # the caller keeps a core busy (rendering the interactive figures): a few figures get one
    # worker fewer than `jobs`, so matplotlib is imported once and the workers do not crowd it
    workers = max(1, jobs - 1) if len(todo) <= 4 else jobs
    chunks = [c for c in (todo[i::workers] for i in range(workers)) if c]
    pids = []
    for chunk in chunks:
        pids.append(_fork_drawing(chunk, out_dir, formats))

    def finish() -> None:
        failed = False
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            failed |= status != 0
        for f in todo:
            f.files = [f"{f.name}.{fmt}" for fmt in formats if (out_dir / f"{f.name}.{fmt}").exists()]
            failed |= len(f.files) != len(formats)
        if failed:
            raise Failure("drawing the publication figures failed in a worker process; rerun with --jobs 1 "
                          "to see the error")
    return finish


def save_all(figs: list[Fig], out_dir: Path, formats: tuple[str, ...], jobs: int = 1) -> None:
    """Save every figure; with jobs > 1, split the work over forked worker processes (matplotlib
    is single-threaded; on a multi-core machine this divides the wall time)."""

    todo = list(figs)
    if jobs <= 1 or len(todo) < 4 or not hasattr(os, "fork"):
        for f in todo:
            f.files = save_static(f, out_dir, formats)
        return
    chunks = [todo[i::jobs] for i in range(jobs)]
    pids = []
    for chunk in chunks[1:]:
        pids.append(_fork_drawing(chunk, out_dir, formats))
    failed = False
    try:
        for f in chunks[0]:
            f.files = save_static(f, out_dir, formats)
    finally:
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            failed |= status != 0
    for chunk in chunks[1:]:
        for f in chunk:
            f.files = [f"{f.name}.{fmt}" for fmt in formats if (out_dir / f"{f.name}.{fmt}").exists()]
            if len(f.files) != len(formats):
                failed = True
    if failed:
        raise Failure("drawing the publication figures failed in a worker process; rerun with --jobs 1 "
                      "to see the error")


# ------------------------------------------------------------------------------------ helpers
def quantile_grid(y: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray]:
    """An ECDF summarised on `points` equally spaced probabilities (exact at every grid point)."""
    p = np.linspace(0.0, 1.0, points)
    return np.quantile(y, p), p


def auto_log(values: np.ndarray, ratio: float = 50.0) -> bool:
    """Log scale when positive data span more than `ratio` between their 1st and 99th percentiles."""
    v = values[np.isfinite(values)]
    if len(v) == 0 or np.any(v <= 0):
        return False
    lo, hi = np.quantile(v, [0.01, 0.99])
    return bool(lo > 0 and hi / lo > ratio)


def bin_edges(values: np.ndarray, bins: int, log: bool) -> np.ndarray:
    lo, hi = float(np.min(values)), float(np.max(values))
    if hi <= lo:
        pad = abs(lo) * 0.01 or 1e-9
        lo, hi = lo - pad, hi + pad
    if log and lo > 0:
        return np.geomspace(lo, hi, bins + 1)
    return np.linspace(lo, hi, bins + 1)
