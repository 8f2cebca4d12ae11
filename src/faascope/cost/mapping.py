"""Pricing a foreign table: which platform, memory size, architecture and duration each row is
billed for, mapped from the table's own columns (`faascope report --price-platform …`).

A foreign table (a CSV from another tool, a thesis's data) names its platforms and sizes in its
own words (``LAMBDA_DD``, ``TIER_1``) and rarely has a billed duration. Each field is given as

- ``VALUE``: one value for every row (``--price-platform gcf``, ``--price-memory 1024``);
- ``COLUMN``: the column holds the values themselves (``--price-memory memory_mb``);
- ``COLUMN=LEVEL:VALUE,LEVEL:VALUE``: each level of the column mapped
  (``--price-platform system_name=LAMBDA_DD:aws_lambda,GCF_DD:gcf``,
  ``--price-memory resource_tier=TIER_1:128,TIER_5:2048``);

or in a YAML/JSON file (``--price-map FILE``) with the keys ``platform``, ``memory``, ``arch`` and
``duration``, each the same text or ``{column: C, levels: {LEVEL: VALUE}}``; options given on the
command line override the file's keys.

The duration: ``--price-duration COLUMN[:ms|s][:billed]`` names the column holding the function's
duration (rounded up to the platform's billing granularity), or with ``:billed`` a duration the
provider already billed (taken as is). Without it the timed response is priced, and that is a
**lower bound**: the provider bills the whole invocation (the runtime, the handler, the work
around the timed part), so the report says so next to every cost.

Every level of a mapped column present in the data must be mapped, every value must be a
platform / memory size the platform runs (a GCF memory must be one of its tiers,
:data:`faascope.tiers.GCF_TIERS`): otherwise :class:`BadInput` (exit 2) names the option and the
level.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from faascope.cost.model import PLATFORM_TITLES, platform_key
from faascope.errors import BadInput
from faascope.tiers import TierError
from faascope.tiers import platform as tier_platform

OPTIONS = {"platform": "--price-platform", "memory": "--price-memory", "arch": "--price-arch",
           "duration": "--price-duration"}
ARCHS = ("x86_64", "arm64")
#: the names of the platforms in faascope.tiers (whose memory rules check a mapped size)
TIER_NAME = {"aws_lambda": "aws", "gcf": "gcf", "cloudrun": "cloudrun"}
#: column-name endings that give a duration's unit
UNIT_SUFFIXES = (("_ms", 1e-3), ("_milliseconds", 1e-3), ("_us", 1e-6), ("_seconds", 1.0), ("_s", 1.0),
                 ("_sec", 1.0))
UNITS = {"ms": 1e-3, "s": 1.0, "us": 1e-6}


def level_text(v: Any) -> str:
    """A column's value as the text a mapping names it by (128.0 and 128 are both "128")."""
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return str(int(v))
    return str(v)


@dataclass(frozen=True)
class FieldMap:
    """One field (platform, memory or arch): a constant, a column of values, or a column's levels
    mapped to values."""
    option: str
    constant: Optional[str] = None
    column: Optional[str] = None
    levels: Optional[dict[str, str]] = None

    def raw(self, df):
        """Per row, the value this field gives (text), before it is checked."""
        import numpy as np

        if self.column is None:
            return np.full(len(df), self.constant, dtype=object)
        if self.column not in df.columns:
            raise BadInput(f"no column {self.column!r} in the data (columns: "
                           f"{', '.join(str(c) for c in df.columns if not str(c).startswith('_'))})",
                           field=self.option)
        texts = [None if _missing(v) else level_text(v) for v in df[self.column].tolist()]
        if any(t is None for t in texts):
            raise BadInput(f"column {self.column!r} is empty in {sum(t is None for t in texts)} row(s): "
                           "no value to price them by", field=self.option)
        if self.levels is None:
            return np.asarray(texts, dtype=object)
        unmapped = sorted({t for t in texts if t not in self.levels})
        if unmapped:
            raise BadInput(f"level(s) {', '.join(unmapped)} of column {self.column!r} are not mapped "
                           f"(mapped: {', '.join(self.levels) or 'none'})", field=self.option)
        return np.asarray([self.levels[t] for t in texts], dtype=object)

    def describe(self, show=str) -> str:
        if self.column is None:
            return show(self.constant)
        if self.levels is None:
            return f"column `{self.column}`"
        return f"`{self.column}` (" + ", ".join(f"{k} → {show(v)}" for k, v in self.levels.items()) + ")"


