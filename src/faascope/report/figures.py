"""One figure, two renderings: an interactive plotly figure for report.html and a matplotlib
drawing for figures/ (PNG at 200 dpi plus PDF/SVG), from the same prepared data.

Both renderings use the same colours (one per level of the compared factor, Okabe-Ito, safe for
colour-blind readers) and line styles (one per combination of the other factors), so a cell looks
the same everywhere in a report.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

# Okabe & Ito's colour-blind-safe palette (black last)
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
PLOTLY_DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
MPL_DASHES = ["-", "--", ":", "-.", (0, (8, 3)), (0, (8, 3, 2, 3))]
MARKERS_PLOTLY = ["circle", "square", "diamond", "triangle-up", "x", "star"]
MARKERS_MPL = ["o", "s", "D", "^", "x", "*"]
GREY = "#8c8c8c"

PNG_DPI = 200
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"


@dataclass
class Fig:
    """A figure of the report.

    name: the file stem under figures/ (what it shows, e.g. ``ecdf_latency_seconds_op=read``);
    title: one line above the figure; caption: how to read it; note: what was summarised or
    sampled to keep it readable (shown next to the figure, in amber); plotly: the interactive
    figure; draw: draws the publication version onto a matplotlib Figure of `size` inches.
    """
    name: str
    title: str
    plotly: object
    draw: Callable | None = None
    caption: str = ""
    note: str | None = None
    size: tuple[float, float] = (6.4, 4.0)
    height: int = 420
    files: list[str] = field(default_factory=list)


def slug(text: str) -> str:
    """A file-name-safe spelling that keeps ``=`` (``op=read``) and dots."""
    s = re.sub(r"[^A-Za-z0-9=._+-]+", "-", str(text)).strip("-")
    return s[:150] or "x"


def figure_name(kind: str, response: str, scenario: dict[str, str]) -> str:
    parts = [kind, response] + ([f"{k}={v}" for k, v in scenario.items()] or ["all"])
    return "_".join(slug(p) for p in parts)


# ------------------------------------------------------------------------------------ plotly
def plotly_layout(fig, *, height: int, xtitle: str | None = None, ytitle: str | None = None,
                  legend_title: str | None = None, showlegend: bool = True):
    fig.update_layout(
        template="plotly_white", height=height, font=dict(family=FONT, size=13),
        margin=dict(l=70, r=20, t=40, b=60), showlegend=showlegend,
        legend=dict(title=dict(text=legend_title or ""), font=dict(size=12), bgcolor="rgba(255,255,255,0.8)"),
        hoverlabel=dict(font=dict(family=FONT)),
    )
    if xtitle is not None:
        fig.update_xaxes(title_text=xtitle)
    if ytitle is not None:
        fig.update_yaxes(title_text=ytitle)
    fig.update_xaxes(showline=True, linecolor="#444", ticks="outside", zeroline=False)
    fig.update_yaxes(showline=True, linecolor="#444", ticks="outside", zeroline=False)
    return fig


def log_ticks(values) -> tuple[list[float], list[str]]:
    """Tick values 1, 2, 5 × 10^k spanning the positive `values` (only powers of ten when that
    would make more than 12 ticks), labelled in full ("0.002", "50", "200"), never as a bare
    mantissa as plotly's minor log labels are."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if len(v) == 0:
        return [], []
    lo, hi = float(v.min()), float(v.max())
    ticks = []
    for k in range(int(np.floor(np.log10(lo))) - 1, int(np.ceil(np.log10(hi))) + 1):
        for m in (1, 2, 5):
            t = m * 10.0 ** k
            if lo / 1.5 <= t <= hi * 1.5:
                ticks.append(t)
    if len(ticks) > 12:
        ticks = [t for t in ticks if round(t / 10 ** np.floor(np.log10(t))) == 1]
    return ticks, [_plain(t) for t in ticks]


def _plain(t: float) -> str:
    """0.00005 rather than 5e-05 (down to a microsecond), 200 rather than 2e+02."""
    if 1e-6 <= t < 1e-3:
        return f"{t:.7f}".rstrip("0").rstrip(".")
    return f"{t:g}" if t < 1e6 else f"{t:.0f}"


def log_axis(fig, axis: str, log: bool, values=None) -> None:
    """Set a plotly axis ("x" or "y") linear or log; log axes get full 1-2-5 tick labels."""
    upd = fig.update_xaxes if axis == "x" else fig.update_yaxes
    vals, text = log_ticks(values if values is not None else [])
    if vals:  # kept for the log button even when the axis starts linear
        upd(tickvals=vals, ticktext=text)
    upd(type="log" if log else "linear", tickmode="array" if log and vals else "auto")


def scale_buttons(axes: list[str], log: bool) -> list[dict]:
    """An updatemenu that switches the given axes ("xaxis", "xaxis2", …) between linear and log
    (log with the 1-2-5 ticks set by `log_axis`, linear with plotly's automatic ticks)."""
    def args(kind):
        d = {f"{a}.type": kind for a in axes}
        d.update({f"{a}.tickmode": "array" if kind == "log" else "auto" for a in axes})
        return [d]
    return [dict(type="buttons", direction="left", x=1.0, xanchor="right", y=1.02, yanchor="bottom",
                 showactive=True, active=1 if log else 0, pad=dict(r=2, t=2),
                 font=dict(size=11), bgcolor="#f4f4f4",
                 buttons=[dict(label="linear", method="relayout", args=args("linear")),
                          dict(label="log", method="relayout", args=args("log"))])]


# ------------------------------------------------------------------------------------ matplotlib
MPL_RC = {
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
    "legend.title_fontsize": 8, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "axes.grid": True, "grid.color": "#e5e5e5", "grid.linewidth": 0.6, "axes.axisbelow": True,
    "axes.spines.top": False, "axes.spines.right": False, "svg.fonttype": "none",
    "pdf.fonttype": 42,
}


def save_static(fig: Fig, out_dir: Path, formats: tuple[str, ...]) -> list[str]:
    """Draw `fig` with matplotlib and save it in every format; returns the file names."""
    if fig.draw is None or not formats:
        return []
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(MPL_RC):
        mf = Figure(figsize=fig.size, layout="constrained")
        fig.draw(mf)
        names = []
        for fmt in formats:
            path = out_dir / f"{fig.name}.{fmt}"
            kw = {"dpi": PNG_DPI} if fmt == "png" else {}
            if fmt == "pdf":
                kw["metadata"] = {"Creator": "faascope report", "CreationDate": None}
            elif fmt == "svg":
                kw["metadata"] = {"Date": None}
            mf.savefig(path, format=fmt, **kw)
            names.append(path.name)
    return names


def save_all(figs: list[Fig], out_dir: Path, formats: tuple[str, ...], jobs: int = 1) -> None:
    """Save every figure; with jobs > 1, split the work over forked worker processes (matplotlib
    is single-threaded; on a multi-core machine this divides the wall time)."""
    import os

    todo = [f for f in figs if f.draw is not None]
    if jobs <= 1 or len(todo) < 4 or not hasattr(os, "fork"):
        for f in todo:
            f.files = save_static(f, out_dir, formats)
        return
    chunks = [todo[i::jobs] for i in range(jobs)]
    pids = []
    for chunk in chunks[1:]:
        pid = os.fork()
        if pid == 0:  # child: draw its share, exit without running any parent cleanup
            code = 0
            try:
                for f in chunk:
                    save_static(f, out_dir, formats)
            except BaseException:  # pragma: no cover - reported by the parent below
                code = 1
            os._exit(code)
        pids.append(pid)
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
        from faascope.errors import Failure
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
