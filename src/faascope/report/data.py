"""What a report is made from: the input table, what is known about where it came from, the rows
that are analysed, and how factor levels are labelled.

A results store (``.db``/``.sqlite``) brings its campaign: spec, design, excluded cells, seed,
machine, versions, events. Its response defaults to ``latency_seconds`` and its factors to the
spec's factors; warm-ups and failed invocations are counted in the overview and left out of the
statistics. A foreign CSV/Parquet brings only its columns: ``--map old=new`` renames columns so
its response and factors can be named, ``--filter`` and ``--latest`` select rows, and everything
applied is listed in the overview.

Every mistake the user can make (a missing column, a bad mapping, an unknown factor) is a
`BadInput` naming the option, so ``faascope report`` exits with status 2.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from faascope.analysis.calendar import calendar_note, with_calendar
from faascope.analysis.io import (
    TIMESTAMP_CANDIDATES,
    apply_filters,
    as_level_strings,
    latest_per_cell,
    load_table,
    natural_levels,
)
from faascope.errors import BadInput
from faascope.store.reader import (
    ResultsFile,
    is_results_path,
    measured_only,
    with_measure,
    without_measure_note,
)
from faascope.store.schema import MEASURES

DEFAULT_RESPONSE = "latency_seconds"
#: what a response column of a results file means (the report's first line says it)
RESPONSE_MEANINGS = {
    "latency_seconds": "the agent's timed workload, elapsed_s",
    "client_latency_seconds": "the client's round trip of the invocation",
    "client_headers_seconds": "the client's time to the reply's headers",
    **{name: meaning for name, _, meaning in MEASURES},
}


def response_meaning(column: str) -> str | None:
    """What a results file's column means, for naming the response; None for other columns."""
    return RESPONSE_MEANINGS.get(column)

_DEC = (("TB", 1000**4), ("GB", 1000**3), ("MB", 1000**2), ("KB", 1000))
_BIN = (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))


# ------------------------------------------------------------------------------------ labels
def _size_in(n: int, family) -> tuple[str, bool]:
    for unit, f in family:
        if n and n % f == 0:
            return f"{n // f} {unit}", True
    return f"{n} B", False


def size_labels(values: list[int]) -> dict[int, str]:
    """Exact labels for byte counts, all in one unit family (decimal KB/MB/GB or binary
    KiB/MiB/GiB, never both on one axis): the family that names more values with a unit larger
    than a byte wins, decimal on a tie. 128,000 -> "128 KB", 131,072 -> "128 KiB", 512 -> "512 B"."""
    dec = {v: _size_in(v, _DEC) for v in values}
    binary = {v: _size_in(v, _BIN) for v in values}
    use = dec if sum(u for _, u in dec.values()) >= sum(u for _, u in binary.values()) else binary
    return {v: use[v][0] for v in values}


@dataclass
class FactorInfo:
    name: str
    kind: str = "plain"          # "size" (bytes), "memory" (Lambda MB = MiB) or "plain"
    levels: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)

    def label(self, level: str) -> str:
        return self.labels.get(level, level)

    @property
    def title(self) -> str:
        return {"size": f"{self.name} (bytes)", "memory": f"{self.name} (Lambda MB = MiB)"}.get(self.kind, self.name)

    def describe_levels(self) -> str:
        """"10000 = 10 KB, 1024000000 = 1024 MB" for sizes; the levels otherwise."""
        if self.kind == "size":
            return ", ".join(self.label(lv) if self.label(lv) == f"{lv} B" else f"{self.label(lv)} ({int(lv):,} B)"
                             for lv in self.levels)
        return ", ".join(self.label(lv) for lv in self.levels)


