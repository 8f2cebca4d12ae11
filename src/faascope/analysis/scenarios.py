"""One per-scenario analysis of a :class:`~faascope.analysis.dataset.Dataset`, for ``analyze``,
``report`` and ``compare`` alike.

A scenario is one combination of the scenario columns' values (all the data when there are none).
Within it, factors with a single level are dropped (1 GB files exist only at one tier) and the
rest are analysed by :func:`faascope.analysis.engine.analyze` with the dataset's level order,
compared factor and measure direction. A scenario where no factor varies is described instead
(:func:`faascope.analysis.engine.describe`). A scenario the engine cannot analyse (a cell with one
row, the compared factor with one level) does not stop the others: its ``error`` says why, and
the commands show it in its place.
"""
from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from faascope.analysis.dataset import Dataset, dataset_from_frame
from faascope.analysis.engine import analyze, describe
from faascope.errors import BadInput

#: above this many rows in a scenario the aligned-rank/Kruskal-Wallis robustness checks are skipped
ROBUST_MAX_ROWS = 5_000_000


@dataclass
class Options:
    """The statistics engine's options (``analyze``'s command-line options of the same names)."""
    model: str = "full"
    alpha: float = 0.05
    ss_type: str = "II"
    transform: str = "none"
    tukey_ordered: bool = False
    robust: bool = True
    cv_threshold_pp: float = 10.0
    cv_criterion: str = "difference"
    cv_ratio: float = 1.5
    target_rel_halfwidth: float = 0.05
    n_boot: int = 2000
    seed: int = 0
    bootstrap_max_n: int = 5000
    robust_max_rows: int = ROBUST_MAX_ROWS

    def engine_kwargs(self) -> dict:
        kw = asdict(self)
        kw.pop("robust_max_rows")
        return kw


@dataclass
class ScenarioAnalysis:
    index: int
    label: dict[str, str]          # scenario column -> value ({} for all the data)
    rows: pd.DataFrame             # the scenario's rows
    factors: list[str]             # factors with ≥ 2 levels here
    dropped: dict[str, str]        # single-level factor -> its level
    levels: dict[str, list[str]] = field(default_factory=dict)  # levels present, in order
    res: dict | None = None        # analyze() (or describe()) output
    error: str | None = None       # why the engine could not analyse it

    @property
    def where(self) -> str:
        return ", ".join(f"{c}={v}" for c, v in self.label.items())

    @property
    def described(self) -> bool:
        return bool(self.res and self.res.get("described"))


def split(ds: Dataset) -> list[ScenarioAnalysis]:
    """The dataset's scenarios, in the order of the scenario columns' levels, without analysis."""
    df = ds.data
    cols = ds.scenario_cols
    combos = [()] if not cols else itertools.product(*(ds.info[c].levels for c in cols))
    out: list[ScenarioAnalysis] = []
    for combo in combos:
        if cols:
            mask = np.ones(len(df), dtype=bool)
            for c, v in zip(cols, combo):
                mask &= (df[c] == v).to_numpy()
            if not mask.any():
                continue
            rows = df.loc[mask]
        else:
            rows = df
        present_values = {f: set(rows[f].unique()) for f in ds.factors}
        levels = {f: [v for v in ds.info[f].levels if v in present_values[f]] for f in ds.factors}
        present = [f for f in ds.factors if len(levels[f]) >= 2]
        dropped = {f: levels[f][0] for f in ds.factors if len(levels[f]) < 2}
        out.append(ScenarioAnalysis(len(out), dict(zip(cols, combo)), rows, present, dropped, levels))
    return out


def analyse_one(ds: Dataset, sc: ScenarioAnalysis, options: Options) -> None:
    """Fill ``sc.res`` (or ``sc.error``) with the engine's analysis of the scenario."""
    if not sc.factors:
        cold = sc.rows[ds.cold_col] if ds.cold_col else None
        res = describe(sc.rows, ds.response, options.alpha, cold=cold, n_boot=options.n_boot,
                       seed=options.seed, target_rel_halfwidth=options.target_rel_halfwidth,
                       bootstrap_max_n=options.bootstrap_max_n)
        sc.res = _annotate(res, ds, sc)
        return
    if ds.compare not in sc.factors:
        sc.error = (f"the compared factor {ds.compare!r} has a single level here "
                    f"({sc.dropped.get(ds.compare)!r}); nothing to compare")
        return
    robust = options.robust and len(sc.rows) <= options.robust_max_rows
    kw = options.engine_kwargs()
    kw["robust"] = robust
    try:
        res = analyze(sc.rows, ds.response, sc.factors, compare=ds.compare,
                      levels={f: sc.levels[f] for f in sc.factors},
                      higher_is_better=ds.measure.higher_is_better, **kw)
    except BadInput as exc:
        msg = exc.message
        if exc.field and msg.startswith(f"{exc.field}: "):
            msg = msg[len(exc.field) + 2:]
        sc.error = msg
        return
    if options.robust and not robust:
        res["notes"].append(f"Robustness checks (log-scale, aligned-rank and Kruskal-Wallis tests) skipped: "
                            f"{len(sc.rows):,} rows > {options.robust_max_rows:,}.")
    sc.res = _annotate(res, ds, sc)