@dataclass(frozen=True)
class DurationMap:
    column: str
    to_seconds: float
    billed: bool = False


@dataclass(frozen=True)
class PriceMapping:
    platform: Optional[FieldMap] = None
    memory: Optional[FieldMap] = None
    arch: Optional[FieldMap] = None
    duration: Optional[DurationMap] = None

    @property
    def empty(self) -> bool:
        return not (self.platform or self.memory or self.arch or self.duration)


@dataclass
class PricedColumns:
    """What :func:`pricing_columns` gives the cost model: per row platform, memory and arch, one
    duration column, and how each was found (for the report's words)."""
    frame: Any                 # DataFrame: price_platform, config_memory_mb, config_arch, <duration>
    duration_col: str          # billed_duration_ms (taken as billed) or platform_duration_ms (rounded up)
    lower_bound: bool          # the duration is the timed response: the cost is a lower bound
    words: list[str]           # "platform from `system_name` (LAMBDA_DD → AWS Lambda, …)", …


def parse_field(text: Any, name: str) -> Optional[FieldMap]:
    """``VALUE`` / ``COLUMN`` / ``COLUMN=LEVEL:VALUE,…`` (or a file's dict) for field ``name``.
    Whether a bare word is a value or a column is decided against the data
    (:func:`pricing_columns`)."""
    option = OPTIONS[name]
    if text is None:
        return None
    if isinstance(text, dict):  # from a mapping file: {column: C, levels: {...}}
        if set(text) - {"column", "levels"} or "column" not in text:
            raise BadInput("a mapping is {column: NAME, levels: {LEVEL: VALUE, …}}", field=option)
        levels = text.get("levels")
        if levels is not None and not isinstance(levels, dict):
            raise BadInput("levels must map each level to a value", field=option)
        return FieldMap(option, column=str(text["column"]),
                        levels=None if levels is None else {level_text(k): level_text(v) for k, v in levels.items()})
    text = level_text(text).strip()
    if not text:
        raise BadInput("empty", field=option)
    if "=" not in text:
        return FieldMap(option, constant=text)
    col, _, pairs = text.partition("=")
    levels: dict[str, str] = {}
    for pair in pairs.split(","):
        level, sep, value = pair.strip().rpartition(":")
        if not sep or not level.strip() or not value.strip():
            raise BadInput(f"{pair.strip()!r} is not LEVEL:VALUE (in {text!r})", field=option)
        if level.strip() in levels:
            raise BadInput(f"level {level.strip()!r} is mapped twice", field=option)
        levels[level.strip()] = value.strip()
    if not col.strip():
        raise BadInput(f"no column before '=' in {text!r}", field=option)
    return FieldMap(option, column=col.strip(), levels=levels)


def parse_duration(text: Any) -> Optional[DurationMap]:
    """``COLUMN[:ms|s|us][:billed]``; the unit may come from the column's name (``_ms``,
    ``_seconds`` …)."""
    option = OPTIONS["duration"]
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(":")]
    col, rest = parts[0], parts[1:]
    billed = "billed" in rest
    rest = [p for p in rest if p != "billed"]
    if not col or len(rest) > 1 or (rest and rest[0] not in UNITS):
        raise BadInput(f"COLUMN[:ms|s|us][:billed], got {text!r}", field=option)
    if rest:
        factor = UNITS[rest[0]]
    else:
        factor = next((f for suf, f in UNIT_SUFFIXES if col.endswith(suf)), None)
        if factor is None:
            raise BadInput(f"the unit of {col!r} is not in its name: write {col}:ms or {col}:s", field=option)
    return DurationMap(col, factor, billed)


