"""Draw a `Plot` (model.py) as an interactive plotly figure, for report.html."""
from __future__ import annotations

import math

import numpy as np

from faascope.report.numbers import prefix_for
from faascope.report.plot.model import (
    Axis, Bars, Boxes, Heatmap, Labels, Line, Panel, Plot, Points, RefLine, Stairs, axis_values, box_stats,
)
from faascope.report.plot.style import FONT


def rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


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


def scale_buttons(axes: list[str], log: bool) -> list[dict]:
    """An updatemenu that switches the given axes ("xaxis", "xaxis2", …) between linear and log
    (log with the 1-2-5 ticks set on the axis, linear with plotly's automatic ticks)."""
    def args(kind):
        d = {f"{a}.type": kind for a in axes}
        d.update({f"{a}.tickmode": "array" if kind == "log" else "auto" for a in axes})
        return [d]
    return [dict(type="buttons", direction="left", x=1.0, xanchor="right", y=1.02, yanchor="bottom",
                 showactive=True, active=1 if log else 0, pad=dict(r=2, t=2),
                 font=dict(size=11), bgcolor="#f4f4f4",
                 buttons=[dict(label="linear", method="relayout", args=args("linear")),
                          dict(label="log", method="relayout", args=args("log"))])]


def _colors(c) -> str | list[str]:
    return c if isinstance(c, str) else list(c)


def _drop_none(d: dict) -> dict:
    """`d` without the keys whose value is None, nested dicts too (plotly's validators drop them;
    unvalidated, they would reach plotly.js as nulls)."""
    return {k: _drop_none(v) if isinstance(v, dict) else v for k, v in d.items() if v is not None}


def _go(cls, **kw):
    """A plotly trace, validated only when VALIDATE is set (see to_plotly)."""
    return cls(**_drop_none(kw), _validate=VALIDATE)


def _opacity(o: float) -> float | None:
    return o if o < 1 else None


def _error_x(xerr, color: str, width: float) -> dict | None:
    if xerr is None:
        return None
    lo, hi = xerr
    return dict(type="data", symmetric=False, array=list(hi), arrayminus=list(lo), thickness=width, width=4,
                color=color)


def _legend_and_hover(m, show_legend: bool) -> dict:
    d = dict(name=m.name, showlegend=show_legend and m.legend and bool(m.name))
    if m.hover:
        d["hovertemplate"] = m.hover
    if m.hover_data is not None:
        d["customdata"] = m.hover_data
    return d


def _line(m: Line, show_legend: bool, _cats: dict) -> list:
    import plotly.graph_objects as go

    return [_go(go.Scatter, x=m.x, y=m.y, mode="lines+markers" if m.marker else "lines", connectgaps=False,
                       line=dict(color=m.color, dash=m.dash, width=m.width, shape="hv" if m.step else "linear"),
                       marker=dict(symbol=m.marker, size=m.marker_size, color=m.color) if m.marker else None,
                       **_legend_and_hover(m, show_legend))]


def _points(m: Points, show_legend: bool, _cats: dict) -> list:
    import plotly.graph_objects as go

    single = isinstance(m.color, str)
    if m.open:  # hollow: plotly's "-open" symbol, outlined in the marker colour
        outline = dict(width=2)
    elif m.edge:
        outline = dict(width=1, color=m.edge)
    else:
        outline = None
    return [_go(go.Scatter, x=m.x, y=m.y, mode="markers",
                       marker=dict(symbol=m.marker + ("-open" if m.open else ""), size=m.size,
                                   color=_colors(m.color), opacity=_opacity(m.opacity), line=outline),
                       error_x=_error_x(m.xerr, m.err_color or (m.color if single else "#333333"), m.err_width),
                       **_legend_and_hover(m, show_legend))]


def _bars(m: Bars, show_legend: bool, _cats: dict) -> list:
    import plotly.graph_objects as go

    return [_go(go.Bar, x=list(m.x), y=list(m.y), orientation="h", width=m.height,
                   base=None if m.base is None else list(m.base),
                   marker=dict(color=_colors(m.color), opacity=_opacity(m.opacity)),
                   error_x=_error_x(m.xerr, m.err_color, 1.5), **_legend_and_hover(m, show_legend))]


def _labels(m: Labels, _show_legend: bool, _cats: dict) -> list:
    import plotly.graph_objects as go

    return [_go(go.Scatter, x=list(m.x), y=list(m.y), mode="text", text=list(m.text), textposition="middle right",
                       textfont=dict(color=m.color), hoverinfo="skip", showlegend=False, cliponaxis=False)]


def _stairs(m: Stairs, _show_legend: bool, _cats: dict) -> list:
    import plotly.graph_objects as go

    e = np.asarray(m.edges, dtype=float)
    h = np.asarray(m.counts)
    # a step line through the bins' left edges, held to the last edge, filled down to zero
    return [_go(go.Scatter, x=np.append(e[:-1], e[-1]), y=np.append(h, h[-1]), mode="lines", fill="tozeroy",
                       line=dict(shape="hv", color=m.color, width=1.2), name=m.name, showlegend=False,
                       customdata=np.column_stack([e[:-1], e[1:], h]).tolist() + [[e[-1], e[-1], 0]],
                       hovertemplate=m.hover)]