def _annotate(res: dict, ds: Dataset, sc: ScenarioAnalysis) -> dict:
    res = {"scenario": dict(sc.label), "dropped_factors": list(sc.dropped), **res}
    res["measure"] = {"unit": ds.measure.unit, "better": ds.measure.better,
                      "meaning": ds.measure.meaning or None}
    if sc.dropped:
        res["notes"].insert(0, "Dropped factor(s) with a single level in this scenario: "
                            + ", ".join(f"{f}={v}" for f, v in sc.dropped.items()))
    return res


def analyse(ds: Dataset, options: Options | None = None) -> list[ScenarioAnalysis]:
    """Every scenario of the dataset, analysed (or described, or with the reason it could not be)."""
    options = options or Options()
    out = split(ds)
    for sc in out:
        analyse_one(ds, sc, options)
    return out


def all_decisions(scenarios: list[ScenarioAnalysis]) -> list[dict]:
    """The decision rows of every analysed scenario, each with its scenario."""
    rows = []
    for sc in scenarios:
        if sc.res:
            rows += [{"scenario": dict(sc.label), **r} for r in sc.res.get("decisions", [])]
    return rows


def to_json(ds: Dataset, scenarios: list[ScenarioAnalysis], options: Options) -> dict:
    """``faascope analyze --format json``: one analysis when the data have no scenario columns,
    else one per scenario with the decision table across them. Raises the first scenario's
    reason (exit 2) when no scenario could be analysed."""
    done = [sc for sc in scenarios if sc.res is not None]
    if not done:
        first = scenarios[0] if scenarios else None
        where = f"scenario {first.where}: " if first and first.label else ""
        raise BadInput(f"{where}{first.error if first else 'no rows'}", field="--factors")
    selection = {"notes": list(ds.notes), "filters": list(ds.filters), "latest": ds.latest,
                 "order_by": ds.order_by}
    measure = {"unit": ds.measure.unit, "better": ds.measure.better,
               "direction": ds.measure.direction_text}
    if not ds.scenario_cols:
        res = dict(done[0].res)
        res.pop("scenario", None)
        if not done[0].dropped:
            res.pop("dropped_factors", None)
        res["selection"] = selection
        res["measure"] = measure
        return res
    warnings = []
    for sc in done:
        warnings += [f"[{sc.where}] {w}" for w in sc.res["warnings"]]
    return {"response": ds.response, "factors": ds.factors, "model": options.model,
            "alpha": options.alpha, "n": int(sum(sc.res["n"] for sc in done)),
            "scenario_columns": list(ds.scenario_cols), "compare": ds.compare,
            "scenario_auto": ds.scenario_auto, "measure": measure,
            "scenarios": [sc.res for sc in done], "decisions": all_decisions(done),
            "not_analysed": [{"scenario": dict(sc.label), "why": sc.error}
                             for sc in scenarios if sc.res is None],
            "warnings": warnings, "selection": selection}


def analyze_scenarios(df: pd.DataFrame, response: str, factors: list[str], scenario: list[str],
                      **kwargs) -> dict:
    """The Python API: ``analyze`` once per combination of the ``scenario`` columns' values of
    ``df`` (rows in memory), as ``faascope analyze --scenario`` does; a scenario that cannot be
    analysed is an error naming it. ``compare`` and ``levels`` as for ``analyze``; the other
    keyword arguments are :class:`Options`."""
    compare = kwargs.pop("compare", None)
    levels = kwargs.pop("levels", None)
    higher = kwargs.pop("higher_is_better", None)
    missing = [c for c in scenario if c not in df.columns]
    if missing:
        raise BadInput(f"no column {', '.join(map(repr, missing))}; available columns: "
                       f"{', '.join(map(str, df.columns))}", field="--scenario")
    ds = dataset_from_frame(df, response=response, factors=factors, scenario=list(scenario),
                            compare=compare, levels=levels or None, higher_is_better=higher)
    options = Options(**kwargs)
    scenarios = analyse(ds, options)
    for sc in scenarios:
        if sc.error:
            raise BadInput(f"scenario {sc.where}: {sc.error}", field="--scenario")
    return to_json(ds, scenarios, options)