def price_mapping(platform: Any = None, memory: Any = None, arch: Any = None, duration: Any = None,
                  file: str | Path | None = None) -> Optional[PriceMapping]:
    """The mapping the options (and the file, whose keys the options override) give; None when
    none is given."""
    given = {"platform": platform, "memory": memory, "arch": arch, "duration": duration}
    if file is not None:
        for k, v in _read_file(file).items():
            if given[k] is None:
                given[k] = v
    m = PriceMapping(parse_field(given["platform"], "platform"), parse_field(given["memory"], "memory"),
                     parse_field(given["arch"], "arch"), parse_duration(given["duration"]))
    return None if m.empty else m


def _read_file(path: str | Path) -> dict:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise BadInput(f"cannot read {p}: {exc.strerror or exc}", field="--price-map") from None
    import yaml

    try:
        doc = json.loads(text) if p.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:  # json's JSONDecodeError is a ValueError
        raise BadInput(f"{p} is not valid {'JSON' if p.suffix.lower() == '.json' else 'YAML'}: {exc}",
                       field="--price-map") from None
    if not isinstance(doc, dict) or not doc:
        raise BadInput(f"{p} must map some of platform, memory, arch, duration", field="--price-map")
    unknown = sorted(set(doc) - set(OPTIONS))
    if unknown:
        raise BadInput(f"unknown key(s) {', '.join(map(str, unknown))} in {p}; keys: "
                       f"{', '.join(OPTIONS)}", field="--price-map")
    return doc


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _as_column(fm: FieldMap, df) -> FieldMap:
    """A bare word is a column when the data has one by that name, else a value."""
    if fm.constant is not None and fm.constant in df.columns:
        return FieldMap(fm.option, column=fm.constant)
    return fm