def _boxes(m: Boxes, show_legend: bool, cats: dict) -> list:
    import plotly.graph_objects as go

    common = dict(orientation="h", name=m.name, marker_color=m.color, line=dict(width=1.3),
                  fillcolor=rgba(m.color, m.fill_alpha), showlegend=show_legend and bool(m.name))
    pairs = [(cats.get(p, p), np.asarray(v, dtype=float)) for p, v in zip(m.positions, m.values) if len(v)]
    if not pairs:
        return []
    if m.points != "none":  # plotly computes the boxes from the values and can show them
        return [_go(go.Box, x=np.concatenate([v for _, v in pairs]), y=np.concatenate([[p] * len(v) for p, v in pairs]),
                       boxpoints=m.points, jitter=0.5, pointpos=0, marker=dict(size=5, opacity=0.8), **common)]
    # no points to show: only the box statistics go into the page, which stays small
    st = [box_stats(v) for _, v in pairs]
    return [_go(go.Box, y=[p for p, _ in pairs], q1=[s["q1"] for s in st], median=[s["median"] for s in st],
                   q3=[s["q3"] for s in st], lowerfence=[s["lowerfence"] for s in st],
                   upperfence=[s["upperfence"] for s in st], mean=[s["mean"] for s in st], boxpoints=False,
                   **common)]


def _heatmap(m: Heatmap, _show_legend: bool, _cats: dict) -> list:
    import plotly.graph_objects as go

    return [_go(go.Heatmap, z=m.z, x=list(m.x), y=list(m.y), text=m.text, texttemplate="%{text}", colorscale="RdBu",
                       zmin=m.zmin, zmax=m.zmax, showscale=bool(m.colorbar),
                       colorbar=dict(title=dict(text=m.colorbar, side="right")), hovertemplate=m.hover)]


def _box_categories(panel: Panel) -> dict | None:
    """Box plots on a categorical y axis get the categories' names rather than positions, so that
    plotly's box hover names the category."""
    if panel.y.ticks is None or not any(isinstance(m, Boxes) for m in panel.marks):
        return None
    return dict(zip(panel.y.ticks[0], panel.y.ticks[1]))


#: mark kind -> its traces; a reference line is a layout shape, not a trace (see to_plotly)
TRACES = {Line: _line, Points: _points, Bars: _bars, Labels: _labels, Stairs: _stairs, Boxes: _boxes,
          Heatmap: _heatmap}


def _axis(ax: Axis, values: np.ndarray, show_title: bool) -> dict:
    """Layout settings of one axis; `values`: what the panel's marks put on it (for log ticks)."""
    d: dict = dict(showline=True, linecolor="#444", ticks="outside", zeroline=False)
    if ax.title and show_title:
        d["title_text"] = ax.title
    if ax.log or ax.log_switch:
        vals, text = log_ticks(values)
        if ax.unit:
            text = [unit_tick(t, ax.unit) for t in vals]
        if vals:  # kept for the log button even when the axis starts linear
            d.update(tickvals=vals, ticktext=text)
        d.update(type="log" if ax.log else "linear", tickmode="array" if ax.log and vals else "auto")
    if ax.range is not None:
        d["range"] = [math.log10(v) for v in ax.range] if ax.log else list(ax.range)
    elif ax.lower is not None:
        # in the axis's own coordinates, which on a log axis are powers of ten
        d["autorangeoptions"] = dict(minallowed=math.log10(ax.lower) if ax.log else ax.lower)
    if ax.ticks is not None:
        d.update(tickmode="array", tickvals=list(ax.ticks[0]), ticktext=list(ax.ticks[1]), automargin=True)
    if ax.tick_step is not None:
        d.update(tickmode="linear", tick0=0, dtick=ax.tick_step)
    if ax.max_ticks:
        d["nticks"] = ax.max_ticks
    if ax.small_ticks:
        d["tickfont"] = dict(size=11)
    if ax.reversed:
        d["autorange"] = "reversed"
    if ax.percent:
        d["tickformat"] = ".0%"
    if ax.unit:  # linear ticks: 20µs, 1.5ms (SI prefixes), never 2e-05
        d.update(exponentformat="SI", ticksuffix=ax.unit)
    return d


def unit_tick(t: float, unit: str) -> str:
    """A log tick labelled with an SI prefix: 2e-05 -> "20µs"."""
    f, p = prefix_for(t)
    return f"{t / f:g}{p}{unit}"


def _panel_axis(panel: Panel, a: str, show_title: bool, small_title: bool) -> dict:
    """Layout settings of the panel's axis "x" or "y"."""
    ax = panel.x if a == "x" else panel.y
    settings = _axis(ax, axis_values(panel, a), show_title)
    cats = _box_categories(panel) if a == "y" else None
    if cats:  # named categories rather than numbered positions
        for k in ("tickmode", "tickvals", "ticktext"):
            settings.pop(k, None)
        settings.update(type="category", categoryorder="array", categoryarray=list(cats.values()))
    if ax.range is None and _starts_at_zero(panel, a):
        settings["rangemode"] = "tozero"
    if small_title:  # panels side by side: smaller axis titles, as in print
        settings["title_font"] = dict(size=12)
    return settings


