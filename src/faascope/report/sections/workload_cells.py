"""Cells of the workload-kind sections (network, transfers, phases, storage requests): their
labels, colours and order, the same as in the scenario figures (one colour per level of the
compared factor, one line style per combination of the others), and number formats."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import pandas as pd

from faascope.analysis.intervals import without_ci
from faascope.analysis.per_cell import cell_columns
from faascope.report.plot.style import DASHES, MARKERS, PALETTE
from faascope.report.sections.context import Ctx

MiB = 1 << 20


@dataclass
class CellStyle:
    key: object                # cell_key (results file) or the tuple of factor levels
    levels: dict[str, str]
    label: str
    color: str
    dash: str
    marker: str


def all_factors(ctx: Ctx) -> list[str]:
    """Every factor column of the report (factors and scenario columns): a cell is one combination."""
    return list(dict.fromkeys(list(ctx.data.factors) + list(ctx.data.scenario_cols)))


def measured_rows(ctx: Ctx) -> pd.DataFrame:
    """The rows the report analyses (measured, selected by --filter/--latest)."""
    return ctx.data.data


def cell_styles(ctx: Ctx, df: pd.DataFrame) -> list[CellStyle]:
    """The cells present in `df`, in the order of their factors' levels, labelled by the factors
    that vary among them."""
    factors = [f for f in all_factors(ctx) if f in df.columns]
    keys = cell_columns(df, factors)
    info = ctx.data.info
    varying = [f for f in factors if df[f].nunique() > 1]
    first = df.groupby(keys, sort=False, dropna=False).first().reset_index()

    def order(row):
        return tuple(info[f].levels.index(row[f]) if f in info and row[f] in info[f].levels else 0
                     for f in factors)

    first = first.assign(_order=[order(r) for _, r in first.iterrows()]).sort_values("_order", kind="stable")
    compare = ctx.data.compare if ctx.data.compare in varying else (varying[0] if varying else None)
    rest = [f for f in varying if f != compare]
    rest_combos = list(itertools.product(*(info[f].levels for f in rest)))
    out = []
    for _, r in first.iterrows():
        levels = {f: r[f] for f in factors}
        label = " · ".join(info[f].label(levels[f]) for f in varying) or "all rows"
        ci = info[compare].levels.index(levels[compare]) if compare else 0
        combo = tuple(levels[f] for f in rest)
        ri = rest_combos.index(combo) if combo in rest_combos else 0
        key = r["cell_key"] if keys == ["cell_key"] else tuple(r[f] for f in keys)
        out.append(CellStyle(key, levels, label, PALETTE[ci % len(PALETTE)], DASHES[ri % len(DASHES)],
                             MARKERS[ri % len(MARKERS)]))
    return out


def key_of(row, df_keys: list[str]):
    """A row's cell key as `CellStyle.key` spells it."""
    return row["cell_key"] if df_keys == ["cell_key"] else tuple(row[f] for f in df_keys)


def seconds(v) -> str:
    """1.23 ms, 0.456 s; – when missing."""
    if v is None or not isinstance(v, (int, float)) or not math.isfinite(v):
        return "–"
    return f"{v * 1e3:.3g} ms" if abs(v) < 1 else f"{v:.3g} s"


def mib_per_s(v) -> str:
    if v is None or not isinstance(v, (int, float)) or not math.isfinite(v):
        return "–"
    return f"{v / MiB:.4g} MiB/s"


def with_ci(fmt, mean, lo, hi, why=None) -> str:
    """"12.3 ms [11.0 ms, 13.6 ms]"; without an interval the mean and why there is none
    ("12.3 ms, no CI: too few (n = 3; needs ≥ 100)", faascope.analysis.intervals)."""
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return without_ci(fmt(mean), why if isinstance(why, str) else None)
    return f"{fmt(mean)} [{fmt(lo)}, {fmt(hi)}]"


def row_ci(fmt, r) -> str:
    """:func:`with_ci` of a row of faascope.analysis.per_cell.cell_means."""
    return with_ci(fmt, r["mean"], r["ci_low"], r["ci_high"], r.get("ci_why"))


def log_scale(values) -> bool:
    """A log axis when positive values span more than 30×."""
    v = [float(x) for x in values if x is not None and math.isfinite(float(x)) and float(x) > 0]
    return bool(v) and max(v) / min(v) > 30


def error_bars(means: list[float], lows: list, highs: list) -> tuple[list[float], list[float]]:
    """Whisker lengths (below, above) of positive quantities (times, rates). An interval that
    reaches below a fifth of the smallest mean is drawn down to there, which keeps it visible on a
    log axis; the tables give its value."""
    floor = min((v for v in means if v > 0), default=0.0) / 5
    lo = [max(0.0, m - max(low, floor)) if low is not None else 0.0 for m, low in zip(means, lows)]
    hi = [max(0.0, high - m) if high is not None else 0.0 for m, high in zip(means, highs)]
    return lo, hi
