"""Calibration tables: what the local platform's cloud-like profiles and the stand-ins imitate,
as versioned JSON files in ``faascope/calibration/tables`` (``<table>@<version>.json``), separate
from the code, like the price tables (:mod:`faascope.cost.pricing`).

Every entry carries its value, its unit, where it comes from and when, and its role:

- ``published``: taken as a study or vendor published it (the source says where);
- ``fit``: fitted to published measurements (the note says which cells were fitted, so the
  fidelity check can keep the others out of the fit and stay honest);
- ``assumed``: no published figure exists; the note says why this value.

A user extends or overrides a table with a file of their own (YAML or JSON)::

    extends: platform-lambda            # or platform-lambda@2026-11-23 to pin the version
    entries:
      tmp_read_iops: {value: 5000, unit: IOPS, source: "our own fio run, 2026-10-02"}

An override must keep the entry's unit (a typo in a unit is an error, not a silent rescale) and
name its source; the effective table lists every overridden key, so a figure is never separated
from what it assumed.

A table of published figures may say which of its entries another table was fitted to, in an
optional ``fitted_by`` mapping (the fitted table's ``name@version`` -> entry keys)::

    "fitted_by": {"platform-lambda@2026-11-23": ["thesis_lambda_direct_read_m2048_f1024000000_io512_median"]}

so a check that compares the platform with those figures knows, machine-readably, which
comparisons are circular (fit) and which are held out (:meth:`CalibrationTable.fit_keys`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from faascope.calibration.versioned import VersionedTables
from faascope.errors import BadInput

TABLES_PACKAGE = "faascope.calibration"
TABLES_DIR = "tables"
ROLES = ("published", "fit", "assumed")
#: the units an entry may have; bytes are integers (B, B/s), times in ms, s or us, rates per second,
#: memory sizes in MB (as Lambda and GCF count them: MiB)
UNITS = ("B", "B/s", "IOPS", "req/s", "ms", "s", "us", "MB", "vCPU", "1")
#: each unit's factor to seconds, bytes or a rate per second, for those who compute with an
#: entry (a memory size stays in MB, as a function's memory_mb states it)
TO_SI = {"ms": 1e-3, "s": 1.0, "us": 1e-6, "B": 1.0, "B/s": 1.0, "IOPS": 1.0, "req/s": 1.0, "1": 1.0, "MB": 1.0, "vCPU": 1.0}
ENTRY_FIELDS = ("value", "unit", "source", "date", "role", "note")
#: the table of the AWS storage services' request latencies the shaped stand-ins draw, and each
#: shaped stand-in kind's entry prefix in it (``<prefix>_<write|read>_<median|p99>``)
STANDINS_TABLE = "standins-aws"
STANDIN_LATENCY_ENTRIES = {"s3": "s3_standard", "dynamodb": "dynamodb"}


@dataclass(frozen=True)
class Entry:
    value: float
    unit: str
    source: str
    date: str
    role: str
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        d = {"value": self.value, "unit": self.unit, "source": self.source, "date": self.date,
             "role": self.role}
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class CalibrationTable:
    name: str
    version: str
    title: str
    entries: dict[str, Entry]
    notes: list[str] = field(default_factory=list)
    #: keys a user file replaced, with the file's path
    overridden: dict[str, str] = field(default_factory=dict)
    #: table ``name@version`` -> the keys of this table it was fitted to (published-figure tables)
    fitted_by: dict[str, list[str]] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Entry:
        return self.entries[key]

    def value(self, key: str) -> float:
        return self.entries[key].value

    def fit_keys(self) -> dict[str, list[str]]:
        """Entry key -> the tables fitted to it (keys no table was fitted to are absent)."""
        out: dict[str, list[str]] = {}
        for table, keys in sorted(self.fitted_by.items()):
            for k in keys:
                out.setdefault(k, []).append(table)
        return out

    def provenance(self) -> dict[str, Any]:
        d: dict[str, Any] = {"table": self.name, "version": self.version}
        if self.overridden:
            d["overridden"] = dict(self.overridden)
        return d

    def as_dict(self) -> dict[str, Any]:
        """The table as its JSON file has it (overrides applied), plus what was overridden."""
        d = {"table": self.name, "title": self.title, "version": self.version,
             "notes": list(self.notes),
             "entries": {k: e.as_dict() for k, e in sorted(self.entries.items())}}
        if self.fitted_by:
            d["fitted_by"] = {t: list(keys) for t, keys in self.fitted_by.items()}
        if self.overridden:
            d["overridden"] = dict(self.overridden)
        return d


def _entry(raw: Any, where: str) -> Entry:
    if not isinstance(raw, dict):
        raise BadInput("must be a mapping with value, unit, source, date and role", field=where)
    unknown = set(raw) - set(ENTRY_FIELDS)
    if unknown:
        raise BadInput(f"unknown field(s) {', '.join(sorted(unknown))}; allowed: "
                       f"{', '.join(ENTRY_FIELDS)}", field=where)
    for key in ("value", "unit", "source", "date", "role"):
        if key not in raw:
            raise BadInput(f"missing {key!r}", field=f"{where}.{key}")
    value = raw["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise BadInput(f"must be a number >= 0 (got {value!r})", field=f"{where}.value")
    if raw["unit"] not in UNITS:
        raise BadInput(f"unknown unit {raw['unit']!r}; units: {', '.join(UNITS)}", field=f"{where}.unit")
    if raw["unit"] in ("B", "B/s") and float(value) != int(value):
        raise BadInput(f"bytes are whole numbers (got {value!r})", field=f"{where}.value")
    if raw["role"] not in ROLES:
        raise BadInput(f"unknown role {raw['role']!r}; roles: {', '.join(ROLES)}", field=f"{where}.role")
    for key in ("source", "date"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise BadInput("must be a non-empty string", field=f"{where}.{key}")
    return Entry(value=value, unit=raw["unit"], source=raw["source"], date=raw["date"],
                 role=raw["role"], note=str(raw.get("note", "")))


#: the packaged tables (the loader the price tables share: faascope.calibration.versioned)
TABLES = VersionedTables(TABLES_PACKAGE, TABLES_DIR)


def available() -> dict[str, list[str]]:
    """Every table and its versions, oldest first."""
    return TABLES.available()


def parse_table(raw: Any, where: str) -> CalibrationTable:
    if not isinstance(raw, dict):
        raise BadInput("must be a mapping", field=where)
    for key in ("table", "version", "entries"):
        if key not in raw:
            raise BadInput(f"missing {key!r}", field=f"{where}.{key}")
    if not isinstance(raw["entries"], dict):
        raise BadInput("must be a mapping of entry names", field=f"{where}.entries")
    entries = {str(k): _entry(v, f"{where}.entries.{k}") for k, v in raw["entries"].items()}
    return CalibrationTable(name=str(raw["table"]), version=str(raw["version"]),
                            title=str(raw.get("title", "")), entries=entries,
                            notes=[str(n) for n in raw.get("notes", [])],
                            fitted_by=_fitted_by(raw.get("fitted_by", {}), entries, where))


def _fitted_by(raw: Any, entries: dict[str, Entry], where: str) -> dict[str, list[str]]:
    """The optional ``fitted_by`` mapping, checked: every table named as ``name@version`` and
    every key an entry of this table (a renamed entry must not silently leave the fit)."""
    where = f"{where}.fitted_by"
    if not isinstance(raw, dict):
        raise BadInput("must be a mapping of table name@version to entry keys", field=where)
    out: dict[str, list[str]] = {}
    for table, keys in raw.items():
        if not isinstance(table, str) or "@" not in table:
            raise BadInput(f"{table!r} must name a table as name@version", field=where)
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise BadInput("must be a list of entry keys", field=f"{where}.{table}")
        unknown = [k for k in keys if k not in entries]
        if unknown:
            raise BadInput(f"no such entry: {', '.join(unknown)}", field=f"{where}.{table}")
        out[table] = list(keys)
    return out


def load_table(name: str, version: Optional[str] = None, field_name: str = "calibration") -> CalibrationTable:
    """A packaged table, the newest version unless one is named (``name`` may be ``name@version``)."""
    if version is None and "@" in name:
        name, _, version = name.partition("@")
    version, raw = TABLES.load_raw(
        name, version,
        no_table=lambda: BadInput(f"no calibration table {name!r}; tables: "
                                  f"{', '.join(available()) or 'none'}", field=field_name),
        no_version=lambda v, versions: BadInput(f"calibration table {name!r} has no version {v!r}; "
                                                f"versions: {', '.join(versions)}", field=field_name))
    return parse_table(raw, f"{name}@{version}")


def load_override(path: Union[str, Path]) -> CalibrationTable:
    """The table a user file extends, with the file's entries applied (BadInput naming the field
    on any mistake)."""
    import yaml  # a dependency already (specs); imported here so `faascope --help` stays fast

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror}", field="calibration") from None
    except yaml.YAMLError as exc:
        raise BadInput(f"{path} is not YAML or JSON: {exc}", field="calibration") from None
    if not isinstance(raw, dict):
        raise BadInput(f"{path} must be a mapping with 'extends' and 'entries'", field="calibration")
    unknown = set(raw) - {"extends", "entries"}
    if unknown:
        raise BadInput(f"unknown field(s) {', '.join(sorted(unknown))}; allowed: extends, entries",
                       field="calibration")
    if not isinstance(raw.get("extends"), str):
        raise BadInput("must name the table to extend, e.g. platform-lambda", field="calibration.extends")
    table = load_table(raw["extends"], field_name="calibration.extends")
    entries = raw.get("entries") or {}
    if not isinstance(entries, dict):
        raise BadInput("must be a mapping of entry names", field="calibration.entries")
    for key, value in entries.items():
        where = f"calibration.entries.{key}"
        if not isinstance(value, dict):
            raise BadInput("must be a mapping with at least value, unit and source", field=where)
        base = table.entries.get(key)
        merged = {"date": "user file", "role": "assumed"} | (base.as_dict() if base else {})
        merged.pop("note", None)
        merged = merged | value
        if base is not None and merged["unit"] != base.unit:
            raise BadInput(f"unit {merged['unit']!r} differs from the table's {base.unit!r}",
                           field=f"{where}.unit")
        if "source" not in value:
            raise BadInput("an override names its source", field=f"{where}.source")
        table.entries[str(key)] = _entry(merged, where)
        table.overridden[str(key)] = str(path)
    return table


#: the local platform's calibrated profiles and their tables (``unlimited`` has none, ever)
PLATFORM_TABLES = {"lambda": "platform-lambda", "gcf": "platform-gcf"}
#: the file the platform reads (``faascope-platform --calibration``), in the data directory
PLATFORM_CALIBRATION_FILE = "calibration.json"
#: the entry of a platform table that models the cloud's request path on every invocation
#: (agent/platform/frontend.go); ``--no-front-end`` sets it to 0 and says so in ``overridden``
FRONT_END_KEY = "front_end_delay"
NO_FRONT_END = "--no-front-end"


def platform_calibration(override: Union[None, str, Path, list] = None, *,
                         front_end: bool = True) -> dict[str, Any]:
    """The calibration the local platform applies, as ``faascope-platform --calibration`` reads
    it: each calibrated profile's table (the newest version, or the one a user file pins) with
    the user's override files applied, ``{"profiles": {profile: table}}``. Each override file
    extends one platform table; a key no platform table has is refused (the platform would
    ignore it: a typo must not pass silently). ``front_end=False``: no modelled front end
    (every table's ``front_end_delay`` 0, overridden by ``--no-front-end``)."""
    files = [] if override is None else (list(override) if isinstance(override, (list, tuple)) else [override])
    tables = {p: load_table(name) for p, name in PLATFORM_TABLES.items()}
    known = {k for t in tables.values() for k in t.entries}
    by_table = {name: p for p, name in PLATFORM_TABLES.items()}
    done: dict[str, str] = {}
    for path in files:
        t = load_override(path)
        profile = by_table.get(t.name)
        if profile is None:
            raise BadInput(f"{path} extends {t.name!r}, which is no platform table "
                           f"({', '.join(sorted(by_table))})", field="calibration.extends")
        if profile in done:
            raise BadInput(f"{path} and {done[profile]} both extend {t.name}: merge them into one file",
                           field="calibration.extends")
        unknown = sorted(set(t.overridden) - known)
        if unknown:
            raise BadInput(f"{path}: no platform table has {', '.join(unknown)}; keys: {', '.join(sorted(known))}",
                           field=f"calibration.entries.{unknown[0]}")
        tables[profile], done[profile] = t, str(path)
    if not front_end:
        for t in tables.values():
            e = t.entries.get(FRONT_END_KEY)
            if e is not None:
                t.entries[FRONT_END_KEY] = _entry(e.as_dict() | {
                    "value": 0, "source": NO_FRONT_END, "date": "user option", "role": "assumed",
                    "note": "the modelled front end turned off"}, FRONT_END_KEY)
                t.overridden[FRONT_END_KEY] = NO_FRONT_END
    return {"profiles": {p: t.as_dict() for p, t in sorted(tables.items())}}


def write_platform_calibration(data_dir: Union[str, Path], override: Union[None, str, Path, list] = None,
                               *, front_end: bool = True) -> Path:
    """Write :func:`platform_calibration` to ``<data_dir>/calibration.json`` (atomically) and
    return its path, for ``faascope-platform --calibration``."""
    data = platform_calibration(override, front_end=front_end)
    path = Path(data_dir) / PLATFORM_CALIBRATION_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.new")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)
    return path
