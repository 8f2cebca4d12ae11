"""Draw a `Plot` (model.py) with matplotlib, for the publication figures under figures/."""
from __future__ import annotations

import numpy as np

from faascope.report.plot.model import (
    Axis, Bars, Boxes, Heatmap, Labels, Line, Panel, Plot, Points, RefLine, Stairs, box_stats,
)

#: plotly's dash names and marker symbols (the model's vocabulary) in matplotlib's terms
DASHES = {"solid": "-", "dash": "--", "dot": ":", "dashdot": "-.", "longdash": (0, (8, 3)),
          "longdashdot": (0, (8, 3, 2, 3))}
MARKERS = {"circle": "o", "square": "s", "diamond": "D", "triangle-up": "^", "triangle-left": "<", "x": "x",
           "star": "*"}
#: the model's sizes are plotly pixels on a screen; a printed figure of a few inches needs them
#: smaller (line widths and marker diameters in points; error bars keep their width to stay visible)
LINE_SCALE = 0.7
MARKER_SCALE = 0.6
SMALL = 7                              # font size of panel labels in small multiples and long ticks

#: the style of every publication figure
RC = {
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
    "legend.title_fontsize": 8, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "axes.grid": True, "grid.color": "#e5e5e5", "grid.linewidth": 0.6, "axes.axisbelow": True,
    "axes.spines.top": False, "axes.spines.right": False, "svg.fonttype": "none",
    "pdf.fonttype": 42,
}


def rgba(hex_color: str, alpha: float) -> tuple:
    h = hex_color.lstrip("#")
    return tuple(int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)) + (alpha,)


def _legend_entry(handles: list, m) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if not getattr(m, "legend", True) or not getattr(m, "name", ""):
        return
    if isinstance(m, Line):
        handles.append(Line2D([], [], color=m.color, ls=DASHES[m.dash], lw=m.width * LINE_SCALE,
                              marker=MARKERS[m.marker] if m.marker else None,
                              ms=m.marker_size * MARKER_SCALE, label=m.name))
    elif isinstance(m, Points):
        c = m.color if isinstance(m.color, str) else m.legend_color
        handles.append(Line2D([], [], ls="", marker=MARKERS[m.marker], ms=max(4.0, m.size * MARKER_SCALE),
                              color=c, mfc="white" if m.open else c, mec=c if m.open else (m.edge or c),
                              alpha=max(m.opacity, 0.8), label=m.name))
    elif isinstance(m, Boxes):
        handles.append(Patch(facecolor=rgba(m.color, m.fill_alpha), edgecolor=m.color, label=m.name))
    elif isinstance(m, Bars):
        c = m.color if isinstance(m.color, str) else "#555555"
        handles.append(Patch(facecolor=c, alpha=m.opacity, label=m.name))


def _line(ax, m: Line) -> None:
    kw = dict(color=m.color, ls=DASHES[m.dash], lw=m.width * LINE_SCALE)
    if m.step:
        ax.step(m.x, m.y, where="post", **kw)
    else:
        ax.plot(m.x, m.y, marker=MARKERS[m.marker] if m.marker else None, ms=m.marker_size * MARKER_SCALE, **kw)


def _points(ax, m: Points) -> None:
    single = isinstance(m.color, str)
    if m.xerr is not None:
        lo, hi = (np.asarray(e, dtype=float) for e in m.xerr)
        ax.errorbar(m.x, m.y, xerr=[lo, hi], fmt="none", ecolor=m.err_color or (m.color if single else "#333333"),
                    elinewidth=m.err_width, capsize=3 if m.size >= 8 else 2, zorder=2)
    kw = dict(ls="", marker=MARKERS[m.marker], ms=m.size * MARKER_SCALE, alpha=m.opacity, zorder=3)
    if single:  # one call however many points (a time series has thousands)
        ax.plot(m.x, m.y, color=m.color, mfc="white" if m.open else m.color,
                mec=m.color if m.open else (m.edge or m.color), mew=1.2 if m.open else 0.6, **kw)
        return
    for x, y, c in zip(m.x, m.y, m.color):
        ax.plot([x], [y], color=c, mfc="white" if m.open else c, mec=c if m.open else (m.edge or c),
                mew=1.2 if m.open else 0.8, **kw)


def _bars(ax, m: Bars) -> None:
    kw = {}
    if m.xerr is not None:
        kw = dict(xerr=[list(m.xerr[0]), list(m.xerr[1])], capsize=3, error_kw=dict(ecolor=m.err_color, lw=1))
    ax.barh(list(m.y), list(m.x), left=0 if m.base is None else list(m.base), height=m.height,
            color=m.color if isinstance(m.color, str) else list(m.color), alpha=m.opacity, **kw)


