"""The report's scenarios: the per-scenario analysis every command shares
(:mod:`faascope.analysis.scenarios`), with each scenario's cells as the figures draw them
(colour by the compared factor's level, line style by the other factors').

A scenario the engine cannot analyse (a cell with one row, the compared factor with one level)
does not stop the report: its figures are still drawn and the reason is shown in its place.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from faascope.analysis.dataset import Dataset
from faascope.analysis.scenarios import Options, ScenarioAnalysis, analyse_one, split
from faascope.report.figures import figure_name
from faascope.report.plot.style import DASHES, MARKERS, PALETTE


@dataclass
class Cell:
    levels: dict[str, str]
    label: str                 # "LAMBDA_DD · TIER_1" (values of the scenario's factors, labelled)
    pos: np.ndarray            # row positions within the scenario's rows
    y: np.ndarray              # the response of those rows
    color: str                 # by the level of the compared factor
    dash: str                  # line style and marker by the combination of the other factors
    marker: str
    stats: dict | None = None  # the engine's per-cell statistics

    @property
    def n(self) -> int:
        return len(self.y)


@dataclass
class Scenario(ScenarioAnalysis):
    cells: list[Cell] = field(default_factory=list)
    cost: object = None            # costs.ScenarioCost: what its cells cost (None: not priced)

    @property
    def key(self) -> str:
        return f"s{self.index + 1}"

    def name(self, kind: str, response: str) -> str:
        return figure_name(kind, response, self.label)

    def title(self, data: Dataset) -> str:
        if not self.label:
            return "All data"
        return ", ".join(f"{k} = {data.info[k].label(v)}" for k, v in self.label.items())

    @property
    def legend_title(self) -> str:
        return " · ".join(self.factors)


def _cell_label(data: Dataset, factors: list[str], levels: dict[str, str]) -> str:
    return " · ".join(data.info[f].label(levels[f]) for f in factors)


def build_scenarios(data: Dataset, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0,
                    analyse: bool = True) -> list[Scenario]:
    options = Options(alpha=alpha, n_boot=n_boot, seed=seed)
    out: list[Scenario] = []
    for part in split(data):
        sc = Scenario(**{f.name: getattr(part, f.name) for f in ScenarioAnalysis.__dataclass_fields__.values()})
        _make_cells(data, sc, sc.rows[data.response].to_numpy(dtype=float), sc.levels)
        if analyse:
            analyse_one(data, sc, options)
            _attach_stats(sc)
        out.append(sc)
    return out


def _make_cells(data: Dataset, sc: Scenario, y: np.ndarray, levels: dict[str, list[str]]) -> None:
    fs = sc.factors
    if not fs:  # every factor has one level here: one cell
        sc.cells = [Cell({}, "all rows", np.arange(len(y)), y, PALETTE[0], DASHES[0], MARKERS[0])]
        return
    groups = sc.rows.groupby(fs, sort=False).indices
    compare = data.compare
    compare_levels = levels[compare] if compare in fs else [None]
    rest = [f for f in fs if f != compare]
    rest_combos = list(itertools.product(*(levels[f] for f in rest)))
    for combo in itertools.product(*(levels[f] for f in fs)):
        key = combo if len(fs) > 1 else combo[0]
        pos = groups.get(key)
        if pos is None:
            continue
        lv = dict(zip(fs, combo))
        ci = compare_levels.index(lv[compare]) if compare in fs else 0
        ri = rest_combos.index(tuple(lv[f] for f in rest)) if rest else 0
        sc.cells.append(Cell(lv, _cell_label(data, fs, lv), np.asarray(pos), y[pos],
                             PALETTE[ci % len(PALETTE)], DASHES[ri % len(DASHES)], MARKERS[ri % len(MARKERS)]))


def _attach_stats(sc: Scenario) -> None:
    if not sc.res:
        return
    if not sc.factors:
        sc.cells[0].stats = sc.res["cells"][0]
        return
    by_levels = {tuple(c["levels"][f] for f in sc.factors): c for c in sc.res["cells"]}
    for cell in sc.cells:
        cell.stats = by_levels.get(tuple(cell.levels[f] for f in sc.factors))
