"""Small helpers shared by several sections: level labels in tables and the cells' positions on a
categorical axis. (How titles and legends are placed is the renderers' business: plot/.)"""
from __future__ import annotations

from faascope.analysis.decisions import ordering_with_p, pair_p_values, pair_separations
from faascope.report.items import table
from faascope.report.scenarios import Cell
from faascope.report.sections.context import Ctx


def labelled(ctx: Ctx, title: str, headers: list[str], rows: list[list[str]], notes=None, caption=None):
    """A table whose factor columns show the levels' labels (10 KB rather than 10000)."""
    info = ctx.data.info
    cols = [i for i, h in enumerate(headers) if h in info and info[h].kind != "plain"]
    if cols:
        rows = [[info[headers[i]].label(c) if i in cols and c not in ("", "all") else c for i, c in enumerate(r)]
                for r in rows]
    return table(title, headers, rows, notes, caption)


def cell_positions(cells: list[Cell]) -> tuple[list[int], list[str]]:
    """One row per cell on a categorical axis: positions 0, 1, … and the cells' labels."""
    return list(range(len(cells))), [c.label for c in cells]



def evidence_order(ctx: Ctx, res: dict, row: dict) -> str:
    """The levels of the compared factor from best to worst, as the decision row orders them (by
    the row's own test and pairs: `row["test"]`), with each tie's and each separation's p-value:
    "1769 MB = 3008 MB (p = 0.97) < 512 MB (p ≤ 0.0012)"; labels as the report shows levels."""
    f = ctx.data.compare
    if res.get("fit_status"):
        return row.get("performance_order") or "no test"
    pairs = row.get("pairs") or []
    return ordering_with_p(row["tested_mean"], pair_separations(pairs), pair_p_values(pairs),
                           label=ctx.data.info[f].label, fmt_p=short_p,
                           higher_is_better=bool(row.get("higher_is_better")))


def short_p(p: float) -> str:
    """Two significant digits ("0.97", "0.0012"), "< 1e-16" below double precision's reach."""
    if p < 1e-16:
        return "< 1e-16"
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"