def _labels(ax, m: Labels) -> None:
    for x, y, t in zip(m.x, m.y, m.text):
        if np.isfinite(x):
            ax.text(x, y, t, va="center", ha="left", fontsize=SMALL, color=m.color)


def _stairs(ax, m: Stairs) -> None:
    ax.stairs(m.counts, m.edges, fill=True, color=m.color, alpha=0.55)
    ax.stairs(m.counts, m.edges, color=m.color, lw=0.8)


def _refline(ax, m: RefLine) -> None:
    ax.axvline(m.x, color=m.color, lw=0.8, ls=DASHES[m.dash])


def _boxes(ax, groups: list[Boxes]) -> None:
    """Boxes side by side at each category position (as plotly's boxmode="group")."""
    n = len(groups)
    width = 0.64 / n
    rng = np.random.default_rng(0)  # jitter: the same figure every time
    for j, m in enumerate(groups):
        offset = (j - (n - 1) / 2) * (0.76 / n)
        for pos, v in zip(m.positions, m.values):
            v = np.asarray(v, dtype=float)
            if not len(v):
                continue
            p = pos + offset
            s = box_stats(v)
            bp = ax.bxp([{"med": s["median"], "q1": s["q1"], "q3": s["q3"], "whislo": s["lowerfence"],
                          "whishi": s["upperfence"], "label": ""}], positions=[p], widths=width,
                        orientation="horizontal", patch_artist=True, showfliers=False, manage_ticks=False,
                        medianprops=dict(color="#222", lw=1.2))
            for patch in bp["boxes"]:
                patch.set_facecolor(rgba(m.color, m.fill_alpha))
                patch.set_edgecolor(m.color)
            if m.points == "all":
                shown = v
            elif m.points == "outliers":
                shown = v[(v < s["lowerfence"]) | (v > s["upperfence"])]
            else:
                continue
            ax.scatter(shown, p + rng.uniform(-width / 3, width / 3, len(shown)), s=8, color=m.color,
                       alpha=0.8, lw=0, zorder=3)


def _heatmap(ax, m: Heatmap):
    im = ax.imshow(m.z, cmap="RdBu", vmin=m.zmin, vmax=m.zmax, aspect="auto", origin="lower")
    ax.grid(False)
    ax.set_xticks(range(len(m.x)), list(m.x))
    ax.set_yticks(range(len(m.y)), list(m.y))
    z = np.asarray(m.z, dtype=float)
    lim = max(abs(m.zmin), abs(m.zmax))
    for i in range(z.shape[0]):
        for j in range(z.shape[1]):
            if np.isfinite(z[i, j]) and m.text[i][j]:  # white text on the darkest colours
                ax.text(j, i, m.text[i][j], ha="center", va="center", fontsize=SMALL,
                        color="white" if abs(z[i, j]) > lim * 0.6 else "black")
    return im


#: mark kind -> how it is drawn (boxes are drawn together, side by side: see _marks)
DRAW = {Line: _line, Points: _points, Bars: _bars, Labels: _labels, Stairs: _stairs, RefLine: _refline,
        Heatmap: _heatmap}


def _marks(ax, panel: Panel, handles: list) -> list:
    """Draw the panel's marks, adding their legend entries to `handles`; returns the (image,
    heatmap) pairs, for a colour bar."""
    images = []
    boxes = [m for m in panel.marks if isinstance(m, Boxes)]
    if boxes:  # first, under the other marks
        _boxes(ax, boxes)
    for m in panel.marks:
        if isinstance(m, Boxes):
            _legend_entry(handles, m)
            continue
        drawn = DRAW[type(m)](ax, m)
        if isinstance(m, Heatmap):
            images.append((drawn, m))
        _legend_entry(handles, m)
    return images


