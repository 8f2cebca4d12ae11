"""The one input of ``analyze``, ``report`` and ``compare``: a :class:`Dataset`.

Whatever command reads a results store, a CSV or Parquet file, or several of them, the rows it
analyses are selected here, once, the same way, and everything done to them is written down in
``notes`` (what the overview and ``analyze``'s "Selection" show):

1. read: a results store brings its campaign (spec, design, factors with their spec fields and
   level order, events); a table only its columns; several inputs are stacked with a column
   ``source`` (:mod:`faascope.analysis.sources` checks that their factors mean the same thing);
2. ``--map OLD=NEW`` renames columns, so a foreign table can name its response and factors;
3. calendar factors are derived in the zone asked for (:mod:`faascope.analysis.calendar`);
4. the response (default ``latency_seconds``) and what it is: its unit and which direction is
   better, from the results schema's measures table (:mod:`faascope.store.measures`);
5. the factors (default: the campaign's; none at all is allowed: the data are then described,
   not compared);
6. warm-ups and failed invocations of a store leave the statistics (counted); ``--filter``;
   invocations without the measure (a get has no write time); ``--latest N`` per cell;
7. levels as text exactly as the input writes them, in the spec's order (or ``--levels``, or
   numeric order), each with its label (10 KB, 128 KiB, 2048 MB: :mod:`faascope.analysis.levels`);
8. timestamps and cold starts when the input has them;
9. the scenario columns: given, or (when compatibility rules removed cells) the fewest factors
   whose values split the design into complete parts.

Every mistake the user can make is a `BadInput` naming the option (exit 2).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from faascope.analysis.adaptive_record import adaptive_facts_of, adaptive_note
from faascope.analysis.calendar import calendar_note, with_calendar
from faascope.analysis.calendar import wanted as calendar_wanted
from faascope.analysis.io import (
    TIMESTAMP_CANDIDATES,
    apply_filters,
    as_level_strings,
    failed_cells,
    latest_per_cell,
    load_table,
    natural_levels,
)
from faascope.analysis.levels import FactorInfo, factor_info, spec_level
from faascope.analysis.sources import SOURCE, check_factors, common_factors, read_sources, stack
from faascope.errors import BadInput
from faascope.store.measures import Measure, describe
from faascope.store.reader import (
    ResultsFile,
    is_results_path,
    measured_only,
    with_measure,
    without_measure_note,
)

DEFAULT_RESPONSE = "latency_seconds"


# ------------------------------------------------------------------------------------ origin
@dataclass
class Origin:
    """Where the data came from and what is known about it: ``kind`` is "store" (one results
    store), "table" (one CSV or Parquet file), "inputs" (several, stacked with ``source``) or
    "frame" (a DataFrame given in Python)."""
    kind: str
    path: Optional[Path]
    rows_read: int
    columns: list[str]
    campaign: Optional[dict] = None   # the campaign row with its JSON columns decoded
    plan: Optional[dict] = None
    spec: Optional[dict] = None
    factor_meta: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    planned_runs: Optional[int] = None
    inputs: list[str] = field(default_factory=list)   # the stacked inputs' names

    @property
    def name(self) -> str:
        if self.campaign:
            return str(self.campaign.get("name"))
        if self.kind == "inputs":
            return " + ".join(self.inputs)
        return self.path.name if self.path else "data"

    @property
    def is_store(self) -> bool:
        return self.kind == "store"


def _read(paths: Sequence[str | Path], sep, decimal,
          factors_hint: Sequence[str]) -> tuple[pd.DataFrame, Origin, list[str]]:
    """The rows of the input(s), where they came from, and notes. A single store is read whole
    (warm-ups and failures are counted later); several inputs are read as each would be alone
    (a store's warm-ups and failures left out) and stacked."""
    paths = list(paths)
    if not paths:
        raise BadInput("give an input file", field="INPUT")
    if len(paths) > 1:
        sources = read_sources(paths, sep=sep, decimal=decimal)
        check_factors(sources, [f for f in factors_hint if f != SOURCE])
        df = stack(sources)
        origin = Origin("inputs", None, len(df), list(map(str, df.columns)),
                        inputs=[s.name for s in sources])
        # the stores' factors, as one store's would be (level order and spec fields)
        meta = next((s.factor_meta for s in sources if s.is_store), [])
        origin.factor_meta = meta
        return df, origin, list(df.attrs.get("notes", []))
    p = Path(paths[0])
    if not p.exists():
        raise BadInput(f"file not found: {p}", field="INPUT")
    if p.is_dir():
        raise BadInput(f"{p} is a directory; give a results store, CSV or Parquet file", field="INPUT")
    if is_results_path(p):
        if sep is not None or decimal is not None:
            raise BadInput(f"{p.name} is not a CSV file; --sep and --decimal apply to CSV input only",
                           field="--sep" if sep is not None else "--decimal")
        with ResultsFile(p, field="INPUT") as rf:
            if rf.campaign() is None and "campaign" not in rf.names:
                # an SQLite file with only a flat view (invocations kept elsewhere): a table, whose
                # warm-ups and failed invocations are no measurements either
                df = rf.flat()
                origin = Origin("table", p, len(df), list(map(str, df.columns)))
                df, left_out = measured_only(df)
                notes = ([f"{left_out.total} warm-up or failed invocation(s) of the results store "
                          "left out"] if left_out.total else [])
                return df, origin, notes
            rf.require_campaign()
            df = rf.flat()
            meta = rf.campaign_meta()
        camp = meta["campaign"]
        origin = Origin("store", p, len(df), list(map(str, df.columns)), campaign=camp,
                        plan=camp.get("plan"), spec=camp.get("spec"),
                        factor_meta=camp.get("factors") or [], events=meta["events"],
                        planned_runs=meta["planned"])
        return df, origin, []
    df = load_table(p, sep=sep, decimal=decimal)
    return df, Origin("table", p, len(df), list(map(str, df.columns))), list(df.attrs.get("notes", []))


# ------------------------------------------------------------------------------------ the data
@dataclass
class Dataset:
    origin: Origin
    data: pd.DataFrame            # analysed rows: factor/scenario columns as level strings, response float
    response: str
    measure: Measure              # the response's unit and direction
    factors: list[str]            # [] = nothing to compare: the data are described
    compare: Optional[str]        # the factor the decision table ranks (None without factors)
    scenario_cols: list[str]
    scenario_auto: bool
    info: dict[str, FactorInfo]   # factors and scenario columns: level order and labels
    mapping: dict[str, str] = field(default_factory=dict)
    filters: list[str] = field(default_factory=list)
    latest: Optional[int] = None
    order_by: Optional[str] = None
    notes: list[str] = field(default_factory=list)   # what was selected and why
    counts: dict = field(default_factory=dict)        # rows read, warm-ups, failed, analysed
    time_col: Optional[str] = None                    # "_time" (UTC) when the rows have times
    time_source: Optional[str] = None                 # the input column it was read from
    cold_col: Optional[str] = None                    # "_cold" (True/False) when known
    all_rows: Optional[pd.DataFrame] = None           # every row after mapping (errors, warm-ups)
    calendar: Optional[dict] = None                   # how calendar factors were derived
    adaptive: Optional[dict] = None                   # how replications were chosen adaptively

    @property
    def source(self) -> Origin:  # the name the report's sections use
        return self.origin

    def levels(self, column: str) -> list[str]:
        return self.info[column].levels

    @property
    def level_orders(self) -> dict[str, list[str]]:
        return {c: i.levels for c, i in self.info.items()}

    @property
    def described(self) -> bool:
        """No factor: the data are described (percentiles, CV, cold vs warm), not compared."""
        return not self.factors


# ------------------------------------------------------------------------------------ options
def parse_mapping(specs: Sequence[str] | None) -> dict[str, str]:
    """``--map OLD=NEW`` (repeatable or comma-separated) as {old: new}."""
    out: dict[str, str] = {}
    for spec in specs or ():
        for part in str(spec).split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise BadInput(f"cannot read {part!r}; write OLD=NEW (e.g. --map latency=latency_seconds)",
                               field="--map")
            old, new = (s.strip() for s in part.split("=", 1))
            if not old or not new:
                raise BadInput(f"cannot read {part!r}; both OLD and NEW must be column names", field="--map")
            out[old] = new
    return out


def split_columns(value: str | None, option: str) -> list[str] | None:
    """"A,B" as ["A", "B"]; None when the option was not given."""
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise BadInput("give one or more column names separated by commas", field=option)
    return items


def parse_levels(specs: Sequence[str]) -> dict[str, list[str]]:
    """``--levels FACTOR=L1,L2,…`` (repeatable) as {factor: [levels]}."""
    out = {}
    for spec in specs or ():
        if "=" not in spec:
            raise BadInput(f"cannot parse {spec!r}; use FACTOR=LEVEL1,LEVEL2,…", field="--levels")
        f, v = spec.split("=", 1)
        out[f.strip()] = [x.strip() for x in v.split(",")]
    return out


def _require(df: pd.DataFrame, cols: Sequence[str], option: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        shown = ", ".join(map(str, df.columns[:40])) + (" …" if len(df.columns) > 40 else "")
        raise BadInput(f"no column {', '.join(map(repr, missing))} in the input; available columns: {shown}",
                       field=option)


def _truthy(s: pd.Series) -> pd.Series:
    """Booleans from 1/0, true/false, yes/no (anything else is missing)."""
    if pd.api.types.is_bool_dtype(s):
        return s.astype("boolean")
    t = as_level_strings(s).str.strip().str.lower()
    out = pd.Series(pd.NA, index=s.index, dtype="boolean")
    out[t.isin(["1", "true", "yes", "y", "t"])] = True
    out[t.isin(["0", "false", "no", "n", "f"])] = False
    return out


def parse_times(s: pd.Series) -> pd.Series | None:
    """UTC timestamps from ISO text (naive text is taken as UTC) or epoch numbers (s/ms/µs/ns by
    magnitude); None when the column cannot be read as times."""
    if pd.api.types.is_datetime64_any_dtype(s):
        t = s
    else:
        num = pd.to_numeric(s, errors="coerce")
        if num.notna().mean() > 0.99:
            med = float(num.abs().median())
            unit = "ns" if med > 1e17 else "us" if med > 1e14 else "ms" if med > 1e11 else "s"
            t = pd.to_datetime(num, unit=unit, errors="coerce", utc=True)
        else:
            try:
                t = pd.to_datetime(s, errors="coerce", utc=True, format="ISO8601")
            except (ValueError, TypeError):
                t = pd.to_datetime(s, errors="coerce", utc=True, format="mixed")
    if getattr(t.dt, "tz", None) is None:
        t = t.dt.tz_localize("UTC")
    if t.notna().mean() < 0.99:
        return None
    return t


# ------------------------------------------------------------------------------------ scenarios
def _codes(df: pd.DataFrame, cols: list[str]) -> dict[str, np.ndarray]:
    return {c: pd.factorize(df[c], sort=False)[0] for c in cols}


def _complete(codes: dict[str, np.ndarray], mask: np.ndarray, factors: list[str], min_rows: int) -> bool:
    """Does every combination of the factors' levels (present under `mask`) have ≥ min_rows rows?"""
    present = []
    for f in factors:
        u = np.unique(codes[f][mask])
        if len(u) >= 2:
            present.append((f, u))
    if not present:
        return False
    key = np.zeros(int(mask.sum()), dtype=np.int64)
    size = 1
    for f, u in present:
        c = codes[f][mask]
        key = key * (int(c.max()) + 1) + c
        size *= len(u)
    uniq, counts = np.unique(key, return_counts=True)
    return len(uniq) == size and bool((counts >= min_rows).all())


def choose_scenarios(df: pd.DataFrame, factors: list[str], min_rows: int = 2,
                     compare: Optional[str] = None) -> list[str] | None:
    """Scenario columns for an incomplete design (compatibility rules removed cells): the
    smallest set of factors, the compared one excepted, such that within every combination of
    their values the remaining factors are completely crossed. [] when the design is already
    complete (or has no factor); None when no such set exists."""
    if len(df) == 0 or not factors:
        return []
    codes = _codes(df, factors)
    everything = np.ones(len(df), dtype=bool)
    if _complete(codes, everything, factors, min_rows):
        return []
    compare = compare or factors[0]
    candidates = [f for f in factors if f != compare and len(np.unique(codes[f])) >= 2]
    for k in range(1, len(candidates) + 1):
        for combo in itertools.combinations(candidates, k):
            rest = [f for f in factors if f not in combo]
            key = np.zeros(len(df), dtype=np.int64)
            for c in combo:
                key = key * (int(codes[c].max()) + 1) + codes[c]
            ok = True
            for v in np.unique(key):
                m = key == v
                if len(np.unique(codes[compare][m])) < 2 or not _complete(codes, m, rest, min_rows):
                    ok = False
                    break
            if ok:
                return list(combo)
    return None


# ------------------------------------------------------------------------------------ selecting
def load_dataset(paths: Sequence[str | Path] | str | Path, *, response: str | None = None,
                 factors: Sequence[str] | None = None, scenario: Sequence[str] | None = None,
                 compare: str | None = None, mapping: dict[str, str] | None = None,
                 filters: Sequence[str] = (), latest: int | None = None,
                 order_by: str | None = None, time_col: str | None = None, tz: str | None = None,
                 levels: dict[str, list[str]] | None = None, sep: str | None = None,
                 decimal: str | None = None, higher_is_better: bool | None = None,
                 min_rows: int = 2, calendar_col: str | None = None) -> Dataset:
    """The dataset analyze, report and compare work on, from one or several input files (see the
    module's docstring for every step). ``scenario`` None chooses scenario columns when the
    design is incomplete; [] forces one analysis."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    hint = list(factors or []) + list(scenario or [])
    df, origin, notes = _read(paths, sep, decimal, hint)
    given = factors is not None
    if origin.kind == "inputs" and factors is None:
        # several inputs: compare them first, then the stores' own factors
        factors = [SOURCE] + [f for f in common_factors(paths) if f not in (scenario or [])]
    if origin.kind == "store" and len(paths) == 1:
        path = Path(paths[0])
    else:
        path = None
    ds = select(df, origin, response=response, factors=factors, scenario=scenario, compare=compare,
                mapping=mapping, filters=filters, latest=latest, order_by=order_by, time_col=time_col,
                tz=tz, levels=levels, higher_is_better=higher_is_better, notes=notes,
                min_rows=min_rows, factors_given=given, calendar_col=calendar_col)
    if path is not None:
        failed = failed_cells(path, ds.filters, ds.scenario_cols + ds.factors)
        ds.notes += [f"{line}: left out" for line in failed]
        ds.adaptive = adaptive_facts_of(path)   # replications chosen adaptively: say how
        if ds.adaptive:
            ds.notes.append(adaptive_note(ds.adaptive))
    return ds


def dataset_from_frame(df: pd.DataFrame, *, response: str, factors: Sequence[str] | None = None,
                       **options) -> Dataset:
    """A dataset from rows already in memory (the Python API's ``analyze_scenarios``)."""
    origin = Origin("frame", None, len(df), list(map(str, df.columns)))
    return select(df, origin, response=response, factors=factors, **options)


def select(df: pd.DataFrame, origin: Origin, *, response: str | None = None,
           factors: Sequence[str] | None = None, scenario: Sequence[str] | None = None,
           compare: str | None = None, mapping: dict[str, str] | None = None,
           filters: Sequence[str] = (), latest: int | None = None, order_by: str | None = None,
           time_col: str | None = None, tz: str | None = None,
           levels: dict[str, list[str]] | None = None, higher_is_better: bool | None = None,
           notes: list[str] | None = None, min_rows: int = 2,
           factors_given: bool | None = None, calendar_col: str | None = None) -> Dataset:
    """The rows of ``df`` that are analysed, and everything known about them (see the module's
    docstring). ``factors_given``: the user named the factors (default: whether ``factors`` is
    given): then each must have two levels somewhere in the selection."""
    notes = list(notes or [])
    filters = list(filters or [])
    mapping = dict(mapping or {})
    if mapping:
        _require(df, list(mapping), "--map")
        clash = [new for old, new in mapping.items() if new in df.columns and new not in mapping]
        if clash:
            raise BadInput(f"cannot rename to {clash[0]!r}: the input already has that column "
                           f"(map it away too, or pick another name)", field="--map")
        df = df.rename(columns=mapping)
    counts = {"rows_read": len(df)}
    names = list(factors or []) + list(scenario or [])
    # the calendar's timestamp column (analyze's --time-column) is refused where no calendar
    # factor is derived; the report's --time (time_col) also names it when one is
    if calendar_col is None and time_col is not None and (
            tz is not None or any(c not in df.columns for c in calendar_wanted(names, filters))):
        calendar_col = time_col
    df, calendar = with_calendar(df, tz, calendar_col, names, filters)
    if calendar is not None:
        notes.append(calendar_note(calendar))

    # the response and what it is
    if response is None:
        if DEFAULT_RESPONSE not in df.columns:
            raise BadInput(f"no column {DEFAULT_RESPONSE!r}; name the response with --response COL "
                           f"(or rename one with --map OLD={DEFAULT_RESPONSE})", field="--response")
        response = DEFAULT_RESPONSE
    _require(df, [response], "--response")
    measure = describe(response, higher_is_better)

    # the factors: as given, else the campaign's (none: the data are described)
    hints: dict[str, str] = {}
    spec_order: dict[str, list[str]] = {}
    spec_factors = []
    for f in origin.factor_meta:
        col = f["name"] if f["name"] in df.columns else f"factor_{f['name']}"
        col = mapping.get(col, col)
        spec_factors.append(col)
        hints[col] = f.get("field") or f["name"]
        spec_order[col] = [spec_level(v) for v in f.get("levels") or []]
    if factors_given is None:
        factors_given = factors is not None
    if factors is None:
        factors = [f for f in spec_factors if f in df.columns]
        if origin.kind in ("table", "frame") and not factors:
            notes.append("No factors named (--factors A,B): the rows are described as one group.")
    factors = list(factors)
    dup = [f for f in factors if factors.count(f) > 1]
    if dup:
        raise BadInput(f"factor {dup[0]!r} given twice", field="--factors")
    if response in factors:
        raise BadInput(f"{response!r} is both the response and a factor", field="--factors")
    _require(df, factors, "--factors")
    if compare is not None:
        if compare not in factors:
            raise BadInput(f"{compare!r} is not one of the factors ({', '.join(factors) or 'none'})",
                           field="--compare")
    elif factors:
        compare = factors[0]
    if scenario is not None:
        scenario = list(scenario)
        _require(df, scenario, "--scenario")
        both = [c for c in scenario if c in factors]
        if both:
            raise BadInput(f"{both[0]!r} is both a scenario column and a factor", field="--scenario")
    for f in levels or {}:
        if f not in factors and f not in (scenario or []):
            raise BadInput(f"--levels names {f!r}, which is not a factor", field="--levels")

    all_rows = df
    has_store = origin.kind == "store" or (origin.kind == "inputs" and origin.factor_meta)
    if origin.kind == "store":
        df, left_out = measured_only(df)
        counts["warmups"] = left_out.warmups
        if left_out.warmups:
            notes.append(f"{left_out.warmups} warm-up invocation(s) are not part of the statistics.")
        if "ok" in df.columns:
            counts["failed"] = left_out.failed
        if left_out.failed:
            notes.append(f"{left_out.failed} failed invocation(s) are left out of the statistics "
                         "(see Errors).")
    if filters:
        before = len(df)
        df = apply_filters(df, filters, notes)
        notes.append(f"--filter {' '.join(filters)}: kept {len(df):,} of {before:,} rows.")
    if len(df) == 0:
        if origin.kind == "store" and len(all_rows) and not filters:
            st = all_rows["status"].value_counts().to_dict() if "status" in all_rows else {}
            raise BadInput(f"none of the {len(all_rows)} recorded invocations succeeded "
                           f"({', '.join(f'{k}: {v}' for k, v in st.items())}); see their errors with "
                           f"`faascope export {origin.path} --format csv`", field="INPUT")
        raise BadInput("no rows left to analyse (check --filter)", field="INPUT")

    # a workload kind's measure exists only for the invocations that have it (write_s of a put,
    # not of a get): those without it are not part of its analysis, and the notes say so
    if has_store:
        kept, without = with_measure(df, response)
        if without and kept.empty:
            raise BadInput(f"no invocation in the selected data has a value of {response!r} "
                           f"({measure.meaning}); the campaign's workload does not report it",
                           field="--response")
        if without:
            notes.append(without_measure_note(response, without))
        df = kept

    # text levels as the analysis sees them, and the response as numbers
    df = df.copy()
    for c in dict.fromkeys(list(factors) + list(scenario or [])):
        df[c] = as_level_strings(df[c]).astype(object)
        empty = df[c] == ""
        if empty.any():
            raise BadInput(f"factor {c!r} is empty in {int(empty.sum())} row(s); drop them "
                           f"with --filter '{c}!='", field=c)
    if factors_given and not scenario:
        # a factor the user named must vary in the data (a campaign's own factor that a filter
        # narrowed to one level, or a factor of a split analysis, is left out where it does not
        # vary, with a note)
        for f in factors:
            only = df[f].unique()
            if len(only) < 2:
                raise BadInput(f"factor {f!r} has one level ({only[0]!r}) in the selected data; an effect "
                               "needs at least two levels: drop it from --factors or widen --filter", field=f)
    if pd.api.types.is_bool_dtype(df[response]):
        raise BadInput(f"column {response!r} is boolean, not a number", field="--response")
    y = pd.to_numeric(df[response], errors="coerce")
    bad = ~np.isfinite(y.to_numpy(dtype=float))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise BadInput(f"column {response!r} has {int(bad.sum())} non-numeric, missing or infinite value(s), "
                       f"e.g. {df[response].iloc[i]!r} in row {i + 1} of the selected data", field="--response")
    df[response] = y.astype(float)

    # timestamps (time series, --latest) and cold starts
    if time_col is not None:
        _require(df, [time_col], "--time")
        tsrc = time_col
    elif origin.kind == "store" and "started_at" in df.columns:
        tsrc = "started_at"
    else:
        tsrc = next((c for c in TIMESTAMP_CANDIDATES if c in df.columns), None)
    tname = None
    if tsrc is not None:
        t = parse_times(df[tsrc])
        if t is None:
            if time_col is not None:
                raise BadInput(f"cannot read column {time_col!r} as timestamps (ISO 8601 text or epoch "
                               "numbers)", field="--time")
            notes.append(f"Column {tsrc!r} could not be read as timestamps: no time series.")
        else:
            df["_time"] = t
            tname = "_time"

    if latest is not None:
        if latest < 1:
            raise BadInput("must be at least 1", field="--latest")
        cols = list(scenario or []) + list(factors)
        by = order_by if order_by is not None else (tname or None)
        df, lnotes = latest_per_cell(df, cols, latest, by)
        shown = order_by or (tsrc if tname else None)
        notes.append(f"--latest {latest}: the {latest} most recent rows of every cell"
                     + (f" (by {shown})." if shown else "."))
        notes += lnotes
    elif order_by is not None:
        raise BadInput("--order-by only applies with --latest N", field="--order-by")

    cold = None
    if "cold" in df.columns:
        c = _truthy(df["cold"])
        if c.notna().any():
            df["_cold"] = c
            cold = "_cold"

    auto = False
    if scenario is None:
        chosen = choose_scenarios(df, factors, min_rows, compare)
        if chosen is None:
            notes.append("The factors are not completely crossed and no choice of scenario columns makes "
                         "them so; give --scenario to split the analysis.")
            chosen = []
        elif chosen:
            auto = True
            notes.append(f"Not every combination of the factors was run (compatibility rules), so the "
                         f"analysis is split per {' × '.join(chosen)} (chosen automatically; set --scenario "
                         "to choose).")
        scenario = chosen

    info = {}
    for c in list(factors) + list(scenario):
        present = natural_levels(df[c].unique())
        if levels and c in levels:
            order = [str(v) for v in levels[c]]
            unknown = set(present) - set(order)
            if unknown:
                raise BadInput(f"--levels for {c!r} does not list {', '.join(sorted(unknown))}",
                               field="--levels")
            order = [v for v in order if v in present]
        else:
            # a results store keeps the spec's order of levels (lambda before gcf as written)
            order = [v for v in spec_order.get(c, []) if v in present]
            order += [v for v in present if v not in order]
        info[c] = factor_info(c, order, hints.get(c))
    counts["analysed"] = len(df)
    return Dataset(origin=origin, data=df, response=response, measure=measure, factors=factors,
                   compare=compare, scenario_cols=list(scenario), scenario_auto=auto, info=info,
                   mapping=mapping, filters=filters, latest=latest, order_by=order_by, notes=notes,
                   counts=counts, time_col=tname, time_source=tsrc if tname else None, cold_col=cold,
                   all_rows=all_rows, calendar=calendar)
