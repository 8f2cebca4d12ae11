"""Small helpers shared by several sections: level labels in tables and the cells' positions on a
categorical axis. (How titles and legends are placed is the renderers' business: plot/.)"""
from __future__ import annotations

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