def pricing_columns(df, mapping: PriceMapping, *, platform: Optional[str], memory_col: Optional[str],
                    timed: Optional[str], duration_cols: list[str]) -> PricedColumns:
    """The columns the cost model prices ``df``'s rows by, from ``mapping`` and, for the fields it
    does not map, what the rows have: ``platform`` (one platform for all rows, None: the rows'
    own platform columns), ``memory_col``, the rows' ``duration_cols`` (best first), else the
    ``timed`` response as a lower bound. Raises BadInput naming the option and the level."""
    import numpy as np
    import pandas as pd

    words: list[str] = []
    n = len(df)
    # platform
    if mapping.platform is not None:
        fm = _as_column(mapping.platform, df)
        raw = fm.raw(df)
        keys = {}
        for v in dict.fromkeys(raw):
            try:
                keys[v] = platform_key(v)
            except BadInput:
                raise BadInput(f"{v!r} is not a platform with prices (aws_lambda, gcf, cloudrun)"
                               + (f" (column {fm.column!r})" if fm.column else ""), field=fm.option) from None
        plat = np.asarray([keys[v] for v in raw], dtype=object)
        words.append("platform " + ("" if fm.column is None else "from ")
                      + fm.describe(lambda v: PLATFORM_TITLES[platform_key(v)]))
    elif platform:
        plat = np.full(n, platform_key(platform), dtype=object)
    else:
        raise BadInput("the data do not say which platform ran them: map it, e.g. --price-platform "
                       "aws_lambda or --price-platform COLUMN=LEVEL:aws_lambda,LEVEL:gcf",
                       field=OPTIONS["platform"])
    # memory
    if mapping.memory is not None:
        fm = _as_column(mapping.memory, df)
        raw = fm.raw(df)
        mem = np.empty(n)
        for v in dict.fromkeys(raw):
            try:
                mb = float(v)
            except ValueError:
                mb = math.nan
            if not math.isfinite(mb) or mb <= 0 or mb != int(mb):
                raise BadInput(f"{v!r} is not a memory size in whole MB" + (f" (column {fm.column!r})"
                               if fm.column else ""), field=fm.option)
            mem[raw == v] = mb
        words.append("memory " + ("" if fm.column is None else "from ") + fm.describe(lambda v: f"{v} MB"))
        mem_option = fm.option
    elif memory_col is not None:
        mem = pd.to_numeric(df[memory_col], errors="coerce").to_numpy(float)
        mem_option = None
    else:
        raise BadInput("the data have no memory size: map it, e.g. --price-memory 1024 or "
                       "--price-memory COLUMN=LEVEL:128,LEVEL:2048", field=OPTIONS["memory"])
    # every (platform, memory) must be a size that platform runs
    for key, mb in {(k, m) for k, m in zip(plat, mem) if math.isfinite(m)}:
        try:
            tier_platform(TIER_NAME[key]).cpu_options(int(mb))
        except TierError as exc:
            lv = _levels_of(mapping.memory, mb)
            raise BadInput(f"{lv}{int(mb)} MB on {PLATFORM_TITLES[key]}: {exc}",
                           field=mem_option or OPTIONS["memory"]) from None
    # arch
    if mapping.arch is not None:
        fm = _as_column(mapping.arch, df)
        arch = fm.raw(df)
        bad = sorted(set(arch) - set(ARCHS))
        if bad:
            raise BadInput(f"{', '.join(bad)}: not an architecture ({' or '.join(ARCHS)})", field=fm.option)
        words.append("architecture " + ("" if fm.column is None else "from ") + fm.describe())
    else:
        arch = np.full(n, "x86_64", dtype=object)
        if any(k == "aws_lambda" for k in plat):
            words.append("architecture x86_64 (assumed; --price-arch to change)")
    # duration
    lower = False
    if mapping.duration is not None:
        d = mapping.duration
        if d.column not in df.columns:
            raise BadInput(f"no column {d.column!r} in the data", field=OPTIONS["duration"])
        secs = pd.to_numeric(df[d.column], errors="coerce").to_numpy(float) * d.to_seconds
        if (secs < 0).any():
            raise BadInput(f"column {d.column!r} has negative durations", field=OPTIONS["duration"])
        out_col = "billed_duration_ms" if d.billed else "platform_duration_ms"
        words.append(f"duration `{d.column}`" + (" as billed by the provider" if d.billed else
                                                  ", rounded up to each platform's billing granularity"))
    else:
        have = [c for c in duration_cols if c in df.columns and df[c].notna().any()]
        if have:  # a results store's own durations: the best each row has
            frame = pd.DataFrame({"price_platform": plat, "config_memory_mb": mem, "config_arch": arch},
                                 index=df.index)
            for c in have:
                frame[c] = df[c]
            return PricedColumns(frame, "", False, words)
        if timed is None or timed not in df.columns:
            raise BadInput("the data have no duration to price: name one, e.g. --price-duration "
                           "COLUMN:ms (or COLUMN:ms:billed for a duration the provider billed)",
                           field=OPTIONS["duration"])
        secs = pd.to_numeric(df[timed], errors="coerce").to_numpy(float)
        out_col, lower = "platform_duration_ms", True
        words.append(f"duration: the timed response `{timed}`, rounded up to each platform's billing "
                     "granularity — a **lower bound** of the billed duration (the provider bills the whole "
                     "invocation: runtime, handler and the work around the timed part; --price-duration "
                     "names a billed column)")
    frame = pd.DataFrame({"price_platform": plat, "config_memory_mb": mem, "config_arch": arch,
                          out_col: secs * 1e3}, index=df.index)
    return PricedColumns(frame, out_col, lower, words)


def _levels_of(fm: Optional[FieldMap], mb: float) -> str:
    """"TIER_3 → " when a mapped level gave the size ``mb`` (for the error message)."""
    if fm is None or fm.column is None or fm.levels is None:
        return ""
    lv = [k for k, v in fm.levels.items() if float(v) == mb]
    return f"{', '.join(lv)} → " if lv else ""
