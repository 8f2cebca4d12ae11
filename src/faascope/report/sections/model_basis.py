"""The `model_basis` section (local campaigns): what each cell's figures rest on, the
calibration entries that bound it with the role its table gives each (published, fit,
assumed), and what no entry models (faascope.designs.model_basis). Cells resting on an assumed
figure get a warning, repeated under the answer: their absolute values are the model's."""
from __future__ import annotations

from faascope.designs.model_basis import CellBasis, Figure, campaign_basis
from faascope.provider_kinds import provider_kind
from faascope.report.items import Block, Text, table
from faascope.report.sections.context import Ctx
from faascope.units import format_measure

#: the cells listed by key in one row before the row says only how many
MAX_KEYS = 4


def local_basis(ctx: Ctx) -> dict[str, CellBasis] | None:
    """cell key -> basis for a local campaign's results store; None for anything else. Worked
    out once per report (the answer and this section both need it)."""
    if "model_basis" not in ctx.extra:
        src = ctx.data.source
        kind = provider_kind((src.campaign or {}).get("provider"))
        local = src.kind == "store" and src.plan and kind is not None and kind.has_profiles
        ctx.extra["model_basis"] = campaign_basis(src.plan, src.events) if local else None
    return ctx.extra["model_basis"]


def assumed_warning(basis: dict[str, CellBasis], link: bool = True) -> str | None:
    """The sentence that warns of cells resting on assumed figures; None when none does.
    ``link``: end with a link to this section (not in the section itself)."""
    cells = [k for k, b in basis.items() if b.assumed]
    if not cells:
        return None
    keys = sorted({f.key for k in cells for f in basis[k].assumed})
    return (f"{len(cells)} of {len(basis)} cell(s) rest on figures the calibration tables mark "
            f"*assumed* (no published measurement sets them): {', '.join(f'`{k}`' for k in keys)}. Where "
            "those bind, the absolute values are the local model's, and nothing published checks them; "
            "compare levels within this campaign, and take absolute values from a run on the cloud"
            + (" ([what each rests on](#model_basis))." if link else "."))


def _value(f: Figure) -> str:
    """An entry's value in its unit, auto-scaled (33311862 B/s -> 33.3 MB/s); a ratio bare."""
    return format_measure(f.value, "" if f.unit == "1" else f.unit)


def _figures(fs: list[Figure]) -> str:
    return "; ".join(f"`{f.key}` ({f.role})" for f in fs) or "–"


def model_basis_section(ctx: Ctx) -> Block | None:
    basis = local_basis(ctx)
    if not basis:
        return None
    b = Block("model_basis", "What the local figures rest on")
    groups: dict[tuple, list[str]] = {}
    for key, cb in basis.items():
        groups.setdefault((tuple(cb.figures), tuple(cb.unmodelled)), []).append(key)
    rows = []
    for (figs, unmod), keys in groups.items():
        cells = ", ".join(f"`{k}`" for k in keys) if len(keys) <= MAX_KEYS else f"{len(keys)} cells"
        rows.append([cells, _figures(list(figs)), "; ".join(unmod) or "–"])
    b.items.append(table("Per cell: the calibration entries that bound it, and what no entry models",
                         ["cells", "rests on (role)", "not modelled: this machine's"], rows,
                         ["The rules are faascope.designs.model_basis; each entry's value, role, source "
                          "and note are its calibration table's (faascope/calibration/tables/TABLE.json, "
                          "docs/platform.md, \"Calibrated profiles\"). "
                          "published: as a study or vendor published it; fit: fitted to published "
                          "measurements; assumed: no published figure exists."]))
    seen: dict[str, Figure] = {}
    for cb in basis.values():
        for f in cb.figures:
            seen.setdefault(f.anchor, f)
    if seen:
        b.items.append(table("The entries", ["table", "entry", "value", "role", "bounds", "source"],
                             [[f.table, f"`{f.key}`", _value(f), f.role, f.bounds, f.source]
                              for f in seen.values()]))
    warn = assumed_warning(basis, link=False)
    if warn:
        b.items.append(Text(warn, "warn"))
    return b