def _axis(ax, which: str, a: Axis, show_title: bool, small_title: bool, small_ticks: bool) -> None:
    """Apply `a` to the axes' "x" or "y" axis."""
    import matplotlib.dates as mdates
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    axis = getattr(ax, f"{which}axis")
    set_lim, set_ticks = getattr(ax, f"set_{which}lim"), getattr(ax, f"set_{which}ticks")
    if a.title and show_title:
        getattr(ax, f"set_{which}label")(a.title, **({"fontsize": SMALL} if small_title else {}))
    if a.log:
        getattr(ax, f"set_{which}scale")("log")
    if a.range is not None:
        set_lim(*a.range)
    elif a.lower is not None:
        set_lim(a.lower, None)
    if a.ticks is not None:
        set_ticks(list(a.ticks[0]), list(a.ticks[1]), **({"fontsize": SMALL} if a.small_ticks or small_ticks else {}))
        if a.range is None:  # categories: half a step of room at either end, as bars and boxes need
            set_lim(min(a.ticks[0]) - 0.5, max(a.ticks[0]) + 0.5)
    elif small_ticks:
        ax.tick_params(axis=which, labelsize=SMALL)
    if a.tick_step is not None:
        lo, hi = a.range if a.range is not None else getattr(ax, f"get_{which}lim")()
        set_ticks(np.arange(np.ceil(lo / a.tick_step) * a.tick_step, hi, a.tick_step))
    if a.max_ticks:
        axis.set_major_locator(MaxNLocator(a.max_ticks))
    if a.percent:
        axis.set_major_formatter(PercentFormatter(xmax=1, decimals=0))
    if a.unit:  # 20 µs, 1.5 ms (SI prefixes), never 2e-05
        from matplotlib.ticker import EngFormatter

        eng = EngFormatter(unit=a.unit, sep=" ")
        axis.set_major_formatter(eng)
        if a.log:  # label the 2s and 5s between decades only when the axis spans less than two
            from matplotlib.ticker import FuncFormatter

            def minor(x, pos=None):
                lo, hi = sorted(axis.get_view_interval())
                if x <= 0 or lo <= 0 or hi / lo > 100:
                    return ""
                m = x / 10 ** np.floor(np.log10(x))
                return eng(x) if round(m, 6) in (2.0, 5.0) else ""

            axis.set_minor_formatter(FuncFormatter(minor))
    if a.date:
        loc = mdates.AutoDateLocator()  # its per-frequency defaults fit any span; one fixed maxticks does not
        axis.set_major_locator(loc)
        axis.set_major_formatter(mdates.ConciseDateFormatter(loc))
    if a.reversed:
        getattr(ax, f"invert_{which}axis")()


def draw(plot: Plot, mf) -> None:
    """Draw `plot` onto the matplotlib Figure `mf`."""
    rows, cols = plot.rows, plot.cols
    # small multiples: each panel's own labels small; a shared x axis title names the whole column;
    # tick labels small only when panels stand side by side
    small = len(plot.panels) > 1
    axes = mf.subplots(rows, cols, squeeze=False, sharex="col" if plot.share_x else False).ravel()
    handles: list = []
    images = []
    for i, (ax, panel) in enumerate(zip(axes, plot.panels)):
        images += _marks(ax, panel, handles)
        bottom = i + cols >= len(plot.panels)
        _axis(ax, "x", panel.x, show_title=bottom or not plot.share_x, small_title=small and not plot.share_x,
              small_ticks=cols > 1)
        _axis(ax, "y", panel.y, show_title=True, small_title=small, small_ticks=cols > 1)
        if panel.title:
            ax.set_title(panel.title, loc="left", fontsize=8, pad=2)
    for ax in axes[len(plot.panels):]:
        ax.set_visible(False)
    if images:  # one colour bar for all heatmaps; an arrow where values go beyond the scale
        im, m = images[0]
        z = np.concatenate([np.ravel(np.asarray(h.z, dtype=float)) for _, h in images])
        z = z[np.isfinite(z)]
        below, above = bool((z < m.zmin).any()), bool((z > m.zmax).any())
        extend = "both" if below and above else "min" if below else "max" if above else "neither"
        mf.colorbar(im, ax=list(axes[:len(plot.panels)]), shrink=0.8, extend=extend, label=m.colorbar)
    if plot.legend is not None and handles:
        lg = plot.legend
        if lg.where == "top" and len(plot.panels) > 1:
            # a grid's legend goes under the whole grid: anchored to the first panel it would widen
            # that panel's column, and at the top it collides with the figure's title
            mf.legend(handles=handles, title=lg.title or None, loc="outside lower left",
                      ncols=min(len(handles), 4), frameon=False)
        elif lg.where == "top":
            axes[0].legend(handles=handles, title=lg.title or None, loc="lower left", bbox_to_anchor=(0, 1.01),
                           ncols=len(handles), frameon=False)
        else:
            axes[0].legend(handles=handles, title=lg.title or None, loc="upper left", bbox_to_anchor=(1.01, 1),
                           frameon=False)
    if plot.title:
        mf.suptitle(plot.title, x=0.01, ha="left", fontsize=10)