def _spec_level(v) -> str:
    """A spec level as the flat view spells it (booleans true/false, whole floats as integers)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _is_int_text(v: str) -> bool:
    return v.isdigit() and len(v) < 19


# "size" in these names counts invocations, not bytes (the load section of a spec).
_COUNT_NAMES = ("burst_size", "batch_size", "pool_size")


def _is_count(low: str) -> bool:
    return low.startswith("load.") or low.endswith(_COUNT_NAMES)


def factor_info(name: str, levels: list[str], hint: str | None = None) -> FactorInfo:
    """Decide how a factor's levels are shown. `hint` is the spec field for a results store
    (``workload.io_size``, ``function.memory_mb``); foreign columns are recognised by name
    (``*_bytes``, ``*size*``) when every level is a whole number."""
    info = FactorInfo(name, levels=list(levels))
    ints = levels and all(_is_int_text(v) for v in levels)
    low = (hint or name).lower()
    if ints and ("memory_mb" in low or low.endswith("ephemeral_mb")):
        info.kind = "memory"
        info.labels = {v: f"{int(v)} MB" for v in levels}
    elif ints and ("bytes" in low or "size" in low) and "memory" not in low and not _is_count(low):
        info.kind = "size"
        lab = size_labels([int(v) for v in levels])
        info.labels = {v: lab[int(v)] for v in levels}
    return info


# ------------------------------------------------------------------------------------ source
@dataclass
class Source:
    """Where the data came from and what is known about it."""
    kind: str                    # "store" or "table"
    path: Path
    rows_read: int
    columns: list[str]
    campaign: dict | None = None   # campaign row with JSON columns decoded
    plan: dict | None = None
    spec: dict | None = None
    factor_meta: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    planned_runs: int | None = None

    @property
    def name(self) -> str:
        if self.campaign:
            return str(self.campaign.get("name"))
        return self.path.name


def load_source(path: str | Path) -> tuple[pd.DataFrame, Source]:
    p = Path(path)
    if not p.exists():
        raise BadInput(f"file not found: {p}", field="INPUT")
    if p.is_dir():
        raise BadInput(f"{p} is a directory; give a results store, CSV or Parquet file", field="INPUT")
    if is_results_path(p):
        with ResultsFile(p, field="INPUT") as rf:
            rf.require_campaign()
            df = rf.flat()
            meta = rf.campaign_meta()
        camp = meta["campaign"]
        src = Source("store", p, len(df), list(map(str, df.columns)), campaign=camp,
                     plan=camp.get("plan"), spec=camp.get("spec"), factor_meta=camp.get("factors") or [],
                     events=meta["events"], planned_runs=meta["planned"])
        return df, src
    df = load_table(p)
    return df, Source("table", p, len(df), list(map(str, df.columns)))


# ------------------------------------------------------------------------------------ options
def parse_mapping(specs: tuple[str, ...] | list[str]) -> dict[str, str]:
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
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise BadInput("give one or more column names separated by commas", field=option)
    return items


def _require(df: pd.DataFrame, cols: list[str], option: str) -> None:
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


def choose_scenarios(df: pd.DataFrame, factors: list[str], min_rows: int = 2) -> list[str] | None:
    """Scenario columns for an incomplete design (compatibility rules removed cells): the
    smallest set of factors, the compared (first) one excepted, such that within every
    combination of their values the remaining factors are completely crossed. [] when the
    design is already complete; None when no such set exists."""
    if len(df) == 0:
        return []
    codes = _codes(df, factors)
    everything = np.ones(len(df), dtype=bool)
    if _complete(codes, everything, factors, min_rows):
        return []
    compare = factors[0]
    candidates = [f for f in factors[1:] if len(np.unique(codes[f])) >= 2]
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


# ------------------------------------------------------------------------------------ the data
@dataclass
class ReportData:
    source: Source
    data: pd.DataFrame            # analysed rows: factor/scenario columns as level strings, response float
    response: str
    factors: list[str]
    scenario_cols: list[str]
    scenario_auto: bool
    info: dict[str, FactorInfo]   # factors and scenario columns
    mapping: dict[str, str]
    filters: list[str]
    latest: int | None
    notes: list[str]              # what was selected and why (shown in the overview)
    counts: dict                  # rows read, warm-ups, failed, filtered, analysed
    time_col: str | None          # column the time series use ("_time", UTC) or None
    time_source: str | None       # the input column it was read from
    cold_col: str | None          # column with True/False cold starts, or None
    all_rows: pd.DataFrame        # every row after mapping (errors and warm-ups included)

    @property
    def compare(self) -> str:
        return self.factors[0]


def build_data(path: str | Path, *, response: str | None = None, factors: list[str] | None = None,
               scenario: list[str] | None = None, mapping: dict[str, str] | None = None,
               filters: list[str] | tuple[str, ...] = (), latest: int | None = None,
               time_col: str | None = None, tz: str | None = None) -> ReportData:
    df, src = load_source(path)
    mapping = dict(mapping or {})
    if mapping:
        _require(df, list(mapping), "--map")
        clash = [new for old, new in mapping.items() if new in df.columns and new not in mapping]
        if clash:
            raise BadInput(f"cannot rename to {clash[0]!r}: the input already has that column "
                           f"(map it away too, or pick another name)", field="--map")
        df = df.rename(columns=mapping)
    notes: list[str] = []
    counts = {"rows_read": len(df)}
    # calendar factors, derived here in the zone asked for (docs/schedules.md), and said so
    df, calendar = with_calendar(df, tz, None, list(factors or []) + list(scenario or []), filters)
    if calendar is not None:
        notes.append(calendar_note(calendar))

    # response and factors: from the options, else from the campaign's spec
    if response is None:
        if DEFAULT_RESPONSE not in df.columns:
            raise BadInput(f"no column {DEFAULT_RESPONSE!r}; name the response with --response COL "
                           f"(or rename one with --map OLD={DEFAULT_RESPONSE})", field="--response")
        response = DEFAULT_RESPONSE
    _require(df, [response], "--response")
    hints: dict[str, str] = {}
    spec_order: dict[str, list[str]] = {}
    if src.kind == "store":
        spec_factors = []
        for f in src.factor_meta:
            col = f["name"] if f["name"] in df.columns else f"factor_{f['name']}"
            col = mapping.get(col, col)
            spec_factors.append(col)
            hints[col] = f.get("field") or f["name"]
            spec_order[col] = [_spec_level(v) for v in f.get("levels") or []]
        if factors is None:
            factors = [f for f in spec_factors if f in df.columns]
            if not factors:
                raise BadInput("the campaign's spec has no factors; name columns with --factors A,B",
                               field="--factors")
    if factors is None:
        raise BadInput("name the factor columns with --factors A,B[,C…] (a foreign table does not say "
                       "which columns are factors)", field="--factors")
    dup = [f for f in factors if factors.count(f) > 1]
    if dup:
        raise BadInput(f"factor {dup[0]!r} given twice", field="--factors")
    if response in factors:
        raise BadInput(f"{response!r} is both the response and a factor", field="--factors")
    _require(df, factors, "--factors")
    if scenario is not None:
        _require(df, scenario, "--scenario")
        both = [c for c in scenario if c in factors]
        if both:
            raise BadInput(f"{both[0]!r} is both a scenario column and a factor", field="--scenario")

    all_rows = df
    # results store: leave warm-ups and failed invocations out of the statistics
    if src.kind == "store":
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
        df = apply_filters(df, list(filters))
        notes.append(f"--filter {' '.join(filters)}: kept {len(df):,} of {before:,} rows.")
    if len(df) == 0:
        if src.kind == "store" and len(all_rows) and not filters:
            st = all_rows["status"].value_counts().to_dict() if "status" in all_rows else {}
            raise BadInput(f"none of the {len(all_rows)} recorded invocations succeeded "
                           f"({', '.join(f'{k}: {v}' for k, v in st.items())}); see their errors with "
                           f"`faascope export {src.path} --format csv`", field="INPUT")
        raise BadInput("no rows left to report on (check --filter)", field="INPUT")

    # a workload kind's measure exists only for the invocations that have it (write_s of a put,
    # not of a get): those without it are not part of its analysis, and the overview says so
    if src.kind == "store":
        kept, without = with_measure(df, response)
        if without and kept.empty:
            raise BadInput(f"no invocation in the selected data has a value of {response!r} "
                           f"({RESPONSE_MEANINGS[response]}); the campaign's workload does not report it",
                           field="--response")
        if without:
            notes.append(without_measure_note(response, without))
        df = kept

    # text levels as the analysis sees them
    df = df.copy()
    for c in dict.fromkeys(list(factors) + list(scenario or [])):
        df[c] = as_level_strings(df[c]).astype(object)
    y = pd.to_numeric(df[response], errors="coerce")
    bad = ~np.isfinite(y.to_numpy(dtype=float))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise BadInput(f"column {response!r} has {int(bad.sum())} non-numeric, missing or infinite value(s), "
                       f"e.g. {df[response].iloc[i]!r} in row {i + 1} of the selected data", field="--response")
    df[response] = y.astype(float)

    # timestamps (time series) and cold starts
    tsrc = None
    if time_col is not None:
        _require(df, [time_col], "--time")
        tsrc = time_col
    elif src.kind == "store" and "started_at" in df.columns:
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
        cols = list(scenario or []) + list(factors)
        order_by = "_time" if tname else None
        df, lnotes = latest_per_cell(df, cols, latest, order_by)
        notes.append(f"--latest {latest}: the {latest} most recent rows of every cell"
                     + (f" (by {tsrc})." if tname else "."))
        notes += lnotes

    cold = None
    if "cold" in df.columns:
        c = _truthy(df["cold"])
        if c.notna().any():
            df["_cold"] = c
            cold = "_cold"

    auto = False
    if scenario is None:
        chosen = choose_scenarios(df, factors)
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
        # a results store keeps the spec's order of levels (lambda before gcf as written); else R's order
        order = [v for v in spec_order.get(c, []) if v in present]
        info[c] = factor_info(c, order + [v for v in present if v not in order], hints.get(c))
    counts["analysed"] = len(df)
    return ReportData(source=src, data=df, response=response, factors=list(factors),
                      scenario_cols=list(scenario), scenario_auto=auto, info=info, mapping=mapping,
                      filters=list(filters), latest=latest, notes=notes, counts=counts,
                      time_col=tname, time_source=tsrc if tname else None, cold_col=cold,
                      all_rows=all_rows)


def fmt_duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "–"
    s = int(round(seconds))
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    parts = [f"{d} d"] * bool(d) + [f"{h} h"] * bool(h) + [f"{m} min"] * bool(m) + [f"{s} s"] * (bool(s) or not (d or h or m))
    return " ".join(parts[:3])