def _starts_at_zero(panel: Panel, a: str) -> bool:
    """Counts (a histogram's y) and bar lengths (x) are measured from zero."""
    kinds = (Stairs,) if a == "y" else (Bars,)
    return any(isinstance(m, kinds) for m in panel.marks)


#: validate every property plotly sets (slow); the tests switch it on to check the fast path
VALIDATE = False


def _template():
    """plotly_white as an object: unvalidated figures keep a template given by name as a bare
    string, which plotly.js does not resolve."""
    import plotly.io as pio

    return pio.templates["plotly_white"]


def to_plotly(plot: Plot, height: int, standalone: bool = False):
    """The interactive figure, `height` pixels tall. standalone: also draw the plot's title (the
    report page has its own heading above the figure)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    rows, cols = plot.rows, plot.cols
    multi = len(plot.panels) > 1          # a grid of subplots
    # what this renderer sets is known to be valid (a test compares with validated figures):
    # skipping plotly's per-property validation, from the figure's creation on so that its layout
    # and every child object skip it too, makes building a figure several times faster
    if multi:
        titled = any(p.title for p in plot.panels)
        gap = 42 if plot.share_x else 96   # room for tick labels and, unless shared, an axis title
        fig = make_subplots(rows=rows, cols=cols, shared_xaxes=plot.share_x,
                            vertical_spacing=min(0.3, gap / height) if rows > 1 else 0,
                            horizontal_spacing=0.08 if cols > 1 else 0.02,
                            subplot_titles=[p.title for p in plot.panels] if titled else None,
                            figure=go.Figure(_validate=VALIDATE))
    else:
        fig = go.Figure(_validate=VALIDATE)
    show_legend = plot.legend is not None
    switch: list[tuple[str, bool]] = []   # axes with linear/log buttons, and whether they start log
    scale_shown = False                   # heatmaps share one colour scale: show it once
    for i, panel in enumerate(plot.panels):
        where = dict(row=i // cols + 1, col=i % cols + 1) if multi else {}
        cats = _box_categories(panel) or {}
        for m in panel.marks:
            if isinstance(m, RefLine):
                fig.add_vline(x=m.x, line=dict(color=m.color, width=1, dash=m.dash), **where)
                continue
            for t in TRACES[type(m)](m, show_legend, cats):
                if isinstance(m, Heatmap):
                    t.showscale = t.showscale and not scale_shown
                    scale_shown = scale_shown or t.showscale
                fig.add_trace(t, **where)
        suffix = "" if i == 0 else str(i + 1)
        for a, ax in (("x", panel.x), ("y", panel.y)):
            # a shared x axis is titled once, under the bottom panel
            show_title = not (a == "x" and plot.share_x and i + cols < len(plot.panels))
            fig.layout[f"{a}axis{suffix}"].update(_panel_axis(panel, a, show_title, small_title=cols > 1))
            if ax.log_switch:
                switch.append((f"{a}axis{suffix}", ax.log))
    legend = plot.legend
    fig.update_layout(
        template=_template(), height=height, font=dict(family=FONT, size=13),
        margin=dict(l=70, r=20, t=40 + (30 if standalone and plot.title else 0), b=60), showlegend=show_legend,
        legend=dict(title=dict(text=legend.title if legend else ""), font=dict(size=12),
                    bgcolor="rgba(255,255,255,0.8)"),
        hoverlabel=dict(font=dict(family=FONT)),
    )
    if legend and legend.where == "top":
        fig.update_layout(legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0, xanchor="left"))
    if any(isinstance(m, Boxes) for p in plot.panels for m in p.marks):
        fig.update_layout(boxmode="group")
    if any(isinstance(m, Bars) and m.base is not None for p in plot.panels for m in p.marks):
        fig.update_layout(barmode="overlay")   # bars with their own start: stacked or a timeline
    if switch:  # one set of buttons for the figure: its response axes switch together
        fig.update_layout(updatemenus=scale_buttons([a for a, _ in switch], switch[0][1]))
    if multi and titled:  # panel titles: left-aligned over their panel, as in print
        for ann, panel_i in zip(fig.layout.annotations, [i for i, p in enumerate(plot.panels) if p.title]):
            xa = fig.layout["xaxis" if panel_i == 0 else f"xaxis{panel_i + 1}"]
            ann.update(font=dict(size=12), x=xa.domain[0], xanchor="left")
    if standalone and plot.title:
        fig.update_layout(title=dict(text=plot.title, x=0.01, xanchor="left"))
    if not VALIDATE:  # unvalidated, an untouched subplot grid or add_vline leaves an empty annotations list
        props = fig.layout._props
        if props is not None and not props.get("annotations"):
            props.pop("annotations", None)
    return fig
