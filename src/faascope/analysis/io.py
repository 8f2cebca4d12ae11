"""Loading, filtering and validating the table that `faascope analyze` works on.

Everything the user can get wrong (a missing column, a factor with one level, a cell with fewer
than two rows, a non-numeric response) is reported here as `BadInput` naming the column, option or
cell, so the statistics modules can assume clean input.

Factor and filter columns are handled as *strings exactly as they appear in the input*: CSV files are
read with every column as text, and numbers coming from Parquet or SQLite are formatted back so an
integer column gives "10000", never "10000.0".
"""
from __future__ import annotations

import csv
import gzip
import itertools
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from faascope.errors import BadInput
from faascope.store.reader import ResultsFile, is_results_path, measured_only

#: columns tried, in order, as the default `--order-by` for `--latest`
TIMESTAMP_CANDIDATES = (
    "occurred_at", "collected_at", "timestamp", "time", "started_at", "client_send_ns",
    "client_send_at", "sent_at", "created_at", "recorded_at",
)


# --------------------------------------------------------------------------------------- loading
SEPARATORS = (",", ";", "\t", "|")
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?(\d+,\d*|,\d+)([eE][+-]?\d+)?\s*$")
_PLAIN_NUMBER = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")


def _check_dialect(sep: str | None, decimal: str | None) -> str | None:
    if sep is not None:
        sep = {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(sep, sep)
        if len(sep) != 1 or sep in "\"'\r\n" or sep.isalnum() or sep == ".":
            raise BadInput(f"the field separator must be one character such as , ; | or \\t, got {sep!r}",
                           field="--sep")
    if decimal is not None:
        if decimal not in (".", ","):
            raise BadInput(f"the decimal mark must be . or , (got {decimal!r})", field="--decimal")
        if decimal == sep:
            raise BadInput(f"the decimal mark {decimal!r} is also the field separator; give --sep ';'",
                           field="--decimal")
    return sep


def sniff_separator(sample: str) -> str | None:
    """The separator that splits every sample line into the same number (> 1) of fields, the
    most fields winning (a ';' file with decimal commas splits inconsistently on ','); None
    when no candidate does."""
    lines = [ln for ln in sample.splitlines()[:50] if ln.strip()]
    if len(lines) > 1 and not sample.endswith("\n"):
        lines = lines[:-1]  # the sample may end mid-line
    best, best_n = None, 1
    for cand in SEPARATORS:
        counts = {len(row) for row in csv.reader(lines, delimiter=cand)}
        if len(counts) == 1 and (n := counts.pop()) > best_n:
            best, best_n = cand, n
    return best


def _decimal_commas(df: pd.DataFrame, forced: bool) -> list[str]:
    """Columns written with decimal commas ("10,994"), converted in place to "10.994". Unless
    `forced` (--decimal ,), a column qualifies only when every non-blank value is a number and at
    least one has a comma."""
    changed = []
    for c in df.columns:
        vals = pd.Series(df[c].unique())
        vals = vals[vals.astype(str).str.strip() != ""].astype(str)
        if not len(vals):
            continue
        comma = vals.str.match(_DECIMAL_COMMA)
        if comma.any() and (comma | vals.str.match(_PLAIN_NUMBER)).all():
            df[c] = df[c].str.replace(",", ".", regex=False)
            changed.append(str(c))
        elif forced and comma.any():
            df[c] = df[c].where(~df[c].str.match(_DECIMAL_COMMA), df[c].str.replace(",", ".", regex=False))
            changed.append(str(c))
    return changed


def _read_csv(p: Path, suffix: str, sep: str | None, decimal: str | None) -> pd.DataFrame:
    notes = []
    if sep is None:
        if suffix == ".tsv":
            sep = "\t"
        else:
            opener = gzip.open if suffix.endswith(".gz") else open
            with opener(p, "rt", encoding="utf-8", errors="replace", newline="") as fh:
                sample = fh.read(65536)
            sep = sniff_separator(sample) or ","
            if sep != ",":
                notes.append(f"{p.name}: fields separated by {sep!r} (detected; --sep to override)")
    df = pd.read_csv(p, dtype=str, keep_default_na=False, sep=sep)
    if decimal == "," or (decimal is None and sep != ","):
        changed = _decimal_commas(df, forced=decimal == ",")
        if changed and decimal is None:
            notes.append(f"{p.name}: decimal commas read in {', '.join(changed)} (detected; --decimal . to keep them as text)")
    df.attrs["notes"] = notes
    return df


def load_table(path: str | Path, sep: str | None = None, decimal: str | None = None) -> pd.DataFrame:
    """Read a CSV, Parquet or faascope results store (SQLite) into a DataFrame, choosing by suffix.

    CSV columns are all read as text (empty cells stay ""), so factor levels keep their spelling;
    the response is converted to numbers later by `prepare`. The field separator is detected
    (',', ';', tab or '|'; `sep` overrides), and with a separator other than ',' numbers written
    with decimal commas are read as numbers (`decimal` "," forces that, "." turns it off).
    """
    sep = _check_dialect(sep, decimal)
    p = Path(path)
    if not p.exists():
        raise BadInput(f"file not found: {p}", field="INPUT")
    suffix = "".join(s.lower() for s in p.suffixes[-2:]) if p.suffix.lower() == ".gz" else p.suffix.lower()
    is_csv = suffix in (".csv", ".csv.gz", ".txt", ".tsv", ".txt.gz", ".tsv.gz")
    if not is_csv and (sep is not None or decimal is not None):
        raise BadInput(f"{p.name} is not a CSV file; --sep and --decimal apply to CSV input only",
                       field="--sep" if sep is not None else "--decimal")
    try:
        if is_csv:
            return _read_csv(p, suffix, sep, decimal)
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(p)
        if is_results_path(p):
            return _load_store(p)
    except BadInput:
        raise  # the store's own errors too (ResultsFileUnreadable, DamagedResultsFile): they name the file
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise BadInput(f"cannot read {p}: {exc}", field="INPUT") from exc
    raise BadInput(
        f"unknown file type {p.suffix!r} for {p.name}; use .csv, .parquet or a results store "
        "(.db/.sqlite)", field="INPUT")


def _load_store(p: Path) -> pd.DataFrame:
    with ResultsFile(p, field="INPUT") as rf:
        df = rf.flat()
    # Warm-ups and failed invocations have no latency to compare: leave them out, and say so.
    df, left_out = measured_only(df)
    df = df.reset_index(drop=True)
    df.attrs["notes"] = ([f"{left_out.total} warm-up or failed invocation(s) of the results store "
                          "left out"] if left_out.total else [])
    return df


def failed_cells(path: str | Path, filters, columns: list[str]) -> list[str]:
    """Why cells of a results store have no measurement: one line per group of ``columns``
    (after ``filters``) none of whose measured invocations succeeded, e.g. ``op=write,
    file_size=200MB: 0 of 6 invocations succeeded (NoSpace)``; the whole selection's line when
    no invocation at all succeeded. [] when every group has a success."""
    with ResultsFile(Path(path), field="INPUT") as rf:
        df = rf.flat()
    if "warmup" in df.columns:
        df = df[pd.to_numeric(df["warmup"], errors="coerce").fillna(0) == 0]
    try:
        df = apply_filters(df, list(filters), [])
    except BadInput:
        return []
    if not len(df) or "ok" not in df.columns:
        return []
    ok = pd.to_numeric(df["ok"], errors="coerce").fillna(0).astype(bool)
    status = df["status"] if "status" in df.columns else pd.Series("failed", index=df.index)
    why = (df["error_type"] if "error_type" in df.columns else status).fillna(status)

    def line(label: str, rows: pd.Index) -> str:
        kinds = why.loc[rows].astype(str).value_counts()
        text = ", ".join(k if len(kinds) == 1 else f"{k}: {n}" for k, n in kinds.items())
        return f"{label}{': ' if label else ''}0 of {len(rows)} invocations succeeded ({text})"

    if not ok.any():
        return [line("", df.index)]
    cols = [c for c in columns if c in df.columns]
    if not cols:
        return []
    out = []
    for key, g in df.groupby(cols, sort=True, dropna=False):
        if not ok.loc[g.index].any():
            key = key if isinstance(key, tuple) else (key,)
            out.append(line(_cell_label(cols, key), g.index))
    return out


# ------------------------------------------------------------------------------ string handling
def level_codes(s: pd.Series) -> tuple[np.ndarray, list[str]]:
    """(codes, labels): each value's index into `labels`, the distinct values as strings the way
    they appear in the input (missing values become ""). Factorises first and formats only the
    distinct values, so a million rows cost a hash pass, not a million Python calls."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    labels = [_fmt_value(u) for u in uniques]
    if (codes < 0).any():
        labels.append("")
        codes = np.where(codes < 0, len(labels) - 1, codes)
    distinct = list(dict.fromkeys(labels))
    if len(distinct) != len(labels):  # e.g. 1 and 1.0 in an object column: one level "1"
        remap = np.array([distinct.index(v) for v in labels])
        codes = remap[codes]
    return np.asarray(codes, dtype=np.int64), distinct


def as_level_strings(s: pd.Series) -> pd.Series:
    """A column as strings the way they appear in the input (missing values become "")."""
    codes, labels = level_codes(s)
    return pd.Series(np.array(labels, dtype=object)[codes], index=s.index, name=s.name)


def _fmt_value(v) -> str:
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, float, np.number)):
        return _fmt_number(v)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def _fmt_number(v) -> str:
    if v is None or (isinstance(v, (float, np.floating)) and math.isnan(v)):
        return ""
    if isinstance(v, (float, np.floating)) and float(v).is_integer() and abs(v) < 2**63:
        return str(int(v))
    return str(v)


# ----------------------------------------------------------------------------------- filtering
_FILTER_RE = re.compile(r"^\s*([^=!<>]+?)\s*(==|=|!=|<=|>=|<|>)(.*)$", re.S)


def parse_filter(expr: str) -> tuple[str, str, str]:
    m = _FILTER_RE.match(expr)
    if not m:
        raise BadInput(f"cannot parse filter {expr!r}; use COL=VALUE, COL!=VALUE, COL<VALUE, "
                       "COL<=VALUE, COL>VALUE or COL>=VALUE", field="--filter")
    col, op, value = m.group(1), m.group(2), m.group(3)
    return col, ("=" if op == "==" else op), value


_DATE_ONLY = re.compile(r"^\s*\d{4}-\d{2}-\d{2}\s*$")
_ISO_DATE_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}")


def apply_filters(df: pd.DataFrame, filters: list[str] | tuple[str, ...],
                  notes: list[str] | None = None) -> pd.DataFrame:
    """Keep the rows matching every filter.

    `=`/`!=` compare text exactly (a comma-separated value list after `=` means "any of").
    `<`, `<=`, `>`, `>=`:
    - a number bound compares numbers: every non-blank value of the column must be a number (else
      the filter is refused naming the column); blank cells never qualify;
    - a date or timestamp bound on a timestamp column compares times; a date alone (2024-05-05)
      means the whole day as the column writes it, so `<= 2024-05-05` keeps that day's rows after
      midnight and `> 2024-05-05` starts the next day; a timestamp without a zone is UTC;
    - anything else compares text; blank cells never qualify.
    Rows left out for a blank cell are counted in `notes` (when given).
    """
    if not filters:
        return df
    mask = np.ones(len(df), dtype=bool)
    for expr in filters:
        col, op, value = parse_filter(expr)
        _require_columns(df, [col], "--filter")
        codes, labels = level_codes(df[col])
        if op in ("=", "!="):
            values = {value} if value in labels else set(value.split(","))
            hit = [i for i, v in enumerate(labels) if v in values]
            m = np.isin(codes, hit)
            if op == "=" and not m.any():
                shown = sorted(labels)[:12]
                raise BadInput(f"no row has {col}={value!r}; values of {col}: {', '.join(map(repr, shown))}"
                               + (" …" if len(labels) > 12 else ""), field="--filter")
            mask &= m if op == "=" else ~m
            continue
        keep = _ordered_filter(col, op, value.strip(), labels)
        m = keep[codes]
        if notes is not None and "" in labels:
            n_blank = int((codes == labels.index("")).sum())
            notes.append(f"--filter {expr}: {n_blank} row(s) with a blank {col} left out (a blank is not comparable)")
        mask &= m
    return df.loc[mask]


def _ordered_filter(col: str, op: str, value: str, labels: list[str]) -> np.ndarray:
    """Which of the distinct `labels` satisfy `label op value` (see apply_filters)."""
    lab = pd.Series(labels, dtype=object)
    present = (lab != "").to_numpy()
    cmp = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}[op]
    try:
        bound = float(value)
    except ValueError:
        bound = None
    if bound is not None and math.isfinite(bound):
        num = pd.to_numeric(lab.where(present, np.nan), errors="coerce").to_numpy(dtype=float)
        bad = present & np.isnan(num)
        if bad.any():
            raise BadInput(f"{col}{op}{value} compares numbers, but column {col!r} has values that are not numbers "
                           f"(e.g. {labels[int(np.flatnonzero(bad)[0])]!r})", field="--filter")
        with np.errstate(invalid="ignore"):
            return present & cmp(num, bound)
    when = _parse_time(value, utc=True)
    if when is not None:
        text = lab[present].astype(str)
        if _DATE_ONLY.match(value):
            # the whole day as the column writes it: compare the dates of ISO timestamps
            day = pd.to_datetime(text.str.slice(0, 10), format="%Y-%m-%d", errors="coerce")
            if not text.str.match(_ISO_DATE_PREFIX).all() or day.isna().any():
                ts = _parse_time(text, utc=True)
                if ts is None:
                    raise _not_times(col, op, value, text)
                day = ts.dt.tz_convert(None).dt.normalize()
            out = np.zeros(len(labels), dtype=bool)
            out[present] = cmp(day.to_numpy(), np.datetime64(value.strip()))
            return out
        ts = _parse_time(text, utc=True)
        if ts is None:
            raise _not_times(col, op, value, text)
        out = np.zeros(len(labels), dtype=bool)
        out[present] = cmp(ts.dt.tz_convert(None).to_numpy(), when.tz_convert(None).to_datetime64())
        return out
    with np.errstate(invalid="ignore"):
        return present & cmp(lab.to_numpy(dtype=object), value).astype(bool)


def _parse_time(v, utc: bool):
    """A timestamp (or Series of them) in UTC; values without a zone are taken as UTC. None when
    something does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = pd.to_datetime(v, utc=utc, format="ISO8601")
    except (ValueError, TypeError, OverflowError):
        return None
    if isinstance(out, pd.Series):
        return None if out.isna().any() else out
    return None if pd.isna(out) else out


def _not_times(col, op, value, text: pd.Series) -> BadInput:
    bad = next((t for t in text if _parse_time(pd.Series([t]), utc=True) is None), text.iloc[0])
    return BadInput(f"{col}{op}{value} compares times, but column {col!r} has values that are not ISO "
                    f"timestamps (e.g. {bad!r})", field="--filter")


def default_order_column(df: pd.DataFrame) -> str | None:
    for c in TIMESTAMP_CANDIDATES:
        if c in df.columns:
            return c
    return None


def latest_per_cell(df: pd.DataFrame, cell_columns: list[str], n: int,
                    order_by: str | None) -> tuple[pd.DataFrame, list[str]]:
    """The last `n` rows of every cell when sorted by `order_by` (default: a timestamp column).
    Returns the rows and notes about cells that had fewer than `n` rows."""
    if n < 1:
        raise BadInput("must be at least 1", field="--latest")
    if order_by is None:
        order_by = default_order_column(df)
        if order_by is None:
            raise BadInput("--latest needs --order-by COL (no timestamp column such as "
                           f"{', '.join(TIMESTAMP_CANDIDATES[:3])} found)", field="--order-by")
    _require_columns(df, [order_by], "--order-by")
    key = _sort_key(df[order_by])
    tmp = df.assign(_fs_key=key.to_numpy(), _fs_pos=np.arange(len(df)))
    tmp = tmp.sort_values(["_fs_key", "_fs_pos"], kind="stable")
    cells = [as_level_strings(tmp[c]) for c in cell_columns]
    out = tmp.groupby(cells, sort=False, dropna=False).tail(n)
    counts = out.groupby([as_level_strings(out[c]) for c in cell_columns], sort=True).size()
    notes = [f"--latest {n}: cell {_cell_label(cell_columns, k)} has only {v} rows" for k, v in counts.items() if v < n]
    out = out.sort_values("_fs_pos").drop(columns=["_fs_key", "_fs_pos"])
    return out, notes


def _sort_key(s: pd.Series) -> pd.Series:
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_datetime64_any_dtype(s):
        return s
    num = pd.to_numeric(s, errors="coerce")
    if num.notna().all():
        return num
    ts = pd.to_datetime(s, errors="coerce", format="mixed")
    if ts.notna().all():
        return ts
    return s.astype(str)


def _cell_label(columns, key) -> str:
    key = key if isinstance(key, tuple) else (key,)
    return ", ".join(f"{c}={v}" for c, v in zip(columns, key))


# ---------------------------------------------------------------------------------- validation
def _require_columns(df: pd.DataFrame, cols, option: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise BadInput(f"no column {', '.join(map(repr, missing))} in the input; available columns: "
                       f"{', '.join(map(str, df.columns))}", field=option)


def natural_levels(values) -> list[str]:
    """Levels in R's default order: numeric order when every level is a number, else sorted text."""
    vals = list(dict.fromkeys(values))
    try:
        return sorted(vals, key=lambda v: (float(v), v))
    except ValueError:
        return sorted(vals)


def prepare(df: pd.DataFrame, response: str, factors: list[str],
            level_order: dict[str, list[str]] | None = None,
            min_rows: int = 2, allow_empty_cells: bool = False) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """Validate and return (data, levels): the factor columns as pandas Categoricals whose
    categories are the level strings in order, and the response as float.

    Errors (exit 2) for: missing columns, repeated factors, a non-numeric or missing response, a
    factor with missing values or with one level, and any cell of the full crossing with fewer
    than `min_rows` rows (an empty crossing cell included unless `allow_empty_cells`), naming the
    cell.
    """
    if not factors:
        raise BadInput("give at least one factor", field="--factors")
    dup = [f for f in factors if factors.count(f) > 1]
    if dup:
        raise BadInput(f"factor {dup[0]!r} given twice", field="--factors")
    if response in factors:
        raise BadInput(f"{response!r} is both the response and a factor", field="--factors")
    _require_columns(df, [response], "--response")
    _require_columns(df, factors, "--factors")
    if len(df) == 0:
        raise BadInput("no rows left (check --filter)", field="INPUT")

    coded = {f: level_codes(df[f]) for f in factors}
    y_raw = df[response]
    if pd.api.types.is_bool_dtype(y_raw):
        raise BadInput(f"column {response!r} is boolean, not a number", field="--response")
    y = pd.to_numeric(y_raw, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(y)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise BadInput(f"column {response!r} has {int(bad.sum())} non-numeric, missing or infinite "
                       f"value(s), e.g. {y_raw.iloc[i]!r} in row {i + 1} of the selected data",
                       field="--response")

    levels: dict[str, list[str]] = {}
    level_order = level_order or {}
    for f in factors:
        codes_f, labels = coded[f]
        present = set(labels)
        if "" in present:
            n_empty = int((codes_f == labels.index("")).sum())
            raise BadInput(f"factor {f!r} is empty in {n_empty} row(s); drop them "
                           f"with --filter '{f}!='", field=f)
        if f in level_order:
            order = [str(v) for v in level_order[f]]
            unknown = present - set(order)
            if unknown:
                raise BadInput(f"--levels for {f!r} does not list {', '.join(sorted(unknown))}", field="--levels")
            order = [v for v in order if v in present]
        else:
            order = natural_levels(labels)
        if len(order) < 2:
            raise BadInput(f"factor {f!r} has one level ({order[0]!r}) in the selected data; an effect "
                           "needs at least two levels: drop it from --factors or widen --filter", field=f)
        levels[f] = order
    for f in level_order:
        if f not in factors:
            raise BadInput(f"--levels names {f!r}, which is not a factor", field="--levels")

    shape = tuple(len(levels[f]) for f in factors)
    codes = []
    for f in factors:
        codes_f, labels = coded[f]
        position = {v: i for i, v in enumerate(levels[f])}
        codes.append(np.array([position[v] for v in labels], dtype=np.int64)[codes_f])
    out = pd.DataFrame({f: pd.Categorical.from_codes(c, categories=levels[f]) for f, c in zip(factors, codes)})
    out[response] = y
    counts = np.bincount(np.ravel_multi_index(codes, shape), minlength=int(np.prod(shape)))
    for i, combo in enumerate(itertools.product(*(levels[f] for f in factors))):
        k = int(counts[i])
        if k == 0 and allow_empty_cells:
            continue
        if k < min_rows:
            hint = ("; the additive model (--model additive) needs only 1 row per cell and allows empty cells"
                    if min_rows > 1 else "")
            raise BadInput(f"cell {_cell_label(factors, combo)} has {k} row(s); every combination of "
                           f"factor levels needs at least {min_rows} (narrow --filter, analyse subsets with --scenario, "
                           f"or add replications){hint}",
                           field="--factors")
    return out, levels
