"""Scenarios and their cells, with the statistics engine's analysis of each.

A scenario is one combination of the scenario columns' values (all the data when there are none).
Within it, factors with a single level are dropped (as `analyze_scenarios` does) and the cells are
the combinations of the remaining factors, in the engine's order. Unlike `analyze_scenarios`, a
scenario the engine cannot analyse (a cell with one row, the compared factor with one level)
does not stop the report: its figures are still drawn and the reason is shown in its place.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from faascope.analysis.engine import analyze
from faascope.errors import BadInput
from faascope.report.data import ReportData
from faascope.report.figures import figure_name
from faascope.report.plot.style import DASHES, MARKERS, PALETTE

#: above this many rows in a scenario the aligned-rank/Kruskal-Wallis robustness checks are skipped
ROBUST_MAX_ROWS = 5_000_000


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
class Scenario:
    index: int
    label: dict[str, str]
    rows: pd.DataFrame
    factors: list[str]             # factors with ≥ 2 levels here
    dropped: dict[str, str]        # single-level factor -> its level
    cells: list[Cell] = field(default_factory=list)
    res: dict | None = None        # analyze() output
    error: str | None = None       # why the engine could not analyse it
    cost: object = None            # costs.ScenarioCost: what its cells cost (None: not priced)

    @property
    def key(self) -> str:
        return f"s{self.index + 1}"

    def name(self, kind: str, response: str) -> str:
        return figure_name(kind, response, self.label)

    def title(self, data: ReportData) -> str:
        if not self.label:
            return "All data"
        return ", ".join(f"{k} = {data.info[k].label(v)}" for k, v in self.label.items())

    @property
    def legend_title(self) -> str:
        return " · ".join(self.factors)


def _cell_label(data: ReportData, factors: list[str], levels: dict[str, str]) -> str:
    return " · ".join(data.info[f].label(levels[f]) for f in factors)


def build_scenarios(data: ReportData, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0,
                    analyse: bool = True) -> list[Scenario]:
    df = data.data
    y_all = df[data.response].to_numpy(dtype=float)
    scen_cols = data.scenario_cols
    combos = [()] if not scen_cols else itertools.product(*(data.info[c].levels for c in scen_cols))
    out: list[Scenario] = []
    for combo in combos:
        if scen_cols:
            mask = np.ones(len(df), dtype=bool)
            for c, v in zip(scen_cols, combo):
                mask &= (df[c] == v).to_numpy()
            if not mask.any():
                continue
            rows = df.loc[mask]
            y = y_all[mask]
        else:
            rows, y = df, y_all
        label = dict(zip(scen_cols, combo))
        levels = {f: [v for v in data.info[f].levels if v in set(rows[f].unique())] for f in data.factors}
        present = [f for f in data.factors if len(levels[f]) >= 2]
        dropped = {f: levels[f][0] for f in data.factors if len(levels[f]) < 2}
        sc = Scenario(len(out), label, rows, present, dropped)
        _make_cells(data, sc, y, levels)
        if analyse:
            _analyse(data, sc, alpha, n_boot, seed)
        out.append(sc)
    return out


def _make_cells(data: ReportData, sc: Scenario, y: np.ndarray, levels: dict[str, list[str]]) -> None:
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


def _analyse(data: ReportData, sc: Scenario, alpha: float, n_boot: int, seed: int) -> None:
    if data.compare not in sc.factors:
        sc.error = (f"the compared factor {data.compare!r} has a single level here "
                    f"({sc.dropped.get(data.compare)!r}); nothing to compare")
        return
    try:
        res = analyze(sc.rows, data.response, sc.factors, alpha=alpha, compare=data.compare,
                      levels={f: data.info[f].levels for f in sc.factors},
                      robust=len(sc.rows) <= ROBUST_MAX_ROWS, n_boot=n_boot, seed=seed)
    except BadInput as exc:
        sc.error = exc.message
        return
    res = {"scenario": dict(sc.label), "dropped_factors": list(sc.dropped), **res}
    if sc.dropped:
        res["notes"].insert(0, "Dropped factor(s) with a single level in this scenario: "
                            + ", ".join(f"{f}={v}" for f, v in sc.dropped.items()))
    if len(sc.rows) > ROBUST_MAX_ROWS:
        res["notes"].append(f"Robustness checks (log-scale, aligned-rank and Kruskal-Wallis tests) skipped: "
                            f"{len(sc.rows):,} rows > {ROBUST_MAX_ROWS:,}.")
    sc.res = res
    by_levels = {tuple(c["levels"][f] for f in sc.factors): c for c in res["cells"]}
    for cell in sc.cells:
        cell.stats = by_levels.get(tuple(cell.levels[f] for f in sc.factors))


def all_decisions(scenarios: list[Scenario]) -> list[dict]:
    rows = []
    for sc in scenarios:
        if sc.res:
            rows += [{"scenario": dict(sc.label), **r} for r in sc.res["decisions"]]
    return rows
